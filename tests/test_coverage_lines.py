"""Covered lines -> the symbol they count for (indexd/coverage_lines.py), on entries the
real Python parser makes: a def's header runs in the scope around it, so only body
lines say a function ran (at import, or in a test)."""

from __future__ import annotations

from indexd.coverage_lines import line_map
from indexd.parse import parse_source

SOURCE = '''import functools


def deco(fn):
    return fn


@deco
def multi(a,
          b: dict = {1: 2}):
    """Docs: with a colon."""
    return a


def one(): return 1


class K:
    x = 1

    def m(self):
        def inner(y):
            return y
        return inner(2)
'''


def rows():
    result = parse_source("pkg/a.py", SOURCE, "python")
    out = [{"kind": "file", "qualname": "", "path": "pkg/a.py", "start_line": 1,
            "end_line": SOURCE.count("\n"), "content_hash": "f"}]
    for e in result.entries:
        out.append({"kind": e.kind, "qualname": e.qualname, "path": "pkg/a.py",
                    "start_line": e.start_line, "end_line": e.end_line,
                    "content_hash": e.content_hash, "body": e.body})
    return out


def line_of(text: str) -> int:
    return SOURCE.splitlines().index(text) + 1


def owner(lines, text: str):
    row = lines.at(line_of(text))
    return row["qualname"] or "<file>"


def ran(lines, text: str):
    row = lines.ran(line_of(text))
    return row["qualname"] if row else None


def test_header_lines_count_for_the_scope_around_and_only_body_lines_show_a_run():
    lines = line_map(rows())
    # a module's def and decorator lines run at import: the module's, not the function's
    assert owner(lines, "def multi(a,") == "<file>" and ran(lines, "def multi(a,") is None
    assert owner(lines, "          b: dict = {1: 2}):") == "<file>"
    assert owner(lines, "@deco") == "<file>"
    assert owner(lines, "    return a") == "multi" and ran(lines, "    return a") == "multi"
    # a method's def line runs in the class body, a nested def's in the method
    assert owner(lines, "    def m(self):") == "K" and ran(lines, "    def m(self):") is None
    assert owner(lines, "        def inner(y):") == "K.m"
    assert ran(lines, "        def inner(y):") == "K.m"      # it runs only when m runs
    assert ran(lines, "            return y") == "K.m.inner"
    # a class body runs whenever its module is imported: that defines K, it runs nothing
    assert owner(lines, "    x = 1") == "K" and ran(lines, "    x = 1") is None
    # one line for header and body: the function's for tests, no proof of a run
    assert owner(lines, "def one(): return 1") == "one"
    assert ran(lines, "def one(): return 1") is None
