"""A save made while the daemon builds its graph is searchable at once.

As a user hit it: started on the stdlib copy, the daemon built its relationship
graph for 31-43 s on the single writer thread, and a file saved meanwhile
waited for the whole build before being indexed (`last batch searchable 43601
ms after its first event`). The start's build now runs beside the writer; the
files changed while it read the store are applied to the graph once it is
ready, so impact still knows them.

The real daemon over its socket, with the graph build held at a gate: a
`sitecustomize` on the daemon's PYTHONPATH wraps `Graph.build` to wait for a
file (test scaffolding only: nothing in indexd knows about it).
"""

from __future__ import annotations

import textwrap

from testlib import run_cli, settings_with_realm, wait_until

GATE = textwrap.dedent("""
    import os
    import time

    _gate = os.environ.get("INDEXD_TEST_GRAPH_GATE")
    if _gate:
        import indexd.graph.graph as _module
        _owner = _module.Graph

        _build = _owner.build

        def _held_build(self, *args, **kwargs):
            if not os.path.exists(_gate):
                open(_gate + ".waiting", "w").close()
            while not os.path.exists(_gate):
                time.sleep(0.02)
            return _build(self, *args, **kwargs)

        _owner.build = _held_build
""")


def _gated_daemon(daemon, tmp_path, open_at_start: bool = False):
    """The daemon with its graph builds held at a gate file until the test creates
    it; (daemon, gate path)."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(GATE)
    gate = tmp_path / "graph-gate"
    if open_at_start:
        gate.touch()
    return daemon(extra_env={"PYTHONPATH": str(hooks), "INDEXD_TEST_GRAPH_GATE": str(gate)}), gate


def _found(d, symbol: str) -> bool:
    return any(h["symbol"] == symbol
               for h in d.call("search", query=symbol, mode="keyword")["results"])


def test_a_save_during_the_start_graph_build_is_searchable_and_the_graph_learns_it(
        git_repo, daemon, tmp_path):
    git_repo.write("core.py", "def parse_settings(text):\n    return text.split()\n")
    git_repo.write("app.py", "from core import parse_settings\n\n\n"
                             "def load():\n    return parse_settings('a b')\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d, gate = _gated_daemon(daemon, tmp_path)
    try:
        _saved_while_held(git_repo, d, gate)
    finally:
        gate.touch()    # the daemon's stop waits for a build held at the gate
    wait_until(lambda: d.call("status")["graph"]["ready"], timeout=60, what="the graph")
    assert d.call("status")["graph"]["changes_waiting"] == 0
    assert "edges, built in" in run_cli("status", check=True).stdout
    # The graph read the store before cli.py existed: it knows it from the replay.
    impact = d.call("impact", target="core.py::parse_settings")
    callers = {(i["path"], i.get("symbol")) for i in impact["affected"]}
    assert ("cli.py", "saved_while_graph_builds") in callers, impact["affected"]
    assert ("app.py", "load") in callers


def _save_a_caller_while_held(git_repo, d, gate, name: str) -> None:
    """Once a build waits at the gate, save cli.py calling parse_settings from
    ``name``, and wait until it is searchable."""
    wait_until(lambda: gate.with_suffix(".waiting").exists(), timeout=60,
               what="the graph build to reach the gate")
    git_repo.write("cli.py", f"from core import parse_settings\n\n\n"
                             f"def {name}():\n    return parse_settings('x')\n")
    wait_until(lambda: _found(d, name), timeout=60,
               what="the file saved during the graph build to be searchable")


def _saved_while_held(git_repo, d, gate) -> None:
    _save_a_caller_while_held(git_repo, d, gate, "saved_while_graph_builds")
    # Searchable comes before the batch's graph step: wait for that step to queue it.
    graph = wait_until(lambda: (g := d.call("status")["graph"])["changes_waiting"] and g,
                       timeout=60, what="the batch's files to wait for the graph")
    assert graph["ready"] is False and graph["building"] is True
    assert "files indexed meanwhile wait for it" in run_cli("status", check=True).stdout


def test_a_save_after_the_build_is_applied_directly(git_repo, daemon):
    git_repo.write("core.py", "def parse_settings(text):\n    return text.split()\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=120)
    wait_until(lambda: d.call("status")["graph"]["ready"], timeout=60, what="the graph")
    git_repo.write("late.py", "from core import parse_settings\n\n\n"
                              "def saved_after_build():\n    return parse_settings('y')\n")

    def knows_caller():
        affected = d.call("impact", target="core.py::parse_settings")["affected"]
        return ("late.py", "saved_after_build") in {(i["path"], i.get("symbol")) for i in affected}

    wait_until(knows_caller, timeout=60, what="impact to name the new caller")
    assert d.call("status")["graph"]["building"] is False


def test_most_files_changed_during_the_build_builds_again_rather_than_replaying(
        git_repo, daemon, tmp_path):
    git_repo.write("m0.py", "def helper_0(x):\n    return x\n")
    for i in range(1, 4):
        git_repo.write(f"m{i}.py", f"from m0 import helper_0\n\n\n"
                                   f"def helper_{i}(x):\n    return helper_0(x) + {i}\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d, gate = _gated_daemon(daemon, tmp_path)
    try:
        wait_until(lambda: gate.with_suffix(".waiting").exists(), timeout=60,
                   what="the start's graph build to reach the gate")
        # The start's build read the store before the first index wrote it: every
        # file waits for it, more than half of what it read.
        wait_until(lambda: d.call("status")["graph"]["changes_waiting"] >= 4, timeout=60,
                   what="the first index's files to wait for the graph")
    finally:
        gate.touch()
    wait_until(lambda: d.call("status")["graph"]["ready"], timeout=60, what="the graph")
    assert "files changed during the build cost more to apply than building again" in d.output()
    callers = {(i["path"], i.get("symbol"))
               for i in d.call("impact", target="m0.py::helper_0")["affected"]}
    assert {("m1.py", "helper_1"), ("m2.py", "helper_2"), ("m3.py", "helper_3")} <= callers

