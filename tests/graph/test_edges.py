"""Each edge kind, name-match weighting, broken links, exports."""

from __future__ import annotations

import json

import pytest

from graph_helpers import APP_FILES as FILES
from graph_helpers import build, parse_file, repo_facts
from indexd.graph import Graph, build_edges, load_facts, name_weight
from indexd.graph.cochange import co_change_edges



@pytest.fixture
def graph(tree):
    return build("r", tree("proj", FILES))


def by_kind(graph, kind):
    return {(e.src_path, e.src_symbol, e.dst_path, e.dst_symbol, e.how)
            for e in graph.edges([kind])}


def test_imports_calls_references(graph):
    assert ("app/service.py", None, "app/db.py", None, "resolved") in by_kind(graph, "imports")
    calls = by_kind(graph, "calls")
    assert ("app/service.py", "handle_request", "app/db.py", "open_database_connection",
            "resolved") in calls
    assert ("app/db.py", "open_database_connection", "app/db.py", "Database", "resolved") in calls
    # `db.connect()`: `db = open_database_connection()`, whose every return is
    # `Database()`: a type reasoned from the body, never called resolved (issue 11).
    assert ("app/service.py", "handle_request", "app/db.py", "Database.connect",
            "inferred") in calls
    # handle_request is not imported into other.py: a name match, weighted up (long name).
    nm = [e for e in graph.edges(["calls"]) if e.src_path == "app/other.py"]
    assert [(e.dst_symbol, e.how, e.weight) for e in nm] == [("handle_request", "name_match", 2.0)]
    assert ("app/service.py", None, "app/db.py", "open_database_connection",
            "resolved") in by_kind(graph, "references")


def test_name_weights():
    assert name_weight("run", 1) == pytest.approx(0.1)
    assert name_weight("_private_helper", 1) == pytest.approx(0.6)
    assert name_weight("open_database_connection", 9) == pytest.approx(0.2)
    assert name_weight("process", 1) == 1.0


def test_tests_edges(graph):
    tests = by_kind(graph, "tests")
    assert ("tests/test_service.py", "test_handle", "app/service.py", "handle_request",
            "resolved") in tests
    assert ("tests/test_service.py", None, "app/service.py", None, "resolved") in tests
    assert not any(src.startswith("app/") for src, *_ in tests)


def test_documents_and_broken_links(graph):
    docs = by_kind(graph, "documents")
    assert ("README.md", "Overview", "app/service.py", "handle_request", "name_match") in docs
    assert ("README.md", "Overview", "app/db.py", "Database", "name_match") in docs
    assert ("README.md", "Overview", "app/db.py", "Database", "link") in docs   # #L3
    assert ("README.md", "Overview > Files", "app/service.py", None, "link") in docs
    broken = {(b["target"], b["kind"]) for b in graph.broken_links()}
    assert broken == {("missing.md", "file"), ("#nope", "anchor")}


def test_config_edges(graph):
    cfg = by_kind(graph, "config")
    assert cfg == {
        ("app/db.py", "Database.connect", "config/settings.yaml", "DATABASE_URL", "name_match"),
        ("app/service.py", "_tiny", "config/settings.yaml", "feature_flag", "name_match")}
    res = graph.impact("config/settings.yaml::DATABASE_URL", depth=2)
    assert ("app/db.py", "Database.connect") in {(i["path"], i["symbol"]) for i in res["affected"]}


