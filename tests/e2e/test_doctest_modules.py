"""pytest's ``--doctest-modules`` (parso 0.8.4, held out in bench/impact_vs_tests.py; humanize
sets it too): pytest then imports every module under its test paths to collect doctests, a
script in the test folder among them. parso's test/fuzz_diff_parser.py builds a grammar at
import, so breaking ``Grammar.__init__`` failed it, while ``tests affected`` selected
``test_*.py`` modules only and called four such changes safe.

With the option in the repo's pytest configuration (pytest.ini, pyproject.toml's
``[tool.pytest.ini_options]``, tox.ini, setup.cfg), every Python module under a test folder
that reaches the change is a test file to run; without it, such a script is support only.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from e2e.test_tests_affected import affected_after_edit

GRAMMAR = ("class Grammar:\n"
           "    def __init__(self, rules):\n        self.rules = rules\n\n\n"
           "def load():\n    return Grammar(['a'])\n")
FILES = {
    "pkg/__init__.py": "",
    "pkg/grammar.py": GRAMMAR,
    "tests/__init__.py": "",
    "tests/test_load.py": ("from pkg.grammar import load\n\n\n"
                           "def test_load():\n    assert load().rules == ['a']\n"),
    # a script, no test in it: it runs the grammar when imported
    "tests/fuzz.py": "from pkg.grammar import load\n\nGRAMMAR = load()\n",
}
CONFIGS = {
    "pytest.ini": "[pytest]\naddopts = -q --doctest-modules\n",
    "pyproject.toml": "[tool.pytest.ini_options]\naddopts = [\"--doctest-modules\"]\n",
    "setup.cfg": "[tool:pytest]\naddopts = --doctest-modules -rs\n",
}


def run_pytest(repo, files: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *files],
                          cwd=repo, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_doctest_modules_selects_a_script_that_runs_the_change_at_import(git_repo, config):
    files = FILES | {config: CONFIGS[config]}
    answer = affected_after_edit(git_repo, files, "pkg/grammar.py",
                                 "self.rules = rules", "self.rules = rules[5]")
    selected = [t["path"] for t in answer["tests"]]
    assert "tests/fuzz.py" in selected and "tests/test_load.py" in selected, answer
    # and pytest, run on the selection, really fails in the script
    ran = run_pytest(git_repo.path, selected)
    assert ran.returncode != 0 and "tests/fuzz.py" in ran.stdout, ran.stdout


def test_without_doctest_modules_a_script_is_not_a_test_file(git_repo):
    answer = affected_after_edit(git_repo, FILES | {"pytest.ini": "[pytest]\naddopts = -q\n"},
                                 "pkg/grammar.py", "self.rules = rules", "self.rules = rules[5]")
    assert [t["path"] for t in answer["tests"]] == ["tests/test_load.py"]
