"""The impact walk's fast paths give what the plain ones gave (issue 11, latency):
PageRank numbered by the walk's visits, packed edges read without their absent
columns. bench/impact_same.py checks the same on the stdlib."""

from __future__ import annotations

from graph_helpers import build
from indexd.graph.edges import file_edges
from indexd.graph.impact import rank, walk

FILES = {
    "lib/__init__.py": "",
    "lib/base.py": "def parse(s):\n    return s\n\n"
                   "def helper(s):\n    return parse(s)\n\nEMPTY = parse('')\n",
    "lib/mid.py": "from lib.base import parse, helper\n\n"
                  "def load():\n    return parse('x') + helper('y')\n",
    "lib/top.py": "import lib.base\nimport lib.mid\n\n"
                  "def start():\n    return lib.mid.load() + lib.base.parse('z')\n",
    "lib/plain.py": "import lib.base\nimport lib.mid\n",   # module-level imports only
    "tests/test_top.py": "from lib.top import start\n\ndef test_start():\n    start()\n",
}


def test_rank_numbered_by_the_walk_scores_every_node_the_same(tree):
    g = build("r", tree("proj", FILES))
    for target in ("lib/base.py", "lib/base.py::parse", "lib/mid.py"):
        seeds = g.resolve_target(target)
        w = walk(seeds, g._incoming, 3, reverse=True)
        # base.py's own module code calls parse: a pair from the file to itself, which
        # carries no rank either way
        assert target != "lib/base.py" or any(a == b for a, b in w.traversed)
        plain, fast = rank(seeds, w.traversed), rank(seeds, w.traversed, w.visits)
        assert len(plain) > len(seeds)
        assert {n: fast[n] for n in plain} == plain   # equal floats, not just close
        assert all(fast[n] == 0.0 for n in set(fast) - set(plain))


def test_packed_edges_without_symbol_or_weight_columns_equal_the_computed(tree):
    repo = tree("proj", FILES)
    g = build("r", repo)
    key = ("r", repo.as_posix(), "lib/plain.py")
    packed = g.results[key]
    assert packed.src_syms is None and packed.weights is None   # the columns left out
    computed = file_edges(g.indexes["r"], g.facts[key]).edges
    assert computed and packed.edges == computed
    for d, dst in enumerate(packed.dsts):
        into = [e for e in computed if ("r", e.dst_repo, e.dst_path) == dst]
        assert packed.edges_to(d) == into
        assert packed.edges_to_file(d) == [e for e in into if e.dst_symbol is None]
