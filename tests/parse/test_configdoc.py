"""extract_config (JSON/YAML/TOML keys) and extract_text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from indexd.model import ParseResult, content_hash
from indexd.parse.configdoc import extract_config
from indexd.parse.plaintext import extract_text


def _rows(result):
    return [(e.qualname, e.level, e.parent, e.start_line, e.end_line) for e in result.entries]


JSON = """\
{
  "name": "x",
  "scripts": {
    "build": "tsc",
    "test": "jest"
  },
  "list": [1, {"deep": 2}],
  "n": {"x": {"name": 1}}, "last": 3
}
"""


def test_json_keys_and_ranges():
    r = extract_config(JSON, "package.json", "json")
    assert r.error is None and r.language == "json"
    assert _rows(r) == [
        ("name", 1, None, 2, 2),
        ("scripts", 1, None, 3, 6),
        ("scripts.build", 2, "scripts", 4, 4),
        ("scripts.test", 2, "scripts", 5, 5),
        ("list", 1, None, 7, 7),
        ("n", 1, None, 8, 8),
        ("n.x", 2, "n", 8, 8),
        ("last", 1, None, 8, 8),
    ]
    assert r.meta["top_keys"] == ["name", "scripts", "list", "n", "last"]
    scripts = r.entries[1]
    assert scripts.kind == "key" and scripts.name == "scripts"
    assert scripts.signature == '"scripts": {'
    assert scripts.doc == ""
    body = "\n".join(JSON.split("\n")[2:6])
    assert scripts.body == body and scripts.content_hash == content_hash(body)


def test_json_with_comments_and_trailing_commas():
    text = '// tsconfig\n{\n  "compilerOptions": {\n    "strict": true, // yes\n  },\n}\n'
    r = extract_config(text, "tsconfig.json", "json")
    assert r.error is None and r.meta["jsonc"] is True
    assert _rows(r) == [("compilerOptions", 1, None, 3, 5),
                        ("compilerOptions.strict", 2, "compilerOptions", 4, 4)]


def test_json_duplicate_keys_get_unique_qualnames():
    r = extract_config('{"a": 1,\n"a": 2}', "x.json", "json")
    assert [e.qualname for e in r.entries] == ["a", "a (2)"]


def test_json_non_object_root_has_no_keys():
    r = extract_config("[1, 2]", "x.json", "json")
    assert r.error is None and r.entries == () and r.meta["top_keys"] == []


def test_json_error_has_line():
    r = extract_config('{\n  "a": 1,\n  "b": \n}', "x.json", "json")
    assert r.entries == ()
    assert r.error.startswith("JSON syntax error at line 4, column 1:")


YAML = """\
# Workflow name
name: CI
on:
  push:
    branches: [main]

  # PRs too
  pull_request: {}
# the jobs
jobs:
  build:
    steps:
      - run: |
          echo hi
          # part of the script
---
kind: Service
metadata:
  name: x
"""


def test_yaml_keys_ranges_and_comment_docs():
    r = extract_config(YAML, "ci.yml", "yaml")
    assert r.error is None
    assert _rows(r) == [
        ("name", 1, None, 2, 2),
        ("on", 1, None, 3, 8),
        ("on.push", 2, "on", 4, 5),
        ("on.pull_request", 2, "on", 8, 8),
        ("jobs", 1, None, 10, 15),
        ("jobs.build", 2, "jobs", 11, 15),
        ("kind", 1, None, 17, 17),
        ("metadata", 1, None, 18, 19),
        ("metadata.name", 2, "metadata", 19, 19),
    ]
    docs = {e.qualname: e.doc for e in r.entries}
    assert docs["name"] == "Workflow name"
    assert docs["on.pull_request"] == "PRs too"
    assert docs["jobs"] == "the jobs"
    assert docs["on.push"] == ""
    assert r.meta["top_keys"] == ["name", "on", "jobs", "kind", "metadata"]
    assert r.meta["documents"] == 2


def test_yaml_repeated_documents_and_tags():
    text = "kind: A\n---\nkind: B\nres: !Ref Thing\n"
    r = extract_config(text, "x.yaml", "yaml")
    assert r.error is None
    assert _rows(r) == [("kind", 1, None, 1, 1), ("kind (2)", 1, None, 3, 3),
                        ("res", 1, None, 4, 4)]


def test_yaml_alias_children_are_not_misplaced():
    text = "a: &x\n  k: 1\nb: *x\n"
    r = extract_config(text, "x.yaml", "yaml")
    assert _rows(r) == [("a", 1, None, 1, 2), ("a.k", 2, "a", 2, 2), ("b", 1, None, 3, 3)]


def test_yaml_error_has_line():
    r = extract_config("a: 1\nb: [1, 2\nc: 3\n", "x.yaml", "yaml")
    assert r.entries == ()
    assert r.error.startswith("YAML syntax error at line 3")


def test_yaml_bad_character_error_has_line():
    r = extract_config("a: 1\nb: \x00\n", "x.yaml", "yaml")
    assert r.entries == () and r.error.startswith("YAML error at line 2")


TOML = """\
# the title
title = "x"
a.b = 1

