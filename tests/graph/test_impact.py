"""impact/deps/refs/related: output shape, scoring, completeness, targets."""

from __future__ import annotations

import pytest

from graph_helpers import build, parse_file, repo_facts, write_tree
from indexd.graph import Graph

FILES = {
    "lib/__init__.py": "",
    "lib/base.py": "def parse_config_value(s):\n    return s\n",
    "lib/mid.py": "from lib.base import parse_config_value\n\ndef load_settings():\n    return parse_config_value('x')\n",
    "lib/top.py": "from lib.mid import load_settings\n\ndef start_server():\n    return load_settings()\n",
    "lib/broken.py": "from lib.base import parse_config_value\n\ndef oops(:\n    parse_config_value(1)\n",
    "tests/test_top.py": "from lib.top import start_server\n\ndef test_start():\n    start_server()\n",
}
ITEM_KEYS = {"realm", "repo", "path", "symbol", "kind", "distance", "score", "confidence", "via"}


@pytest.fixture
def setup(tree):
    repo = tree("proj", FILES)
    return repo, build("r", repo)


def test_shape_distance_and_scores(setup):
    repo, g = setup
    res = g.impact("lib/base.py", depth=3)
    lists = ("affected", "tests", "docs")
    assert set(res) == {"target", "resolved", "took_ms", "complete", "incomplete_reason", "unresolved",
                        "unresolved_total", "unresolved_truncated", "limit", "truncated",
                        "walk", "tests_walk", *lists, *(f"{b}_{x}" for b in lists
                                          for x in ("total", "truncated", "by_distance",
                                                    "total_exact"))}
    assert res["walk"]["exhaustive"] is True and res["affected_total_exact"] is True
    for it in res["affected"] + res["tests"]:
        assert set(it) == ITEM_KEYS
        assert 0 < it["score"] <= 1 and 0 < it["confidence"] <= 1
        assert len(it["via"]) == it["distance"]
        assert set(it["via"][0]) == {"kind", "from", "to", "line", "how"}
    dist = {(i["path"], i["symbol"]): i["distance"] for i in res["affected"]}
    assert dist[("lib/mid.py", "load_settings")] == 1
    assert dist[("lib/top.py", "start_server")] == 2
    assert {i["path"] for i in res["tests"]} == {"tests/test_top.py"}
    scores = {(i["path"], i["symbol"]): i["score"] for i in res["affected"]}
    assert scores[("lib/mid.py", "load_settings")] > scores[("lib/top.py", "start_server")]
    shallow = g.impact("lib/base.py", depth=1)
    assert {i["path"] for i in shallow["affected"]} == {"lib/mid.py", "lib/broken.py"}
    # the tests bucket reaches past the depth over resolved edges (issue 11)
    assert [(i["path"], i["distance"]) for i in shallow["tests"]
            if i["symbol"] == "test_start"] == [("tests/test_top.py", 3)]


def test_complete_false_for_failed_and_pending(setup):
    repo, g = setup
    res = g.impact("lib/base.py", depth=1)
    assert res["complete"] is False and "failed to parse" in res["incomplete_reason"]
    assert "lib/broken.py" in res["incomplete_reason"]
    ok = g.impact("lib/top.py", depth=1)
    assert ok["complete"] is True and ok["incomplete_reason"] is None
    pending = {("r", repo.as_posix(), "lib/new.py")}
    waiting = g.impact("lib/top.py", depth=1, pending=pending)
    assert waiting["complete"] is False and "pending" in waiting["incomplete_reason"]
    assert g.deps("lib/top.py", pending=pending)["complete"] is False


def test_target_forms(setup, tree):
    repo, g = setup
    a = g.impact("lib/mid.py")
    b = g.impact(f"{repo.as_posix()}/lib/mid.py")
    c = g.impact("proj/lib/mid.py")
    assert a["affected"] == b["affected"] == c["affected"]
    assert g.impact("lib/", depth=1)["tests"]  # a directory
    with pytest.raises(KeyError):
        g.impact("nope.py")
    with pytest.raises(KeyError):
        g.impact("lib/mid.py::no_such_symbol")
    other = tree("proj2", {"lib/mid.py": "x = 1\n"})
    both = Graph().build(repo_facts("r", repo) + repo_facts("r", other))
    with pytest.raises(KeyError, match="ambiguous"):
        both.impact("lib/mid.py")
    assert both.impact("proj2/lib/mid.py")["affected"] == []


