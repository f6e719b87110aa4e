"""Instance types (Python): which class a receiver like ``app`` or ``self.x`` holds.

``instance_members(...)`` answers ``receiver.name`` when the receiver's class
follows from what binds it in the file (the parser's ``bind*`` / ``returns``
references, python.refs.scm):

- ``app = App(...)``, ``app = mod.App(...)``: the class called;
- ``app = make()`` / ``self.make()`` / ``Factory.create()`` where the function
  is annotated ``-> App`` (resolved in the function's own file), or, without an
  annotation naming a class of the realm (none, ``-> t.IO[t.Any]``), every ``return``
  of its body is ``App(...)`` (``cls(...)`` in a method:
  its class; a generator has no such type);
- ``def f(app: App)``, ``app: App = ...``: the annotation (a ``TypeVar`` of the
  file bound to App counts as App; and, since an annotated
  ``App`` may hold any subclass, ``app.m()`` also reaches the overrides of ``m`` in
  App's subclasses, as ``self.m()`` does), also ``"App"``,
  ``Optional[App]``, ``App | None``, a subscripted class (``"ProgressBar[V]"``,
  ``App[int]``: App), ``Self`` (the enclosing class);
- ``with make() as app``: what the ``__enter__`` of make()'s class returns
  (graph/dunder.py ``entered_classes``; click: ``with progressbar(...) as bar``);
- ``app = t.cast(T, value)`` (also ``return t.cast(...)``): T when it names a class,
  else what ``value`` holds (click: ``t.cast("t.IO[t.Any]", LazyFile(...))``);
- ``app = copy.copy(x)`` / ``copy.deepcopy(x)`` (the stdlib's, through the file's
  imports), ``app = pickle.loads(pickle.dumps(x))`` (jinja2's test_pickle.py): what
  ``x`` holds, ``self`` the enclosing class (attrs: ``new = copy.copy(self);
  new._setattrs(...)`` in ``Attribute.evolve``);
- ``self.x = X()`` (or ``self.x: X``) in any method of the class, for ``self.x.m()``;
  ``self.x = y`` gives what ``y`` holds in that method (click: ``self.command =
  command`` in ``Context.__init__(self, command: "Command")``);
- a test's (or fixture's) parameter naming a pytest fixture: the fixture's type
  (graph/fixtures.py; click: ``def test_x(runner)`` and ``return CliRunner()``);
- ``App(...).m()``: the class called; ``cls(...)`` where ``cls`` is annotated
  ``Type[App]`` or bound to a call of a ``-> Type[App]`` function: App (click:
  ``comp = comp_cls(...)`` after ``comp_cls = get_completion_class(shell)``);
  ``r.attr(...)`` / ``self.attr(...)`` where r's class (or a base) annotates ``attr:
  Type[App]`` in its body: App (jinja2: ``environment.code_generator_class(...)``);
- ``app = apps[k]`` where ``apps`` is annotated ``Dict[str, App]``, ``list[App]``,
  ``Sequence[App]``, ...: the element type (click: ``option = self._long_opt[opt]``);
- ``for app in r`` where r is annotated ``List[App]``, ``Iterator[App]``, ``Set[App]``,
  ``Tuple[App, ...]``, ... or is a call ``f(...)`` so annotated (``-> List[App]``): the
  element type (click: ``for param in iter_params_for_processing(...)``); a mapping
  iterates its keys, ``for a, b in r`` unpacks what nothing here knows; a list nothing
  annotates holds what the code puts into it (graph/containers.py: sqlparse's
  ``stack.postprocess.append(filters.SerializerUnicode())``).

Scope: the innermost function that binds the name (then enclosing functions,
then module level), as Python looks it up. The type counts only when every
binding of the name in that scope gives a class found through the file's
imports or its own classes: a binding of unknown type (``x = other``, a
plain parameter, a ``for`` target) means no answer, and the caller keeps
today's label. Pure; depends only on the realm index.
"""

from __future__ import annotations

import re

from .class_values import nearest_class_binding, self_attribute_classes
from .containers import filled_classes
from .model import enclosing
from .properties import property_quals
from .resolve import _py_definer

BIND_KINDS = ("bind_call", "bind_type", "bind_item", "bind_none", "bind_name", "bind_param",
              "bind_with", "bind_awith", "bind_cast", "bind_for", "bind_roundtrip", "bind_list",
              "bind")
# bindings that say what they hold (a plain `bind` on the same line is the same one)
VALUED = ("bind_call", "bind_item", "bind_name", "bind_param", "bind_with", "bind_awith",
          "bind_cast", "bind_for", "bind_roundtrip")
# the parser gives both on one line: `async with` is also a with, a cast also a call
STANDS_FOR = {"bind_awith": "bind_with", "bind_cast": "bind_call", "bind_roundtrip": "bind_call"}
SELF = "Self"       # typing.Self, typing_extensions.Self: the enclosing class
TYPING_MODULES = ("typing", "typing_extensions")
# typing's own classes (IO, TextIO, Generic) describe a value and build none: `fp: TextIO`
# is a real file, whose methods are not typing.IO's stubs (the stdlib's realm holds them)
TYPING_FILES = tuple(f"{m}.py" for m in TYPING_MODULES)
MAPPINGS = ("Dict", "dict", "Mapping", "MutableMapping", "DefaultDict", "defaultdict",
            "OrderedDict")
SEQUENCES = ("List", "list", "Sequence", "MutableSequence")
# what `for x in r` gives an element of when r is annotated so (a mapping iterates its keys,
# left out; `Generator[Y, S, R]` yields Y; `Tuple[X, ...]` below)
ITERATED = (*SEQUENCES, "Iterable", "Iterator", "Generator", "Collection", "Set", "set",
            "FrozenSet", "frozenset", "AbstractSet", "MutableSet")