[build-system]
requires = ["setuptools"]

# project table
[project]
name = "indexd"
deps = [
  "[not a table]",
]
desc = \"\"\"
[fake]
key = 1
\"\"\"

[project.scripts]
x = "y"

[[bin]]
name = "a"

[[bin]]
name = "b"

[tool.pytest.ini_options]
x = 1
"""


def test_toml_keys_ranges_and_docs():
    r = extract_config(TOML, "pyproject.toml", "toml")
    assert r.error is None
    assert _rows(r) == [
        ("title", 1, None, 2, 2),
        ("a", 1, None, 3, 3),
        ("a.b", 2, "a", 3, 3),
        ("build-system", 1, None, 5, 6),
        ("build-system.requires", 2, "build-system", 6, 6),
        ("project", 1, None, 9, 20),
        ("project.name", 2, "project", 10, 10),
        ("project.deps", 2, "project", 11, 13),
        ("project.desc", 2, "project", 14, 17),
        ("project.scripts", 2, "project", 19, 20),
        ("bin", 1, None, 22, 26),
        ("tool", 1, None, 28, 29),
        ("tool.pytest", 2, "tool", 28, 29),
    ]
    docs = {e.qualname: e.doc for e in r.entries}
    assert docs["title"] == "the title" and docs["project"] == "project table"
    assert r.meta["top_keys"] == ["title", "a", "build-system", "project", "bin", "tool"]
    assert r.entries[5].signature == "[project]"


def test_toml_split_table_and_quoted_keys():
    text = '[a]\nx = 1\n[b]\ny = 2\n[a.c]\nz = 3\n["q.k"]\nv = 1\n'
    r = extract_config(text, "x.toml", "toml")
    assert _rows(r) == [("a", 1, None, 1, 2), ("a.x", 2, "a", 2, 2),
                        ("b", 1, None, 3, 4), ("b.y", 2, "b", 4, 4),
                        ("a.c", 2, "a", 5, 6), ("q.k", 1, None, 7, 8),
                        ("q.k.v", 2, "q.k", 8, 8)]


def test_toml_error_has_line():
    r = extract_config("a = 1\nb = = 2\n", "x.toml", "toml")
    assert r.entries == ()
    assert r.error.startswith("TOML syntax error:") and "line 2" in r.error


@pytest.mark.parametrize("language,text", [
    ("json", "[" * 100_000),
    ("json", '{"a":' * 100_000),
    ("yaml", "[" * 100_000),
    ("toml", "a = " + "[" * 100_000),
    ("toml", "a = " + "{b = " * 100_000),
])
def test_deep_nesting_is_an_error_not_a_crash(language, text):
    r = extract_config(text, "x", language)
    assert r.entries == () and r.error


@pytest.mark.parametrize("language", ["json", "yaml", "toml"])
@pytest.mark.parametrize("text", ["", "\n", "  \n\n"])
def test_empty_files(language, text):
    r = extract_config(text, "x", language)
    assert r.error is None and r.entries == () and r.meta["top_keys"] == []


def test_bom_is_ignored():
    r = extract_config('\ufeff{"a": 1}', "x.json", "json")
    assert r.error is None and [e.name for e in r.entries] == ["a"]


def test_unknown_language_is_an_error():
    assert extract_config("a", "x", "ini").error


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.sampled_from(["json", "yaml", "toml"]))
def test_random_bytes_never_raise(data, language):
    r = extract_config(data.decode("utf-8", "replace"), "x", language)
    assert isinstance(r, ParseResult)
    assert (r.error is None) or r.entries == ()


CONFIG_ALPHABET = st.sampled_from(
    ["{", "}", "[", "]", '"a"', '"b"', ":", ",", "=", "\n", "  ", "a", "b", "1", "#c",
     "- ", "---", "[t]", "[[t]]", '"""', "'", "//", "/*", "*/", "."])


@settings(max_examples=200, deadline=None)
@given(st.lists(CONFIG_ALPHABET, max_size=60).map("".join),
       st.sampled_from(["json", "yaml", "toml"]))
def test_configish_text_never_raises(text, language):
    r = extract_config(text, "x", language)
    assert isinstance(r, ParseResult)
    for e in r.entries:
        assert 1 <= e.start_line <= e.end_line
        assert e.level in (1, 2)


def test_plaintext_single_file_entry():
    text = "\n\n  First line  \nsecond\n"
    r = extract_text(text, "docs/notes.txt")
    assert r.language == "text" and r.error is None
    (e,) = r.entries
    assert (e.kind, e.name, e.qualname, e.start_line, e.end_line) == \
        ("file", "notes.txt", "docs/notes.txt", 1, 4)
    assert e.signature == "First line" and e.doc == "" and e.body == text
    assert e.content_hash == content_hash(text)


def test_plaintext_empty_and_long():
    assert extract_text("", "a").entries[0].end_line == 1
    e = extract_text("x" * 5000, "a").entries[0]
    assert len(e.signature) == 200 and len(e.body) == 2000 and e.end_line == 1
