"""The graph written to disk and read back (graph/snapshot.py): the same edges and
answers, every change since applied as updates, and anything doubtful refused."""

from __future__ import annotations

import logging
import multiprocessing

import pytest

from graph_helpers import APP_FILES as FILES
from graph_helpers import edge_set, repo_facts
from indexd.graph import Graph, snapshot

TARGETS = ("app/db.py::open_database_connection", "app/service.py::handle_request",
           "app/db.py::Database.connect", "app/db.py")


def _answers(graph: Graph) -> dict:
    out = {}
    for t in TARGETS:
        got = graph.impact(t, depth=3)
        out[t] = {k: v for k, v in got.items() if k != "took_ms"}
    return out


def _apply(graph: Graph, facts: list, changed: list[tuple]) -> None:
    """What Relations._apply does with the keys changed_keys names."""
    present = {f.key: f for f in facts}
    for key in changed:
        if key in present:
            graph.update_file(present[key])
        else:
            graph.remove_file(*key)


def test_a_snapshot_reads_back_the_same_graph(tree, tmp_path):
    repo = tree("proj", FILES)
    facts = repo_facts("r", repo)
    built = Graph().build(facts)
    assert snapshot.save(built, tmp_path, 1.5) == tmp_path / snapshot.NAME
    graph, header = snapshot.load(tmp_path)
    assert header["build_s"] == 1.5
    assert edge_set(graph) == edge_set(built) and edge_set(graph)
    assert _answers(graph) == _answers(built)
    assert snapshot.changed_keys(graph, repo_facts("r", repo)) == []


def test_files_changed_since_are_found_and_applying_them_equals_a_fresh_build(tree, tmp_path):
    repo = tree("proj", FILES)
    snapshot.save(Graph().build(repo_facts("r", repo)), tmp_path, 1.0)
    # edited: the caller moves to another function; new: a second caller; gone: other.py
    (repo / "app/service.py").write_text(
        "from app.db import open_database_connection\n\n"
        "def serve():\n    return open_database_connection().connect()\n")
    (repo / "app/cli.py").write_text(
        "from app.db import open_database_connection\n\n"
        "def main():\n    open_database_connection()\n")
    (repo / "app/other.py").unlink()
    now = repo_facts("r", repo)
    graph, _ = snapshot.load(tmp_path)
    changed = snapshot.changed_keys(graph, now)
    assert sorted(k[2] for k in changed) == ["app/cli.py", "app/other.py", "app/service.py"]
    _apply(graph, now, changed)
    fresh = Graph().build(now)
    assert edge_set(graph) == edge_set(fresh)
    callers = {(i["path"], i.get("symbol"))
               for i in graph.impact("app/db.py::open_database_connection")["affected"]}
    assert {("app/cli.py", "main"), ("app/service.py", "serve")} <= callers
    assert not any(p == "app/other.py" for p, _ in callers)


def _read_in_a_fresh_process(store_dir: str) -> tuple[list, list]:
    # The reader numbers reference kinds as it meets them (as load_facts does in the
    # daemon): here in an order the writer did not use.
    from indexd.graph import model
    for kind in ("never_seen_kind_y", "attribute", "import", "call"):
        model.ref_code(kind)
    graph, _ = snapshot.load(store_dir)
    refs = sorted((f.path, r.kind, r.name) for f in graph.facts.values() for r in f.refs)
    return sorted(map(repr, edge_set(graph))), refs


def test_reference_kinds_numbered_otherwise_in_the_reader_are_translated(tree, tmp_path):
    repo = tree("proj", FILES)
    built = Graph().build(repo_facts("r", repo))
    snapshot.save(built, tmp_path, 1.0)
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        edges, refs = pool.apply(_read_in_a_fresh_process, (str(tmp_path),))
    assert edges == sorted(map(repr, edge_set(built)))
    assert refs == sorted((f.path, r.kind, r.name) for f in built.facts.values() for r in f.refs)


def test_a_snapshot_of_other_code_is_refused(tree, tmp_path, monkeypatch, caplog):
    repo = tree("proj", FILES)
    monkeypatch.setattr(snapshot, "code_digest", lambda: "written-by-other")
    snapshot.save(Graph().build(repo_facts("r", repo)), tmp_path, 1.0)
    monkeypatch.undo()
    with caplog.at_level(logging.INFO, logger="indexd.graph.snapshot"):
        assert snapshot.load(tmp_path) is None
    assert "written by other indexd code" in caplog.text


def test_an_unreadable_snapshot_is_refused_with_a_warning(tmp_path, caplog):
    (tmp_path / snapshot.NAME).write_bytes(b"\x80\x05not a pickle at all")
    with caplog.at_level(logging.WARNING, logger="indexd.graph.snapshot"):
        assert snapshot.load(tmp_path) is None
    assert "unreadable, building instead" in caplog.text
    assert snapshot.load(tmp_path / "none-here") is None   # none: no warning needed


@pytest.mark.parametrize("mode", [0o664, 0o646])
def test_a_snapshot_others_can_write_is_not_read(tree, tmp_path, caplog, mode):
    repo = tree("proj", FILES)
    path = snapshot.save(Graph().build(repo_facts("r", repo)), tmp_path, 1.0)
    path.chmod(mode)
    with caplog.at_level(logging.WARNING, logger="indexd.graph.snapshot"):
        assert snapshot.load(tmp_path) is None
    assert "writable by others" in caplog.text


def test_a_snapshot_that_cannot_be_written_is_a_warning_not_an_error(tree, tmp_path, caplog):
    repo = tree("proj", FILES)
    with caplog.at_level(logging.WARNING, logger="indexd.graph.snapshot"):
        assert snapshot.save(Graph().build(repo_facts("r", repo)), tmp_path / "gone", 1.0) is None
    assert "graph snapshot not written" in caplog.text


def test_a_write_cut_by_a_kill_leaves_nothing_behind_the_next_write(tree, tmp_path):
    repo = tree("proj", FILES)
    store_dir = tmp_path / "store"
    store_dir.mkdir()
    stale = store_dir / f".{snapshot.NAME}.k1ll3d.tmp"   # what mkstemp named a cut write
    stale.write_bytes(b"half a snapshot")
    snapshot.save(Graph().build(repo_facts("r", repo)), store_dir, 1.0)
    assert sorted(p.name for p in store_dir.iterdir()) == [snapshot.NAME]
