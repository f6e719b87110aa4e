"""Hostile input: random and mutated bytes into every parser (hypothesis), pathological
files through the real daemon, and requests that try to read outside the realms."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from testlib import cost_ratio, settings_with_realm

from indexd.errors import RealmError
from indexd.model import ParseResult
from indexd.parse import parse_source
from indexd.parse.languages import GRAMMARS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "langs"

DOC_SAMPLES = {
    "markdown": "# Title\n\nSome [link](other.md#x) and `code`.\n\n## Sub\n\n- item\n```py\nx=1\n```\n",
    "json": '{"name": "x", "list": [1, 2, {"deep": true}], "nested": {"a": {"b": null}}}\n',
    "yaml": "name: x\nlist:\n  - 1\n  - {deep: true}\nnested:\n  a:\n    b: ~\nanchor: &a {k: v}\nref: *a\n",
    "toml": '[tool]\nname = "x"\n[tool.sub]\nlist = [1, 2]\n[[arr]]\nk = "v"\n',
    "text": "Plain notes.\nSecond line with words.\n",
}
FIXTURE_FOR = {"python": "sample.py", "javascript": "sample.js", "typescript": "sample.ts",
               "tsx": "sample.tsx", "go": "sample.go", "rust": "sample.rs", "java": "sample.java",
               "c": "sample.c", "cpp": "sample.cpp", "ruby": "sample.rb", "bash": "sample.sh"}
EXT = {"python": "py", "javascript": "js", "typescript": "ts", "tsx": "tsx", "go": "go",
       "rust": "rs", "java": "java", "c": "c", "cpp": "cpp", "ruby": "rb", "bash": "sh",
       "markdown": "md", "json": "json", "yaml": "yaml", "toml": "toml", "text": "txt"}
LANGUAGES = sorted(GRAMMARS) + ["markdown", "json", "yaml", "toml", "text"]


def sample(language: str) -> bytes:
    name = FIXTURE_FOR.get(language)
    if name and (FIXTURES / name).exists():
        return (FIXTURES / name).read_bytes()
    return DOC_SAMPLES.get(language, DOC_SAMPLES["text"]).encode()


def check_parse(language: str, text: str) -> ParseResult:
    result = parse_source(f"dir with space/-file.{EXT[language]}", text, language,
                          lambda rel: False)
    assert isinstance(result, ParseResult), type(result)
    assert result.error is None or isinstance(result.error, str), result.error
    return result


def decode_like_reader(data: bytes) -> str:
    """What the reader could hand a parser: UTF-8, else cp1252 (never surrogates)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


mutation = st.tuples(st.sampled_from(["insert", "delete", "replace", "dup"]),
                     st.floats(0, 1), st.binary(min_size=0, max_size=64))


def mutate(data: bytes, ops) -> bytes:
    buf = bytearray(data)
    for op, where, chunk in ops:
        pos = int(where * len(buf))
        if op == "insert":
            buf[pos:pos] = chunk
        elif op == "delete":
            del buf[pos:pos + len(chunk) + 1]
        elif op == "replace":
            buf[pos:pos + len(chunk)] = chunk
        else:
            buf[pos:pos] = buf[pos:pos + 256]
    return bytes(buf)


