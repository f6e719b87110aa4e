"""A graph build pauses between files (Graph.build's ``pause``): the daemon waits
there while a save is parsed and written, so the build's Python does not halve
the save's share of the GIL. The pauses never change the graph, and they add up
to at most the build's own time, so a stream of saves cannot starve it."""

from __future__ import annotations

import pickle
import threading
import time

import pytest

from graph_helpers import APP_FILES, edge_set, repo_facts
from indexd.graph import Graph
from indexd.graph import graph as graph_module

MANY = APP_FILES | {f"app/extra_{i}.py": f"from app.db import open_database_connection\n\n"
                    f"def use_{i}():\n    return open_database_connection()\n" for i in range(24)}


def test_a_paused_build_is_the_same_graph_and_may_pause_before_every_file(tree):
    # Every file, not every fifth: a save that arrived mid-way shared the GIL with up
    # to five files' work (docs/decisions.md, "The graph's build waits at the same gate").
    facts = repo_facts("r", tree("proj", MANY))
    calls = []
    paused = Graph().build(facts, pause=lambda: calls.append(1))
    assert edge_set(paused) == edge_set(Graph().build(facts)) and edge_set(paused)
    # (a pause is skipped while the build has paused longer than it has worked; long
    # files pause inside too: the test below)
    assert len(facts) >= 30 and len(calls) >= len(facts) // 2


def test_the_pauses_add_up_to_at_most_the_builds_own_time(tree):
    """A save that never ends (the gate always closed): the build still finishes,
    having waited no longer than it worked, plus the one wait in progress."""
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


# One file whose edges are most of the build: 400 distinct calls, attribute uses and
# callables passed on (the stdlib's biggest tests take 100-450 ms each).
BIG = {"app/helpers.py": "".join(f"def helper_{i}(x):\n    return x\n\n\n" for i in range(200)),
       "app/big.py": "from app.helpers import *\n\n\ndef run(items, node):\n"
                     + "".join(f"    helper_{i}(items)\n    node.field_{i}.go()\n"
                               f"    items.sort(key=helper_{i})\n" for i in range(200))}


def test_a_long_file_is_paused_inside_its_own_edges_and_the_graph_is_the_same(tree):
    facts = repo_facts("r", tree("proj", BIG))
    calls = []
    paused = Graph().build(facts, pause=lambda: calls.append(1))
    assert edge_set(paused) == edge_set(Graph().build(facts))
    calls_to_helpers = {e.dst_symbol for e in paused.edges(["calls"]) if e.src_path == "app/big.py"}
    assert {f"helper_{i}" for i in range(200)} <= calls_to_helpers
    # two files, so at most two pauses between files: the rest came from inside big.py
    inside = len(calls) - len(facts)
    assert inside >= 600 // graph_module.INSIDE_EVERY, (len(calls), len(facts))


def test_the_pause_is_gone_once_the_build_ends(tree):
    """Later updates run on the daemon's writer, which the save gate must never make
    wait for itself; and a snapshot never pickles the build's pause."""
    facts = repo_facts("r", tree("proj", BIG))
    calls = []
    graph = Graph().build(facts, pause=lambda: calls.append(1))
    built = len(calls)
    assert built and all("checkpoint" not in vars(index) for index in graph.indexes.values())
    big = next(f for f in facts if f.path == "app/big.py")
    assert graph.update_file(big) >= 1
    assert len(calls) == built
    assert pickle.loads(pickle.dumps(graph)).indexes.keys() == graph.indexes.keys()


def test_a_stopped_build_takes_its_pause_away_too(tree):
    facts = repo_facts("r", tree("proj", MANY))
    graph = Graph()
    with pytest.raises(graph_module.BuildStopped):
        graph.build(facts, stop=lambda: True, pause=lambda: None)
    assert graph.indexes and all("checkpoint" not in vars(i) for i in graph.indexes.values())
