"""Markdown -> sections, links and frontmatter.

Owns everything this index knows about a markdown file:

* YAML frontmatter (``meta["frontmatter"]``) and the title (``meta["title"]``);
* one ``section`` entry per heading (ATX and setext), nested by level, plus a
  ``(preamble)`` section for text before the first heading;
* links (inline, images, reference definitions and the reference links that
  use them, autolinks, HTML href/src, bare URLs), classified as url / anchor / file, with a ``broken`` flag for
  anchors (checked against this file's GitHub-style heading slugs) and for
  file links (checked through the injected ``exists`` callable).

Pure: text in, ParseResult out; the only file-system knowledge is ``exists``.
Every line loop checks the file's deadline (limits.py); a timeout is not
caught here but unwinds to parse_source.
This is a line-based reader, not a full CommonMark parser: it knows enough
block structure (fences, indented code, HTML comments, list items and their
content column, quotes, paragraphs) to avoid false headings and links, and no more.
"""

from __future__ import annotations

import datetime
import posixpath
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

import yaml

from ..model import Entry, Link, ParseResult, Reference, content_hash
from .limits import NO_DEADLINE, Deadline, ParseTimeout

MAX_BODY = 2000
MAX_DOC = 500
MAX_HEADING = 1000
PREAMBLE = "(preamble)"
UNTITLED = "(untitled)"

# Block structure. Headings and fences may be indented by at most 3 spaces;
# four or more make an indented code block (CommonMark).
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSE_RE = re.compile(r"(?:^|[ \t]+)#+$")
_SETEXT_RE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_RULE_RE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
# List items and block quotes: a setext underline below them is a rule, not
# a heading, so they never open a paragraph that could become one.
_CONTAINER_RE = re.compile(r"^ {0,3}(?:(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)|>)")
# An HTML comment block (CommonMark 4.6, type 2) runs to the line holding '-->';
# it is not rendered, so its headings and links are not the page's.
_COMMENT_RE = re.compile(r"^ {0,3}<!--")
# A list item's marker; its text starts after the marker and 1-4 spaces (CommonMark 5.2).
_ITEM_RE = re.compile(r"^( {0,3})([-+*]|\d{1,9}[.)])( +|$)")

# Links. Possessive quantifiers (Python 3.11+) keep these linear on
# pathological input such as long runs of brackets or spaces. An escaped '\[' opens
# no link (and, were it tried, each of a line of '[\[\[...' would scan to the end).
_INLINE_RE = re.compile(
    r"""(?<!\\)(!?)\[((?:[^\[\]\\]|\\.|\[(?:[^\[\]\\]|\\.)*+\])*+)\]
        \([ \t]*+
        (<[^<>\n]*>|(?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.)*+\))*+)
        (?:[ \t]++(?:"[^"]*"|'[^']*'|\([^()]*\)))?
        [ \t]*+\)""",
    re.X,
)
# A reference link (CommonMark 6.3): [text][label], [label][] or [label], a link only
# when a definition names the label; same possessive shape as _INLINE_RE.
_REF_RE = re.compile(
    r"(?<!\\)(!?)\[((?:[^\[\]\\]|\\.|\[(?:[^\[\]\\]|\\.)*+\])*+)\](?:\[((?:[^\[\]\\]|\\.)*+)\])?")
_REFDEF_RE = re.compile(r"^ {0,3}\[((?:[^\[\]\\]|\\.)+)\]:[ \t]*(<[^<>\n]*>|\S+)")
_AUTOLINK_RE = re.compile(r"<([a-zA-Z][a-zA-Z0-9+.\-]{1,31}:[^\s<>]*)>")
_EMAIL_AUTOLINK_RE = re.compile(r"<([\w.!#$%&'*+/=?^`{|}~\-]+@[\w\-]+(?:\.[\w\-]+)+)>")
_HTML_ATTR_RE = re.compile(r"\b(?:href|src)[ \t]*=[ \t]*(?:\"([^\"]*)\"|'([^']*)')", re.I)
_BARE_URL_RE = re.compile(r"(?<![\w/])(?:https?|ftp)://[^\s<>\"'`]+")
_SCHEME_RE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]+:")
_BACKTICKS_RE = re.compile(r"`+")