# `-> Iterator[X]`, `Sequence[X]`: a generator, a list, a function, rarely an instance of
# the abstract class (collections.abc's are in the stdlib's realm); `Type[X]` the class
ABSTRACT = (*MAPPINGS, *SEQUENCES, "Iterator", "Iterable", "Generator", "AsyncIterator",
            "AsyncIterable", "AsyncGenerator", "Collection", "Container", "Set", "MutableSet",
            "Reversible", "Awaitable", "Coroutine", "Callable", "Type", "type", "ClassVar",
            "ContextManager", "AbstractContextManager", "AsyncContextManager",
            "AbstractAsyncContextManager", "KeysView", "ValuesView", "ItemsView")
COPIES = ("copy", "deepcopy")    # the copy module's: a copy holds its original's class
_DOTTED = re.compile(r"^[A-Za-z_][\w.]*$")
_OWN_ATTRIBUTE = re.compile(r"^(self|cls)\.[A-Za-z_]\w*$")
OWN_CLASS = ("cls", "self.__class__")    # called in a method: builds the method's class
_GENERIC = re.compile(r"^([\w.]+)\[(.*)\]$")


def instance_members(index, f, scope, name: str, receiver: str, where: str | None,
                     classes: set[str]) -> list[tuple]:
    """(repo, path, qualname) of ``name`` on the class(es) ``receiver`` holds, or []."""
    out = []
    annotated = _annotated(index, f, receiver, where, classes)
    for other, here, cls in receiver_class_files(index, f, scope, receiver, where, classes):
        hits = _class_member(index, other, here, cls, name)
        if annotated:   # `node: Expr` may hold any subclass: its override is what runs
            hits = hits + _overrides(index, other, cls, name)
        out += [h for h in hits if h not in out]
    return out


def _annotated(index, f, receiver: str, where, classes) -> bool:
    """Is the receiver's class known from an annotation (``def f(node: Expr)``,
    ``self.x: X``), which any subclass instance satisfies, rather than from what
    built it (``x = App()``: exactly an App)?"""
    found, _ = _found_bindings(index, f, receiver, where, classes)
    return any(b[0] == "bind_type" for b in found)


def receiver_class_files(index, f, scope, receiver: str, where: str | None,
                         classes: set[str]) -> list[tuple]:
    """(file facts, the scope to look names up in there, class) of each class
    ``receiver`` holds whose file is indexed."""
    key = (f.repo, f.path, receiver, where)
    got = index.held.get(key)
    if got is None:
        got = []
        for repo, path, cls in receiver_classes(index, f, scope, receiver, where, classes):
            other = index.files.get((repo, path))
            if other is not None:
                got.append((other, (scope if other is f else _other_scope(index, other)), cls))
        index.held[key] = got
    return got


def receiver_classes(index, f, scope, receiver: str, where: str | None,
                     classes: set[str]) -> list[tuple]:
    if receiver.endswith(")"):      # App(...).m(): the class called
        callee = receiver.split("(", 1)[0]
        if _DOTTED.match(callee) and _closes_at_end(receiver, len(callee)):
            return callee_classes(index, f, scope, callee, where, classes)
        return []
    found, at = _found_bindings(index, f, receiver, where, classes)
    if not found:
        return (_property_classes(index, f, scope, receiver, where, classes)
                or _class_body_classes(index, f, scope, receiver, where, classes)
                or _imported_value_classes(index, f, scope, receiver))
    key = ("types", f.repo, f.path, at, receiver)     # one answer per binding scope
    if key not in index.memo:
        index.memo[key] = []        # `self.a = b` ... `b = self.a`: a cycle knows nothing
        index.memo[key] = _types_of(index, f, scope, found, at, classes, receiver)
    return index.memo[key]


def _property_classes(index, f, scope, receiver: str, where, classes) -> list[tuple]:
    """``self.x`` where ``x`` is a property of the class: what its body returns
    (marshmallow: ``self._validate_all(value)``, a property returning ``And(...)``,
    runs ``And.__call__``)."""
    if not receiver.startswith("self.") or receiver.count(".") != 1:
        return []
    cls = next((p for p in enclosing(where) if p in classes), None)
    if cls is None:
        return []
    key = ("properties", f.repo, f.path)
    if key not in index.memo:
        index.memo[key] = property_quals(f)
    qual = f"{cls}.{receiver[5:]}"
    return body_classes(index, f, scope, qual) if qual in index.memo[key] else []


def _class_body_classes(index, f, scope, receiver: str, where, classes) -> list[tuple]:
    """``self.x`` that no method of the class binds: what the nearest class body along
    the bases binds ``x`` to (pyasn1: ``subtypeSpec = constraint.ConstraintsIntersection()``
    in ``base.Asn1Type``, called as ``self.subtypeSpec(value)`` in its subclasses);
    ``x = None`` there holds nothing."""
    head, dot, attr = receiver.partition(".")
    if head not in ("self", "cls") or attr not in index.class_values_by_attr:
        return []       # (no class body of the realm binds it: most `self.x`)
    cls = next((p for p in enclosing(where) if p in classes), None)
    if cls is None:
        return []
    key = ("class_body", f.repo, f.path, cls, attr)
    if key not in index.memo:
        index.memo[key] = []        # `x = x` in a class body: a cycle knows nothing
        index.memo[key] = _nearest_class_body(index, f, scope, cls, attr)
    return index.memo[key]


