"""FileFacts keep their reference kinds across processes: the packed kind codes are
numbered per process in first-use order, so a worker's codes meant other kinds in the
parent (a 2-process stdlib build got 0 edges in bench/edge_precision.py)."""

from __future__ import annotations

import multiprocessing

from indexd.graph.model import FileFacts, Ref


def _facts_in_a_fresh_process() -> FileFacts:
    # A kind this process has never seen comes first: it gets code 0 here.
    return FileFacts("r", "/repo", "a.py", "python", refs=[
        Ref("never_seen_kind_x", "x", None, 1, None), Ref("call", "f", None, 2, "g")])


def test_ref_kinds_survive_a_process_boundary():
    FileFacts("r", "/repo", "b.py", "python", refs=[Ref("call", "h", None, 1, None)])
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        facts = pool.apply(_facts_in_a_fresh_process)
    assert [(r.kind, r.name) for r in facts.refs] == [("never_seen_kind_x", "x"), ("call", "f")]
    assert [r.name for r in facts.refs_of("call")] == ["f"]
