"""Issue 11 part 2: pytest fixtures. A test's parameter named like a fixture of its
file or of a conftest.py up the tree holds the fixture's type (its `-> X`, or the one
class its `return X(...)` / `yield X(...)` build), and the test calls the fixture
function; both `inferred`. On click every CLI test reaches click through
`def test_x(runner)` and conftest.py's `return CliRunner()`, which was a name match."""

from __future__ import annotations

import pytest
from graph_helpers import build, calls_from as calls, parse_file, repo_facts

from indexd.graph import Graph

FILES = {
    "pkg/__init__.py": "",
    "pkg/testing.py": ("class Runner:\n    def invoke(self, cli):\n        return cli\n\n\n"
                       "class Other:\n    def invoke(self, cli):\n        return None\n"),
    "tests/conftest.py": (
        "import typing as t\n\nimport pytest\nfrom pkg.testing import Other, Runner\n\n\n"
        "@pytest.fixture(scope='function')\ndef runner(request):\n    return Runner()\n\n\n"
        "@pytest.fixture\ndef yielded():\n    r = Runner()\n    yield Runner()\n    r.invoke(None)\n\n\n"
        "@pytest.fixture\ndef annotated() -> t.Iterator[Runner]:\n    yield make_one()\n\n\n"
        "@pytest.fixture\ndef either(request):\n    if request:\n        return Runner()\n"
        "    return Other()\n\n\n"
        "def not_a_fixture():\n    return Runner()\n\n\n"
        "def make_one():\n    return Runner()\n"),
    "tests/test_cli.py": (
        "def test_runner(runner):\n    runner.invoke(1)\n\n\n"
        "def test_yielded(yielded):\n    yielded.invoke(1)\n\n\n"
        "def test_annotated(annotated):\n    annotated.invoke(1)\n\n\n"
        "def test_either(either):\n    either.invoke(1)\n\n\n"
        "def test_not_a_fixture(not_a_fixture):\n    not_a_fixture.invoke(1)\n\n\n"
        "def helper(runner):\n    runner.invoke(1)\n\n\n"
        "def test_rebound(runner):\n    runner = runner.copy()\n    runner.invoke(1)\n\n\n"
        "class TestInClass:\n    def test_method(self, runner):\n        runner.invoke(1)\n"),
    # the nearest definition wins: the file's own, then the nearest conftest.py
    "tests/sub/conftest.py": ("import pytest\nfrom pkg.testing import Other\n\n\n"
                              "@pytest.fixture\ndef runner():\n    return Other()\n"),
    "tests/sub/test_sub.py": "def test_sub(runner):\n    runner.invoke(1)\n",
    "tests/test_own.py": ("import pytest\nfrom pkg.testing import Other\n\n\n"
                          "@pytest.fixture\ndef runner():\n    return Other()\n\n\n"
                          "def test_own(runner):\n    runner.invoke(1)\n"),
}
RUNNER = ("pkg/testing.py", "Runner.invoke", "inferred")
OTHER = ("pkg/testing.py", "Other.invoke", "inferred")


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    from graph_helpers import write_tree
    return build("r", write_tree(tmp_path_factory.mktemp("fixtures"), FILES))


@pytest.mark.parametrize("test", ["test_runner", "test_yielded", "test_annotated",
                                  "TestInClass.test_method"])
def test_a_fixture_parameter_holds_the_fixtures_type(graph, test):
    assert RUNNER in calls(graph, "tests/test_cli.py", test), calls(graph, "tests/test_cli.py", test)


def test_the_test_calls_the_fixture_function(graph):
    assert ("tests/conftest.py", "runner", "inferred") in calls(graph, "tests/test_cli.py",
                                                                "test_runner")


@pytest.mark.parametrize("test", ["test_either", "test_not_a_fixture", "helper",
                                  "test_rebound"])
def test_no_type_unless_the_fixture_gives_one(graph, test):
    """Returns that disagree, a plain function, a helper that is no test, a parameter
    rebound to something unknown: no inferred method edge."""
    got = calls(graph, "tests/test_cli.py", test)
    assert not {c for c in got if c[1].endswith(".invoke") and c[2] == "inferred"}, got


def test_the_nearest_fixture_wins(graph):
    assert OTHER in calls(graph, "tests/sub/test_sub.py", "test_sub")
    assert RUNNER not in calls(graph, "tests/sub/test_sub.py", "test_sub")
    assert OTHER in calls(graph, "tests/test_own.py", "test_own")
    assert ("tests/test_own.py", "runner", "inferred") in calls(graph, "tests/test_own.py",
                                                                "test_own")


def test_impact_of_the_method_reaches_the_test_through_the_fixture(graph):
    res = graph.impact("pkg/testing.py::Runner.invoke", depth=3)
    assert "tests/test_cli.py" in {t["path"] for t in res["tests"]}, res["tests"]
    via = next(t["via"] for t in res["tests"] if t["path"] == "tests/test_cli.py")
    assert all(v["how"] != "name_match" for v in via), via


def test_editing_the_conftest_fixture_recomputes_its_tests(tree):
    repo = tree("incr", FILES)
    g = Graph().build(repo_facts("r", repo))
    assert RUNNER in calls(g, "tests/test_cli.py", "test_runner")
    conftest = FILES["tests/conftest.py"].replace(
        "def runner(request):\n    return Runner()", "def runner(request):\n    return Other()")
    (repo / "tests/conftest.py").write_text(conftest)
    g.update_file(parse_file("r", repo, "tests/conftest.py"))
    assert OTHER in calls(g, "tests/test_cli.py", "test_runner")
    assert RUNNER not in calls(g, "tests/test_cli.py", "test_runner")


def test_decorating_a_conftest_function_makes_it_the_tests_fixture(tree):
    """Only the decorator changes (no definition, no return): the tests still move."""
    plain = FILES["tests/conftest.py"].replace(
        "@pytest.fixture(scope='function')\ndef runner", "def runner")
    repo = tree("deco", dict(FILES, **{"tests/conftest.py": plain}))
    g = Graph().build(repo_facts("r", repo))
    assert RUNNER not in calls(g, "tests/test_cli.py", "test_runner")
    (repo / "tests/conftest.py").write_text(FILES["tests/conftest.py"])
    g.update_file(parse_file("r", repo, "tests/conftest.py"))
    assert RUNNER in calls(g, "tests/test_cli.py", "test_runner")


def test_a_new_conftest_gives_its_fixture_to_the_tests_below(tree):
    files = {k: v for k, v in FILES.items() if k != "tests/sub/conftest.py"}
    repo = tree("new", files)
    g = Graph().build(repo_facts("r", repo))
    assert RUNNER in calls(g, "tests/sub/test_sub.py", "test_sub")
    (repo / "tests/sub/conftest.py").write_text(FILES["tests/sub/conftest.py"])
    g.update_file(parse_file("r", repo, "tests/sub/conftest.py"))
    assert OTHER in calls(g, "tests/sub/test_sub.py", "test_sub")
    assert RUNNER not in calls(g, "tests/sub/test_sub.py", "test_sub")
