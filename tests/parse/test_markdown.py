"""extract_markdown: sections, frontmatter, links, robustness."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from indexd.model import ParseResult, content_hash
from indexd.parse.markdown import extract_markdown, github_slug, resolve_link

DOC = """\
---
title: From Frontmatter
tags: [a, b]
date: 2024-01-02
---

Intro line.

# Project `indexd`

Project intro
spans two lines.

## Install

```sh
# not a heading
pip install indexd
```

### From **source**

Clone it.


Setext Two
----------

text under setext

## Install

again

Top Setext
==========
"""


def _by_qual(result):
    return {e.qualname: e for e in result.entries}


def test_sections_levels_parents_and_ranges():
    r = extract_markdown(DOC, "README.md")
    assert r.error is None and r.language == "markdown"
    got = [(e.qualname, e.level, e.parent, e.start_line, e.end_line) for e in r.entries]
    assert got == [
        ("(preamble)", 0, None, 7, 7),
        ("Project indexd", 1, None, 9, 33),
        ("Project indexd > Install", 2, "Project indexd", 14, 23),
        ("Project indexd > Install > From source", 3, "Project indexd > Install", 21, 23),
        ("Project indexd > Setext Two", 2, "Project indexd", 26, 29),
        ("Project indexd > Install (2)", 2, "Project indexd", 31, 33),
        ("Top Setext", 1, None, 35, 36),
    ]


def test_section_fields():
    lines = DOC.split("\n")
    e = _by_qual(extract_markdown(DOC, "README.md"))["Project indexd"]
    assert e.kind == "section" and e.name == "Project indexd"
    assert e.signature == "# Project `indexd`"
    assert e.doc == "Project intro spans two lines."
    text = "\n".join(lines[8:33])  # lines 9..33
    assert e.content_hash == content_hash(text)
    assert e.body == text[:2000]


def test_setext_signature_and_doc():
    e = _by_qual(extract_markdown(DOC, "README.md"))["Project indexd > Setext Two"]
    assert (e.name, e.signature, e.doc) == ("Setext Two", "Setext Two", "text under setext")


def test_duplicate_headings_keep_name_but_unique_qualname():
    r = extract_markdown(DOC, "README.md")
    installs = [e for e in r.entries if e.name == "Install"]
    assert [e.qualname for e in installs] == ["Project indexd > Install",
                                             "Project indexd > Install (2)"]
    assert len({e.qualname for e in r.entries}) == len(r.entries)


def test_frontmatter_and_title():
    r = extract_markdown(DOC, "README.md")
    assert r.meta["frontmatter"] == {"title": "From Frontmatter", "tags": ["a", "b"],
                                     "date": "2024-01-02"}
    assert r.meta["title"] == "From Frontmatter"


def test_title_falls_back_to_first_h1_then_none():
    assert extract_markdown("## two\n# One *big*\n# Other\n", "a.md").meta["title"] == "One big"
    assert extract_markdown("plain text\n", "a.md").meta["title"] is None


def test_bad_frontmatter_is_reported_not_fatal():
    r = extract_markdown("---\na: [1,\n---\n# H\n", "a.md")
    assert r.error is None
    assert "frontmatter" not in r.meta
    assert r.meta["frontmatter_error"].startswith("YAML error at line")
    assert [(e.name, e.start_line) for e in r.entries] == [("H", 4)]


def test_unclosed_frontmatter_is_text():
    r = extract_markdown("---\nnot closed\n", "a.md")
    assert "frontmatter" not in r.meta
    assert r.entries[0].name == "(preamble)"


def test_fenced_code_hides_headings_and_links():
    text = "# A\n~~~\n# no\n[x](gone.md)\n~~~\n````\n```\n# still code\n````\n## B\n"
    r = extract_markdown(text, "a.md", exists=lambda p: False)
    assert [(e.name, e.start_line, e.end_line) for e in r.entries] == [("A", 1, 10), ("B", 10, 10)]
    assert r.links == ()


def test_unclosed_fence_runs_to_eof():
    r = extract_markdown("# A\n```\n# no\n", "a.md")
    assert [e.name for e in r.entries] == ["A"]


def test_indented_and_list_lines_are_not_headings():
    text = "    # indented code\n- item\n---\n> quote\n---\n#nospace\n"
    r = extract_markdown(text, "a.md")
    assert [e.name for e in r.entries] == ["(preamble)"]


def test_atx_closing_hashes_and_empty_heading():
    r = extract_markdown("# Title ##\n#\n", "a.md")
    assert [e.name for e in r.entries] == ["Title", "(untitled)"]


def test_trailing_blank_lines_excluded():
    r = extract_markdown("# A\ntext\n\n\n# B\n\n", "a.md")
    assert [(e.start_line, e.end_line) for e in r.entries] == [(1, 2), (5, 5)]


LINKS = """\
# Guide