def test_a_symbol_named_alone_is_a_target(setup, tree):
    """`indexctl impact load_settings` (what a person or an agent types first)
    answered "no indexed file matches": a name alone, a class-qualified name
    or a module-qualified one now names the symbol when it names one."""
    repo, g = setup
    by_path = g.impact("lib/mid.py::load_settings", depth=2)
    assert by_path["resolved"] is None   # the target says what it is
    for target in ("load_settings", "lib.mid.load_settings", "mid.load_settings"):
        res = g.impact(target, depth=2)
        assert res["affected"] == by_path["affected"] and res["tests"] == by_path["tests"]
        assert res["resolved"] == "proj/lib/mid.py::load_settings"
    refs = g.refs("parse_config_value")
    assert {(r["path"], r["symbol"]) for r in refs["refs"]} >= {("lib/mid.py", "load_settings")}
    assert g.deps("start_server")["deps"] == g.deps("lib/top.py::start_server")["deps"]

    files = {"a/jobs.py": "class Queue:\n    def put(self, x):\n        pass\n\n\ndef run():\n    pass\n",
             "b/tasks.py": "def run():\n    pass\n\n\ndef only_here():\n    Queue().put(1)\n"}
    g2 = build("r", tree("proj3", files))
    assert g2.resolve_target("Queue.put") == [("r", g2.resolve_target("a/jobs.py")[0][1],
                                                "a/jobs.py", "Queue.put")]
    assert [n[2:] for n in g2.resolve_target("put")] == [("a/jobs.py", "Queue.put")]  # a method's name
    with pytest.raises(KeyError, match=r"'run' names 2 symbols: a/jobs.py::run, b/tasks.py::run"):
        g2.resolve_target("run")
    with pytest.raises(KeyError, match="no indexed file or symbol matches 'nothing_here'"):
        g2.resolve_target("nothing_here")
    with pytest.raises(KeyError, match="no indexed file matches 'a/nothing.py'"):
        g2.resolve_target("a/nothing.py")


def test_deps_refs_related(setup):
    repo, g = setup
    deps = g.deps("lib/top.py", depth=2)
    assert {(d["path"], d["distance"]) for d in deps["deps"] if d["symbol"] is None} == {
        ("lib/mid.py", 1), ("lib/base.py", 2)}
    refs = g.refs("lib/base.py::parse_config_value")
    assert {(r["path"], r["symbol"], r["kind"]) for r in refs["refs"]} >= {
        ("lib/mid.py", "load_settings", "calls"), ("lib/mid.py", None, "references")}
    rel = g.related("lib/mid.py", "load_settings", limit=3)
    assert rel and rel[0]["score"] >= rel[-1]["score"]
    assert {"lib/base.py", "lib/top.py"} <= {r["path"] for r in g.related("lib/mid.py", limit=10)}
    assert g.related("missing.py") == []


def test_unresolved_lists_ambiguous_names(tree):
    files = {f"m{n}/x.py": "def common_name():\n    pass\n" for n in range(12)}
    files["user.py"] = "def f():\n    common_name()\n"
    g = build("r", tree("proj", files))
    res = g.impact("m0/x.py::common_name", depth=1)
    assert res["affected"] == []
    assert [(u["path"], u["name"]) for u in res["unresolved"]] == [("user.py", "common_name")]


def test_pending_file_update_then_complete(setup):
    repo, g = setup
    (repo / "lib/broken.py").write_text("from lib.base import parse_config_value\n")
    g.update_file(parse_file("r", repo, "lib/broken.py"))
    assert g.impact("lib/base.py", depth=1)["complete"] is True


def test_a_name_with_one_implementation_and_its_declaration_names_the_implementation(tree):
    """commander 12: `impact Command.option` was ambiguous between lib/command.js and
    typings/index.d.ts, which only declares it; the code is what changes. Two real
    definitions stay ambiguous."""
    g = build("r", tree("decl", {
        "lib/command.js": "class Command {\n  option(f) { return f; }\n}\nexports.Command = Command;\n",
        "typings/index.d.ts": "export class Command {\n  option(f: string): this;\n}\n",
        "lib/other.js": "class Help {\n  format() { return 1; }\n}\n",
        "lib/more.js": "class Help {\n  format() { return 2; }\n}\n",
    }))
    assert [n[2:] for n in g.resolve_target("Command.option")] == [("lib/command.js", "Command.option")]
    with pytest.raises(KeyError, match="'Help.format' names 2 symbols"):
        g.resolve_target("Help.format")


STATE = {
    "pkg/__init__.py": "",
    "pkg/i18n.py": ("import os\nfrom threading import local\n\n_CURRENT = local()\nTABLE = {}\n\n\n"
                    "def deactivate():\n    _CURRENT.locale = None\n\n\n"
                    "def register(k, v):\n    TABLE[k] = v\n\n\n"
                    "def export(v):\n    os.environ['X'] = v\n\n\n"
                    "def pure(x):\n    y = {}\n    y['a'] = x\n    return y\n\n\n"
                    "class Box:\n    def set(self, v):\n        self.v = v\n\n\n"
                    "def shadow(_CURRENT):\n    _CURRENT.locale = 1\n\n\n"
                    "LEVEL = 0\n\n\n"
                    "def set_level(v):\n    global LEVEL\n    LEVEL = v\n\n\n"
                    "def bump():\n    def inner():\n        global LEVEL\n        LEVEL += 1\n"
                    "    inner()\n\n\n"
                    "def level():\n    return LEVEL\n"),
}


def test_which_functions_store_into_module_level_state(tmp_path):
    """humanize's deactivate: what coverage may rule out depends on it (graph/coverage.py)."""
    graph = build("r", write_tree(tmp_path, STATE))
    repo = tmp_path.as_posix()

    def writes(symbol):
        return graph.writes_module_state(("r", repo, "pkg/i18n.py", symbol))
    assert writes("deactivate") and writes("register") and writes("export")
    assert not writes("pure") and not writes("Box.set") and not writes("shadow")
    # `global` rebinds the module's own name (a nested function's rebinding counts for
    # the function that defines it); a bare read does not
    assert writes("set_level") and writes("bump") and not writes("level")
