"""A context coverage.py names after code, not a test (Python-Markdown 3.7, held out in
bench/impact_vs_tests.py): coverage's ``dynamic_context = test_function`` starts a
context at any function whose name starts with ``test``, and markdown's block processors
each have a ``test(self, parent, block)`` method. The lines those methods and what they
call ran were recorded under ``markdown.blockprocessors.HashHeaderProcessor.test``, not
under the test running them, and ``tests affected`` with that coverage called nine broken
functions safe while tests/test_legacy.py failed.

A context naming a function outside the test files is no test: the ingest reports it
skipped, and what ran under it counts as run outside every known test (from its module's
import), so every test importing that module stays selected.
"""

from __future__ import annotations

import json

from e2e.test_coverage_ingest import record
from testlib import run_cli, settings_with_realm

FILES = {
    "pkg/__init__.py": "",
    "pkg/blocks.py": ("def _level(block):\n    return block.count('#')\n\n\n"
                      "class HashProcessor:\n"
                      "    def test(self, block):\n        return _level(block) > 0\n\n\n"
                      "def parse(blocks):\n"
                      "    p = HashProcessor()\n"
                      "    return [b for b in blocks if p.test(b)]\n"),
    # markdown loads its extensions by name: no import says which module runs
    "pkg/api.py": ("import importlib\n\n\n"
                   "def render(text):\n"
                   "    blocks = importlib.import_module('pkg.blocks')\n"
                   "    return blocks.parse(text.split())\n"),
    # a generated test, as markdown's LegacyTestMeta makes them: coverage starts no
    # context for a function named `check`, so the run is in the empty context until it
    # enters HashProcessor.test
    "tests/test_render.py": ("import unittest\n\nfrom pkg.api import render\n\n\n"
                             "def _make(text, want):\n"
                             "    def check(self):\n"
                             "        self.assertEqual(render(text), want)\n"
                             "    return check\n\n\n"
                             "class TestRender(unittest.TestCase):\n"
                             "    test_render = _make('# a', ['#'])\n"),
    "tests/test_level.py": ("from pkg.blocks import _level\n\n\n"
                            "def test_level():\n    assert _level('##') == 2\n"),
    "tests/test_alone.py": "def test_alone():\n    assert 1 + 1 == 2\n",
}


def indexed_with_coverage(git_repo, tmp_path, files: dict[str, str], name: str) -> dict:
    """The files committed, indexed, their tests run under coverage and ingested: the report."""
    for rel, text in files.items():
        git_repo.write(rel, text)
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    run_cli("index", "--json", tool="indexd", check=True)
    data = record(git_repo.path, tmp_path, name)
    return json.loads(run_cli("tests", "ingest", data, "--json", check=True).stdout)


def test_a_context_named_after_code_is_no_test(git_repo, tmp_path):
    report = indexed_with_coverage(git_repo, tmp_path, FILES, "code-named-test")
    skipped = {s["context"]: s["reason"] for s in report["skipped_contexts"]}
    assert "pkg.blocks.HashProcessor.test" in skipped
    assert "outside the test files" in skipped["pkg.blocks.HashProcessor.test"]
    for symbol in ("_level", "HashProcessor.test"):
        target = f"{git_repo.path / 'pkg/blocks.py'}::{symbol}"
        answer = json.loads(run_cli("tests", "affected", target, "--json", check=True).stdout)
        assert "tests/test_render.py" in {t["path"] for t in answer["tests"]}, (symbol, answer)


# markdown's extensions are modules loaded by name (`extensions=['wikilinks']`); its
# generated legacy tests run them in the empty context, so what they ran reads as run at
# import, and no test imports the extension's module: the import-time evidence selects
# nothing, while a test with a context of its own covered the function. `tests affected`
# called WikiLinksInlineProcessor._getMeta safe, and tests/test_legacy.py failed.
PLUGIN_FILES = {
    "pkg/__init__.py": "",
    "pkg/plugins/__init__.py": "",
    "pkg/plugins/wiki.py": "def meta(text):\n    return text.upper()\n",
    "pkg/api.py": ("import importlib\n\n\n"
                   "def render(text, plugin):\n"
                   "    return importlib.import_module('pkg.plugins.' + plugin).meta(text)\n"),
    "tests/test_generated.py": FILES["tests/test_render.py"].replace(
        "render(text)", "render(text, 'wiki')").replace("_make('# a', ['#'])",
                                                         "_make('a', 'A')"),
    "tests/test_wiki.py": ("from pkg.plugins.wiki import meta\n\n\n"
                           "def test_meta():\n    assert meta('b') == 'B'\n"),
}


def test_a_module_no_test_imports_that_ran_outside_every_test_is_not_safe(git_repo, tmp_path):
    indexed_with_coverage(git_repo, tmp_path, PLUGIN_FILES, "plugin")
    target = f"{git_repo.path / 'pkg/plugins/wiki.py'}::meta"
    answer = json.loads(run_cli("tests", "affected", target, "--json", check=True).stdout)
    assert "tests/test_wiki.py" in {t["path"] for t in answer["tests"]}
    assert answer["safe"] is False
    row = answer["changed"][0]
    assert row["tested"] == "unknown" and row["ran_unimported"].endswith("pkg/plugins/wiki.py")
    human = run_cli("tests", "affected", target).stdout
    assert "no test imports" in human, human