# Inline markup removed from heading names.
_LINK_TEXT_RE = re.compile(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\](?:\([^()]*(?:\([^()]*\)[^()]*)*\)|\[[^\]]*\])")
_CODE_SPAN_RE = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
_HTML_TAG_RE = re.compile(r"</?[a-zA-Z][^<>]*>")
_STRONG_RE = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EM_STAR_RE = re.compile(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])")
_EM_UNDER_RE = re.compile(r"(?<![\w_])_(?=\S)(.+?)(?<=\S)_(?![\w_])")
_STRIKE_RE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_ESCAPE_RE = re.compile(r"\\([!-/:-@\[-`{-~])")
_MARKUP_RE = re.compile(r"[\[`<*_~\\]")  # a character any of the above needs
_HTML_ID_RE = re.compile(r"<[a-zA-Z][^<>]*?\b(?:id|name)[ \t]*=[ \t]*[\"']([^\"']+)[\"']", re.I)


@dataclass
class _Heading:
    start: int          # 0-based index of the first heading line
    end: int            # 0-based index of the last one (the setext underline)
    level: int
    text: str           # inline source of the heading text
    signature: str


@dataclass
class _State:
    """What extraction has produced so far, so a failure can still return it."""

    entries: list
    links: list
    meta: dict
    refs: list = None   # code spans naming identifiers or paths (for the graph)


@dataclass
class _Spans:
    masked: dict        # line -> the line with its code spans blanked out
    found: list         # (line of the opening backticks, content) per span


def extract_markdown(text: str, path: str,
                     exists: Callable[[str], bool] | None = None,
                     deadline: Deadline = NO_DEADLINE) -> ParseResult:
    state = _State([], [], {}, [])
    error = None
    try:
        _extract(text, path, exists, state, deadline)
    except ParseTimeout:
        raise
    except Exception as exc:  # noqa: BLE001 - malformed input is data, not a crash
        error = f"markdown: {type(exc).__name__}: {_one_line(str(exc))}"
    return ParseResult(language="markdown", entries=tuple(state.entries),
                       links=tuple(state.links), references=tuple(state.refs),
                       error=error, meta=state.meta)


def _extract(text: str, path: str, exists, state: _State, deadline: Deadline) -> None:
    lines = split_lines(text)
    first = _frontmatter(lines, state.meta)
    headings, kinds = _scan_blocks(lines, first, deadline)
    deadline.check()
    # Capped: a heading is a title, and the inline regexes are not linear.
    names = [_plain(h.text[:MAX_HEADING]) or UNTITLED for h in headings]
    fm_title = state.meta.get("frontmatter", {}).get("title")
    h1 = next((n for h, n in zip(headings, names) if h.level == 1), None)
    state.meta["title"] = str(fm_title) if fm_title is not None else h1
    deadline.check()
    state.entries.extend(_sections(lines, first, headings, names, kinds, deadline))
    anchors = _anchor_set(names, lines, kinds)
    deadline.check()
    spans = _code_spans(lines, kinds, deadline)
    state.links.extend(_links(lines, spans.masked, kinds, path, anchors, exists, deadline))
    deadline.check()
    state.refs.extend(_code_span_refs(spans))


