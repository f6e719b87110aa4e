"""Relationships in words: the strongest file pairs and the evidence sentence."""

from __future__ import annotations

from graph_helpers import build
from indexd.graph.describe import edges_between, evidence_sentence, strongest

FILES = {
    "blueprints.py": "class Blueprint:\n    def register(self, x):\n        pass\n\n"
                     "def helper():\n    pass\n",
    "app.py": "from blueprints import Blueprint, helper\n\n"
              "def make_app():\n    bp = Blueprint()\n    bp.register(1)\n    helper()\n\n"
              "def again():\n    Blueprint().register(2)\n\n"
              "def third():\n    Blueprint().register(3)\n",
    "util.py": "def tiny():\n    pass\n",
    "cli.py": "from util import tiny\nfrom blueprints import helper\n\n"
              "def main():\n    tiny()\n    helper()\n",
}


def test_evidence_sentence_names_imports_and_counts_calls(tree):
    repo = tree("proj", FILES)
    g = build("r", repo)
    app, bps = ("r", repo.as_posix(), "app.py"), ("r", repo.as_posix(), "blueprints.py")
    text = evidence_sentence("app.py", "blueprints.py", edges_between(g, app, bps))
    assert text == ("app.py imports Blueprint and helper from blueprints.py and calls "
                    "Blueprint 3 times, register 3 times and helper.")


def test_strongest_pairs_both_directions(tree):
    repo = tree("proj", FILES)
    g = build("r", repo)
    bps = ("r", repo.as_posix(), "blueprints.py")
    users = strongest(g, bps, "in")
    # app.py uses blueprints.py more (and more strongly) than cli.py does
    assert [o[2] for o, _e, _s in users] == ["app.py", "cli.py"]
    assert users[0][2] > users[1][2] > 0
    cli_out = strongest(g, ("r", repo.as_posix(), "cli.py"), "out", top=1)
    assert len(cli_out) == 1


def test_same_base_name_uses_paths():
    from indexd.graph.model import Edge

    e = Edge("imports", "/r", "a/util.py", None, "/r", "b/util.py", None, 1, "resolved",
             realm="r")
    assert evidence_sentence("a/util.py", "b/util.py", [e]) == "a/util.py imports b/util.py."


def _edge(kind, dst_symbol, line, how="resolved", src="a.py", dst="b.py"):
    from indexd.graph.model import Edge

    return Edge(kind, "/r", src, None, "/r", dst, dst_symbol, line, how, realm="r")


def test_a_name_match_only_pair_is_hedged_and_says_where():
    edges = [_edge("calls", "encode", n, how="name_match") for n in (3, 7, 9)]
    assert evidence_sentence("model.py", "text.py", edges) == (
        "model.py calls encode 3 times in text.py (matched by name only).")


def test_a_test_file_tests_rather_than_calls_and_no_name_is_said_twice():
    edges = [_edge("imports", None, 1), _edge("references", "parse", 1),
             _edge("calls", "parse", 5), _edge("tests", "parse", 5),
             _edge("references", "parse", 8), _edge("references", "Token", 9)]
    assert evidence_sentence("tests/test_b.py", "b.py", edges) == (
        "test_b.py imports parse from b.py, tests parse and uses Token.")


def test_pairs_only_a_name_agrees_on_are_not_among_the_strongest(tree):
    repo = tree("proj", {"lib.py": "def encode(x):\n    return x\n",
                         "user.py": "def run(s):\n    return s.encode()\n"})
    g = build("r", repo)
    user = ("r", repo.as_posix(), "user.py")
    from indexd.graph.describe import pair_edges

    assert [e.how for es in pair_edges(g, user).values() for e in es] == ["name_match"]
    assert strongest(g, user, "out") == []