def test_co_change_from_git(git_repo):
    for n in range(4):
        git_repo.write("a.py", f"A = {n}\n")
        git_repo.write("b.py", f"B = {n}\n")
        if n % 2:
            git_repo.write("c.py", f"C = {n}\n")
        git_repo.commit(f"c{n}")
    for n in range(60):  # a sweep touching too many files is skipped
        git_repo.write(f"bulk/f{n}.py", "x = 1\n")
    git_repo.write("a.py", "A = 9\n")
    git_repo.write("c.py", "C = 9\n")
    git_repo.commit("sweep")
    edges = co_change_edges(git_repo.path, "r", min_support=3)
    pairs = {(e.src_path, e.dst_path): (e.weight, e.support) for e in edges}
    assert pairs == {("a.py", "b.py"): (1.0, 4), ("b.py", "a.py"): (1.0, 4)}
    assert all(e.kind == "co_change" and e.how == "git" for e in edges)
    g = Graph().build(repo_facts("r", git_repo.path), edges)
    res = g.impact("b.py", depth=1)
    assert [(i["path"], i["via"][0]["how"]) for i in res["affected"]] == [("a.py", "git")]


def test_build_edges_and_exports(graph, tree):
    facts = list(graph.facts.values())
    edges, results = build_edges(facts)
    assert set(edges) == set(graph.edges()) and len(edges) == len(graph.edges())
    data = json.loads(graph.export("json"))
    assert {"nodes", "edges"} <= set(data) and data["edges"]
    assert graph.export("dot").startswith("digraph")
    assert "<graphml" in graph.export("graphml", scope="app/db.py")
    with pytest.raises(ValueError):
        graph.export("svg")


def test_load_facts_from_store(tree, make_store, indexd_home):
    from indexd.config import load_settings
    from indexd.model import FileRecord
    from indexd.store.lance import FileWrite
    from indexd.store.rows import entry_rows, link_rows
    from indexd.parse import parse_source

    repo = tree("proj", FILES)
    store = make_store(load_settings())
    writes = []
    for rel in FILES:
        text = (repo / rel).read_text()
        f = parse_file("r", repo, rel)
        rec = FileRecord(realm="r", repo=repo.as_posix(), path=rel, language=f.lang)
        result = parse_source(rel, text, f.lang, exists=lambda p: (repo / p).exists())
        writes.append(FileWrite(rec, entry_rows(rec, result, text), link_rows(rec, result)))
    store.write(writes)
    loaded = Graph().build(load_facts(store))
    direct = build("r", repo)
    assert {e[:9] for e in loaded.edges()} == {e[:9] for e in direct.edges()}


def test_load_facts_keeps_each_files_references_and_links_apart(tree, make_store, indexd_home):
    """Two repos with the same paths, a markdown file with links, written in two
    store writes interleaving the repos: every file's references (in line order),
    links and definitions read back are the ones its own parse made."""
    from indexd.config import load_settings
    from indexd.model import FileRecord
    from indexd.parse import parse_source
    from indexd.store.lance import FileWrite
    from indexd.store.rows import entry_rows, link_rows

    files = FILES | {"README.md": "# Proj\n\nSee [db](app/db.py) and [gone](missing.md).\n"}
    repos = [tree("one", files), tree("two", files | {"app/db.py": FILES["app/service.py"]})]
    store = make_store(load_settings())
    direct = {}
    for batch in (list(files)[::2], list(files)[1::2]):
        writes = []
        for rel in batch:
            for repo in repos:
                f = parse_file("r", repo, rel)
                direct[f.key] = f
                text = (repo / rel).read_text()
                rec = FileRecord(realm="r", repo=repo.as_posix(), path=rel, language=f.lang)
                result = parse_source(rel, text, f.lang, exists=lambda p, r=repo: (r / p).exists())
                writes.append(FileWrite(rec, entry_rows(rec, result, text), link_rows(rec, result)))
        store.write(writes)
    loaded = {f.key: f for f in load_facts(store)}
    assert set(loaded) == set(direct)
    for key, f in direct.items():
        got = loaded[key]
        assert sorted(got.refs, key=lambda r: r.line) == sorted(f.refs, key=lambda r: r.line), key
        assert [r.line for r in got.refs] == sorted(r.line for r in got.refs)
        assert sorted(got.links) == sorted(f.links), key
        assert [(d.kind, d.qualname) for d in got.defs] == [(d.kind, d.qualname) for d in f.defs]
    assert any(ln.broken for ln in loaded[("r", repos[0].as_posix(), "README.md")].links)