def split_lines(text: str) -> list[str]:
    """Split on \\n only (editors and tree-sitter count lines the same way)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def _one_line(msg: str) -> str:
    return " ".join(msg.split())[:300]


# --- frontmatter -------------------------------------------------------------

def _frontmatter(lines: list[str], meta: dict) -> int:
    """Parse a leading ``---`` block into meta; return the first line after it."""
    if not lines or lines[0].rstrip() != "---":
        return 0
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if close is None:
        return 0  # an unclosed '---' is a thematic break, not frontmatter
    try:
        data = yaml.safe_load("\n".join(lines[1:close]))
    except Exception as exc:  # noqa: BLE001 - bad frontmatter must not fail the file
        meta["frontmatter_error"] = _yaml_error(exc, offset=1)
        return close + 1
    if data is None:
        data = {}
    if isinstance(data, dict):
        meta["frontmatter"] = _plain_data(data)
    else:
        meta["frontmatter_error"] = f"frontmatter is a {type(data).__name__}, not a mapping"
    return close + 1


def _yaml_error(exc: Exception, offset: int) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is not None:
        return f"YAML error at line {mark.line + 1 + offset}: {_one_line(str(problem))}"
    return f"YAML error: {_one_line(str(problem))}"


def _plain_data(value, depth: int = 0):
    """Make YAML values JSON-safe (dates -> ISO strings) so meta can be stored.

    Depth-limited because YAML aliases can build self-referencing structures.
    """
    if depth > 32:
        return "..."
    if isinstance(value, dict):
        return {str(k): _plain_data(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain_data(v, depth + 1) for v in value]
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


# --- block structure ---------------------------------------------------------

def _scan_blocks(lines: list[str], first: int,
                 deadline: Deadline = NO_DEADLINE) -> tuple[list[_Heading], list[str]]:
    """Find headings and classify every line.

    kinds[i] is one of: front, code, comment, blank, heading, rule, text.
    """
    kinds = ["front"] * len(lines)
    headings: list[_Heading] = []
    fence: tuple[str, int] | None = None
    para: int | None = None          # first line of the open paragraph
    container = False                # inside a list item / quote until a blank line
    comment = False                  # inside an HTML comment block
    items = _Items()
    for i in range(first, len(lines)):
        deadline.every(i)
        line = lines[i]
        if fence is not None:
            kinds[i] = "code"
            if _closes_fence(line, fence):
                fence = None
            continue
        if not line.strip():
            para, container, kinds[i] = None, False, "blank"
            items.blank = not comment
            continue
        rel = items.relative(line, lazy=para is not None or container)
        if comment or _COMMENT_RE.match(rel):
            kinds[i], para, comment = "comment", None, "-->" not in line
            continue
        m = _FENCE_RE.match(rel)
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence, para, container = (m.group(1)[0], len(m.group(1)), items.base), None, False
            kinds[i] = "code"
            continue
        m = _ATX_RE.match(line)
        if m:
            content = _ATX_CLOSE_RE.sub("", (m.group(2) or "").strip()).strip()
            headings.append(_Heading(i, i, len(m.group(1)), content, line.strip()))
            para, container, kinds[i] = None, False, "heading"
            items.close_beyond(len(line) - len(line.lstrip(" ")))
            continue
        m = _SETEXT_RE.match(line)
        if m and para is not None:
            text = " ".join(lines[j].strip() for j in range(para, i))
            level = 1 if m.group(1)[0] == "=" else 2
            headings.append(_Heading(para, i, level, text, text))
            kinds[para:i + 1] = ["heading"] * (i + 1 - para)
            para = None
            continue
        kinds[i] = _body_kind(rel, para is not None, container)
        if kinds[i] == "rule" or _CONTAINER_RE.match(rel):
            para, container = None, container or kinds[i] != "rule"
            if kinds[i] != "rule":
                items.open(rel)
        elif kinds[i] == "text" and para is None and not container:
            para = i
    return headings, kinds


class _Items:
    """The open list items' content columns, so that an item's later paragraphs
    (after a blank line, indented to its content) are its text and only 4 more
    columns make code (CommonMark 5.2). A line left of an item's content closes
    it, unless it continues a paragraph lazily."""

    def __init__(self) -> None:
        self.columns: list[int] = []
        self.base = 0                # columns of the current line that belong to items
        self.blank = False           # a blank line came before the current one

    def relative(self, line: str, lazy: bool) -> str:
        """The line without the columns its open items own."""
        self.base = 0
        if not self.columns:  # the common case: no list open, nothing to take off
            self.blank = False
            return line
        wide = line.expandtabs(4) if "\t" in line else line
        indent = len(wide) - len(wide.lstrip(" "))
        if self.blank or not lazy:
            self.close_beyond(indent)
        self.blank = False
        self.base = min(indent, self.columns[-1]) if self.columns else 0
        return wide[self.base:]

    def close_beyond(self, indent: int) -> None:
        while self.columns and self.columns[-1] > indent:
            self.columns.pop()

    def open(self, rel: str) -> None:
        """Push the item a marker line opens (``rel`` from relative())."""
        m = _ITEM_RE.match(rel)
        if m is None:
            return  # a block quote
        self.close_beyond(self.base + len(m.group(1)))
        gap = len(m.group(3))
        self.columns.append(self.base + m.end(2) + (gap if 0 < gap <= 4 and m.end() < len(rel) else 1))


def _body_kind(line: str, in_para: bool, container: bool) -> str:
    if _RULE_RE.match(line):
        return "rule"
    indent = len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip(" "))
    if indent >= 4 and not in_para and not container:
        return "code"  # indented code block; cannot interrupt a paragraph
    return "text"


def _closes_fence(line: str, fence: tuple[str, int, int]) -> bool:
    """``fence`` is (char, length, columns its list items own); up to 3 more indent."""
    stripped = line.strip()
    indent = len(line) - len(line.lstrip(" "))
    char, length, base = fence
    return (indent - base <= 3 and len(stripped) >= length
            and stripped == char * len(stripped))


# --- sections ----------------------------------------------------------------

def _sections(lines, first, headings, names, kinds, deadline: Deadline) -> list[Entry]:
    out: list[Entry] = []
    pre_end = headings[0].start if headings else len(lines)
    pre = [i for i in range(first, pre_end) if lines[i].strip()]
    if pre:
        out.append(_entry(lines, kinds, PREAMBLE, PREAMBLE, None, 0, pre[0], pre[-1],
                          lines[pre[0]].strip(), pre[0]))
    ends = _section_ends(headings, len(lines))
    parents = _parents(headings)
    used: dict[str, int] = {}
    quals: list[str] = []
    for k, h in enumerate(headings):
        deadline.every(k)
        parent = quals[parents[k]] if parents[k] is not None else None
        qual = unique_qualname(f"{parent} > {names[k]}" if parent else names[k], used)
        quals.append(qual)
        end = _trim_blank(lines, h.end, ends[k])
        out.append(_entry(lines, kinds, names[k], qual, parent, h.level, h.start, end,
                          h.signature, h.end + 1))
    return out


def _section_ends(headings: list[_Heading], n_lines: int) -> list[int]:
    """0-based last line of each section: before the next heading of level <= its own."""
    ends = [n_lines - 1] * len(headings)
    open_: list[int] = []
    for k, h in enumerate(headings):
        while open_ and headings[open_[-1]].level >= h.level:
            ends[open_.pop()] = h.start - 1
        open_.append(k)
    return ends


def _parents(headings: list[_Heading]) -> list[int | None]:
    """Index of the nearest preceding heading with a lower level, per heading."""
    parents: list[int | None] = []
    stack: list[int] = []
    for k, h in enumerate(headings):
        while stack and headings[stack[-1]].level >= h.level:
            stack.pop()
        parents.append(stack[-1] if stack else None)
        stack.append(k)
    return parents


def unique_qualname(qual: str, used: dict[str, int]) -> str:
    """Qualnames must be unique within a file; repeats get ' (2)', ' (3)', ...

    ``used`` maps each qualname to the last suffix tried for it, so a file
    with thousands of identical names stays linear.
    """
    if qual in used:
        base = qual
        n = used[base]
        while qual in used:
            n += 1
            qual = f"{base} ({n})"
        used[base] = n
    used[qual] = 1
    return qual


def _trim_blank(lines: list[str], floor: int, end: int) -> int:
    while end > floor and not lines[end].strip():
        end -= 1
    return end


def _entry(lines, kinds, name, qual, parent, level, start, end, signature, doc_from) -> Entry:
    text = "\n".join(lines[start:end + 1])
    return Entry(kind="section", name=name, qualname=qual, start_line=start + 1,
                 end_line=end + 1, signature=signature[:MAX_BODY],
                 doc=_first_paragraph(lines, kinds, doc_from, end), parent=parent,
                 content_hash=content_hash(text), body=text[:MAX_BODY], level=level)


def _first_paragraph(lines, kinds, start: int, end: int) -> str:
    """First run of text lines before any sub-heading (code blocks are skipped)."""
    para: list[str] = []
    for i in range(start, end + 1):
        if kinds[i] == "heading":
            break
        if kinds[i] == "text":
            para.append(lines[i].strip())
        elif para:
            break
    return " ".join(para)[:MAX_DOC]


def _plain(text: str) -> str:
    """Heading source -> the text a reader sees (links, code, emphasis removed)."""
    if not _MARKUP_RE.search(text):  # most link texts: skip the nine passes below
        return " ".join(text.split())
    text = _LINK_TEXT_RE.sub(lambda m: m.group(1), text)
    parts: list[str] = []
    pos = 0
    for m in _CODE_SPAN_RE.finditer(text):
        parts.append(_strip_inline(text[pos:m.start()]))
        parts.append(m.group(2).strip())  # code span content is literal
        pos = m.end()
    parts.append(_strip_inline(text[pos:]))
    return " ".join("".join(parts).split())


def _strip_inline(text: str) -> str:
    text = _HTML_TAG_RE.sub("", text)
    for rx in (_STRONG_RE, _STRIKE_RE):
        text = rx.sub(lambda m: m.group(m.lastindex), text)
    text = _EM_STAR_RE.sub(r"\1", text)
    text = _EM_UNDER_RE.sub(r"\1", text)
    return _ESCAPE_RE.sub(r"\1", text)


# --- anchors -----------------------------------------------------------------

def github_slug(text: str) -> str:
    """GitHub heading id: lowercase, punctuation dropped, each space -> '-'."""
    keep = []
    for ch in text.lower():
        cat = unicodedata.category(ch)
        if ch in " -" or cat[0] in "LN" or cat in ("Mn", "Mc", "Me", "Pc"):
            keep.append("-" if ch == " " else ch)
    return "".join(keep)


def _anchor_set(names: list[str], lines: list[str], kinds: list[str]) -> set[str]:
    """Every fragment that resolves in this file: heading slugs and HTML ids."""
    seen: dict[str, int] = {}
    anchors = {"top"}  # browsers scroll to the top for #top
    for name in names:
        anchors.add(_next_slug(github_slug(name if name != UNTITLED else ""), seen))
    for line, kind in zip(lines, kinds):
        if kind in ("text", "heading"):
            anchors.update(m.group(1).lower() for m in _HTML_ID_RE.finditer(line))
    return anchors


def _next_slug(slug: str, seen: dict[str, int]) -> str:
    """Duplicate slugs get -1, -2, ... exactly as github-slugger does."""
    original = slug
    while slug in seen:
        seen[original] += 1
        slug = f"{original}-{seen[original]}"
    seen[slug] = 0
    return slug


# --- links -------------------------------------------------------------------

def _links(lines, masked, kinds, path, anchors, exists, deadline: Deadline) -> list[Link]:
    """``masked`` holds the lines that have code spans, with the spans blanked out."""
    out: list[Link] = []
    defs = _definitions(lines, kinds)
    for i, (line, kind) in enumerate(zip(lines, kinds)):
        deadline.every(i)
        line = masked.get(i, line)
        if kind not in ("text", "heading") or not any(c in line for c in "[<:"):
            continue
        for target, text, forced in _line_links(_mask_comments(line), defs):
            lk = forced or classify_target(target)
            out.append(Link(line=i + 1, target=target, kind=lk, text=text,
                            broken=_is_broken(lk, target, path, anchors, exists)))
    return out


# An inline code span worth a graph edge: a (dotted/scoped) identifier, a
# call such as `load()`, or a relative path. Sentences and commands are not.
_SPAN_NAME_RE = re.compile(r"^[A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_][\w]*)*(?:\(\))?$")
_SPAN_PATH_RE = re.compile(r"^[\w.\-]+(?:/[\w.\-]+)+/?$|^[\w\-]+\.[A-Za-z]{1,5}$")


def _code_span_refs(spans: _Spans) -> list[Reference]:
    out: list[Reference] = []
    for i, content in spans.found:
        text = content.strip()
        if len(text) <= 200 and (_SPAN_NAME_RE.match(text) or _SPAN_PATH_RE.match(text)):
            out.append(Reference(name=text.removesuffix("()"), kind="code_span", line=i + 1))
    return out


def _mask_comments(line: str) -> str:
    """Blank out inline <!-- comments --> (same length); find() keeps it linear."""
    parts, pos = [], 0
    start = line.find("<!--")
    while start >= 0:
        end = line.find("-->", start + 2)  # '<!-->' is a whole (empty) comment
        if end < 0:
            break
        parts += [line[pos:start], " " * (end + 3 - start)]
        pos = end + 3
        start = line.find("<!--", pos)
    return "".join(parts) + line[pos:] if parts else line


def _code_spans(lines, kinds, deadline: Deadline) -> _Spans:
    """Code spans of every paragraph: a span may wrap a line (CommonMark 6.1), so
    backtick runs pair across the consecutive text lines of one block. A list item
    or a table row starts a block of its own (GFM pairs spans per cell)."""
    spans = _Spans({}, [])
    if not any("`" in line for line in lines):
        return spans
    group: list[int] = []
    for i, kind in enumerate(kinds):
        deadline.every(i)
        if kind == "text" and group and kinds[i - 1] == "text" and not _own_block(lines[i]):
            group.append(i)
            continue
        _pair_runs(lines, group, spans)
        group = [i] if kind in ("text", "heading") else []
        if group and lines[i].lstrip().startswith("|"):
            _pair_runs(lines, group, spans)
            group = []
    _pair_runs(lines, group, spans)
    return spans


def _own_block(line: str) -> bool:
    return bool(_CONTAINER_RE.match(line)) or line.lstrip().startswith("|")


def _pair_runs(lines: list[str], group: list[int], spans: _Spans) -> None:
    """Pair each backtick run with the next run of its length; linear, since the next
    same-length run of every run is known up front (a right-to-left pass)."""
    runs = [(i, m.start(), m.end()) for i in group if "`" in lines[i]
            for m in _BACKTICKS_RE.finditer(lines[i])]
    if len(runs) < 2:
        return
    nxt: list[int | None] = [None] * len(runs)
    last: dict[int, int] = {}
    for k in range(len(runs) - 1, -1, -1):
        width = runs[k][2] - runs[k][1]
        nxt[k], last[width] = last.get(width), k
    cuts: dict[int, list[tuple[int, int]]] = {}
    k = 0
    while k < len(runs):
        if nxt[k] is None:
            k += 1
            continue
        (la, s, e), (lb, cs, ce) = runs[k], runs[nxt[k]]
        k = nxt[k] + 1
        if la == lb:  # the common case, kept short
            spans.found.append((la, lines[la][e:cs]))
            cuts.setdefault(la, []).append((s, ce))
            continue
        spans.found.append((la, _span_text(lines, la, e, lb, cs)))
        for i in range(la, lb + 1):  # a group's lines are consecutive
            cuts.setdefault(i, []).append((s if i == la else 0, ce if i == lb else len(lines[i])))
    for i, parts in cuts.items():
        spans.masked[i] = _blank(lines[i], parts)


def _span_text(lines: list[str], la: int, start: int, lb: int, end: int) -> str:
    """A wrapped span's text: its line endings read as spaces."""
    return " ".join([lines[la][start:], *lines[la + 1:lb], lines[lb][:end]])


