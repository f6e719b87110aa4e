"""A graph build pauses between files (Graph.build's ``pause``): the daemon waits
there while a save is parsed and written, so the build's Python does not halve
the save's share of the GIL. The pauses never change the graph, and they add up
to at most the build's own time, so a stream of saves cannot starve it."""

from __future__ import annotations

import threading
import time

from graph_helpers import APP_FILES, edge_set, repo_facts
from indexd.graph import Graph
from indexd.graph import graph as graph_module

MANY = APP_FILES | {f"app/extra_{i}.py": f"from app.db import open_database_connection\n\n"
                    f"def use_{i}():\n    return open_database_connection()\n" for i in range(24)}


def test_a_paused_build_is_the_same_graph_and_may_pause_before_every_file(tree):
    # Every file, not every fifth: a save that arrived mid-way shared the GIL with up
    # to five files' work (docs/decisions.md, "A graph build pauses at every file").
    facts = repo_facts("r", tree("proj", MANY))
    calls = []
    paused = Graph().build(facts, pause=lambda: calls.append(1))
    assert edge_set(paused) == edge_set(Graph().build(facts)) and edge_set(paused)
    assert graph_module.PAUSE_EVERY == 1
    # (a pause is skipped while the build has paused longer than it has worked)
    assert len(facts) >= 30 and len(facts) // 2 <= len(calls) <= len(facts)


def test_the_pauses_add_up_to_at_most_the_builds_own_time(tree, monkeypatch):
    """A save that never ends (the gate always closed): the build still finishes,
    having waited no longer than it worked, plus the one wait in progress."""
    monkeypatch.setattr(graph_module, "PAUSE_EVERY", 1)
    facts = repo_facts("r", tree("proj", MANY))
    waits: list[float] = []
    gate = threading.Event()   # never set

    def pause():
        t0 = time.monotonic()
        gate.wait(0.05)
        waits.append(time.monotonic() - t0)

    t0 = time.monotonic()
    Graph().build(facts, pause=pause)
    wall = time.monotonic() - t0
    waited = sum(waits)
    assert waits and len(waits) < len(facts)           # it stopped pausing at some files
    assert waited <= (wall - waited) + max(waits) + 0.01