## Set up

See [inline](other.md#part) and ![img](img/logo%20big.png "Logo").
[![badge](https://img.shields.io/b.svg)](https://ci.example.com/x)
Jump to [setup](#set-up), [dup](#faq-1), [bad](#nowhere) and [top](#top).
Escape [out](../../outside.md), [parent](../README.md), [root](/docs/x.md?plain=1).
Mail <mailto:me@example.com>, auto <https://auto.example.com> and bare https://bare.example.com/p).
Code `[no](code.md)` and `https://code.example.com` are ignored.
<img src="img/html.png"> <a href="missing.html">x</a>

## FAQ

## FAQ

[ref]: ./refs/target.md
"""


def test_every_link_kind_and_broken_flags():
    existing = {"docs/other.md", "docs/img/logo big.png", "README.md", "docs/img/html.png"}
    r = extract_markdown(LINKS, "docs/guide.md", exists=existing.__contains__)
    got = [(ln.line, ln.target, ln.kind, ln.broken, ln.text) for ln in r.links]
    assert got == [
        (5, "other.md#part", "file", False, "inline"),
        (5, "img/logo%20big.png", "file", False, "img"),
        (6, "https://ci.example.com/x", "url", False, "badge"),
        (6, "https://img.shields.io/b.svg", "url", False, "badge"),
        (7, "#set-up", "anchor", False, "setup"),
        (7, "#faq-1", "anchor", False, "dup"),
        (7, "#nowhere", "anchor", True, "bad"),
        (7, "#top", "anchor", False, "top"),
        (8, "../../outside.md", "file", True, "out"),
        (8, "../README.md", "file", False, "parent"),
        (8, "/docs/x.md?plain=1", "file", True, "root"),
        (9, "mailto:me@example.com", "url", False, ""),
        (9, "https://auto.example.com", "url", False, ""),
        (9, "https://bare.example.com/p", "url", False, ""),
        (11, "img/html.png", "file", False, ""),
        (11, "missing.html", "file", True, ""),
        (17, "./refs/target.md", "file", True, "ref"),
    ]


def test_without_exists_file_links_are_never_broken():
    r = extract_markdown(LINKS, "docs/guide.md")
    assert not any(ln.broken for ln in r.links if ln.kind == "file")
    assert [ln.target for ln in r.links if ln.broken] == ["#nowhere"]


def test_exists_that_raises_does_not_fail_parse():
    def boom(_p):
        raise OSError("nope")
    r = extract_markdown("[a](b.md)\n", "x.md", exists=boom)
    assert r.error is None and r.links[0].broken is False


def test_resolve_link():
    assert resolve_link("docs/a.md", "../b.md#x") == "b.md"
    assert resolve_link("docs/a.md", "sub/c%20d.md?x=1") == "docs/sub/c d.md"
    assert resolve_link("docs/a.md", "../../b.md") is None
    assert resolve_link("a.md", "/x/../y.md") == "y.md"
    assert resolve_link("a.md", "#only") == ""
    assert resolve_link("docs/a.md", "..") == "."


def test_github_slugs():
    assert github_slug("Hello, World!") == "hello-world"
    assert github_slug("a  b_c-d") == "a--b_c-d"
    assert github_slug("Ünïcode ✓ 2") == "ünïcode--2"


def test_empty_and_blank_files():
    for text in ("", "\n\n  \n"):
        r = extract_markdown(text, "a.md")
        assert r.error is None and r.entries == () and r.links == ()
        assert r.meta["title"] is None


def test_crlf_lines():
    r = extract_markdown("# A\r\ntext\r\n## B\r\n", "a.md")
    assert [(e.name, e.start_line, e.end_line) for e in r.entries] == [("A", 1, 3), ("B", 3, 3)]


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_random_text_never_raises(text):
    r = extract_markdown(text, "docs/x.md", exists=lambda p: len(p) % 2 == 0)
    assert isinstance(r, ParseResult)
    for e in r.entries:
        assert 1 <= e.start_line <= e.end_line


MD_ALPHABET = st.sampled_from(["#", "# ", "\n", "=", "-", "`", "~", "[", "]", "(", ")",
                               "!", "<", ">", ":", "http://", " ", "a", "---\n", "*", "_"])


@settings(max_examples=200, deadline=None)
@given(st.lists(MD_ALPHABET, max_size=80).map("".join))
def test_markdownish_text_never_raises(text):
    r = extract_markdown(text, "x.md", exists=lambda p: False)
    assert r.error is None
    assert len({e.qualname for e in r.entries}) == len(r.entries)
    for e in r.entries:
        assert 1 <= e.start_line <= e.end_line


def test_long_sections_are_chunked_for_embedding():
    from indexd.parse import parse_source

    text = "# Guide\n\n" + "\n\n".join(f"Paragraph {i} " + "word " * 80 for i in range(30))
    text += "\n\n## Next\n\nshort\n"
    entries = parse_source("g.md", text, "markdown").entries
    parts = [e for e in entries if e.qualname.startswith("Guide [part")]
    assert len(parts) >= 3
    assert all(e.parent == "Guide" and e.kind == "section" for e in parts)
    assert all("short" not in e.body for e in parts)          # sub-sections are not repeated
    assert "Paragraph 29" in parts[-1].body
    # overlap: each chunk starts with the tail of the previous one
    assert all(e.start_line < 63 for e in parts)


# -- CommonMark corrections found by the markdown-it-py comparison (bench/markdown_swap.py) --

# attrs docs/index.md: a cog script in an HTML comment, with a '#' comment line and an
# f-string <img src> inside; the comment is not rendered (CommonMark 4.6, HTML block type 2).
COG_COMMENT = """\
# *attrs*: Classes Without Boilerplate

Release **{sub-ref}`release`**  ([What's new?](changelog.md))

<!-- [[[cog
# This is mainly called from RTD's pre_build job!

for sponsor in sponsors:
      print(f'<a href="{sponsor["url"]}"><img src="_static/sponsors/{sponsor["img"]}" /></a>')
]]] -->
<a href="https://www.variomedia.de/"><img src="_static/sponsors/Variomedia.svg" /></a>
<!-- [[[end]]] -->

## Getting Started

Read [the overview](overview.md). <!-- [old link](gone.md) -->
"""


def test_html_comments_hide_headings_and_links():
    r = extract_markdown(COG_COMMENT, "docs/index.md", exists=lambda p: False)
    assert r.error is None
    got = [(e.qualname, e.level, e.start_line, e.end_line) for e in r.entries]
    assert got == [("attrs: Classes Without Boilerplate", 1, 1, 16),
                   ("attrs: Classes Without Boilerplate > Getting Started", 2, 14, 16)]
    assert [(ln.line, ln.target) for ln in r.links] == [
        (3, "changelog.md"), (11, "https://www.variomedia.de/"),
        (11, "_static/sponsors/Variomedia.svg"), (16, "overview.md")]


# attrs .github/CODE_OF_CONDUCT.md and docs/types.md: full [text][label], collapsed
# [label][] and shortcut [label] references, resolved through the definitions at the end
# (CommonMark 6.3); a [label] nothing defines and a footnote [^1] are text.
REFERENCE_LINKS = """\
## Attribution

This Code of Conduct is adapted from the [Contributor Covenant][homepage],
version 2.1, available at
[https://www.contributor-covenant.org/version/2/1/code_of_conduct.html][v2.1].

Tools like [Mypy], [*pytype*], or [Pyright][] support *attrs* [^1], unlike [other].

[homepage]: https://www.contributor-covenant.org
[v2.1]: https://www.contributor-covenant.org/version/2/1/code_of_conduct.html
[mypy]: http://mypy-lang.org
[*pytype*]: https://google.github.io/pytype/
[Pyright]: https://github.com/microsoft/pyright
"""


def test_reference_links_resolve_through_their_definitions():
    r = extract_markdown(REFERENCE_LINKS, "CODE_OF_CONDUCT.md", exists=lambda p: False)
    assert [(ln.line, ln.kind, ln.target, ln.text) for ln in r.links][:5] == [
        (3, "url", "https://www.contributor-covenant.org", "Contributor Covenant"),
        (5, "url", "https://www.contributor-covenant.org/version/2/1/code_of_conduct.html",
         "https://www.contributor-covenant.org/version/2/1/code_of_conduct.html"),
        (7, "url", "http://mypy-lang.org", "Mypy"),
        (7, "url", "https://google.github.io/pytype/", "pytype"),
        (7, "url", "https://github.com/microsoft/pyright", "Pyright")]
    assert [ln.line for ln in r.links][5:] == [9, 10, 11, 12, 13]  # the definitions


# indexd docs/decisions.md and docs/benchmarks.md: code spans that wrap a line pair across
# it (CommonMark 6.1), so the next line's backticks are not paired among themselves.
WRAPPED_SPANS = """\
Export runs in a child process (`python -m
indexd.enrich.onnx_export`, ~5 s, see [the export notes](export.md)), and the `onnx`
package is used there only.

- **Typed receivers.** `def f(app: App)`, `a =
  make()` with `make() -> App` give the receiver its class.
"""


def test_code_spans_pair_across_wrapped_lines():
    r = extract_markdown(WRAPPED_SPANS, "docs/decisions.md", exists=lambda p: False)
    assert [(ln.line, ln.target) for ln in r.links] == [(2, "export.md")]
    assert [(ref.line, ref.name) for ref in r.references] == [(2, "onnx")]


# attrs docs/glossary.md: a nested list item whose later paragraphs (after blank lines)
# are indented to the item's content, 4 spaces; they are the item's text, not indented
# code (CommonMark 5.2), and code inside the item needs 4 more.
LIST_PARAGRAPHS = """\
# Glossary

- slotted classes

  - Slotted classes must implement {meth}`__getstate__` to be serializable.
    Therefore, *attrs* creates these methods automatically for slotted classes.

    Also, [think twice](https://www.youtube.com/watch?v=7KnfGDajDQw) before using {mod}`pickle`.

        link = "[not a link](code.md)"

    ```python
    # a comment
    ```

    See [the API](api.md).

Back at the top level.

    [indented code](code.md)
"""


def test_list_item_paragraphs_indented_to_their_content_are_text():
    r = extract_markdown(LIST_PARAGRAPHS, "docs/glossary.md", exists=lambda p: False)
    assert [(ln.line, ln.target) for ln in r.links] == [
        (8, "https://www.youtube.com/watch?v=7KnfGDajDQw"), (16, "api.md")]
    assert [(ref.line, ref.name) for ref in r.references] == [
        (5, "__getstate__"), (8, "pickle")]
    assert [e.qualname for e in r.entries] == ["Glossary"]