def _blank(line: str, parts: list[tuple[int, int]]) -> str:
    """The line with each (start, end) part, left to right, blanked out (same length)."""
    out, pos = [], 0
    for s, e in parts:
        out += [line[pos:s], " " * (e - s)]
        pos = e
    return "".join(out) + line[pos:]


def _definitions(lines, kinds) -> dict[str, str]:
    """Normalized label -> target of every reference definition; the first one wins."""
    defs: dict[str, str] = {}
    for line, kind in zip(lines, kinds):
        m = _REFDEF_RE.match(line) if kind == "text" and "]:" in line else None
        if m and not m.group(1).startswith("^"):
            defs.setdefault(_label(m.group(1)), m.group(2))
    return defs


def _label(text: str) -> str:
    """Labels match case-insensitively, with runs of white space as one space."""
    return " ".join(text.split()).casefold()


def _line_links(line: str, defs: dict[str, str] | None = None) -> list[tuple[str, str, str | None]]:
    """(target, text, forced kind) for every link on one line, left to right."""
    found: list[tuple[int, str, str, str | None]] = []

    def take(pos: int, target: str, text: str, forced: str | None = None) -> None:
        target = target.strip()
        if target.startswith("<") and target.endswith(">"):
            target = target[1:-1].strip()
        if target:
            found.append((pos, target, text, forced))

    def inline(m: re.Match, base: int = 0) -> str:
        take(base + m.start(), _ESCAPE_RE.sub(r"\1", m.group(3)), _plain(m.group(2)))
        for inner in _INLINE_RE.finditer(m.group(2)):  # [![badge](img)](link)
            inline(inner, base + m.start(2))
        return " " * len(m.group(0))

    m = _REFDEF_RE.match(line)
    if m and not m.group(1).startswith("^"):  # [^1]: is a footnote, not a link
        take(m.start(2), m.group(2), m.group(1))
        line = line[:m.start()] + " " * (m.end() - m.start()) + line[m.end():]
    def reference(m: re.Match, base: int = 0) -> str:
        target = defs.get(_label(m.group(3) or m.group(2)))
        for inner in _REF_RE.finditer(m.group(2)):  # [![badge][img]][link], [x [label]]
            reference(inner, base + m.start(2))
        if target is None:
            return m.group(0)
        take(base + m.start(), target, _plain(m.group(2)))
        return " " * len(m.group(0))

    line = _INLINE_RE.sub(inline, line)
    if defs and "[" in line:
        line = _REF_RE.sub(reference, line)
    line = _AUTOLINK_RE.sub(lambda m: _taken(take, m, "url"), line)
    line = _EMAIL_AUTOLINK_RE.sub(lambda m: _taken(take, m, "url"), line)
    line = _HTML_ATTR_RE.sub(lambda m: _taken(take, m, None), line)
    for m in _BARE_URL_RE.finditer(line):
        take(m.start(), _trim_url(m.group(0)), "", "url")
    return [(t, x, f) for _, t, x, f in sorted(found, key=lambda f: f[0])]


