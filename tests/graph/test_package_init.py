"""Issue 11 part 2: `from pkg.sub import x` runs pkg/__init__.py first, so a test
importing pkg.sub breaks when pkg/__init__.py does."""

from __future__ import annotations

from graph_helpers import build

FILES = {
    "pkg/__init__.py": "from pkg.util import helper\n",
    "pkg/util.py": "def helper():\n    return 1\n",
    "pkg/inner/__init__.py": "",
    "pkg/inner/deep.py": "def deep():\n    return 2\n",
    "tests/test_deep.py": "from pkg.inner.deep import deep\n\n\ndef test_deep():\n    assert deep() == 2\n",
}


def test_importing_a_submodule_depends_on_its_packages(tree):
    g = build("r", tree("pkgs", FILES))
    imports = {(e.src_path, e.dst_path) for e in g.edges(["imports"])}
    runs = {(e.src_path, e.dst_path) for e in g.edges(["package"])}
    assert ("tests/test_deep.py", "pkg/inner/deep.py") in imports
    assert ("tests/test_deep.py", "pkg/inner/__init__.py") in runs
    assert ("tests/test_deep.py", "pkg/__init__.py") in runs
    res = g.impact("pkg/util.py::helper", depth=3)
    assert "tests/test_deep.py" in {t["path"] for t in res["tests"]}