def _nearest_class_body(index, f, scope, cls: str, attr: str) -> list[tuple]:
    found = nearest_class_binding(index, f, cls, attr)
    if found is None:
        return []
    here, qual = found
    return _types_of(index, here, _scope_of(index, f, scope, here),
                     _bindings(index, here)[(qual, attr)], qual, _class_quals(index, here), attr)


def _imported_value_classes(index, f, scope, receiver: str) -> list[tuple]:
    """The classes a module-level name of another file holds where this file imports it
    (toolz: ``from toolz.curried import take``, with ``take = toolz.curry(toolz.take)``
    there) or reads it through its module (``curried.take``); [] for a name this file
    does not import so, or a re-export (not followed)."""
    head, dot, last = receiver.partition(".")
    if dot:
        if head not in scope.modules or not last.isidentifier():
            return []
        targets = [(*scope.modules[head], last)]
    else:
        targets = [(repo, path, receiver) for repo, path, sym
                   in scope.imported.get(receiver, ()) if sym is None]
    out: list[tuple] = []
    for repo, path, name in targets:
        other = index.files.get((repo, path))
        if other is None or other is f or not _bindings(index, other).get((None, name)):
            continue
        got = receiver_classes(index, other, _other_scope(index, other), name, None,
                               _class_quals(index, other))
        out += [c for c in got if c not in out]
    return out


def _found_bindings(index, f, name: str, where, classes) -> tuple[list, str | None]:
    """(the bindings of ``name`` or ``self.name`` that a use in ``where`` sees, the scope
    they are in): ``self.x`` in any method of the class, a name in the innermost scope
    binding it."""
    if name.startswith(("self.", "cls.")) and name.count(".") == 1:
        name = _as_self(name)
        cls = next((p for p in enclosing(where) if p in classes), None)
        if cls is None:
            return [], None
        return _self_bindings(index, f).get((cls, name), []), cls
    if not name.isidentifier():
        return [], None
    table = _bindings(index, f)
    for s in _lookup_scopes(where, classes):
        if table.get((s, name)):
            return table[(s, name)], s
    return [], None


def _self_bindings(index, f) -> dict[tuple, list[tuple]]:
    """(class, ``self.x``) -> the bindings of ``self.x`` in the class's methods (one pass
    per file: a lookup per receiver would be quadratic on a big class)."""
    key = ("self_binds", f.repo, f.path)
    if key not in index.memo:
        out: dict[tuple, list[tuple]] = {}
        for (s, n), bs in _bindings(index, f).items():
            if s and "." in s and n.startswith(("self.", "cls.")):
                out.setdefault((s.rsplit(".", 1)[0], _as_self(n)), []).extend(bs)
        index.memo[key] = out
    return index.memo[key]


def _own_class(index, f, callee: str, at: str | None) -> tuple | None:
    """The class a method's ``cls(...)`` / ``self.__class__(...)`` builds: the method's
    own, where ``cls`` is its parameter and nothing else (a plain function's local
    ``cls = shell_class(name)`` is not)."""
    if callee not in OWN_CLASS:
        return None
    owner = _owner(index, f, at)
    if owner is None or any(b[0] != "bind_param" for b in
                            _bindings(index, f).get((at, callee.split(".")[0]), [])):
        return None
    return owner


def _as_self(name: str) -> str:
    """``cls.x`` (a classmethod's class attribute) is what instances read as ``self.x``:
    sqlparse's ``Lexer.get_default_instance`` keeps its instance in
    ``cls._default_instance = cls()``."""
    return "self." + name[4:] if name.startswith("cls.") else name


def _item_classes(index, f, scope, container: str, where, classes) -> list[tuple]:
    """The element class of ``container[k]`` from the container's annotation."""
    found, _ = _found_bindings(index, f, container, where, classes)
    parts = [element_classes(index, f, scope, b[1]) for b in found if b[0] == "bind_type"]
    return [] if not parts or not all(parts) else _union(parts)


def _iterated_classes(index, f, scope, iterable: str, where, classes) -> list[tuple]:
    """The element class of ``for x in iterable``: from the annotation of the name
    iterated (``ps: List[P]``, ``self.params: List[P]``) or, for a call, of what the
    function called returns (``-> Iterator[P]``); [] when any of them says nothing."""
    if not iterable.endswith(")"):
        found, at = _found_bindings(index, f, iterable, where, classes)
        parts = [iterated_classes(index, f, scope, b[1]) for b in found if b[0] == "bind_type"]
        if not parts and found:     # no annotation: what fills the list (containers.py)
            return filled_classes(index, f, scope, iterable, found, at, classes)
        return [] if not parts or not all(parts) else _union(parts)
    callee = iterable.split("(", 1)[0]
    if not _DOTTED.match(callee) or not _closes_at_end(iterable, len(callee)):
        return []
    parts = []
    for repo, path, qual, kind in _callee_defs(index, f, scope, callee, where, classes):
        other = index.files.get((repo, path))
        text = _returns(index, other).get(qual) if other is not None and kind != "class" \
            else None
        parts.append(iterated_classes(index, other, _scope_of(index, f, scope, other), text)
                     if text else [])
    return [] if not parts or not all(parts) else _union(parts)


def iterated_classes(index, f, scope, text: str) -> list[tuple]:
    """``List[App]`` / ``Iterator[App]`` / ``Generator[App, None, None]`` / ``Tuple[App,
    ...]`` -> App's class: what iterating such a value gives; [] for anything else."""
    m = _GENERIC.match(_unquote(text))
    if not m:
        return []
    head, args = m.group(1).rsplit(".", 1)[-1], _split_args(m.group(2))
    if head in ("Tuple", "tuple") and len(args) == 2 and args[1] == "...":
        return annotation_classes(index, f, scope, args[0])
    if head in ITERATED and (len(args) == 1 or (head == "Generator" and len(args) == 3)):
        return annotation_classes(index, f, scope, args[0])
    return []


