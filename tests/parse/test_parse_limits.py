"""What parsing costs: it grows with the input, not with its square, and every parser
stops at the per-file time limit with the file kept as a file-level entry.

The bounds are complexity bounds, measured in CPU time and taking the least of a few
runs, never absolute seconds: they must hold on a busy 2-core machine as on a fast one.
"""

from __future__ import annotations

import re

import pytest

from testlib import cost_ratio, cpu_s

from indexd.model import FileRecord
from indexd.parse import parse_source
from indexd.parse.markdown import split_lines
from indexd.store.rows import entry_rows


def assert_scales_linearly(make, n: int, language: str) -> None:
    """4x the input (n/2 -> 2n) must cost < 8x the CPU: linear gives 4x, quadratic 16x.
    (At 2x, linear 2x vs quadratic 4x left a busy machine's cache noise -- 3.1x for a
    linear TOML parse -- no room.)"""
    small, big = make(n // 2), make(2 * n)
    ratio = cost_ratio(lambda: parse_source(f"f.{language}", small, language),
                       lambda: parse_source(f"f.{language}", big, language), 8)
    assert ratio < 8, (
        f"{language}: 4x the input ({len(small)} -> {len(big)} chars) cost "
        f"{ratio:.1f}x the CPU")


# -- markdown --------------------------------------------------------------------------

def many_headings(n: int) -> str:
    return "".join(f"## Heading {i}\n\nBody of section {i}.\n\n" for i in range(n))


def one_long_section(n: int) -> str:
    return "# Notes\n\n" + "a\n" * n


def test_markdown_with_20k_headings_scales_linearly():
    assert_scales_linearly(many_headings, 10_000, "markdown")


def test_markdown_section_of_200k_lines_scales_linearly():
    assert_scales_linearly(one_long_section, 100_000, "markdown")


@pytest.mark.parametrize("make", [
    lambda n: "Text <!-- note --> " * n + "\n",     # many inline comments on one line
    lambda n: "-->" + "<!-- " * n + "\n",            # openers that never close
    lambda n: "<!--\n" + "# not a heading\n" * n,    # an unclosed comment block
], ids=["inline", "unclosed-inline", "unclosed-block"])
def test_markdown_html_comments_scale_linearly(make):
    assert_scales_linearly(make, 50_000, "markdown")


DEFINED = "[a]: https://example.org\n\n"  # reference links are looked for only with one


@pytest.mark.parametrize("make", [
    lambda n: DEFINED + "[a] " * n + "\n",          # shortcut references, all links
    lambda n: DEFINED + "[x][" * n + "\n",          # full references never closed
    lambda n: DEFINED + "[\\" * n + "\n",          # escaped brackets: no link opens
    lambda n: "[\\" * n + "](x\n",                 # ... nor an inline one
], ids=["shortcut", "unclosed-full", "escaped-ref", "escaped-inline"])
def test_markdown_reference_links_scale_linearly(make):
    assert_scales_linearly(make, 10_000, "markdown")


@pytest.mark.parametrize("make", [
    lambda n: "`" + "a [b](c.md)\n" * n + "`\n",   # one code span over a long paragraph
    lambda n: "`x ``\n" * n,                       # spans wrapping every line, '``' unpaired
], ids=["one-span", "every-line"])
def test_markdown_wrapped_code_spans_scale_linearly(make):
    assert_scales_linearly(make, 50_000, "markdown")


NESTED_50 = "".join("  " * k + "- x\n\n" + "  " * k + "  more [a](b.md)\n" for k in range(50))


@pytest.mark.parametrize("make", [
    lambda n: (NESTED_50 + "\ntop\n\n") * (n // 50),            # opened and closed again
    lambda n: "".join("  " * k + "- x\n" for k in range(400)) + "- y\n" * n,  # one pop, 400 deep
], ids=["reopened", "deep-then-flat"])
def test_markdown_nested_list_items_scale_linearly(make):
    assert_scales_linearly(make, 2_000, "markdown")


def own_first_words(body: str) -> tuple[str, ...]:
    """Where a chunk's own text may start: at its head, or after the overlap with the
    previous chunk, which the chunker separates from the chunk's own text by a blank line."""
    heads = [body, body.split("\n\n", 1)[1]] if "\n\n" in body else [body]
    return tuple(h.split()[0] for h in heads)


def test_chunk_parts_start_on_the_line_of_their_text():
    # One long paragraph per line, every word unique: chunks start mid-line (after a
    # sentence end), so a chunk's text is never found at the start of a line.
    paras = [" ".join(" ".join(f"w{p}_{s}_{k}" for k in range(6)) + "." for s in range(80))
             for p in range(6)]
    text = "# Intro\n\nshort intro\n\n## Long\n\n" + "\n\n".join(paras) + "\n\n## After\n\nend\n"
    lines = split_lines(text)
    parts = [e for e in parse_source("g.md", text, "markdown").entries
             if e.qualname.startswith("Intro > Long [part")]
    assert len(parts) >= 6
    for e in parts:
        words = lines[e.start_line - 1].split()
        assert any(w in words for w in own_first_words(e.body)), (e.qualname, e.start_line)
    starts = [e.start_line for e in parts]
    assert starts == sorted(starts) and starts[-1] > starts[0]


def test_chunk_parts_of_identical_lines_get_their_own_lines():
    # Every line is "a": a text search finds the first line for every chunk; each chunk
    # must still start where its own text is, further down the section.
    text = one_long_section(20_000)
    parts = [e for e in parse_source("n.md", text, "markdown").entries if "[part" in e.qualname]
    assert len(parts) > 10
    starts = [e.start_line for e in parts]
    assert starts[0] >= 3 and starts[-1] > 19_000       # line 3 is the first "a"
    # each chunk holds a few hundred of the one-word lines
    assert all(100 < b - a < 1000 for a, b in zip(starts, starts[1:])), starts


def test_chunk_lines_count_lines_as_the_sections_do():
    # A form feed or U+2028 is a line break for str.splitlines, not for editors: the part
    # must land on the line its text is on as the section entries number them.
    filler = " ".join(f"word{i}" for i in range(900))
    text = "# Doc\n\nform\x0cfeed and\u2028separator\n\n" + filler + "\n"
    lines = split_lines(text)
    parts = [e for e in parse_source("d.md", text, "markdown").entries if "[part" in e.qualname]
    assert parts
    for e in parts:
        words = lines[e.start_line - 1].split()
        assert any(w in words for w in own_first_words(e.body)), (e.qualname, e.start_line)


# -- code ------------------------------------------------------------------------------

def statements_on_one_line(n: int) -> str:
    return "x = 1; " * n


@pytest.mark.parametrize("language", ["bash", "python"])
def test_statements_cost_the_same_whatever_follows_them(language):
    # Each node's text was read through the parser's read callback, copying up to 64 KiB
    # of what follows it: 1,000 statements on one line cost 6x more with a 57 KB comment
    # after them than the two parts parsed apart (900 KB of bash on one line: 13 s CPU).
    statements = statements_on_one_line(1_000) + "\n"
    comment = "# " + "c" * 57_000 + "\n"
    apart = sum(cpu_s(lambda t=t: parse_source(f"f.{language}", t, language), runs=3)
                for t in (statements, comment))
    together = cpu_s(lambda: parse_source(f"f.{language}", statements + comment, language),
                     runs=3)
    assert together < 3 * apart, f"{language}: {together / apart:.1f}x the parts' CPU"


def deep_parens_after_a_function(n: int) -> str:
    return "def kept_func(): pass\n" + "(" * n + "\n"


def test_wide_syntax_error_scales_linearly_and_keeps_symbols():
    # 100k '(' recover into one ERROR node with 100k children; tree-sitter's query walk
    # is quadratic in that width (7 s for 100k), and no progress callback can stop it.
    assert_scales_linearly(deep_parens_after_a_function, 50_000, "python")
    result = parse_source("deep.py", deep_parens_after_a_function(100_000), "python")
    assert "kept_func" in {e.name for e in result.entries}
    assert result.error and "syntax error" in result.error


# -- config ----------------------------------------------------------------------------

CONFIG_KEYS = {
    "json": lambda n: "{" + ", ".join(f'"k{i}": {{"a": 1, "b": 2}}' for i in range(n)) + "}",
    "yaml": lambda n: "".join(f"k{i}:\n  a: 1\n  b: 2\n" for i in range(n)),
    "toml": lambda n: "".join(f"[k{i}]\na = 1\nb = 2\n" for i in range(n)),
}


@pytest.mark.parametrize("language", sorted(CONFIG_KEYS))
def test_config_with_many_keys_scales_linearly(language):
    # JSON on one line hashed the whole line once per key; the next-sibling search
    # copied the rest of the key list once per key.
    assert_scales_linearly(CONFIG_KEYS[language], 5_000, language)


# -- the per-file time limit -----------------------------------------------------------

LIMITED = {
    "python": "def f():\n    return 1\n" * 50,
    "bash": "f() { echo hi; }\n" * 50,
    "markdown": "# Title\n\n" + "Some [link](other.md) text.\n\n## Sub\n\nmore\n" * 50,
    "json": '{"a": {"b": 1}, "c": [1, 2]}',
    "yaml": "a:\n  b: 1\nc: [1, 2]\n",
    "toml": "[a]\nb = 1\n[c]\nd = 2\n",
}


@pytest.mark.parametrize("language", sorted(LIMITED))
def test_every_parser_stops_at_the_time_limit(language):
    result = parse_source(f"f.{language}", LIMITED[language], language, limit_s=0)
    assert result.error and result.error.startswith("parse timed out"), result.error
    assert result.entries == () and result.language == language
    # What the index keeps of it: one file-level entry, the reason on the file.
    rec = FileRecord(realm="r", repo="/repo", path=f"f.{language}", language=language)
    rows = entry_rows(rec, result, LIMITED[language])
    assert [r["kind"] for r in rows] == ["file"]


def test_limit_stops_tree_sitter_while_it_parses():
    # 900 KB of bash takes a few hundred ms to parse: a 10 ms limit stops the parser
    # itself (the progress callback), which used to surface as "ValueError: Parsing failed".
    result = parse_source("big.sh", statements_on_one_line(130_000), "bash", limit_s=0.01)
    assert re.match(r"parse timed out after [\d.]+s", result.error or ""), result.error
    assert result.entries == ()


def test_default_limit_leaves_normal_files_alone():
    for language, text in LIMITED.items():
        result = parse_source(f"f.{language}", text, language)
        assert result.entries, language
        assert not (result.error or "").startswith("parse timed out"), language


@pytest.mark.parametrize("language", ["json", "yaml", "toml"])
def test_deep_nesting_never_depends_on_the_recursion_limit(language):
    # json.loads and the Python parsers recurse once per level: with a raised recursion
    # limit (a host process, a test tool) 100k levels of '[' crashed the process with a
    # segfault instead of "nesting too deep". Run in a child: a crash must fail the test.
    import subprocess
    import sys

    text = {"json": "[" * 100_000 + "]" * 100_000, "yaml": "[" * 100_000 + "]" * 100_000,
            "toml": "a = " + "[" * 100_000 + "]" * 100_000 + "\n"}[language]
    code = ("import sys; sys.setrecursionlimit(1_000_000)\n"
            "from indexd.parse import parse_source\n"
            f"r = parse_source('f.{language}', sys.stdin.read(), '{language}')\n"
            "print(r.error)\n")
    out = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, (out.returncode, out.stderr[-500:])
    assert "too deep" in out.stdout, out.stdout
