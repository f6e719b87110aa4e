"""After a restart, impact answers from the graph's snapshot, with the edits made
while the daemon was down, and answers what a fresh build answers.

As a user hits it: on the stdlib copy a restarted daemon answered `impact` with
"the relationship graph is still being built" for 17-25 s, every start, though
nothing or little had changed. The build now leaves a snapshot beside the store
(and the stop one with the updates since); the next start reads it (~1 s),
compares each file's facts with the store's and applies the ones that differ.

The real daemon over its socket, restarted on the same home.
"""

from __future__ import annotations

from testlib import run_cli, settings_with_realm, wait_until

from indexd.config import load_settings
from indexd.graph import snapshot


def _callers(d, target: str) -> set[tuple]:
    return {(i["path"], i.get("symbol")) for i in d.call("impact", target=target)["affected"]}


def _answers(d) -> dict:
    out = {}
    for target in ("core.py::parse_settings", "core.py"):
        got = d.call("impact", target=target)
        out[target] = {b: sorted((i["path"], i.get("symbol") or "", i["score"]) for i in got[b])
                       for b in ("affected", "tests", "docs")}
    return out


def _ready_graph(d) -> dict:
    d.call("status", sync=True, timeout=120)
    return wait_until(lambda: (g := d.call("status")["graph"])["ready"] and
                      not g["building"] and g, timeout=60, what="the graph")


def test_a_restart_reads_the_snapshot_applies_the_edits_since_and_answers_as_a_build(
        git_repo, daemon):
    git_repo.write("core.py", "def parse_settings(text):\n    return text.split()\n")
    git_repo.write("app.py", "from core import parse_settings\n\n\n"
                             "def load():\n    return parse_settings('a b')\n")
    git_repo.write("tests/test_core.py", "from core import parse_settings\n\n\n"
                                         "def test_parse():\n    assert parse_settings('a')\n")
    for n in range(6):   # what did not change: most of a realm, as in life
        git_repo.write(f"util_{n}.py", f"def helper_{n}():\n    return {n}\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    assert _ready_graph(d)["source"] == "build"
    assert ("app.py", "load") in _callers(d, "core.py::parse_settings")
    d.stop()
    store_dir = load_settings().paths.store_dir
    built_s = snapshot.load(store_dir)[1]["build_s"]

    # While the daemon is down: a new caller, and the old one deleted.
    git_repo.write("cli.py", "from core import parse_settings\n\n\n"
                             "def main():\n    return parse_settings('x')\n")
    (git_repo.path / "app.py").unlink()

    d = daemon()
    graph = _ready_graph(d)
    assert graph["source"] == "snapshot", d.log.read_text()[-3000:]
    callers = wait_until(lambda: (c := _callers(d, "core.py::parse_settings")) and
                         ("cli.py", "main") in c and c, timeout=60, what="the new caller")
    assert ("app.py", "load") not in callers
    assert "read from its snapshot" in run_cli("status", check=True).stdout
    from_snapshot = _answers(d)
    d.stop()
    # the stop wrote the updated graph, still with what a build costs (the budget for
    # applying changes at the next start), not what reading the snapshot took
    assert snapshot.load(store_dir)[1]["build_s"] == max(built_s, 1.0)

    # The same home with the snapshot removed builds: the same answers.
    (store_dir / snapshot.NAME).unlink()
    d = daemon()
    assert _ready_graph(d)["source"] == "build"
    assert _answers(d) == from_snapshot
    assert from_snapshot["core.py::parse_settings"]["tests"], from_snapshot


def test_a_damaged_snapshot_is_said_and_the_graph_is_built(git_repo, daemon):
    git_repo.write("core.py", "def parse_settings(text):\n    return text.split()\n")
    git_repo.write("app.py", "from core import parse_settings\n\n\n"
                             "def load():\n    return parse_settings('a b')\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    store_dir = load_settings().paths.store_dir
    d = daemon()
    _ready_graph(d)
    d.stop()
    (store_dir / snapshot.NAME).write_bytes(b"\x80\x05truncated")
    d = daemon()
    assert _ready_graph(d)["source"] == "build"
    assert ("app.py", "load") in _callers(d, "core.py::parse_settings")
    assert "graph snapshot" in d.log.read_text() and "building instead" in d.log.read_text()
    d.stop()
    # the build replaced it with a good one
    assert snapshot.load(store_dir) is not None


def test_purge_rewrites_the_snapshot_without_a_deleted_files_names(git_repo, daemon):
    git_repo.write("core.py", "def parse_settings(text):\n    return text.split()\n")
    git_repo.write("gone.py", "def zq_deleted_helper_name():\n    return 1\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    store_dir = load_settings().paths.store_dir
    d = daemon()
    _ready_graph(d)
    assert b"zq_deleted_helper_name" in (store_dir / snapshot.NAME).read_bytes()
    git_repo.rm("gone.py")
    d.call("status", sync=True, timeout=60)
    assert d.call("purge")["purged"] is True
    # written again from the graph as it is now, while the daemon runs
    data = (store_dir / snapshot.NAME).read_bytes()
    assert b"parse_settings" in data and b"zq_deleted_helper_name" not in data
