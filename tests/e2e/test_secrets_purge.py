"""Secrets never reach the disk; deleted or newly ignored content can be purged.

The user's purge: `indexctl purge` (daemon running or not). Equivalent by hand,
daemon stopped:

    .venv/bin/python -c "from indexd.config import load_settings; from indexd.store import Store; \\
        Store(load_settings().paths.store_dir).optimize(purge=True)"

A clean shutdown alone is not enough: it optimizes with the retention window
(version_retention_s, 300 s), so old versions still hold deleted rows.
"""

from __future__ import annotations

import random
import string
import subprocess
from pathlib import Path

from testlib import BIN, settings_with_realm

PURGE = ("from indexd.config import load_settings; from indexd.store import Store; "
         "Store(load_settings().paths.store_dir).optimize(purge=True)")


def marker(prefix: str, n: int = 20, alphabet=string.ascii_lowercase) -> str:
    rnd = random.SystemRandom()
    return prefix + "".join(rnd.choice(alphabet) for _ in range(n))


def files_containing(root: Path, needle: str) -> list[str]:
    data = needle.encode()
    hits = []
    for p in root.rglob("*"):
        if p.is_file() and not p.is_symlink():
            try:
                if data in p.read_bytes():
                    hits.append(str(p.relative_to(root)))
            except OSError:
                pass
    return hits


def purge(env) -> None:
    subprocess.run([str(BIN / "python"), "-c", PURGE], env=env, check=True, capture_output=True,
                   timeout=120)


def test_secret_value_masked_and_never_written(git_repo, daemon):
    secret = "AKIA" + "".join(random.SystemRandom().choice(string.ascii_uppercase + string.digits)
                              for _ in range(16))
    git_repo.write("config.py", f'region = "eu-west-1"\naws_key = "{secret}"\n')
    git_repo.write("app.py", "def app_main(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    st = d.call("status", sync=True, timeout=60)
    repo = st["realms"][0]["repos"][0]
    assert repo["redacted"] == 1 and not repo["skipped"], repo   # indexed, the value masked
    found = d.call("search", query="aws key region", context=3)
    assert any(h["path"] == "config.py" for h in found["results"])
    assert secret not in str(found)
    d.stop()
    assert files_containing(d.home / "data", secret) == []
    assert files_containing(d.home, secret) == [], "the secret leaked into logs or caches"


def _index_marker_then(git_repo, daemon, change):
    """Index a file holding a unique marker, apply ``change``, and return the daemon."""
    mark = marker("zqmark")
    git_repo.write("notes.py", f"def {mark}():\n    return '{mark} body'\n")
    git_repo.write("keep.py", "def keeper(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    assert any(h["symbol"] == mark for h in d.call("search", query=mark)["results"])
    assert files_containing(d.home / "data", mark), "marker not stored as plain bytes: test is void"
    change()
    d.call("status", sync=True, timeout=60)
    assert not [h for h in d.call("search", query=mark, limit=100)["results"]
                if h["path"] == "notes.py"]
    return d, mark


def test_deleted_file_purged_from_disk(git_repo, daemon):
    d, mark = _index_marker_then(git_repo, daemon, lambda: git_repo.rm("notes.py"))
    d.stop()      # optimizes with the 300 s retention window: old versions survive
    left = files_containing(d.home / "data", mark)
    assert left, "shutdown purged already: update the recipe in docs/reliability.md"
    purge(d.env)
    assert files_containing(d.home / "data", mark) == []
    # the store still works after the purge
    d2 = daemon()
    assert d2.call("search", query="keeper", sync=True)["results"]


def test_newly_ignored_file_purged_from_disk(git_repo, daemon):
    def ignore():
        git_repo.write(".gitignore", "notes.py\n")
        # tracked files are never ignored by git: untrack it (as `git rm --cached` would)
        index = git_repo.repo.index
        index.remove("notes.py")
        index.write()

    d, mark = _index_marker_then(git_repo, daemon, ignore)
    assert (git_repo.path / "notes.py").exists()
    d.stop()
    purge(d.env)
    assert files_containing(d.home / "data", mark) == []


def test_indexctl_purge_with_the_daemon_running(git_repo, daemon):
    d, mark = _index_marker_then(git_repo, daemon, lambda: git_repo.rm("notes.py"))
    assert files_containing(d.home / "data", mark), "already gone: the purge is not tested"
    out = subprocess.run([str(BIN / "indexctl"), "purge"], env=d.env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert files_containing(d.home / "data", mark) == []
    assert d.call("search", query="keeper", sync=True)["results"]   # still serving


def test_indexctl_purge_without_a_daemon(git_repo, daemon):
    d, mark = _index_marker_then(git_repo, daemon, lambda: git_repo.rm("notes.py"))
    d.stop()
    assert files_containing(d.home / "data", mark)
    out = subprocess.run([str(BIN / "indexctl"), "purge"], env=d.env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert files_containing(d.home / "data", mark) == []


def test_retention_zero_makes_shutdown_purge(git_repo, daemon):
    """INDEXD_VERSION_RETENTION_S=0: a clean shutdown is enough (no separate step)."""
    mark = marker("zqretain")
    git_repo.write("notes.py", f"def {mark}(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon(extra_env={"INDEXD_VERSION_RETENTION_S": "0"})
    d.call("status", sync=True, timeout=60)
    git_repo.rm("notes.py")
    d.call("status", sync=True, timeout=60)
    d.stop()
    assert files_containing(d.home / "data", mark) == []
