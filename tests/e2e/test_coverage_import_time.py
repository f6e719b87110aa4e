"""Import time from real coverage: what a coverage.py run saw execute outside every test
(the empty context: importing and collecting the test modules) runs whenever its module
is imported, so every test file importing that module breaks with it.

On attrs, `Attribute._setattrs` runs while `import attr` imports (through
`new = copy.copy(self); new._setattrs(...)`, a call no static rule follows): 17 of 40
mutants broke conftest's import and so every test file, and the per-test contexts,
which cannot see import time, named only the files whose tests also call it. Here
`Field._set` is reached the same way, through `getattr`, at import of pkg/fields.py.
"""

from __future__ import annotations

import json

from e2e.test_coverage_ingest import record
from testlib import run_cli, settings_with_realm

FIELDS = ("import copy\n\n\n"
          "class Field:\n"
          "    def __init__(self, name):\n"
          "        self.name = name\n\n"
          "    def evolve(self, name):\n"
          "        new = copy.copy(self)\n"
          "        getattr(new, '_set')(name)   # no static rule follows this\n"
          "        return new\n\n"
          "    def _set(self,\n"
          "             name):\n"
          "        self.name = name\n\n"
          "    def describe(self):\n"
          "        return 'field ' + self.name\n\n\n"
          "DEFAULT = Field('a').evolve('b')   # runs _set on import\n")
SET_EDITED = FIELDS.replace("self.name = name\n\n    def describe",
                            "self.name = name.strip()\n\n    def describe")
DESCRIBE_EDITED = FIELDS.replace("return 'field ' + self.name", "return 'field: ' + self.name")
FILES = {
    "pkg/__init__.py": "",
    "pkg/fields.py": FIELDS,
    "pkg/other.py": "from pkg import fields  # noqa: F401\n\n\ndef twice(x):\n    return 2 * x\n",
    "tests/test_fields.py": ("from pkg.fields import Field\n\n\n"
                             "def test_describe():\n    assert Field('x').describe() == 'field x'\n"),
    "tests/test_other.py": ("from pkg.other import twice\n\n\n"
                            "def test_twice():\n    assert twice(2) == 4\n"),
    "tests/test_alone.py": "def test_alone():\n    assert 1 + 1 == 2\n",
    # pytest imports a folder's conftest.py before every test file below it
    "tests/sub/conftest.py": "import pkg.fields  # noqa: F401\n",
    "tests/sub/test_plain.py": "def test_plain():\n    assert 'a' < 'b'\n",
}
IMPORTERS = {"tests/test_fields.py", "tests/test_other.py", "tests/sub/test_plain.py"}
WHY = "ran at import time (coverage)"


def make_package(git_repo):
    for rel, text in FILES.items():
        git_repo.write(rel, text)
    git_repo.commit()


def import_time_tests(result: dict) -> dict[str, dict]:
    """Test files listed for an import-time run (conftest.py left out: it is listed
    too, as the static import-time rule lists it, but pytest runs no test there)."""
    return {t["path"]: t for t in result["tests"]
            if t.get("why") == WHY and not t["path"].endswith("conftest.py")}


def selected_files(answer: dict) -> set[str]:
    return {t["path"] for t in answer["tests"] if not t["path"].endswith("conftest.py")}


def test_a_function_run_at_import_reaches_every_importing_test_stale_after_its_edit(
        git_repo, daemon, tmp_path):
    make_package(git_repo)
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True)
    report = d.call("tests.ingest", path=str(record(git_repo.path, tmp_path, "one")))
    target = f"{git_repo.path / 'pkg/fields.py'}::Field._set"

    got = import_time_tests(d.call("impact", target=target))
    assert set(got) == IMPORTERS, got          # not tests/test_alone.py: it imports nothing
    chain = got["tests/test_other.py"]["via"]
    assert chain[-1]["to"].endswith("pkg/fields.py::Field._set") and chain[-1]["why"] == WHY
    assert all(v["how"] in ("resolved", "coverage") for v in chain), chain
    assert all(t["how"] == "coverage" and t["stale"] is False for t in got.values())
    assert got["tests/sub/test_plain.py"]["via"][0]["kind"] == "conftest"
    assert report["import_time"] >= 1, report

    # defined at import (its def line ran), never run: no import-time evidence
    describe = d.call("impact", target=f"{git_repo.path / 'pkg/fields.py'}::Field.describe")
    assert import_time_tests(describe) == {}
    assert {t["path"] for t in describe["tests"] if t.get("how") == "coverage"} == {
        "tests/test_fields.py"}

    answer = d.call("tests.affected", targets=[target])
    assert selected_files(answer) == IMPORTERS and answer["safe"] is True
    assert all(ev["why"] == WHY for t in answer["tests"] for ev in t["evidence"])

    # another function of the file changes: the observation of _set holds
    git_repo.write("pkg/fields.py", DESCRIBE_EDITED)
    d.call("status", sync=True)
    assert [t["stale"] for t in import_time_tests(d.call("impact", target=target)).values()
            ] == [False] * 3
    # _set itself changes: still listed, stale and weaker, until the next ingest
    git_repo.write("pkg/fields.py", SET_EDITED)
    d.call("status", sync=True)
    stale = import_time_tests(d.call("impact", target=target))
    assert set(stale) == IMPORTERS
    assert all(t["stale"] is True and t["confidence"] < 1.0 for t in stale.values())
    again = d.call("tests.ingest", path=str(record(git_repo.path, tmp_path, "two")))
    assert again["stale"] == 0 and again["import_time"] == report["import_time"]
    assert [t["stale"] for t in import_time_tests(d.call("impact", target=target)).values()
            ] == [False] * 3


def test_pytest_nodeid_contexts_and_tests_affected_offline(git_repo, tmp_path):
    """pytest-cov's form (nodeid|phase; collection in the empty context), no daemon;
    `indexctl tests affected` says why each file is there."""
    make_package(git_repo)
    settings_with_realm("work", git_repo.path)
    run_cli("index", "--json", tool="indexd", check=True)
    data = record(git_repo.path, tmp_path, "nodeid", contexts="nodeid")
    run_cli("tests", "ingest", data, "--json", check=True)
    target = f"{git_repo.path / 'pkg/fields.py'}::Field._set"
    answer = json.loads(run_cli("tests", "affected", target, "--json", check=True).stdout)
    assert selected_files(answer) == IMPORTERS and answer["safe"] is True
    human = run_cli("tests", "affected", target, check=True).stdout
    assert human.count(WHY) == len(answer["tests"]), human
