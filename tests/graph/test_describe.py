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
