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
attribute of each name; a file whose ``self.X(...)`` needs them wants
``("class_value", X)``, and any edit of a file binding ``X`` so dirties that key
(graph.py ``_dirty``; what the value names follows its imports too), so a
subclass's save moves the mixin's edges.
"""

from __future__ import annotations

KIND = "class_value"
SELF_HEADS = ("self", "cls")


def bound_class_attributes(f) -> set[str]:
    """Attribute names ``f`` (or None) binds to a value in a class body."""
    return set() if f is None else {r.name for r in f.refs_of(KIND) if r.scope}


def self_attribute_calls(f) -> set[str]:
    """Attribute names ``f`` calls or binds from as ``self.X(...)`` / ``cls.X(...)``: its
    edges depend on what every file binds ``X`` to."""
    out = set()
    for r in f.refs_of("bind_call", "call"):
        text = r.module if r.kind == "bind_call" else (
            f"{r.module}.{r.name}" if r.module in SELF_HEADS else None)
        head, dot, attr = (text or "").partition(".")
        if dot and head in SELF_HEADS and attr.isidentifier():
            out.add(attr)
    return out


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


def _along_bases(index, f, cls: str, attr: str) -> list[tuple]:
    from .edges import class_and_bases
    from .types import _bindings

    for here, qual in class_and_bases(index, f, cls):
        values = [r.module for r in here.refs_of(KIND) if r.scope == qual and r.name == attr]
        if values:
            return _classes_named(index, here, values[-1])
        if _bindings(index, here).get((qual, attr)):    # `Cache = None`, `Cache = make()`
            return []
    return []


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
