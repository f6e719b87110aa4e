"""Candidate for issue 15 part 3: indexd's markdown extraction on markdown-it-py tokens.

Not wired into indexd: bench/markdown_swap.py measured it slower than the bar
(docs/decisions.md, "Markdown: our line reader stays"), so it lives here, where the bench can
run it against indexd/parse/markdown.py and a later machine or release can
re-measure it. Same public shape as ``indexd.parse.markdown.extract_markdown``;
the slugs, broken-link checks, section ranges and doc text reuse that module's
helpers, so only the block and inline reading differ.

    PYTHONPATH=bench .venv/bin/python -m pytest -p markdown_mdit_patch tests/parse/test_markdown.py
        runs the markdown tests against this reader.
"""

from __future__ import annotations

from bisect import bisect_right

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from indexd.model import Link, ParseResult, Reference
from indexd.parse import markdown as old
from indexd.parse.limits import NO_DEADLINE, Deadline, ParseTimeout


def _tick(state, *_args) -> bool:
    """First block and inline rule: checks the file's deadline, then lets the others run."""
    counter = state.env["_ticks"]
    counter[0] += 1
    state.env["_deadline"].every(counter[0])
    return False


# Inline rules whose tokens carry their offset in the paragraph (meta["pos"]): inline
# tokens have no line numbers, and a code span's content has lost its newlines.
_POSITIONED = {"newline", "escape", "backticks", "link", "image", "autolink", "html_inline"}


def _positioned(fn):
    def rule(state, silent: bool) -> bool:
        n, pos = len(state.tokens), state.pos
        ok = fn(state, silent)
        if ok and not silent:
            for tok in state.tokens[n:]:
                tok.meta.setdefault("pos", pos)
        return ok
    return rule


def _parser(lean: bool) -> MarkdownIt:
    # maxNesting bounds list/quote depth (the library recurses per level).
    md = MarkdownIt("commonmark", {"inline_definitions": True, "maxNesting": 20})
    md.use(front_matter_plugin)
    if lean:  # body text: only what carries links and code spans
        md.disable(["entity", "emphasis", "balance_pairs", "fragments_join", "text_join"])
    md.block.ruler.before("front_matter", "tick", _tick)
    md.inline.ruler.before("text", "tick", _tick)
    for rule in md.inline.ruler.__rules__:
        if rule.name in _POSITIONED:
            md.inline.ruler.at(rule.name, _positioned(rule.fn))
    md.validateLink = lambda url: True      # keep javascript:, file: ... as links
    md.normalizeLink = lambda url: url      # the target as written, not percent-encoded
    return md


_MD = _parser(lean=True)
_HEADING_MD = _parser(lean=False)            # headings: emphasis removed from names


def extract_markdown(text, path, exists=None, deadline: Deadline = NO_DEADLINE) -> ParseResult:
    state = old._State([], [], {}, [])
    error = None
    try:
        _extract(text, path, exists, state, deadline)
    except ParseTimeout:
        raise
    except Exception as exc:  # noqa: BLE001 - malformed input is data, not a crash
        error = f"markdown: {type(exc).__name__}: {old._one_line(str(exc))}"
    return ParseResult(language="markdown", entries=tuple(state.entries),
                       links=tuple(state.links), references=tuple(state.refs),
                       error=error, meta=state.meta)


def _extract(text, path, exists, state, deadline) -> None:
    lines = old.split_lines(text)
    env = {"_deadline": deadline, "_ticks": [0]}
    tokens = _MD.parse("\n".join(lines), env)
    first = _frontmatter(tokens, state.meta)
    headings, all_names, kinds = _blocks(tokens, lines, first, deadline)
    names = [n for n, top in all_names if top]
    fm_title = state.meta.get("frontmatter", {}).get("title")
    h1 = next((n for h, n in zip(headings, names) if h.level == 1), None)
    state.meta["title"] = str(fm_title) if fm_title is not None else h1
    deadline.check()
    state.entries.extend(old._sections(lines, first, headings, names, kinds, deadline))
    links, ids, refs = _inline(tokens, lines, deadline)
    anchors = _anchors([n for n, _ in all_names], ids)
    state.links.extend(Link(line=ln + 1, target=t, kind=k, text=x,
                            broken=old._is_broken(k, t, path, anchors, exists))
                       for ln, t, x, k in links)
    state.refs.extend(refs)


def _frontmatter(tokens, meta: dict) -> int:
    tok = tokens[0] if tokens and tokens[0].type == "front_matter" else None
    if tok is None:
        return 0
    fake = ["---", *tok.content.split("\n"), "---"]  # old reader: YAML errors and shape
    old._frontmatter(fake, meta)
    return tok.map[1]


def _blocks(tokens, lines, first, deadline):
    """Headings (top level: sections; all: slugs) and a kind per line."""
    kinds = ["front"] * first + ["blank" if not ln.strip() else "text" for ln in lines[first:]]
    headings, names = [], []
    for k, tok in enumerate(tokens):
        deadline.every(k)
        if tok.type in ("fence", "code_block", "hr") and tok.map:
            kind = "rule" if tok.type == "hr" else "code"
            kinds[tok.map[0]:tok.map[1]] = [kind] * (tok.map[1] - tok.map[0])
        elif tok.type == "heading_open":
            name = _heading_name(tokens[k + 1].content) or old.UNTITLED
            names.append((name, tok.level == 0))
            if tok.level == 0:
                headings.append(_heading(tok, tokens[k + 1], lines))
                kinds[tok.map[0]:tok.map[1]] = ["heading"] * (tok.map[1] - tok.map[0])
    return headings, names, kinds


