"""update_file / remove_file give exactly what a full rebuild gives, cheaply."""

from __future__ import annotations

import pytest

from graph_helpers import edge_set, parse_file, repo_facts
from indexd.graph import Graph

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def compute_total(x):\n    return x\n\nclass Ledger:\n    def post(self):\n        return compute_total(1)\n",
    "pkg/api.py": "from pkg.core import compute_total, Ledger\nimport pkg.extra\n\ndef endpoint():\n    return compute_total(2)\n",
    "pkg/report.py": "def summary():\n    return compute_total(3) + new_helper_function()\n",
    "pkg/unrelated.py": "def lonely():\n    return 1\n",
    "tests/test_api.py": "from pkg.api import endpoint\n\ndef test_endpoint():\n    endpoint()\n",
    "docs/guide.md": "# Guide\nUse `compute_total` and [core](../pkg/core.py).\n",
}


def rebuilt(graph: Graph) -> Graph:
    return Graph().build(list(graph.facts.values()))


def check(graph: Graph) -> None:
    full = rebuilt(graph)
    assert edge_set(graph) == edge_set(full)
    assert graph.broken_links() == full.broken_links()
    unresolved = {k: sorted(map(str, r.unresolved)) for k, r in graph.results.items()}
    assert unresolved == {k: sorted(map(str, r.unresolved)) for k, r in full.results.items()}
    # the index impact reads unresolved names from (not each wanting file) stays in step
    assert ({k: d for k, d in graph.unresolved.items() if d}
            == {k: d for k, d in full.unresolved.items() if d})


def edit(graph, repo, rel, text):
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text)
    return graph.update_file(parse_file("r", repo, rel))


def test_edit_rename_delete_and_files(tree):
    repo = tree("proj", FILES)
    g = Graph().build(repo_facts("r", repo))
    check(g)
    # Body edit: only that file is recomputed.
    n = edit(g, repo, "pkg/unrelated.py", "def lonely():\n    return 2\n")
    assert n == 1
    check(g)
    # Rename a definition others use: resolved edges move, nothing else rebuilt.
    n = edit(g, repo, "pkg/core.py", FILES["pkg/core.py"].replace("compute_total", "compute_sum"))
    assert 1 < n < len(g.facts)
    check(g)
    assert not any(e.dst_symbol == "compute_total" for e in g.edges())
    # A new file provides a name and a module others were missing.
    edit(g, repo, "pkg/extra.py", "def new_helper_function():\n    return 0\n")
    check(g)
    assert ("pkg/api.py", "pkg/extra.py") in {(e.src_path, e.dst_path) for e in g.edges(["imports"])}
    # Delete a definition, then the whole file.
    edit(g, repo, "pkg/core.py", "class Ledger:\n    def post(self):\n        return 0\n")
    check(g)
    assert g.remove_file("r", repo.as_posix(), "pkg/core.py") >= 1
    check(g)
    assert not any(e.dst_path == "pkg/core.py" for e in g.edges())
    assert {b["target"] for b in g.broken_links()} == {"../pkg/core.py"}
    # Add it back, and a package marker (realm-wide recompute path).
    edit(g, repo, "pkg/core.py", FILES["pkg/core.py"])
    edit(g, repo, "tests/__init__.py", "")
    check(g)


def test_update_is_local_in_a_larger_graph(tree):
    files = dict(FILES)
    for n in range(60):
        files[f"other/mod{n}.py"] = f"def thing_{n}():\n    return {n}\n"
    repo = tree("proj", files)
    g = Graph().build(repo_facts("r", repo))
    n = edit(g, repo, "pkg/core.py", FILES["pkg/core.py"] + "\ndef another_function():\n    pass\n")
    assert n <= 5  # core.py and the files with edges into it, not the other 60
    check(g)


@pytest.mark.parametrize("kept", [2, 256])
def test_a_file_whose_bindings_changed_is_not_read_from_kept_tables(tree, monkeypatch, kept):
    """Binding tables are kept for the last files asked only (types.BINDS_KEPT), keyed
    by file: an edit that rebinds a name must be read from the new facts, whether
    its old table is still kept or was dropped, as a rebuild reads it."""
    from indexd.graph import types

    monkeypatch.setattr(types, "BINDS_KEPT", kept)   # 2: most tables dropped during the build
    files = {"pkg/__init__.py": "",
             "pkg/shapes.py": "class Circle:\n    def area(self):\n        return 3\n\n\n"
                              "class Square:\n    def area(self):\n        return 4\n",
             "pkg/use.py": "from pkg.shapes import Circle, Square\n\n\n"
                           "def measure():\n    shape = Circle()\n    return shape.area()\n"}
    for n in range(6):
        files[f"pkg/other{n}.py"] = (f"from pkg.shapes import Square\n\n\ndef f{n}():\n"
                                     f"    s = Square()\n    return s.area()\n")
    repo = tree("proj", files)
    g = Graph().build(repo_facts("r", repo))
    targets = lambda: {e.dst_symbol for e in g.edges(["calls"])
                       if e.src_path == "pkg/use.py" and e.dst_symbol.endswith("area")}
    assert targets() == {"Circle.area"}
    edit(g, repo, "pkg/use.py", files["pkg/use.py"].replace("shape = Circle()", "shape = Square()"))
    assert targets() == {"Square.area"}
    check(g)
