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


def test_a_context_named_after_code_is_no_test(git_repo, tmp_path):
    for rel, text in FILES.items():
        git_repo.write(rel, text)
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    run_cli("index", "--json", tool="indexd", check=True)
    data = record(git_repo.path, tmp_path, "code-named-test")
    report = json.loads(run_cli("tests", "ingest", data, "--json", check=True).stdout)
    skipped = {s["context"]: s["reason"] for s in report["skipped_contexts"]}
    assert "pkg.blocks.HashProcessor.test" in skipped
    assert "outside the test files" in skipped["pkg.blocks.HashProcessor.test"]
    for symbol in ("_level", "HashProcessor.test"):
        target = f"{git_repo.path / 'pkg/blocks.py'}::{symbol}"
        answer = json.loads(run_cli("tests", "affected", target, "--json", check=True).stdout)
        assert "tests/test_render.py" in {t["path"] for t in answer["tests"]}, (symbol, answer)