def _heading(tok, inline, lines) -> old._Heading:
    start, end = tok.map[0], tok.map[1] - 1
    atx = tok.markup.startswith("#")
    signature = lines[start].strip() if atx else " ".join(
        lines[i].strip() for i in range(start, end))
    return old._Heading(start, end, int(tok.tag[1]), inline.content, signature)


def _heading_name(source: str) -> str:
    children = _HEADING_MD.parseInline(source[:old.MAX_HEADING],
                                       {"_deadline": NO_DEADLINE, "_ticks": [0]})[0].children
    return " ".join("".join(c.content for c in children
                            if c.type in ("text", "code_inline", "softbreak")).split())


def _inline(tokens, lines, deadline):
    """(line, target, text, kind) links, HTML ids, and code-span references."""
    links, ids, refs = [], [], []
    for k, tok in enumerate(tokens):
        deadline.every(k)
        if tok.type == "definition" and not tok.meta["label"].startswith("^"):
            links.append((tok.map[0], tok.meta["url"], tok.meta["label"],
                          old.classify_target(tok.meta["url"])))
        elif tok.type == "html_block" and not tok.content.startswith("<!--"):
            # (a comment is not rendered: its links and headings are not the page's)
            for n, line in enumerate(tok.content.split("\n")):
                _html(line, tok.map[0] + n, links, ids)
        elif tok.type == "inline" and tok.children:
            _children(tok.children, _line_of(tok), links, ids, refs)
    links.sort(key=lambda link: link[0])  # stable: keeps left-to-right within a line
    return links, ids, refs


def _line_of(tok):
    """Line of an offset in an inline token's content (its first line is tok.map[0])."""
    breaks = [i for i, ch in enumerate(tok.content) if ch == "\n"] if "\n" in tok.content else []
    return lambda pos: tok.map[0] + bisect_right(breaks, pos - 1)


def _children(children, line_at, links, ids, refs) -> None:
    depth, line = 0, line_at(0)
    for n, c in enumerate(children):
        if c.meta and "pos" in c.meta:
            line = line_at(c.meta["pos"]) + (c.type in ("softbreak", "hardbreak"))
        if c.type in ("link_open", "image"):
            target = c.attrGet("href" if c.type == "link_open" else "src") or ""
            auto = c.markup == "autolink"
            if auto and children[n + 1].content == target.removeprefix("mailto:"):
                target = children[n + 1].content    # <a@b.org> as written, as before
            text = "" if auto else _text(children, n)
            if target.strip():
                links.append((line, target.strip(), text,
                              "url" if auto else old.classify_target(target.strip())))
            depth += c.type == "link_open"
        elif c.type == "link_close":
            depth -= 1
        elif c.type == "html_inline":
            _html(c.content, line, links, ids)
        elif c.type == "code_inline":
            span = c.content.strip()
            if len(span) <= 200 and (old._SPAN_NAME_RE.match(span) or old._SPAN_PATH_RE.match(span)):
                refs.append(Reference(name=span.removesuffix("()"), kind="code_span", line=line + 1))
        elif c.type == "text" and depth == 0 and ":" in c.content:
            for m in old._BARE_URL_RE.finditer(c.content):
                links.append((line + c.content.count("\n", 0, m.start()),
                              old._trim_url(m.group(0)), "", "url"))


def _text(children, n: int) -> str:
    """Plain text of a link (its children up to link_close) or an image (its alt)."""
    c = children[n]
    if c.type == "image":
        parts = [x.content for x in c.children or () if x.type in ("text", "code_inline")]
    else:
        parts, depth = [], 0
        for x in children[n + 1:]:
            if x.type == "link_close" and depth == 0:
                break
            depth += (x.type == "link_open") - (x.type == "link_close")
            if x.type in ("text", "code_inline"):
                parts.append(x.content)
            elif x.type == "image":
                parts.append(_text([x], 0))
    return " ".join("".join(parts).split())


def _html(source: str, line: int, links, ids) -> None:
    """href/src attributes, then bare URLs elsewhere in the tag (srcset=...), as before."""
    def attr(m) -> str:
        target = (m.group(1) if m.group(1) is not None else m.group(2)).strip()
        if target:
            links.append((line, target, "", old.classify_target(target)))
        return " " * len(m.group(0))
    rest = old._HTML_ATTR_RE.sub(attr, source)
    if ":" in rest:
        links.extend((line + rest.count("\n", 0, m.start()), old._trim_url(m.group(0)), "", "url")
                     for m in old._BARE_URL_RE.finditer(rest))
    ids.extend(m.group(1).lower() for m in old._HTML_ID_RE.finditer(source))


def _anchors(names, ids) -> set[str]:
    seen: dict[str, int] = {}
    anchors = {"top"}
    for name in names:
        anchors.add(old._next_slug(old.github_slug(name if name != old.UNTITLED else ""), seen))
    return anchors | set(ids)
