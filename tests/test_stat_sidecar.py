"""A warm `indexd index` decides "nothing changed" from the stat cache's sidecar
(indexd/stat_sidecar.py) without importing lancedb, and never misses a change.

Real runs of the `indexd index` command line (subprocesses) on a real git repo;
each reports which heavy modules it imported, so "did not open the store" is
checked where it happens.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from testlib import settings_with_realm

from indexd import stat_sidecar
from indexd.config import load_settings
from indexd.model import file_key

HEAVY = ("lancedb", "pyarrow", "torch")
RUN = ("import json, sys\n"
       "from indexd.cli.indexd_main import main\n"
       "rc = main(['index', '--json', '--no-embed'])\n"
       f"print(json.dumps({{'rc': rc, 'heavy': sorted(m for m in {HEAVY!r} if m in sys.modules)}}))\n")


def index_run(events: list | None = None) -> tuple[dict, list[str]]:
    """One real `indexd index --json --no-embed`: (its done event, heavy modules it imported);
    ``events``: gets the names of every event it printed."""
    proc = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True,
                          timeout=120, env=os.environ.copy())
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0 and lines and lines[-1]["rc"] == 0, proc.stdout + proc.stderr
    done = [e for e in lines if e.get("event") == "done"][-1]
    if events is not None:
        events.extend(e["event"] for e in lines if "event" in e)
    return done, lines[-1]["heavy"]


def small_repo(git_repo, tmp_path):
    git_repo.write("app/core.py", "def run():\n    return 1\n\n\nclass Job:\n    pass\n")
    git_repo.write("app/util.py", "def helper(x):\n    return x * 2\n")
    git_repo.write("README.md", "# App\n\nSee [core](app/core.py).\n")
    git_repo.write("conf.toml", "[server]\nport = 8080\n")
    git_repo.commit("init")
    outside = tmp_path / "outside.py"
    outside.write_text("x = 1\n")
    os.symlink(outside, git_repo.path / "link.py")   # skipped by the listing itself
    settings_with_realm("work", git_repo.path)
    return git_repo


def stored_paths(settings) -> set[str]:
    from indexd.store import Store

    return {r.path for r in Store(settings.paths.store_dir).file_records(realm="work").values()}


def test_a_warm_rerun_with_nothing_changed_imports_no_store(git_repo, tmp_path):
    small_repo(git_repo, tmp_path)
    cold, heavy = index_run()
    assert cold["parsed"] == 4 and "lancedb" in heavy
    events = []
    warm, heavy = index_run(events)
    assert heavy == [], f"a no-change run imported {heavy}"
    assert events == ["plan", "done"]
    assert (warm["files"], warm["unchanged"], warm["parsed"], warm["deleted"]) == (4, 4, 0, 0)
    assert warm["skipped"] == {"symlink_outside": 1}


def _touch(repo):
    st = os.stat(repo / "app/util.py")
    os.utime(repo / "app/util.py", ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


def _replace_same_stat(repo):
    """An editor's atomic save of the same bytes keeping the mtime: only the inode moves."""
    path = repo / "app/util.py"
    st = os.stat(path)
    tmp = repo / "app/.util.py.tmp"
    tmp.write_bytes(path.read_bytes())
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, path)


def _edit(repo):
    (repo / "app/core.py").write_text("def run():\n    return 2\n\n\ndef stop():\n    pass\n")


def _rename(repo):
    os.rename(repo / "app/util.py", repo / "app/helpers.py")


def _add(repo):
    (repo / "app/new.py").write_text("def fresh():\n    pass\n")


def _ignore(repo):
    (repo / ".gitignore").write_text("app/new.py\n")   # untracked: git ignores it now


def _delete(repo):
    os.unlink(repo / "app/helpers.py")


def _unlink_outside(repo):
    os.unlink(repo / "link.py")