def element_classes(index, f, scope, text: str) -> list[tuple]:
    """``Dict[str, App]`` / ``Mapping[...]`` -> App's class, ``list[App]`` /
    ``Sequence[App]`` -> App's; [] for anything else."""
    m = _GENERIC.match(_unquote(text))
    if not m:
        return []
    head, args = m.group(1).rsplit(".", 1)[-1], _split_args(m.group(2))
    if head in MAPPINGS and len(args) == 2:
        return annotation_classes(index, f, scope, args[1])
    if head in SEQUENCES and len(args) == 1:
        return annotation_classes(index, f, scope, args[0])
    return []


def _split_args(text: str, sep: str = ",") -> list[str]:
    """``str, Dict[str, A]`` -> [``str``, ``Dict[str, A]``]: commas (``sep``) outside
    brackets and parentheses."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"[": 1, "]": -1, "(": 1, ")": -1}.get(ch, 0)
        if ch == sep and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    return out + [text[start:].strip()]


def _unquote(text: str) -> str:
    t = text.strip()
    if len(t) >= 2 and t[0] in "'\"" and t[-1] == t[0]:
        t = t[1:-1].strip()
    return t


def _closes_at_end(text: str, start: int) -> bool:
    """Does the parenthesis opened at ``start`` close at the very end?"""
    depth = 0
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i == len(text) - 1
    return False




def _lookup_scopes(where: str | None, classes: set[str]) -> list[str | None]:
    """Where Python looks a name up from ``where``: a class body sees its own names,
    a function its own and its enclosing functions' (never a class's), then the module."""
    out = [where] if where in classes else []
    return out + [p for p in enclosing(where) if p not in classes] + [None]


def bound_in_function(index, f, name: str, where: str | None, classes: set[str]) -> bool:
    """Is ``name`` a local of the function ``where`` or of a function enclosing it (a
    parameter, a loop variable, an assignment)? Python's lookup of the bare name stops
    there, so no definition elsewhere is what it calls (attrs: ``for v in validators:
    v(...)`` matched a test's nested ``def v``)."""
    if where is None:
        return False
    scopes = [p for p in enclosing(where) if p not in classes]
    key = ("local imports", f.repo, f.path)
    imported = index.memo.get(key)
    if imported is None:
        imported = index.memo[key] = {(r.scope, r.name) for r in f.refs_of("import")
                                      if r.scope is not None}
    if any((p, name) in imported for p in scopes):
        return False    # compileall: `ProcessPoolExecutor = None`, then a local import of it
    table = _bindings(index, f)
    return any(_rebinds(table[(p, name)], name) for p in scopes if (p, name) in table)


def _rebinds(found: list[tuple], name: str) -> bool:
    """Does one of these bindings give ``name`` a value of its own? Not `cmp=cmp` (a
    default that is the global itself) nor `Decimal = decimal.Decimal` (its alias)."""
    lines: dict[int, bool] = {}
    for kind, module, line, _scope in found:
        same = module == name or (module or "").endswith("." + name)
        lines[line] = lines.get(line, False) or same
    return not all(lines.values())


BINDS_KEPT = 256    # files whose binding tables are kept (RealmIndex.binds)


def _bindings(index, f) -> dict[tuple, list[tuple]]:
    """(scope, name) -> [(kind, module, line, scope)] of the file's bindings. Kept
    for the last BINDS_KEPT files asked, not the whole realm: made from the file's
    own facts alone, it is cheap to make again, and a table for every file of the
    stdlib copy held ~30 MB of the warm graph (docs/benchmarks.md, "Graph memory")."""
    kept, key = index.binds, (f.repo, f.path)
    got = kept.get(key)
    if got is not None and got[0] is f:
        kept.move_to_end(key)
        return got[1]
    table: dict[tuple, list[tuple]] = {}
    for r in f.refs_of(*BIND_KINDS):
        table.setdefault((r.scope, r.name), []).append((r.kind, r.module, r.line, r.scope))
    kept[key] = (f, table)
    if len(kept) > BINDS_KEPT:
        kept.popitem(last=False)
    return table


def _types_of(index, f, scope, found: list[tuple], where, classes, name: str) -> list[tuple]:
    """The classes a set of bindings gives; [] if any of them is unknown."""
    typed = [b for b in found if b[0] == "bind_type"]
    if typed:   # an annotation says what the name holds, whatever is assigned
        parts = [annotation_classes(index, f, scope, b[1], self_class=_owner(index, f, b[3]))
                 for b in typed]
        return [] if not all(parts) else _union(parts)
    standing = {(STANDS_FOR[b[0]], b[2]) for b in found if b[0] in STANDS_FOR}
    found = [b for b in found if (b[0], b[2]) not in standing]
    known = {b[2] for b in found if b[0] in (*VALUED, "bind_none")}
    if any(b[0] == "bind" and b[2] not in known for b in found):
        return []
    # `env = pickle.loads(pickle.dumps(env))`, `stack = build(stack, options)` (build
    # returns its argument) hold what the name held before: no new class
    parts = [_binding_classes(index, f, scope, b, where, classes, name)
             for b in found if b[0] in VALUED and not (b[0] == "bind_roundtrip" and b[1] == name)
             and not (b[0] == "bind_call" and _passed_through(index, f, scope, b, name,
                                                              classes) == name)]
    return [] if not parts or not all(parts) else _union(parts)


def _binding_classes(index, f, scope, binding: tuple, where, classes, name: str) -> list[tuple]:
    """What one binding gives: a call's class, a container's element class, what the
    name assigned holds where it is assigned (``self.x = y``), a fixture's type."""
    kind, module, line, at = binding
    if kind == "bind_call":
        owner = _own_class(index, f, module, at)
        if owner is not None:       # `cls._instance = cls()` in a classmethod
            return [owner]
        copied = _copied(index, f, module, at, line, name)
        if copied is not None:
            return _copy_classes(index, f, scope, copied, at, classes)
        through = _passed_through(index, f, scope, binding, name, classes)
        if through is not None:
            return receiver_classes(index, f, scope, through, at, classes)
        return callee_classes(index, f, scope, module, where, classes)
    if kind == "bind_item":
        return _item_classes(index, f, scope, module, where, classes)
    if kind == "bind_name":
        return receiver_classes(index, f, scope, module, at, classes)
    if kind in ("bind_with", "bind_awith"):
        return entered_classes(index, f, scope, module, at, classes, kind == "bind_awith")
    if kind == "bind_cast":
        return _cast_classes(index, f, scope, module, at, classes, bodies=True)
    if kind == "bind_for":
        return _iterated_classes(index, f, scope, module, at, classes)
    if kind == "bind_roundtrip":    # a pickle round trip builds the class it was given
        return _copy_classes(index, f, scope, module, at, classes)
    return fixture_classes(index, f, binding, name)


def _copied(index, f, callee: str, at, line: int, name: str) -> str | None:
    """The name ``name = copy.copy(x)`` / ``copy.deepcopy(x)`` (the stdlib's, through
    the file's imports) copies: x; None for any other call, or when more than one name
    is passed (``deepcopy(x, memo)``: the facts do not say which comes first)."""
    modules, functions = _copy_names(index, f)
    head, _, last = callee.rpartition(".")
    if not (callee in functions or (head in modules and last in COPIES)):
        return None
    passed = _passed_at(index, f).get((at, name, line), [])
    return passed[0] if len(passed) == 1 else None


def _passed_through(index, f, scope, binding: tuple, name: str, classes) -> str | None:
    """The name ``name = g(..., y, ...)`` gives back, where every function ``g`` names
    returns one of its own parameters and nothing else (sqlparse's ``stack =
    build_filter_stack(stack, options)`` sets the stack up and returns it): ``name``
    itself when it is among the names passed, else y when it is the only one; None
    otherwise. The facts do not say at which position a name is passed, so ``name``
    among several is read as the one returned, the builder's shape."""
    _, callee, line, at = binding
    key = ("passed_through", f.repo, f.path, binding, name)
    if key not in index.memo:
        defs = _callee_defs(index, f, scope, callee, at, classes)
        passed = _passed_at(index, f).get((at, name, line), [])
        through = None
        if defs and all(_returned_parameter(index, r, p, q, k) for r, p, q, k in defs):
            through = name if name in passed else passed[0] if len(passed) == 1 else None
        index.memo[key] = through
    return index.memo[key]


def _returned_parameter(index, repo: str, path: str, qual: str, kind: str | None) -> str | None:
    """The parameter a function returns at every ``return`` (``return None`` aside),
    never rebound in it; None for anything else, a generator, a class."""
    other = index.files.get((repo, path))
    if other is None or kind in (None, "class"):
        return None
    values = _returned(index, other).get(qual, [])
    names = {(text or "").strip() for k, text in values if k == "return_value"}
    names.discard("None")
    if len(names) != 1 or any(k == "yields" for k, _ in values):
        return None
    (returned,) = names
    binds = _bindings(index, other).get((qual, returned), [])
    if not binds or any(b[0] not in ("bind_param", "bind_type") for b in binds):
        return None
    return returned


def _copy_classes(index, f, scope, copied: str, at, classes) -> list[tuple]:
    """A copy is of the class its original holds; ``self`` is the enclosing class."""
    if copied == "self":
        owner = _owner(index, f, at)
        return [owner] if owner else []
    return receiver_classes(index, f, scope, copied, at, classes)


def _copy_names(index, f) -> tuple[set[str], set[str]]:
    """(the names ``f``'s imports bind to the copy module, those bound to its copy /
    deepcopy): ``import copy``, ``import copy as cp``, ``from copy import deepcopy``."""
    key = ("copy_names", f.repo, f.path)
    if key not in index.memo:
        aliases = {(r.line, r.module): r.name for r in f.refs_of("import_alias")}
        modules, functions = set(), set()
        for r in f.refs_of("import"):
            if r.module is None and r.name == "copy":
                modules.add(aliases.get((r.line, r.name), r.name))
            elif r.module == "copy" and r.name in COPIES:
                functions.add(aliases.get((r.line, r.name), r.name))
        index.memo[key] = (modules, functions)
    return index.memo[key]


def _passed_at(index, f) -> dict[tuple, list[str]]:
    """(scope, name, line) -> the names passed to the call bound to ``name`` there
    (``bind_passes``: ``h = f(g)``)."""
    key = ("passed_at", f.repo, f.path)
    if key not in index.memo:
        out: dict[tuple, list[str]] = {}
        for r in f.refs_of("bind_passes"):
            got = out.setdefault((r.scope, r.name, r.line), [])
            if r.module not in got:
                got.append(r.module)
        index.memo[key] = out
    return index.memo[key]


def _union(parts: list[list[tuple]]) -> list[tuple]:
    out = []
    for part in parts:
        out += [c for c in part if c not in out]
    return out


def callee_classes(index, f, scope, callee: str, where, classes,
                   bodies: bool = True) -> list[tuple]:
    """The class ``callee(...)`` returns: the class itself, a function's ``-> T``, or
    (``bodies``) the class every ``return`` of a function builds whose annotation names
    no class of the realm (none, or ``-> t.IO[t.Any]`` over ``return t.cast(...,
    LazyFile(...))``: what it returns is a LazyFile all the same); a name that holds a
    class, ``Type[T]``, builds a T."""
    out = []
    defs = _callee_defs(index, f, scope, callee, where, classes)
    if not defs and callee.isidentifier():
        return _type_valued(index, f, scope, callee, where, classes)
    if not defs and callee.count(".") == 1:
        return _attribute_class_objects(index, f, scope, callee, where, classes)
    for repo, path, qual, kind in defs:
        if kind == "class":
            out.append((repo, path, qual))
            continue
        other = index.files.get((repo, path))
        if other is None:
            continue
        text, at = _returns(index, other).get(qual), _scope_of(index, f, scope, other)
        got = annotation_classes(index, other, at, text,
                                 self_class=_owner(index, other, qual)) if text else []
        if not got and bodies:
            got = body_classes(index, other, at, qual)
        out += got
    return out


def _type_valued(index, f, scope, name: str, where, classes) -> list[tuple]:
    """The class T a name holds as a class object: annotated ``Type[T]`` / ``type[T]``
    (``Optional`` too), or bound to a call of a function annotated ``-> Type[T]``
    (click: ``comp_cls = get_completion_class(shell)``); [] when a binding says
    anything else (a plain assignment, ``List[Type[T]]``)."""
    found, at = _found_bindings(index, f, name, where, classes)
    typed = [b for b in found if b[0] == "bind_type"]
    valued = {b[2] for b in found if b[0] in VALUED}
    if not typed and any(b[0] == "bind" and b[2] not in valued for b in found):
        return []
    parts = []
    for kind, module, _, _ in typed or [b for b in found if b[0] in VALUED]:
        if kind == "bind_type":
            parts.append(class_object_classes(index, f, scope, module))
        elif kind == "bind_call" and _DOTTED.match(module):
            parts.append(_returned_class_objects(index, f, scope, module, at, classes))
        else:
            return []
    return [] if not parts or not all(parts) else _union(parts)


def _attribute_class_objects(index, f, scope, callee: str, where, classes) -> list[tuple]:
    """``r.attr(...)`` where the class ``r`` holds (``self``/``cls``: the enclosing one)
    annotates ``attr: Type[T]`` in its body or a base's: a T (jinja2: ``generator =
    environment.code_generator_class(...)`` with ``code_generator_class:
    t.Type["CodeGenerator"] = CodeGenerator`` in ``Environment``). Unannotated,
    ``self.attr(...)`` builds what the class bodies bind ``attr`` to
    (graph/class_values.py: cachetools' ``self.Cache(maxsize=1)`` in a test mixin)."""
    head, _, attr = callee.partition(".")
    if head in ("self", "cls"):
        cls = next((p for p in enclosing(where) if p in classes), None)
        owners = [(f, scope, cls)] if cls else []
        if cls and not _class_attribute_types(index, f, cls, attr):
            # `Cache = LRUCache` in the class body, a base's or a subclass's
            return self_attribute_classes(index, f, cls, attr)
    else:
        owners = list(receiver_class_files(index, f, scope, head, where, classes))
    parts = []
    for other, here, cls in owners:
        found = _class_attribute_types(index, other, cls, attr)
        parts.append(class_object_classes(index, found[0], _scope_of(index, f, scope, found[0]),
                                          found[1]) if found else [])
    return [] if not parts or not all(parts) else _union(parts)


def _class_attribute_types(index, f, cls: str, attr: str) -> tuple | None:
    """(file, annotation) of ``attr: T`` in the body of ``cls`` or the nearest base."""
    for here, qual in class_and_bases(index, f, cls):
        typed = [b for b in _bindings(index, here).get((qual, attr), []) if b[0] == "bind_type"]
        if typed:
            return here, typed[0][1]
    return None


def _returned_class_objects(index, f, scope, callee: str, where, classes) -> list[tuple]:
    """The class T of every function ``callee`` names annotated ``-> Type[T]``."""
    parts = []
    for repo, path, qual, kind in _callee_defs(index, f, scope, callee, where, classes):
        other = index.files.get((repo, path))
        text = _returns(index, other).get(qual) if other is not None and kind != "class" \
            else None
        parts.append(class_object_classes(index, other, _scope_of(index, f, scope, other),
                                          text) if text else [])
    return [] if not parts or not all(parts) else _union(parts)


def class_object_classes(index, f, scope, text: str) -> list[tuple]:
    """``Type[App]``, ``type[App]``, ``Optional[Type[App]]``, ``Type[App] | None`` ->
    App's class; [] for anything else."""
    t = _unquote(text)
    parts = _split_args(t, "|")
    m = _GENERIC.match(t) if len(parts) == 1 else None
    if m and m.group(1).rsplit(".", 1)[-1] in ("Optional", "Union"):
        parts = _split_args(m.group(2))
    out = []
    for part in (_unquote(p) for p in parts):
        if part == "None":
            continue
        inner = _GENERIC.match(part)
        if not inner or inner.group(1).rsplit(".", 1)[-1] not in ("Type", "type"):
            return []
        found = annotation_classes(index, f, scope, inner.group(2))
        if not found:
            return []
        out += [c for c in found if c not in out]
    return out


def _owner(index, f, qual: str | None) -> tuple | None:
    """(repo, path, class) of the class a method ``qual`` (or a scope in it) is in."""
    owner = qual.rpartition(".")[0] if qual else ""
    classes = _class_quals(index, f)
    found = next((p for p in enclosing(owner) if p in classes), None)
    return (f.repo, f.path, found) if found else None


def _scope_of(index, f, scope, other):
    return scope if other is f else _other_scope(index, other)


def body_classes(index, f, scope, qual: str, yields: bool = False) -> list[tuple]:
    """The one class every ``return X(...)`` (``yields``: also ``yield X(...)``) of the
    function ``qual`` builds (``return None`` aside); [] when any returns something
    else, they disagree, or (without ``yields``) the function is a generator. The
    callees are classes or ``-> T`` functions, never other bodies: no recursion."""
    key = ("body_type", f.repo, f.path, qual, yields)
    if key in index.memo:
        return index.memo[key]
    index.memo[key] = []    # a return of `self.x` may lead back here: a cycle knows nothing
    values = _returned(index, f).get(qual, [])
    out = []
    if yields or not any(kind == "yields" for kind, _ in values):
        found = [c for c in (_built(index, f, scope, qual, kind, text) for kind, text in values)
                 if c != "None"]
        out = found[0] if found and found[0] and all(c == found[0] for c in found) else []
    index.memo[key] = out
    return out


def _built(index, f, scope, qual: str, kind: str, text: str | None):
    """The classes one ``return``/``yield`` value builds; "None" for None; [] else."""
    if kind == "yields":        # `yield X(...)`; a bare yield is None, `yield from` unknown
        rest = (text or "")[len("yield"):].strip()
        if not rest:
            return "None"
        if rest.startswith("from") and not rest[4:5].isalnum() and rest[4:5] != "_":
            return []
        text = rest
    text = text.strip()
    if text == "None":
        return "None"
    owner, classes = qual.rpartition(".")[0], _class_quals(index, f)
    if _OWN_ATTRIBUTE.match(text):      # `return cls._default_instance`: a singleton's
        return (receiver_classes(index, f, scope, _as_self(text), qual, classes)
                if owner in classes else [])
    callee = text.split("(", 1)[0].strip()
    if not text.endswith(")") or not _DOTTED.match(callee) \
            or not _closes_at_end(text, text.index("(")):
        return []
    if callee in OWN_CLASS and owner in classes:
        return [(f.repo, f.path, owner)]
    if _cast_args(index, f, scope, text) is not None:
        return _cast_classes(index, f, scope, text, qual, classes, bodies=False)
    return callee_classes(index, f, scope, callee, qual, classes, bodies=False)


def _cast_args(index, f, scope, text: str) -> tuple[str, str] | None:
    """(T, value) of ``cast(T, value)`` / ``t.cast(...)`` / ``typing.cast(...)``, where
    the file's imports make that ``cast`` typing's (``view.cast(...)`` is memoryview's);
    None for any other text."""
    callee = text.split("(", 1)[0].strip()
    head, _, last = callee.rpartition(".")
    modules, casts = _typing_names(index, f)
    if not (callee in casts or (last == "cast" and head in modules)) \
            or not text.endswith(")") or not _closes_at_end(text, len(callee)):
        return None
    args = _split_args(text[len(callee) + 1:-1])
    return (args[0], args[1]) if len(args) == 2 and all(args) else None


def _typing_names(index, f) -> tuple[set[str], set[str]]:
    """(the names ``f``'s imports bind to typing / typing_extensions, those bound to
    their ``cast``): ``import typing as t``, ``from typing import cast``."""
    key = ("typing_names", f.repo, f.path)
    if key not in index.memo:
        aliases = {(r.line, r.module): r.name for r in f.refs_of("import_alias")}
        modules, casts = set(), set()
        for r in f.refs_of("import"):
            if r.module is None and r.name in TYPING_MODULES:
                modules.add(aliases.get((r.line, r.name), r.name))
            elif r.module in TYPING_MODULES and r.name == "cast":
                casts.add(aliases.get((r.line, "cast"), "cast"))
        index.memo[key] = (modules, casts)
    return index.memo[key]


def _cast_classes(index, f, scope, text: str, where, classes, bodies: bool) -> list[tuple]:
    """What ``cast(T, value)`` gives: T's class when T names one, else what ``value``
    holds (``bodies``: a name's bindings, a call's body; else only a call of a class or
    of a ``-> T`` function, as a returned value)."""
    found = _cast_args(index, f, scope, text)
    if found is None:
        return []
    hint, value = found
    named = annotation_classes(index, f, scope, hint, self_class=_owner(index, f, where))
    if named or not bodies:
        return named or _built(index, f, scope, where, "return_value", value) or []
    return receiver_classes(index, f, scope, value, where, classes)


def _returned(index, f) -> dict[str, list[tuple]]:
    """function qualname -> [(kind, text)] of its ``return expr`` and ``yield`` values."""
    key = ("returned", f.repo, f.path)
    if key not in index.memo:
        from ..parse.code import MAX_MODULE     # the longest value text the parser keeps

        out: dict[str, list[tuple]] = {}
        callees = {(r.scope, r.line, r.name): r.module for r in f.refs_of("return_call")}
        for r in f.refs_of("return_value", "yields"):
            if r.scope:
                text, callee = r.module, callees.get((r.scope, r.line, r.name))
                if text and len(text) >= MAX_MODULE and callee:
                    # the parser cut a long `return X(...)`: its callee is kept apart
                    text = f"yield {callee}()" if r.kind == "yields" else f"{callee}()"
                out.setdefault(r.scope, []).append((r.kind, text))
        index.memo[key] = out
    return index.memo[key]


def _callee_defs(index, f, scope, callee: str, where, classes) -> list[tuple]:
    """(repo, path, qualname, kind) of what ``callee`` names: a function or class defined
    in an enclosing function of the use (Python's lexical scope: test_contextlib's
    ``test_typo_exit`` defines its own ``mycontext`` beside a module-level one), a name of
    the file or its imports, ``module.name``, ``Class.name``, or ``self.name`` /
    ``cls.name``."""
    head, _, last = callee.rpartition(".")
    if head in ("self", "cls"):
        cls = next((p for p in enclosing(where) if p in classes), None)
        hits = _class_member(index, f, scope, cls, last) if cls else []
        return [(r, p, q, _kind(index, r, p, q)) for r, p, q in hits]
    kinds = _def_kinds(index, f)
    for prefix in [] if head else enclosing(where):
        if prefix not in classes and f"{prefix}.{callee}" in kinds:
            return [(f.repo, f.path, f"{prefix}.{callee}", kinds[f"{prefix}.{callee}"])]
    return [(r, p, q, k) for r, p, q, k in _named(index, f, scope, callee)]


def annotation_classes(index, f, scope, text: str, self_class: tuple | None = None,
                       depth: int = 0) -> list[tuple]:
    """The classes an annotation names: ``App``, ``"App"``, ``mod.App``,
    ``Optional[App]``, ``Union[App, None]``, ``App | None``, ``App[int]`` and
    ``"ProgressBar[V]"`` (the class subscripted), ``Self`` (``self_class``, the class
    the annotation is in); [] for anything else (``List[App]`` is no App, typing's own
    ``TextIO`` no class)."""
    t = _unquote(text)
    parts = _split_args(t, "|")
    m = _GENERIC.match(t) if len(parts) == 1 else None
    if m and m.group(1).rsplit(".", 1)[-1] in ("Optional", "Union"):
        parts = _split_args(m.group(2))
    elif m:
        if m.group(1).rsplit(".", 1)[-1] in ABSTRACT:
            return []
        parts = [m.group(1)]
    out = []
    for part in (_unquote(p) for p in parts):     # t.Optional["Context"]
        if part == "None":
            continue
        if part != t and depth < 4:     # Optional[Bar[int]], "Bar[V]" | None
            found = annotation_classes(index, f, scope, part, self_class, depth + 1)
        else:
            found = [(r, p, q) for r, p, q, k in _named(index, f, scope, part)
                     if k == "class" and p not in TYPING_FILES]
        if not found and part.rsplit(".", 1)[-1] == SELF and self_class is not None:
            found = [self_class]
        bound = _typevar_bounds(index, f).get(part) if not found and depth < 4 else None
        if bound:       # `T = TypeVar("T", bound="App")`: a T is an App (or a subclass)
            found = annotation_classes(index, f, scope, bound, self_class, depth + 1)
        if not found:
            return []
        out += [c for c in found if c not in out]
    return out


def _typevar_bounds(index, f) -> dict[str, str]:
    """Module-level ``T = TypeVar("T", bound=X)`` of the file: name -> X as written."""
    key = ("typevars", f.repo, f.path)
    if key not in index.memo:
        index.memo[key] = {r.name: r.module for r in f.refs_of("typevar_bound")
                           if r.scope is None and r.module}
    return index.memo[key]


def _named(index, f, scope, name: str) -> list[tuple]:
    """(repo, path, qualname, kind) of the definition a (dotted) name in ``f`` means:
    the file's own top-level one, an imported one, a module's, a class's member."""
    if not _DOTTED.match(name):
        return []
    head, _, last = name.rpartition(".")
    if not head:
        own = _def_kinds(index, f).get(name)
        if own is not None:
            return [(f.repo, f.path, name, own)]
        hits = [(r, p, s, _kind(index, r, p, s)) for r, p, s in scope.imported.get(name, ())
                if s]
        if not hits and scope.star:     # `from toolz import *`, then `curry(map)(...)`
            hits = [(r, p, s, _kind(index, r, p, s)) for r, p, s in
                    _star_targets(index, scope, name)]
        return hits
    if head in scope.modules:
        repo, path = scope.modules[head]
        found = _py_definer(index, repo, path, last)
        if found is not None and found[1] == last:
            (r, p), qual = found
            return [(r, p, qual, _kind(index, r, p, qual))]
        return []
    out = []
    for r, p, cls, kind in _named(index, f, scope, head):
        if kind == "class":
            out += [(r, p, d.qualname, d.kind) for d in index.defs_named(r, p, last)
                    if d.qualname == f"{cls}.{last}"]
    return out


def _kind(index, repo, path, qual) -> str | None:
    other = index.files.get((repo, path))
    return _def_kinds(index, other).get(qual) if other is not None else None


def _def_kinds(index, f) -> dict[str, str]:
    """qualname -> kind of a file's definitions (the first one of a name wins)."""
    key = ("def_kinds", f.repo, f.path)
    if key not in index.memo:
        kinds: dict[str, str] = {}
        for d in f.defs:
            kinds.setdefault(d.qualname, d.kind)
        index.memo[key] = kinds
    return index.memo[key]


def _returns(index, f) -> dict[str, str]:
    """function qualname -> its return annotation as written."""
    key = ("returns", f.repo, f.path)
    if key not in index.memo:
        index.memo[key] = {r.scope: r.module for r in f.refs_of("returns")
                           if r.scope and r.module and r.scope.rsplit(".", 1)[-1] == r.name}
    return index.memo[key]


# Imported last, after every definition here: these modules import this one
# too, and a function-level import cost ~1.6 us per call (2M calls per stdlib
# graph build). Any import order then finds the names it asks for defined.
from .dunder import entered_classes  # noqa: E402
from .edges import (  # noqa: E402
    _class_member, _class_quals, _other_scope, _overrides, _star_targets, class_and_bases)
from .fixtures import fixture_classes  # noqa: E402