def _taken(take, m: re.Match, forced: str | None) -> str:
    take(m.start(), m.group(1) if m.group(1) is not None else m.group(2), "", forced)
    return " " * len(m.group(0))


def _trim_url(url: str) -> str:
    """Drop trailing punctuation that belongs to the sentence, not the URL."""
    while url:
        if url[-1] in ".,;:!?*_~'\"":
            url = url[:-1]
        elif url[-1] == ")" and url.count(")") > url.count("("):
            url = url[:-1]
        else:
            break
    return url


def classify_target(target: str) -> str:
    if target.startswith("#"):
        return "anchor"
    if target.startswith("//") or _SCHEME_RE.match(target):
        return "url"
    return "file"


def resolve_link(source: str, target: str) -> str | None:
    """Repo-relative POSIX path a file link points at.

    "" for a link to the file itself (``?x`` or ``#a`` only), "." for the repo
    root, None when ``..`` climbs out of the repo. A leading ``/`` means the
    repo root, as on GitHub.
    """
    t = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if not t:
        return ""
    base = "" if t.startswith("/") else posixpath.dirname(source)
    norm = posixpath.normpath(posixpath.join(base, t.lstrip("/")))
    if norm == ".." or norm.startswith("../"):
        return None
    return norm


def _is_broken(kind, target, path, anchors, exists) -> bool:
    if kind == "anchor":
        frag = unquote(target[1:]).lower()
        return bool(frag) and frag not in anchors
    if kind != "file" or exists is None:
        return False
    resolved = resolve_link(path, target)
    if resolved is None:
        return True
    if resolved in ("", "."):
        return False
    try:
        return not exists(resolved)
    except Exception:  # noqa: BLE001 - a failing probe must not fail the parse
        return False
