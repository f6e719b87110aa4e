"""A read of a module-level constant through one of its methods or an item (Python).

``DEFAULT_FILTERS.copy()``, ``TABLE.get(key)``, ``func = FILTERS[name]``: the function
depends on what the constant holds. A registry (``FILTERS = {"sort": do_sort}``,
graph/edges.py's ``stored`` references) is how its functions are run: jinja2's
``Environment.__init__`` copies ``DEFAULT_FILTERS`` and ``call_filter`` calls what it
finds there by name. Without this edge a broken ``make_attrgetter`` (called by
``do_sort``) reached only the one test that calls it directly, ``tests affected`` said
that was safe, and test_filters.py failed (bench/impact_vs_tests.py).

Each such read is a ``references`` edge from the reading symbol to the constant, how
``resolved``: the receiver's name leads there through the file's own definitions or its
imports (re-exports and ``as`` aliases followed, graph/resolve.py). A name the function
binds itself (a parameter, an assignment) is its own value, never the module's.
Constants are the UPPER_CASE module-level names the parser makes symbols of. Pure;
depends only on the realm index.
"""

from __future__ import annotations

from .types import bound_in_function

READ_KINDS = ("call", "attribute", "bind_item")


def constant_read_edges(index, f, scope, res) -> None:
    own = {d.qualname for d in f.defs if d.kind == "constant"}
    if not own and not scope.imported:
        return
    classes = {d.qualname for d in f.defs if d.kind == "class"}
    seen: set[tuple] = set()
    made = {(e.src_symbol, e.dst_repo, e.dst_path, e.dst_symbol) for e in res.edges
            if e.kind == "references"}     # `from m import X` at module level is one
    for r in f.refs_of(*READ_KINDS):
        name = r.module
        if not name or not name.isidentifier() or (r.scope, name) in seen:
            continue
        seen.add((r.scope, name))
        if name not in own and name not in scope.imported:
            continue
        index.checkpoint()
        res.wants.add(("name", name))
        if bound_in_function(index, f, name, r.scope, classes):
            continue
        for repo, path, sym in _constants(index, f, scope, name, own):
            if (repo, path, sym) != (f.repo, f.path, r.scope) and \
                    (r.scope, repo, path, sym) not in made:
                made.add((r.scope, repo, path, sym))
                res.edges.append(_edge(f, "references", r.scope, repo, path, sym, r.line,
                                       "resolved"))


def _constants(index, f, scope, name: str, own: set[str]) -> list[tuple]:
    if name in own:
        return [(f.repo, f.path, name)]
    out = []
    for repo, path, sym in scope.imported.get(name, ()):
        if sym and any(d.kind == "constant" and d.qualname == sym
                       for d in index.defs_named(repo, path, sym.rpartition(".")[2])):
            out.append((repo, path, sym))
    return out


# Imported last, as graph/passed.py does: edges.py imports this module too.
from .edges import _edge  # noqa: E402
