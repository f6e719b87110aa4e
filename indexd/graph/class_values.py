"""Class attributes holding a class (Python): what ``self.Cache(...)`` builds.

The parser's ``class_value`` references (python.refs.scm) are the bindings
``Cache = LRUCache`` / ``Cache = pkg.Cache`` of a class body. ``self.Cache`` in a
method of class C holds:

- what the nearest class along C's bases (C first) that binds ``Cache`` in its body
  binds it to, when that names a class of the realm (``Cache = None`` names none and
  hides the bases' bindings, as it does at run time);
- and what each subclass of C anywhere in the realm binds it to, since ``self`` may
  be an instance of one. This is the test mixin: cachetools' ``CacheTestMixin`` has
  ``Cache = None`` and ``cache = self.Cache(maxsize=1)``; ``LRUCacheTest(TestCase,
  CacheTestMixin)`` binds ``Cache = LRUCache`` in test_lru.py.

A binding naming anything else (a function, a module, a class outside the realm)
gives nothing. ``RealmIndex.class_values_by_attr`` says which files bind an
attribute of each name in a class body; a file using ``self.X`` (model.py
``FileFacts.self_attributes``) wants ``("class_value", X)`` (what ``self.X`` holds where no method binds it comes from
the class bodies too: graph/types.py ``_class_body_classes``), and a save changing a
class-body binding of ``X``, or the imports of a file binding it, dirties that key
(graph.py ``_dirty``), so a subclass's save moves the mixin's edges.
"""

from __future__ import annotations

KIND = "class_value"
# what binds a name in a class body (python.refs.scm), as graph/types.py reads them
CLASS_BODY_KINDS = ("bind", "bind_call", "bind_type", "bind_none", "bind_item")


def class_bindings(f) -> set[tuple]:
    """(class, attribute, kind, value) of each binding in a class body of ``f`` (or None):
    what ``self.attr`` holds where no method binds it (types.py ``_class_body_classes``)
    and what ``self.attr(...)`` builds (here)."""
    if f is None:
        return set()
    classes = {d.qualname for d in f.defs if d.kind == "class"}
    return {(r.scope, r.name, r.kind, r.module) for r in f.refs_of(KIND, *CLASS_BODY_KINDS)
            if r.scope in classes}


def bound_class_attributes(f) -> set[str]:
    """Attribute names ``f`` (or None) binds in a class body (every assignment there is a
    plain ``bind`` too: the realm index asks this of every file, so the cheap kinds)."""
    if f is None:
        return set()
    classes = {d.qualname for d in f.defs if d.kind == "class"}
    return {r.name for r in f.refs_of("bind", KIND) if r.scope in classes} if classes else set()


def moved_class_attributes(old, new) -> set[str]:
    """Attribute names whose class-body bindings a save of ``old`` -> ``new`` may have
    changed the meaning of: bindings added, removed or changed, and all of them when the
    file's imports changed (what a value names follows them)."""
    before, after = class_bindings(old), class_bindings(new)
    if _imports(old) != _imports(new):
        return {b[1] for b in before | after}
    return {b[1] for b in before ^ after}


def _imports(f) -> set[tuple]:
    return set() if f is None else {(r.kind, r.name, r.module) for r in
                                    f.refs_of("import", "import_from", "import_alias")}


def self_attribute_classes(index, f, cls: str, attr: str) -> list[tuple]:
    """(repo, path, class) of each class ``self.attr`` holds as a class object in a
    method of ``f``'s class ``cls``: along its bases, then in its subclasses."""
    key = ("class_values", f.repo, f.path, cls, attr)
    if key not in index.memo:
        index.memo[key] = []        # a class binding its own attribute to itself: no loop
        found = _along_bases(index, f, cls, attr)
        for c in _in_subclasses(index, f, cls, attr):
            if c not in found:
                found.append(c)
        index.memo[key] = found
    return index.memo[key]


def nearest_class_binding(index, f, cls: str, attr: str) -> tuple | None:
    """(file facts, class) of the nearest class along ``f``'s class ``cls`` and its bases
    whose body binds ``attr``, as attribute lookup finds it; None when none does."""
    from .edges import class_and_bases
    from .types import _bindings

    for here, qual in class_and_bases(index, f, cls):
        if _bindings(index, here).get((qual, attr)):    # every class-body binding is one
            return here, qual
    return None


def _along_bases(index, f, cls: str, attr: str) -> list[tuple]:
    found = nearest_class_binding(index, f, cls, attr)
    if found is None:
        return []
    here, qual = found      # `Cache = None`, `Cache = make()` there: no class object
    values = [r.module for r in here.refs_of(KIND) if r.scope == qual and r.name == attr]
    return _classes_named(index, here, values[-1]) if values else []


def _in_subclasses(index, f, cls: str, attr: str) -> list[tuple]:
    from .edges import _class_quals, _derives

    target, out = (f.repo, f.path, cls), []
    for repo, path in sorted(index.class_values_by_attr.get(attr, ())):
        other = index.files.get((repo, path))
        if other is None:
            continue
        for r in other.refs_of(KIND):
            if (r.name == attr and r.scope in _class_quals(index, other)
                    and (repo, path, r.scope) != target
                    and _derives(index, other, r.scope, target)):
                out += [c for c in _classes_named(index, other, r.module) if c not in out]
    return out


def _classes_named(index, f, value: str) -> list[tuple]:
    """The class of the realm ``value`` (``LRUCache``, ``pkg.Cache``) names in ``f``."""
    from .edges import _other_scope
    from .types import annotation_classes

    if not value or value == "None":
        return []
    return annotation_classes(index, f, _other_scope(index, f), value)
