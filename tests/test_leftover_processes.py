"""The session fixture in tests/conftest.py fails a run that leaves a process behind."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="the fixture walks /proc")

TESTS = Path(__file__).resolve().parent

LEAKS = '''
import subprocess, sys

def test_leaks_a_child():
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)  # child-leak"])

def test_leaks_an_orphan():
    # The shell exits at once: the sleeper is reparented to init, found by its environment.
    subprocess.run(["sh", "-c", "exec 0<&- 1>&- 2>&-; "
                    + sys.executable + " -c 'import time; time.sleep(120)  # orphan-leak' &"],
                   check=True)
'''

CLEAN = '''
import subprocess, sys

def test_waits_for_its_child():
    subprocess.run([sys.executable, "-c", "pass"], check=True)
'''


def _session(pytester, body: str):
    pytester.makeconftest((TESTS / "conftest.py").read_text())
    pytester.makepyfile(test_inner=body)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q",
                                         f"--rootdir={pytester.path}",
                                         "-o", f"pythonpath={TESTS}")


def test_a_leaked_child_and_an_orphan_fail_the_session_by_name(pytester):
    result = _session(pytester, LEAKS)
    out = result.stdout.str()
    assert result.ret != 0, out
    assert "still running after the session" in out
    assert "child-leak" in out and "orphan-leak" in out


def test_a_session_that_waits_for_its_children_passes(pytester):
    result = _session(pytester, CLEAN)
    assert result.ret == 0, result.stdout.str()


PATCHES_OPEN = '''
import os

def test_forbids_open(monkeypatch, indexd_home):
    # tests/scan/test_reader.py proves a file is never opened this way
    def boom(*args, **kwargs):
        raise AssertionError("opened")
    monkeypatch.setattr(os, "open", boom)
    assert indexd_home.is_dir()
'''


def test_a_test_that_patches_os_open_leaves_no_home_behind(pytester, monkeypatch, tmp_path):
    """The autouse INDEXD_HOME was removed before the test's patches were undone, so
    shutil.rmtree met the patched os.open and gave up quietly: /tmp gathered an empty
    `ix*` folder per such test and run (five a run of the suite)."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    result = _session(pytester, PATCHES_OPEN)
    assert result.ret == 0, result.stdout.str()
    assert sorted(p.name for p in temp.iterdir()) == []
