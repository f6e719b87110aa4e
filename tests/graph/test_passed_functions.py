"""Issue 11 part 2: a module-level name bound to a call that is passed a function runs
it. click's `_default_text_stdout = _make_cached_stream_func(lambda: sys.stdout,
get_text_stdout)` returns a function that calls `get_text_stdout`, and `echo` calls
`_default_text_stdout()`; a test of `echo` breaks when `get_text_stdout` does. The
call `h()` gets an `inferred` calls edge to the function passed (not when a local or
parameter shadows `h`; passing a function alone gives no calls edge, nor an import_time
one: a references edge, test_passed_as_argument.py)."""

from __future__ import annotations

import pytest
from graph_helpers import build, calls_from as calls, write_tree

FILES = {
    "pkg/__init__.py": "",
    "pkg/compat.py": (
        "import sys\n\n\n"
        "def get_text_stdout():\n    return sys.stdout\n\n\n"
        "def make_cached(src_func, wrapper_func):\n"
        "    def func():\n        return wrapper_func()\n    return func\n\n\n"
        "default_stdout = make_cached(lambda: sys.stdout, get_text_stdout)\n"
        "default_kw = make_cached(None, wrapper_func=get_text_stdout)\n"
        "FunctionType = type(get_text_stdout)\n\n\n"
        "def new_function():\n    return FunctionType(None, {})\n\n\n"
        "def same_file():\n    return default_stdout()\n\n\n"
        "def keyword():\n    return default_kw()\n"),
    "pkg/utils.py": (
        "from pkg.compat import default_stdout\n\n\n"
        "def echo(msg):\n    return default_stdout().write(msg)\n\n\n"
        "def local(default_stdout):\n    return default_stdout()\n"),
    "pkg/other.py": (
        "from pkg.compat import get_text_stdout, make_cached\n\n\n"
        "def only_passes():\n    return make_cached(None, get_text_stdout)\n"),
    "tests/test_echo.py": "from pkg.utils import echo\n\n\ndef test_echo():\n    echo('x')\n",
}
TARGET = ("pkg/compat.py", "get_text_stdout", "inferred")


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return build("r", write_tree(tmp_path_factory.mktemp("passed"), FILES))


def test_a_call_of_the_name_where_it_is_imported_reaches_the_passed_function(graph):
    assert TARGET in calls(graph, "pkg/utils.py", "echo")


def test_a_call_in_the_same_file_and_a_keyword_argument_reach_it(graph):
    assert TARGET in calls(graph, "pkg/compat.py", "same_file")
    assert TARGET in calls(graph, "pkg/compat.py", "keyword")


def test_a_parameter_of_the_same_name_shadows_the_module_name(graph):
    assert not any(d[1] == "get_text_stdout" for d in calls(graph, "pkg/utils.py", "local"))


def test_a_type_made_with_type_of_a_function_does_not_call_it(graph):
    assert not any(d[1] == "get_text_stdout" for d in calls(graph, "pkg/compat.py",
                                                             "new_function"))


def test_passing_a_function_alone_is_no_call_of_it(graph):
    assert not any(d[1] == "get_text_stdout" for d in calls(graph, "pkg/other.py",
                                                             "only_passes"))
    assert not any(e.dst_symbol == "get_text_stdout" for e in graph.edges(["import_time"]))


def test_a_test_of_the_caller_is_in_the_tests_bucket_of_the_passed_function(graph):
    answer = graph.impact("pkg/compat.py::get_text_stdout", depth=3)
    assert ("tests/test_echo.py", "test_echo") in {(t["path"], t["symbol"])
                                                    for t in answer["tests"]}


def test_rebinding_the_name_elsewhere_recomputes_its_callers(tmp_path):
    """utils.py's `default_stdout()` depends on compat.py's `default_stdout = ...`
    line, which is no definition."""
    from graph_helpers import parse_file, repo_facts

    from indexd.graph import Graph

    repo = write_tree(tmp_path, FILES)
    g = Graph().build(repo_facts("r", repo))
    assert TARGET in calls(g, "pkg/utils.py", "echo")
    (repo / "pkg/compat.py").write_text(FILES["pkg/compat.py"].replace(
        "default_stdout = make_cached(lambda: sys.stdout, get_text_stdout)",
        "default_stdout = make_cached(lambda: sys.stdout, make_cached)"))
    g.update_file(parse_file("r", repo, "pkg/compat.py"))
    assert ("pkg/compat.py", "make_cached", "inferred") in calls(g, "pkg/utils.py", "echo")
    assert TARGET not in calls(g, "pkg/utils.py", "echo")