FAST = settings(max_examples=25, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("language", LANGUAGES)
@FAST
@given(text=st.text(max_size=2000))
def test_random_text_never_escapes(language, text):
    check_parse(language, text)


@pytest.mark.parametrize("language", LANGUAGES)
@FAST
@given(ops=st.lists(mutation, min_size=1, max_size=12))
def test_mutated_fixture_never_escapes(language, ops):
    check_parse(language, decode_like_reader(mutate(sample(language), ops)))


@pytest.mark.parametrize("language", LANGUAGES)
@FAST
@given(data=st.binary(max_size=3000))
def test_random_bytes_never_escape(language, data):
    check_parse(language, decode_like_reader(data))


# kind -> (text of scale n, the n tested): each also at half its size, for the cost ratio.
PATHOLOGICAL = {
    "huge_line": (lambda n: "x = 1; " * n, 900_000 // 7),
    "deep_parens": (lambda n: "(" * n, 100_000),
    "deep_brackets": (lambda n: "[" * n + "]" * n, 100_000),
    "deep_braces": (lambda n: "{" * n, 50_000),
    "nul_bytes": (lambda n: "def f():\x00\x00 pass\n" * n, 1000),
    "mixed": (lambda n: "caf\u00e9 \ufffd \u202e\u0000 \U0001f600 \r\n\r" * n, 2000),
    "many_lines": (lambda n: "a\n" * n, 200_000),
}


DOC_ONLY = {"deep_brackets", "deep_braces", "many_lines", "nul_bytes", "mixed"}


# These cost 0.05-3 s CPU per code grammar (docs/reliability.md): every grammar with
# INDEXD_HOSTILE_FULL=1, in `make test` only for the document parsers.
FULL = os.environ.get("INDEXD_HOSTILE_FULL") == "1"
# tree-sitter-bash itself parses NUL-laden lines in quadratic time (the parse alone: 0.15 s
# for 1000 lines, 0.55 s for 2000, 2.3 s for 4000); the per-file time limit bounds it.
GRAMMAR_QUADRATIC = {("bash", "nul_bytes")}


def _cases():
    # Every language gets the 900 KB line and 100k '('; the rest (covered for code by the
    # random-text properties) only for the document parsers, or with FULL.
    for language in LANGUAGES:
        for kind in sorted(PATHOLOGICAL):
            if kind in DOC_ONLY and language in GRAMMARS and not FULL:
                continue
            marks = [pytest.mark.xfail(reason="quadratic in the grammar; bounded by the "
                                              "per-file limit")] \
                if (language, kind) in GRAMMAR_QUADRATIC else []
            yield pytest.param(language, kind, id=f"{language}-{kind}", marks=marks)


@pytest.mark.parametrize(("language", "kind"), list(_cases()))
def test_pathological_inputs_bounded(language, kind):
    # Never an exception, and no worse than linear: 4x the input, < 8x the CPU (linear 4x,
    # quadratic 16x; at 2x/3x a busy machine measured 3.03x for rust's 100k '('). A
    # seconds bound belongs in bench/ (bench/hostile_parse.py), not in a test.
    make, n = PATHOLOGICAL[kind]
    small, big = make(n // 4), make(n)
    ratio = cost_ratio(lambda: check_parse(language, small),
                       lambda: check_parse(language, big), 8)
    assert ratio < 8, f"{language}-{kind}: 4x the input cost {ratio:.1f}x the CPU"


# -- through the daemon ---------------------------------------------------------

STRANGE_NAMES = {
    "dir with space/my file.py": "def spaced_name_func(): pass\n",
    "-leading-dash.py": "def leading_dash_func(): pass\n",
    "new\nline.py": "def newline_name_func(): pass\n",
    "ünïcødé/日本語.py": "def unicode_name_func(): pass\n",
    "--.py": "def double_dash_func(): pass\n",
    "tab\tname.py": "def tab_name_func(): pass\n",
}


def test_hostile_files_through_the_daemon(git_repo, daemon):
    for rel, text in STRANGE_NAMES.items():
        git_repo.write(rel, text)
    git_repo.write("huge_line.py", "def huge_line_func(): pass\n" + "x = 1; " * (900_000 // 7) + "\n")
    git_repo.write("deep.py", "def deep_nesting_func(): pass\n" + "(" * 100_000 + "\n")
    git_repo.write("deep.json", "[" * 100_000 + "]" * 100_000)
    git_repo.write("nul.py", b"def nul_func(): pass\n\x00\x00\x00binary")
    git_repo.write("latin1.py", "def cafe_func():\n    return 'caf\u00e9'\n".encode("cp1252"))
    git_repo.write("utf16.py", "def utf_sixteen_func(): pass\n".encode("utf-16"))
    git_repo.write("bad_utf8.py", b"def bad_utf_func(): pass\n\x81\x8d\x8f\x90\x9d")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    st_ = d.call("status", sync=True, timeout=120)
    repo = st_["realms"][0]["repos"][0]
    assert repo["skipped"].get("binary", 0) == 1, repo           # nul.py
    for rel, text in STRANGE_NAMES.items():
        name = text.split("(")[0][4:]
        res = d.call("search", query=name, limit=50)
        assert (rel, name) in {(h["path"], h["symbol"]) for h in res["results"]}, rel
        sym = d.call("symbols", path=str(git_repo.path / rel))
        assert name in [h["symbol"] for h in sym["results"]], rel
    for name in ("huge_line_func", "deep_nesting_func", "cafe_func", "utf_sixteen_func"):
        res = d.call("search", query=name, limit=50)
        assert name in {h["symbol"] for h in res["results"]}, name
    assert not d.call("search", query="nul func")["results"] or all(
        h["path"] != "nul.py" for h in d.call("search", query="nul func")["results"])
    assert d.proc.poll() is None and st_["state"] == "fresh"


def test_requests_outside_the_realms_are_refused(git_repo, daemon, tmp_path):
    git_repo.write("a.py", "def inside(): pass\n")
    git_repo.write("sub/b.py", "def inside_b(): pass\n")
    os.symlink("/etc", git_repo.path / "etc_link")
    os.symlink("/etc/passwd", git_repo.path / "passwd.py")
    git_repo.commit()
    outside = tmp_path / "outside.py"
    outside.write_text("def outside(): pass\n")
    settings_with_realm("work", git_repo.path)
    d = daemon()
    st_ = d.call("status", sync=True, timeout=60)
    repo = st_["realms"][0]["repos"][0]
    assert repo["skipped"].get("symlink_outside", 0) >= 1, repo

    root = git_repo.path
    refused = [
        {"path": "/etc/passwd"},
        {"path": str(outside)},
        {"path": str(root / ".." / "outside.py")},
        {"path": str(root / "sub" / ".." / ".." / "outside.py")},
        {"path": "../../../../../../etc/passwd"},
        {"path": str(root / "etc_link" / "passwd")},
        {"path": str(root / "passwd.py")},
        {"path": "../../etc/passwd", "realm": "work", "repo": str(root)},
        {"path": "/etc/passwd", "realm": "work", "repo": str(root)},
        {"path": "passwd", "realm": "work", "repo": "/etc"},
    ]
    for params in refused:
        with pytest.raises(RealmError):
            d.call("symbols", **params)
    for query in ("root", "passwd", "outside"):
        for h in d.call("search", query=query, limit=100)["results"]:
            assert h["repo"] == str(root) and h["path"] in ("a.py", "sub/b.py"), h
    for target in ("/etc/passwd", str(outside)):
        with pytest.raises(RealmError):
            d.call("impact", target=target)
    assert d.call("symbols", path=str(root / "sub" / ".." / "a.py"))["path"] == "a.py"


# -- the rows stage: summaries made while parsing -------------------------------

# pylint's own tests/functional/t/too/too_many_lines.py: two comment lines, a thousand
# blank ones, then code. The module-docstring pattern backtracked exponentially on it,
# so `indexd index` over pylint's sdist never finished (a worker spun for minutes).
COMMENTS_THEN_BLANKS = ("# pylint: disable=missing-docstring\n# -1: [too-many-lines]\n"
                        + "\n" * 1000 + "ZERFZAER = 1\nHEHEHE = 2\n")


def test_module_docstring_search_is_linear_in_blank_lines():
    from indexd.enrich.file_summary import module_doc

    def text(n):
        return "# a comment\n" + "\n" * n + "x = 1\n"

    small, big = text(12), text(24)
    ratio = cost_ratio(lambda: module_doc(small, "python"), lambda: module_doc(big, "python"), 3)
    assert ratio < 3, f"2x the blank lines cost {ratio:.1f}x the CPU"
    assert module_doc('# c\n\n"""The lead."""\n', "python") == "The lead."


def test_comments_then_a_thousand_blank_lines_index_like_any_file(git_repo):
    from testlib import run_cli

    git_repo.write("tests/too_many_lines.py", COMMENTS_THEN_BLANKS)
    git_repo.write("app.py", "def app_main():\n    return 1\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    done = run_cli("index", "--json", tool="indexd", timeout=300)   # never finished before
    assert done.returncode == 0, done.stderr
    found = run_cli("search", "HEHEHE", "--json", timeout=60)
    assert "tests/too_many_lines.py" in {h["path"] for h in __import__("json").loads(found.stdout)["results"]}
