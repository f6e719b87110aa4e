"""`make install-user`: indexd and indexctl on PATH from any directory, pointing at
this checkout's venv (the first-run snag: `make run` said `.venv/bin/indexctl`,
which works only from the checkout)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_install_user_links_both_commands(tmp_path):
    bindir = tmp_path / "bin"
    env = os.environ | {"PATH": "/usr/bin:/bin"}
    out = subprocess.run(["make", "-s", "install-user", f"BINDIR={bindir}"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert f"{bindir} is not on PATH" in out.stdout
    for tool in ("indexd", "indexctl"):
        link = bindir / tool
        assert link.is_symlink() and link.resolve() == (ROOT / ".venv/bin" / tool).resolve()
    where = subprocess.run(["indexd", "paths", "--json"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=120, env=env | {"PATH": f"{bindir}:/usr/bin:/bin"})
    assert where.returncode == 0 and '"socket"' in where.stdout, where.stderr
    again = subprocess.run(["make", "-s", "install-user", f"BINDIR={bindir}"], cwd=ROOT,
                           env=env | {"PATH": f"{bindir}:/usr/bin:/bin"}, capture_output=True,
                           text=True, timeout=600)
    assert again.returncode == 0 and "not on PATH" not in again.stdout, again
