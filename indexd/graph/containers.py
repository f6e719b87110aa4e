"""List element classes (Python): what ``for v in c`` holds when no annotation says,
but the code that fills ``c`` does.

sqlparse's ``FilterStack.__init__`` sets ``self.postprocess = []``, ``sqlparse.format``
appends ``filters.SerializerUnicode()`` to ``stack.postprocess``, and ``FilterStack.run``
runs ``for filter_ in self.postprocess: filter_.process(stmt)``: ``filter_`` holds a
SerializerUnicode, so ``filter_.process`` is its ``process``.

What fills a list comes from the parser (python.refs.scm): ``fills`` (``c.append(C())``,
``c.add``, ``c.appendleft``, ``c.extend([C(), ...])``, ``c = [C(), ...]``: the element's
callee), ``fills_name`` (``c.append(v)``: what ``v`` holds there) and ``bind_list``
(``c = [...]``). The answer is every class put into the list, and only counts when it is
whole:

- every binding of ``c`` in its scope is a list literal (``c = given`` says nothing);
- every element's class is known (an appended parameter is not);
- ``self.x``: the fill sites are in the class's methods (``self.x.append``) or anywhere
  in the realm on a receiver of that class (``stack.x.append`` with ``stack =
  FilterStack()``); a receiver of unknown class counts as this class's only where no
  other class of the realm keeps a list named ``x``, else nothing is known; nor is it
  where another class fills ``self.x`` without making that list itself (a subclass
  adding to the inherited one).

No answer leaves the call a name match, as before. Pure; reads the realm index, whose
``fills_by_attr`` says which files fill or bind a list attribute of each name.
"""

from __future__ import annotations

from .model import enclosing

FILLS = ("fills", "fills_name")
LIST_REFS = (*FILLS, "bind_list")
SELF_LIKE = ("self", "cls")


def filled_classes(index, f, scope, container: str, found: list[tuple], at: str | None,
                   classes: set[str]) -> list[tuple]:
    """(repo, path, class) of each class put into ``container`` (its bindings ``found``
    in scope ``at``); [] unless the answer is whole."""
    lists = {b[2] for b in found if b[0] == "bind_list"}
    if not lists or any(b[2] not in lists for b in found):
        return []
    key = ("filled", f.repo, f.path, at, container)
    if key not in index.memo:
        index.memo[key] = []        # an element read from the list itself knows nothing
        index.memo[key] = _filled(index, f, scope, container, at, classes)
    return index.memo[key]


def _filled(index, f, scope, container: str, at, classes) -> list[tuple]:
    from .types import _union

    head, _, attr = container.partition(".")
    if head in SELF_LIKE and attr:
        sites = _attribute_sites(index, f, at, attr)
    else:
        sites = [(f, scope, classes, r) for r in f.refs_of(*FILLS)
                 if r.name == container and r.scope == at]
    if not sites:
        return []
    parts = [_element_classes(index, *site) for site in sites]
    return _union(parts) if all(parts) else []


def _attribute_sites(index, f, cls: str | None, attr: str) -> list[tuple]:
    """(file, its scope, its classes, fill reference) of each fill of ``self.<attr>`` of
    ``f``'s class ``cls``; [] when a fill of unknown receiver may be this class's."""
    from .edges import _class_quals, _other_scope
    from .types import receiver_classes

    if cls is None:
        return []
    mine = (f.repo, f.path, cls)
    sites = []
    for repo, path in sorted(index.fills_by_attr.get(attr, ())):
        g = index.files.get((repo, path))
        if g is None:
            continue
        g_scope, g_classes = _other_scope(index, g), _class_quals(index, g)
        for r in g.refs_of(*FILLS):
            receiver, dot, last = r.name.rpartition(".")
            if not dot or last != attr:
                continue
            if receiver in SELF_LIKE:
                owner = next((p for p in enclosing(r.scope) if p in g_classes), None)
                belongs = g is f and owner == cls
                if not belongs and (g.repo, g.path, owner) not in _list_owners(index, attr):
                    return []   # another class fills a list it does not make: maybe ours
            else:
                held = receiver_classes(index, g, g_scope, receiver, r.scope, g_classes)
                if not held and _list_owners(index, attr) != {mine}:
                    return []
                belongs = not held or mine in held
            if belongs:
                sites.append((g, g_scope, g_classes, r))
    return sites


def _list_owners(index, attr: str) -> set[tuple]:
    """(repo, path, class) of each class binding ``self.<attr>`` to a list literal."""
    from .edges import _class_quals

    key = ("list_owners", attr)
    if key not in index.memo:
        out = set()
        for repo, path in index.fills_by_attr.get(attr, ()):
            g = index.files.get((repo, path))
            for r in g.refs_of("bind_list") if g is not None else ():
                receiver, dot, last = r.name.rpartition(".")
                if dot and last == attr and receiver in SELF_LIKE:
                    owner = next((p for p in enclosing(r.scope)
                                  if p in _class_quals(index, g)), None)
                    if owner:
                        out.add((repo, path, owner))
        index.memo[key] = out
    return index.memo[key]


def _element_classes(index, g, g_scope, g_classes, ref) -> list[tuple]:
    from .types import callee_classes, receiver_classes

    if ref.kind == "fills":
        return callee_classes(index, g, g_scope, ref.module, ref.scope, g_classes)
    return receiver_classes(index, g, g_scope, ref.module, ref.scope, g_classes)


def filled_attributes(f) -> set[str]:
    """Attribute names whose lists ``f`` (or None) fills or binds (``stack.x.append``: x)."""
    if f is None:
        return set()
    return {r.name.rpartition(".")[2] for r in f.refs_of(*LIST_REFS) if "." in r.name}


def iterated_attributes(f) -> set[str]:
    """Attribute names ``f`` iterates in a ``for`` (``for v in self.x``: x): its edges
    depend on every file filling such a list."""
    return {r.module.rpartition(".")[2] for r in f.refs_of("bind_for")
            if r.module and "." in r.module and not r.module.endswith(")")}
