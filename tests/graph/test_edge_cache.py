"""Edge lists kept between queries (edge_cache.py) never outlive a change to the graph:
after every kind of update an answer from the warm graph equals a fresh build's."""

from __future__ import annotations

from graph_helpers import parse_file, paths, repo_facts
from indexd.graph import Graph
from indexd.graph.edge_cache import EdgeListCache
from indexd.graph.model import Edge

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def compute_total(x):\n    return x\n",
    "pkg/api.py": "from pkg.core import compute_total\n\ndef endpoint():\n    return compute_total(2)\n",
    "tests/test_api.py": "from pkg.api import endpoint\n\ndef test_endpoint():\n    endpoint()\n",
}
TARGET = "proj/pkg/core.py::compute_total"


def answer(graph: Graph) -> dict:
    a = graph.impact(TARGET, depth=3)
    a.pop("took_ms")
    return a


def fresh(graph: Graph) -> dict:
    return answer(Graph().build(list(graph.facts.values()),
                                [e for es in graph.cochange.values() for e in es]))


def edit(graph: Graph, repo, rel: str, text: str) -> None:
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text)
    graph.update_file(parse_file("r", repo, rel))


def test_warm_answers_follow_every_change(tree):
    repo = tree("proj", FILES)
    g = Graph().build(repo_facts("r", repo))
    first = answer(g)
    assert answer(g) == first and g.in_cache.hits > 0   # the second answer read the cache
    assert paths(first["affected"]) == {"pkg/api.py"}

    # a new caller in a new file
    edit(g, repo, "pkg/report.py",
         "from pkg.core import compute_total\n\ndef summary():\n    return compute_total(3)\n")
    assert "pkg/report.py" in paths(answer(g)["affected"])
    assert answer(g) == fresh(g)

    # a body edit that drops a call
    edit(g, repo, "pkg/api.py", "def endpoint():\n    return 2\n")
    assert "pkg/api.py" not in paths(answer(g)["affected"])
    assert answer(g) == fresh(g)

    # co-change edges added, then dropped
    root = repo.as_posix()
    g.add_cochange(Edge("co_change", root, "tests/test_api.py", None, root, "pkg/core.py",
                        None, 0, "git", 0.9, "r"))
    g.impact("proj/pkg/core.py", depth=1)   # warm the file node's list
    assert "tests/test_api.py" in paths(g.impact("proj/pkg/core.py", depth=1)["tests"])
    g.drop_cochange("r", root)
    assert "tests/test_api.py" not in paths(g.impact("proj/pkg/core.py", depth=1)["tests"])

    # a caller's file removed
    g.remove_file("r", root, "pkg/report.py")
    assert "pkg/report.py" not in paths(answer(g)["affected"])
    assert answer(g) == fresh(g)


def test_the_cache_holds_at_most_its_bound_and_drops_the_oldest_first():
    cache = EdgeListCache(max_edges=10)
    lists = {n: [n] * 3 for n in "abcd"}          # 3 edges + 1 a list: 4 held each
    for n in "abc":
        assert cache.get(n, lists.get) == tuple(lists[n])
    assert cache.held <= 10 and cache.stats()["lists"] == 2    # "a" went first
    cache.get("b", lists.get)                                   # "b" is now the newest
    cache.get("d", lists.get)
    assert cache.stats()["lists"] == 2 and cache.held <= 10
    built = []
    cache.get("b", lambda n: built.append(n) or lists[n])
    assert built == []                                          # kept: used recently
    big = cache.get("e", lambda n: ["x"] * 50)                  # over the bound: not kept
    assert len(big) == 50 and cache.held <= 10