# (what changes, the run's counts that prove it was seen, paths stored afterwards)
CHANGES = [
    ("touch", _touch, {"touched": 1, "parsed": 0}, None),
    ("same bytes, new inode", _replace_same_stat, {"touched": 1, "parsed": 0}, None),
    ("edit", _edit, {"parsed": 1, "deleted": 0}, None),
    ("rename", _rename, {"parsed": 1, "deleted": 1}, {"app/helpers.py"}),
    ("add", _add, {"parsed": 1, "deleted": 0}, {"app/new.py"}),
    ("ignored now", _ignore, {"parsed": 1, "deleted": 1}, {".gitignore"}),   # .gitignore is text
    ("delete", _delete, {"parsed": 0, "deleted": 1}, None),
    ("skipped link removed", _unlink_outside, {"parsed": 0, "deleted": 1}, None),
]


def test_every_kind_of_change_between_two_real_runs_is_seen(git_repo, tmp_path):
    """Each change alone, between two real runs: the run after it plans from the
    store (lancedb imported), sees exactly that change, and the store then
    holds the tree; the run after that is a no-change run again."""
    small_repo(git_repo, tmp_path)
    index_run()
    settings = load_settings()
    for name, change, counts, present in CHANGES:
        change(git_repo.path)
        done, heavy = index_run()
        assert "lancedb" in heavy, f"{name}: taken for unchanged"
        assert {k: done[k] for k in counts} == counts, (name, done)
        if present:
            assert present <= stored_paths(settings), name
    assert stored_paths(settings) == {"app/core.py", "README.md", "conf.toml", ".gitignore"}
    _, heavy = index_run()
    assert heavy == [], "the sidecar was not rewritten after the last change"


def test_a_store_changed_behind_the_sidecar_is_planned_from_the_store(git_repo, tmp_path):
    """A write the sidecar did not see (here: a file's entry rows lost, as a kill
    inside an enrich rewrite leaves them) moves the store's manifests: the next
    run does not trust the sidecar and its torn-entries check repairs the file."""
    from indexd.store import Store

    small_repo(git_repo, tmp_path)
    index_run()
    settings = load_settings()
    store = Store(settings.paths.store_dir)
    key = file_key("work", str(git_repo.path), "app/core.py")
    store.entries.delete(f"file_key = '{key}'")
    done, heavy = index_run()
    assert "lancedb" in heavy and done["repaired"] == 1 and done["parsed"] == 1, done
    assert store.count("entries", f"file_key = '{key}'") > 0
    _, heavy = index_run()
    assert heavy == []


@pytest.mark.parametrize("spoil", ["garbage", "wrong shape", "other code", "other store",
                                   "missing"])
def test_an_unreadable_or_foreign_sidecar_is_not_trusted(git_repo, tmp_path, spoil):
    small_repo(git_repo, tmp_path)
    index_run()
    settings = load_settings()
    path = settings.paths.store_dir / stat_sidecar.SIDECAR
    assert stat_sidecar.unchanged(settings) is not None   # the setup is a no-change tree
    side = json.loads(path.read_text())
    if spoil == "garbage":
        path.write_text('{"format": 1, "repos": [')
    elif spoil == "wrong shape":   # what only a hand edit makes: the fingerprint still holds
        path.write_text(json.dumps(side | {"repos": [{"realm": "work", "files": 3}]}))
    elif spoil == "other code":
        path.write_text(json.dumps(side | {"code": "0" * 32}))
    elif spoil == "other store":   # a store restored from elsewhere: same names, other files
        table = next(iter(side["store"]))
        side["store"][table][0][3] += 1
        path.write_text(json.dumps(side))
    else:
        path.unlink()
    assert stat_sidecar.unchanged(settings) is None
    if spoil in ("garbage", "wrong shape"):   # and the command goes on (the others: the same code)
        done, heavy = index_run()
        assert "lancedb" in heavy and done["parsed"] == 0 and done["unchanged"] == 4
