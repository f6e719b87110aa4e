"""Per-file facts -> edges (imports, references, calls, tests, documents, config).

``file_edges(index, facts)`` computes everything one file points at, given
the realm's ``RealmIndex``; it is pure and depends only on the file's own
facts plus index lookups, which is what lets ``Graph`` recompute a single
file on save. Each result also lists the index keys it depended on
(``wants``) so the graph knows which files to recompute when another file
appears, disappears or changes its definitions.

Names are resolved through the file's own imports first (how "resolved"):
names imported from a resolved module, the file's own definitions, then (Python)
``m.name`` where ``m`` is an imported module, ``C.name`` where ``C`` is an
imported or local class, names of star-imported modules, and functions nested in
an enclosing function of the use. ``self.x()``, ``cls.x()`` and ``super().x()``
reach the method of the enclosing class or of its bases (resolved through each
file's imports) as "inferred"; ``self.x()``/``cls.x()`` also reach the overrides of
``x`` in the class's subclasses anywhere in the realm (what runs on a subclass
instance: click's ``BaseCommand.make_context`` -> ``Command.parse_args``), "inferred"
too, and ``super().x()`` only the bases. A call on a variable or ``self.attr`` whose class
its bindings give (``app = App()``, ``def f(app: App)``, ``a = make()`` with
``make() -> App`` or every ``return`` of ``make`` building ``App(...)``, ``self.x =
X()``, ``self.x = app``, a test's pytest fixture parameter: graph/types.py,
graph/fixtures.py) reaches that class's method the same way, "inferred"; a name built at
run time, ``getattr(self, f"visit_{x}")``, reaches every method with that start
("inferred", graph/dispatch.py); a test also
calls each fixture its parameters name ("inferred"), and a bare call ``h()`` of a
module-level ``h = f(..., g, ...)`` reaches ``g`` ("inferred", graph/passed.py); on such
a typed receiver, ``for``/``with``/``r(...)``/``repr(r)`` and an attribute the class
lacks reach its dunder methods ("inferred", graph/dunder.py). A call on any other receiver (an untyped variable, a
chain like ``self._loop.x()``, a literal) is a name match at best, and one on
self/cls/super() never matches a module-level function. Decorators are calls
(never name-matched: an unresolved one is mostly ``@property``); what runs when
the module is imported (module-level calls before ``if __name__ ==
"__main__":``, calls in class bodies and module constants' values) also gets an
``import_time`` edge from the file (graph/import_time.py). Python never counts a name as resolved just because some imported
module defines it. Other languages still resolve against definitions in the
files they import or share a package with. Otherwise a realm-wide name match
(how "name_match") weighted like Aider's repo map: short names x0.1, names
defined in many files x0.1, ``_private`` x0.3, long snake/camel names x2. It leaves
out the file's own definitions, so ``new._fill()`` on an untyped receiver, where the
file defines a method ``_fill``, is an unresolved reference instead (no edge: no
evidence that it runs; but the method's impact is then not "untested").
Co-change edges come from git (``cochange``), not from here.
"""

from __future__ import annotations

import builtins
import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, field

from . import commonjs, js_types
from .class_values import self_attribute_classes
from .containers import iterated_attributes
from .model import UNTYPED, Edge, FileFacts, enclosing, is_test_module, is_test_path
from .resolve import RealmIndex, _py_definer, _py_file, resolve_imports

_new = tuple.__new__
DOC_KINDS = ("section", "key")
REF_KINDS = {"call": "calls", "decorator": "calls", "attribute": "references",
             "type": "references", "stored": "references", "passed": "references"}
CALL_REFS = ("call", "decorator")
TRUST = {"resolved": 2, "inferred": 1, "name_match": 0}
MAX_CANDIDATE_FILES = 10     # name matches beyond this are too ambiguous to keep
MANY_DEFINERS = 5
_CAMEL_RE = re.compile(r"[a-z][A-Z]")
_LINE_FRAG_RE = re.compile(r"^L(\d+)")


@dataclass
class FileResult:
    edges: list[Edge] = field(default_factory=list)
    unresolved: list[dict] = field(default_factory=list)
    broken: list[dict] = field(default_factory=list)
    wants: set[tuple] = field(default_factory=set)


def name_weight(name: str, definers: int) -> float:
    """Aider-style weight of a name-matched reference."""
    w = 1.0
    core = name.strip("_")
    if len(core) <= 3:
        w *= 0.1
    if definers > MANY_DEFINERS:
        w *= 0.1
    if name.startswith("_"):
        w *= 0.3
    if len(core) >= 8 and ("_" in core or _CAMEL_RE.search(core)):
        w *= 2.0
    return w


def build_edges(facts: list[FileFacts]) -> tuple[list[Edge], dict[tuple, FileResult]]:
    """All edges of all realms; also each file's full result, keyed by facts.key."""
    by_realm: dict[str, list[FileFacts]] = defaultdict(list)
    for f in facts:
        by_realm[f.realm].append(f)
    results: dict[tuple, FileResult] = {}
    for realm_facts in by_realm.values():
        index = RealmIndex(realm_facts)
        for f in realm_facts:
            results[f.key] = file_edges(index, f)
    return [e for r in results.values() for e in r.edges], results


def file_edges(index: RealmIndex, f: FileFacts) -> FileResult:
    res = FileResult()
    index.held.clear()
    if f.lang == "markdown":
        _doc_edges(index, f, res)
    else:
        scope = _import_edges(index, f, res)
        _ref_edges(index, f, scope, res)
        _config_edges(index, f, res)
        if f.lang == "python":      # pytest runs the fixtures a test names first
            # `for v in self.x`: what v holds comes from every file filling an `x` list
            res.wants |= {("fills", attr) for attr in iterated_attributes(f)}
            # `self.Cache(...)`, `self.spec(v)`: what self.x holds depends on every class
            # body binding x (graph/class_values.py)
            res.wants |= {("class_value", attr) for attr in f.self_attributes()}
            fixture_edges(index, f, res)
            passed_edges(index, f, scope, res)
            constant_read_edges(index, f, scope, res)
            dunder_edges(index, f, scope, res)
            dispatch_edges(index, f, scope, res)
        if _family(f.lang) == "js":     # `table[key]` over an object literal of functions
            js_types.keyed_member_edges(index, f, res, _edge)
        if is_test_path(f.path):
            _test_edges(f, res)
    return res


def _edge(f: FileFacts, kind, src_symbol, repo, path, symbol, line, how, weight=1.0) -> Edge:
    # tuple.__new__: NamedTuple's own __new__ is a Python call, ~600k edges a stdlib build
    return _new(Edge, (kind, f.repo, f.path, src_symbol, repo, path, symbol, line, how,
                       1.0 if weight == 1.0 else round(weight, 4), f.realm, 0))


# --- imports -----------------------------------------------------------------

def _spec_keys(spec: str) -> set[tuple]:
    parts = [p for p in re.split(r"[./:]+", spec) if p]
    return {("module", posixpath.splitext(p)[0]) for p in parts[-3:]}


@dataclass
class Scope:
    """What a file's imports bind: names, modules (by the name they are bound to),
    the files imported, the files star-imported."""
    imported: dict = field(default_factory=lambda: defaultdict(list))
    files: set = field(default_factory=set)
    modules: dict = field(default_factory=dict)     # bound name -> (repo, path)
    star: set = field(default_factory=set)


def _import_edges(index, f, res) -> Scope:
    """Import edges; returns the file's Scope."""
    from .resolve_langs import scope_files

    scope = Scope(files=set(scope_files(index, f)))
    imported, files = scope.imported, scope.files
    # `from m import A as B` / `import a.b as c` bind B / c, not A / a.
    aliases = {(r.line, r.module): r.name for r in f.refs_of("import_alias")}
    seen: set[tuple] = set()
    for t in resolve_imports(index, f):
        res.wants |= _spec_keys(t.spec)
        if t.name:
            res.wants |= {("module", t.name), ("name", t.name)}
        if t.path is None:
            res.unresolved.append({"kind": "import", "name": t.spec if not t.name else
                                   f"{t.spec}:{t.name}", "line": t.line, "reason": "external"})
            continue
        alias = aliases.get((t.line, t.name if t.name else t.spec))
        _bind_module(scope, t, alias)
        if f.lang == "python" and t.name is None and alias is None:
            _bind_top_package(index, scope, t)
        if alias is not None:
            t = t._replace(name=alias) if t.name else t._replace(spec=alias)
        files.add((t.repo, t.path))
        if (t.repo, t.path) not in seen and (t.repo, t.path) != (f.repo, f.path):
            seen.add((t.repo, t.path))
            res.edges.append(_edge(f, "imports", None, t.repo, t.path, None, t.line, "resolved"))
        for init in _packages_run(index, t.repo, t.path, res) if f.lang == "python" else ():
            # The file's own packages ran before it anyway: nothing new depends on them.
            own = t.repo == f.repo and f.path.startswith(posixpath.dirname(init) + "/")
            if not own and ("package", t.repo, init) not in seen:
                seen.add(("package", t.repo, init))
                res.edges.append(_edge(f, "package", None, t.repo, init, None, t.line,
                                       "resolved"))
        if t.name and t.name != "*":
            repo, path = t.def_at or (t.repo, t.path)
            imported[t.name].append((repo, path, t.symbol))
            if t.symbol:
                res.edges.append(_edge(f, "references", t.scope, repo, path, t.symbol,
                                       t.line, "resolved"))
            if t.def_at:
                res.wants.add(("path", *t.def_at))
    return scope


def _packages_run(index, repo: str, path: str, res) -> list[str]:
    """The package ``__init__.py`` files Python runs before the module at ``path``
    (pkg/__init__.py, pkg/inner/__init__.py for pkg/inner/deep.py)."""
    out = []
    d = posixpath.dirname(path)
    if posixpath.basename(path).startswith("__init__."):
        d = posixpath.dirname(d)
    while d:
        init = f"{d}/__init__.py"
        res.wants.add(("path", repo, init))
        if not index.exists(repo, init):
            break
        out.append(init)
        d = posixpath.dirname(d)
    return out


def _bind_top_package(index, scope: Scope, t) -> None:
    """``import a.b`` also binds ``a``, the package (``a.name`` is its ``__init__``'s):
    click's test_termui.py does ``import click._termui_impl``, then ``click.progressbar``.
    An ``import a`` of the file wins; the package file is among the ``_packages_run``
    paths the file already wants."""
    top, dot, rest = t.spec.partition(".")
    base = posixpath.splitext(t.path)[0].removesuffix("/__init__")
    spec_path = t.spec.replace(".", "/")
    if not dot or top in scope.modules or not (base == spec_path
                                                or base.endswith("/" + spec_path)):
        return
    init = base[:len(base) - len(rest) - 1] + "/__init__.py"
    if index.exists(t.repo, init):
        scope.modules[top] = (t.repo, init)


def _bind_module(scope: Scope, t, alias: str | None = None) -> None:
    """``import m`` binds m; ``from pkg import m`` binds m when m is a module file;
    ``as alias`` binds the alias instead."""
    if t.name is None:      # import m, import a.b (used as a.b.name) when a.b is a module
        base = posixpath.splitext(t.path)[0].removesuffix("/__init__")
        if "." not in t.spec or base.endswith(t.spec.replace(".", "/")):
            scope.modules[alias or t.spec] = (t.repo, t.path)
    elif t.name == "*":
        scope.star.add((t.repo, t.path))
    elif t.name and t.symbol is None:
        stem = posixpath.splitext(posixpath.basename(t.path))[0]
        if stem == t.name or t.path.endswith(f"{t.name}/__init__.py"):
            scope.modules[alias or t.name] = (t.repo, t.path)


# --- references and calls ----------------------------------------------------

def _unique_refs(f: FileFacts):
    """One reference per (name, line, scope); a call wins over an attribute use, and
    keeps the attribute's receiver (``obj`` of ``obj.name``, in ``module``)."""
    best: dict[tuple, tuple[str, str | None]] = {}
    for r in f.refs_of(*REF_KINDS):
        key = (r.name, r.line, r.scope)
        kind, receiver = best.get(key, (None, None))
        if r.kind in ("attribute", "stored", *CALL_REFS) and r.module:   # its receiver
            receiver = receiver or r.module
        best[key] = (r.kind if kind is None or r.kind in CALL_REFS else kind, receiver)
    return [(kind, name, line, scope, receiver)
            for (name, line, scope), (kind, receiver) in best.items()]


def _code_defs(index, repo, path, name):
    return [d for d in index.defs_named(repo, path, name) if d.kind not in DOC_KINDS]


def _ref_edges(index, f, scope: Scope, res) -> None:
    """One edge per (kind, source symbol, target): the first line with the most trusted
    ``how`` is the evidence."""
    local = defaultdict(list)
    for d in f.defs:
        if d.kind not in DOC_KINDS:
            local[d.name].append(d.qualname)
    classes = {d.qualname for d in f.defs if d.kind == "class"}
    # Python runs class bodies and module constants' values when it imports the module.
    at_import_scopes = classes | {d.qualname for d in f.defs if d.kind == "constant"} \
        if f.lang == "python" else set()
    script_from = min((r.line for r in f.refs_of("main_guard")), default=None)
    cache: dict[tuple, tuple[str, list]] = {}
    matched: dict[tuple, tuple[str, list]] = {}   # name matches do not depend on the use
    noted: set[tuple] = set()  # (name, scope) already noted as unresolved (_note_own_method)
    seen: dict[tuple, int] = {}    # (kind, source, target) -> its edge's index in res.edges
    for kind, name, line, scope_sym, receiver in sorted(_unique_refs(f), key=lambda r: r[2]):
        if f.lang == "python":      # the answer depends on where the name is used
            receiver = (receiver, scope_sym)
        # `self.x` passed as a value that no class member is: a data attribute, not a
        # method of another class (a name match there was 8,000 guesses on the stdlib)
        own_value = kind == "attribute" and f.lang == "python" and _self_like(receiver[0])
        # a bare name the function binds itself (parameter, loop variable, assignment)
        own_local = (f.lang == "python" and receiver[0] is None and kind in ("call", "passed")
                     and bound_in_function(index, f, name, scope_sym, classes)
                     and not any(q.rpartition(".")[0] in enclosing(scope_sym)
                                 for q in local.get(name, ())))    # a nested def's name
        # a JavaScript member passed as an argument is a use only where it resolves
        js_member = kind == "attribute" and _family(f.lang) == "js"
        unmatched = kind in ("decorator", "stored", "passed") or own_value or own_local \
            or js_member
        key = (name, receiver, unmatched)
        if key not in cache:
            index.checkpoint()
            res.wants.add(("name", name))
            if own_local:
                how, hits = "resolved", []
            elif f.lang == "python":
                how, hits = _python_targets(index, f, name, receiver, scope_sym, scope, local,
                                            classes)
            elif receiver is not None and _family(f.lang) == "js" and (
                    kind in CALL_REFS or kind == "attribute"):
                how, hits = _js_member_targets(index, f, name, receiver, scope_sym, scope,
                                               local, classes, res)
            elif _family(f.lang) == "js" and kind in CALL_REFS and (
                    hits := _js_required_call(index, f, name, scope_sym, local, res)):
                how = "resolved"
            else:
                how, hits = "resolved", _resolved_targets(index, f, name, scope.imported,
                                                          scope.files, local)
            # An attribute of self/cls/super() is a method, never a module's function; a
            # bare name is a local, a module's global or a builtin, never a method.
            methods = f.lang == "python" and _self_like(receiver[0] if receiver else None)
            bare = f.lang == "python" and receiver[0] is None
            if hits:
                w = name_weight(name, len({h[:2] for h in hits})) if how == "name_match" else 1.0
                cache[key] = (how, [(h, w) for h in hits])
            elif unmatched or (bare and name in _BUILTINS):  # `@property`, `list(x)`: a
                cache[key] = ("name_match", [])     # builtin; a stored local, or self's data
            else:                                   # attribute: no look-alike
                shape = "methods" if methods else "top" if bare else None
                if (name, shape) not in matched:
                    matched[(name, shape)] = _name_match(index, f, name, line, res, shape)
                cache[key] = matched[(name, shape)]
                if f.lang == "python" and not methods and receiver[0] is not None:
                    _note_own_method(index, f, name, line, scope_sym, res, noted)
        how, hits = cache[key]
        if kind == "passed" and hits and not _passes_definition(index, f, name, how, scope_sym,
                                                                classes):
            continue
        if kind == "passed" and scope_sym is None and _family(f.lang) == "js" and \
                (line, name) in commonjs.exported_values(index, f):
            continue
        if js_member and how == "name_match":
            continue    # `f(opts.name)`: never a name match
        ekind = REF_KINDS[kind]
        at_import = (ekind == "calls" and how in ("resolved", "inferred") and f.lang == "python"
                     and _runs_at_import(scope_sym, at_import_scopes, line, script_from))
        for (repo, path, sym), w in hits:
            key = (ekind, scope_sym, repo, path, sym)
            if (repo, path, sym) == (f.repo, f.path, scope_sym):
                continue
            if key not in seen:
                seen[key] = len(res.edges)
                res.edges.append(_edge(f, ekind, scope_sym, repo, path, sym, line, how, w))
            elif TRUST.get(how, 0) > TRUST.get(res.edges[seen[key]].how, 0):
                # a name match on an earlier line must not hide a trusted use of the same
                # target on a later one (sqlparse: `filter_.process(s)` above
                # `StatementSplitter().process(s)`)
                res.edges[seen[key]] = _edge(f, ekind, scope_sym, repo, path, sym, line, how, w)
            if at_import and ("import_time", repo, path, sym) not in seen:
                seen[("import_time", repo, path, sym)] = -1
                res.edges.append(_edge(f, "import_time", None, repo, path, sym, line, how, w))


def _passes_definition(index, f, name: str, how: str, where: str | None,
                       classes: set[str]) -> bool:
    """Does a name passed as an argument in ``where`` name the definition it resolved to?
    Not where a parameter or local of an enclosing function binds it (``def f(xs,
    double): map(double, xs)``), nor a method of the class for a use inside a method (a
    bare name there is never one: tkinter's ``cget(self, index)`` passes its parameter);
    in the class body itself it is (``goo = staticmethod(foo)``)."""
    if how != "resolved" and where not in classes:
        return False

    table = _bindings(index, f)
    return not any((s, name) in table for s in enclosing(where or "") if s not in classes)


def _runs_at_import(scope_sym: str | None, containers: set[str], line: int,
                    script_from: int | None) -> bool:
    """A module-level call (a decorator, ``x = make()``), one in a class body (a method's
    decorator, ``x = field()``) or in a module constant's value runs when the module is
    imported; one after ``if __name__ == "__main__":`` only when it runs as a script."""
    if scope_sym is None:
        return script_from is None or line < script_from
    return all(p in containers for p in enclosing(scope_sym))


def _python_targets(index, f, name, receiver, where, scope: Scope, local,
                    classes) -> tuple[str, list]:
    """(how, [(repo, path, qualname)]) for a Python use of ``name`` inside the symbol
    ``where``; ([]) when only a name would agree (the caller then tries a weighted
    realm-wide name match)."""
    receiver = receiver[0]
    if _self_like(receiver):
        cls = next((p for p in enclosing(where) if p in classes), None)
        if cls is None:
            return "inferred", []
        hits = _class_member(index, f, scope, cls, name, skip_own=receiver != "self"
                             and receiver != "cls")
        if receiver in SELF_RECEIVERS:    # a subclass instance runs its own override
            hits = hits + [h for h in _overrides(index, f, cls, name) if h not in hits]
            if not hits:    # `self.Cache(...)`: a class the class bodies bind it to
                hits = self_attribute_classes(index, f, cls, name)
        return "inferred", hits
    if receiver is not None:
        hits = _receiver_targets(index, f, name, receiver, scope, local)
        if hits:
            return "resolved", hits
        # A variable or self.attr whose class its bindings give (graph/types.py).
        hits = instance_members(index, f, scope, name, receiver, where, classes)
        return ("inferred", hits) if hits else ("resolved", [])
    own = set(local.get(name, ()))
    # Lexical scope: a function nested in an enclosing function of the use.
    for prefix in enclosing(where):
        if f"{prefix}.{name}" in own and prefix not in classes:
            return "resolved", [(f.repo, f.path, f"{prefix}.{name}")]
    # A top-level definition of the file rebinds an imported name (and the query gives
    # `from m import A as B` as A: click's parser.py has its own Option beside that).
    if name in own:
        return "resolved", [(f.repo, f.path, name)]
    if name in scope.imported:
        hits = _resolved_targets(index, f, name, scope.imported, set(), {})
        if hits:
            return "resolved", hits
    # self.x(), cls.x(): a method of the class the use is in, or of its bases (the
    # receiver itself is unchecked).
    for prefix in enclosing(where):
        if prefix in classes:
            hits = _class_member(index, f, scope, prefix, name)
            if hits:
                return "inferred", hits
            break
    return "resolved", _star_targets(index, scope, name)


def _star_targets(index, scope: Scope, name: str) -> list[tuple]:
    """The top-level definitions of ``name`` a file's ``from m import *`` brings in, through
    the re-exports of m too (toolz/__init__.py's ``from .functoolz import *``: a test's
    ``from toolz import *`` then ``curry(...)`` was a name match)."""
    out = []
    for repo, path in sorted(scope.star):
        hits = [(repo, path, d.qualname) for d in _code_defs(index, repo, path, name)
                if d.qualname == name]
        if not hits and not name.startswith("_"):
            found = _py_definer(index, repo, path, name)
            if found is not None and found[1] == name:
                hits = [(*found[0], name)]
        out += hits
    return out


MRO_DEPTH = 6      # base classes followed per lookup
SELF_RECEIVERS = ("self", "cls")


def _class_member(index, f, scope: Scope, cls: str, name: str,
                  skip_own: bool = False) -> list[tuple]:
    """``cls.name`` in the file's class ``cls`` (unless ``skip_own``: super()) or the
    nearest base defining it (breadth-first over bases resolved through each file's
    imports)."""
    key = ("member", f.repo, f.path, cls, name, skip_own)
    if key not in index.memo:
        index.memo[key] = _walk_bases(index, f, scope, cls, name, skip_own)
    return index.memo[key]


def _walk_bases(index, f, scope: Scope, cls: str, name: str, skip_own: bool) -> list[tuple]:
    todo, seen = [(f, scope, cls)], set()
    for _ in range(MRO_DEPTH * 4):
        if not todo:
            return []
        here, here_scope, qual = todo.pop(0)
        if (here.repo, here.path, qual) in seen:
            continue
        seen.add((here.repo, here.path, qual))
        if f"{qual}.{name}" in _qualnames(index, here) and not (skip_own and len(seen) == 1):
            return [(here.repo, here.path, f"{qual}.{name}")]
        key = ("bases", here.repo, here.path, qual)
        if key not in index.memo:
            index.memo[key] = _bases(index, here, here_scope or _other_scope(index, here), qual)
        for repo, path, base in index.memo[key]:
            other = index.files.get((repo, path))
            if other is not None:
                todo.append((other, here_scope if other is here else None, base))
    return []


def overridden_method(index, f, qualname: str) -> tuple | None:
    """(repo, path, qualname) of the base-class method that ``qualname`` (``Cls.m``,
    defined in ``f``) overrides, found along the bases as ``self.m()`` resolves them;
    None when it overrides nothing the realm defines."""
    cls, _, name = qualname.rpartition(".")
    if not cls or cls not in _class_quals(index, f):
        return None
    hits = _walk_bases(index, f, _other_scope(index, f), cls, name, skip_own=True)
    return hits[0] if hits else None


# bases outside the realm that call no method of a subclass but dunders (which
# test_select doubts anyway): the builtins (Exception, dict, ...) and typing's forms
_QUIET_BASES = frozenset(dir(builtins)) | {"ABC", "Protocol", "NamedTuple", "TypedDict",
                                           "Generic"}


def outside_base(index, f, qualname: str) -> str | None:
    """The first base from outside the realm, as written (``codecs.BufferedIncrementalDecoder``),
    of the class of method ``qualname`` (``Cls.m``, defined in ``f``) or of its bases in the
    realm: code the graph never sees, which may call ``m`` (a hook such as
    ``_buffer_decode``). None for a function, or when every base is the realm's or quiet."""
    cls = qualname.rpartition(".")[0]
    if not cls or cls not in _class_quals(index, f):
        return None
    for here, qual in class_and_bases(index, f, cls):
        scope = _other_scope(index, here)
        for name, receiver in _written_bases(index, here).get(qual, ()):
            if receiver is not None:
                if not _receiver_targets(index, here, name, receiver, scope, {}):
                    return f"{receiver}.{name}"
            elif not (name in scope.imported or name in _class_quals(index, here)
                      or name in _QUIET_BASES or scope.star):
                return name
    return None


def test_subclasses(index, repo: str, path: str, cls: str) -> list[tuple[str, str, str]]:
    """(repo, path, qualname) of the classes of the realm's test modules deriving from
    class ``cls`` of (repo, path), directly or through other classes: where pytest runs
    a mixin's tests from (cachetools' ``class LRUCacheTest(TestCase, CacheTestMixin)``)."""
    key = ("test_subclasses",)
    if key not in index.memo:
        derived: dict[tuple, list[tuple]] = defaultdict(list)
        for f in index.files.values():
            if f.lang != "python" or not is_test_module(f.path):
                continue
            for qual in sorted(_class_quals(index, f)):
                for here, base in class_and_bases(index, f, qual):
                    if (here.repo, here.path, base) != (f.repo, f.path, qual):
                        derived[(here.repo, here.path, base)].append((f.repo, f.path, qual))
        index.memo[key] = derived
    return index.memo[key].get((repo, path, cls), [])


def _overrides(index, f, cls: str, name: str) -> list[tuple]:
    """``name`` defined by subclasses of ``f``'s class ``cls``, anywhere in the realm:
    what ``self.name()`` in ``cls`` runs on their instances (class hierarchy analysis).
    Only files defining ``name`` are looked at, so the answer depends on the ``name``
    key the caller already wants: a new or removed override recomputes the user."""
    key = ("overrides", f.repo, f.path, cls, name)
    if key not in index.memo:
        target, out = (f.repo, f.path, cls), []
        for repo, path in sorted(index.defs_by_name.get(name, ())):
            other = index.files.get((repo, path))
            for d in _code_defs(index, repo, path, name) if other is not None else ():
                owner = d.qualname.rpartition(".")[0]
                if (owner and owner in _class_quals(index, other)
                        and (repo, path, owner) != target
                        and _derives(index, other, owner, target)):
                    out.append((repo, path, d.qualname))
        index.memo[key] = out
    return index.memo[key]


def _derives(index, f, cls: str, target: tuple) -> bool:
    """Does ``f``'s class ``cls`` have ``target`` (repo, path, qualname) among its bases,
    followed through each file's imports (as ``_walk_bases``)?"""
    todo, seen = [(f, cls)], set()
    while todo and len(seen) < MRO_DEPTH * 4:
        here, qual = todo.pop(0)
        if (here.repo, here.path, qual) in seen:
            continue
        seen.add((here.repo, here.path, qual))
        key = ("bases", here.repo, here.path, qual)
        if key not in index.memo:
            index.memo[key] = _bases(index, here, _other_scope(index, here), qual)
        for base in index.memo[key]:
            if base == target:
                return True
            other = index.files.get(base[:2])
            if other is not None:
                todo.append((other, base[2]))
    return False


def class_and_bases(index, f, cls: str, limit: int = MRO_DEPTH * 4):
    """(file facts, qualname) of ``f``'s class ``cls`` and then of its bases in the realm,
    breadth-first (as ``_walk_bases`` looks methods up), each once, at most ``limit``."""
    todo, seen = [(f, cls)], set()
    while todo and len(seen) < limit:
        here, qual = todo.pop(0)
        if (here.repo, here.path, qual) in seen:
            continue
        seen.add((here.repo, here.path, qual))
        yield here, qual
        for repo, path, base in _bases(index, here, _other_scope(index, here), qual):
            other = index.files.get((repo, path))
            if other is not None:
                todo.append((other, base))


def _class_quals(index, f) -> set[str]:
    key = ("class_quals", f.repo, f.path)
    if key not in index.memo:
        index.memo[key] = {d.qualname for d in f.defs if d.kind == "class"}
    return index.memo[key]


def _other_scope(index, other) -> Scope:
    key = ("scope", other.repo, other.path)
    if key not in index.memo:
        index.memo[key] = _import_edges(index, other, FileResult())
    return index.memo[key]


def _bases(index, f, scope: Scope, cls: str) -> list[tuple]:
    """(repo, path, qualname) of the classes ``cls`` (defined in ``f``) derives from."""
    out = []
    for name, receiver in _written_bases(index, f).get(cls, ()):
        if receiver is not None:
            out += _receiver_targets(index, f, name, receiver, scope, {})
        elif name in scope.imported:
            out += [(repo, path, sym) for repo, path, sym in scope.imported[name] if sym]
        else:
            out += [(f.repo, f.path, d.qualname) for d in f.defs
                    if d.kind == "class" and d.qualname == name]
    return out


def _written_bases(index, f) -> dict[str, list[tuple]]:
    """class qualname -> [(base name, receiver or None)] as written in ``f``."""
    key = ("written_bases", f.repo, f.path)
    if key not in index.memo:
        starts = {d.start: d.qualname for d in f.defs if d.kind == "class"}
        receivers = {(r.line, r.name): r.module for r in f.refs_of("attribute")
                     if r.line in starts and r.scope == starts[r.line]}
        bases: dict[str, list[tuple]] = defaultdict(list)
        for r in f.refs_of("type"):
            if r.line in starts and r.scope == starts[r.line]:
                bases[r.scope].append((r.name, receivers.get((r.line, r.name))))
        index.memo[key] = bases
    return index.memo[key]


def _qualnames(index, f) -> set[str]:
    key = ("qualnames", f.repo, f.path)
    if key not in index.memo:
        index.memo[key] = {d.qualname for d in f.defs}
    return index.memo[key]




def _receiver_targets(index, f, name, receiver, scope: Scope, local) -> list[tuple]:
    """``receiver.name``: an imported module's top-level name, or a method/attribute of
    an imported or local class. An unknown receiver (a variable) gives none."""
    module, rest = scope.modules.get(receiver), []
    if module is None and "." in receiver:
        module, rest = _submodule(index, scope, receiver)
    if module is not None and len(rest) <= 1:
        head = rest[0] if rest else name            # pkg.mod.name or pkg.mod.Class.name
        found = _py_definer(index, module[0], module[1], head)
        if found is None or found[1] != head:       # top level only: os.close is no method
            return []
        (d_repo, d_path), qual = found
        if not rest:
            return [(d_repo, d_path, qual)]
        return [(d_repo, d_path, d.qualname) for d in _code_defs(index, d_repo, d_path, name)
                if d.qualname == f"{qual}.{name}"]
    classes = [(repo, path, sym) for repo, path, sym in scope.imported.get(receiver, ()) if sym]
    classes += [(f.repo, f.path, q) for q in local.get(receiver, [])]
    return [(repo, path, d.qualname) for repo, path, sym in classes
            for d in _code_defs(index, repo, path, name) if d.qualname == f"{sym}.{name}"]


def _submodule(index, scope: Scope, receiver: str) -> tuple[tuple | None, list[str]]:
    """(the module file ``receiver`` names through a bound module and the packages'
    submodules, the parts after it): ``import sqlparse`` then ``sqlparse.cli.main()``
    reads the submodule cli as an attribute of the package (its ``__init__`` imports
    it). A name the package defines or imports itself wins over a submodule of that
    name (``from .main import main`` in ``__init__``): (None, []) then, as for a
    receiver no bound module starts."""
    parts = receiver.split(".")
    for i in range(len(parts) - 1, 0, -1):
        module = scope.modules.get(".".join(parts[:i]))
        if module is None:
            continue
        rest = parts[i:]
        while rest and module[1].endswith(("/__init__.py", "/__init__.pyi")):
            if _py_definer(index, module[0], module[1], rest[0]) is not None:
                return None, []
            sub = _py_file(index, module[0], f"{posixpath.dirname(module[1])}/{rest[0]}")
            if sub is None:
                break
            module, rest = (module[0], sub), rest[1:]
        return module, rest
    return None, []


def _resolved_targets(index, f, name, imported, files, local) -> list[tuple]:
    if name in imported:
        out = []
        for repo, path, sym in imported[name]:
            if sym:
                out.append((repo, path, sym))
            else:
                out += [(repo, path, d.qualname) for d in _code_defs(index, repo, path, name)]
        if out:
            return out
    if name in local:
        return [(f.repo, f.path, q) for q in local[name]]
    holders = index.defs_by_name.get(name, frozenset())
    return [(repo, path, d.qualname) for repo, path in sorted(files & holders) if path
            for d in _code_defs(index, repo, path, name)]


_JS_ROOT = re.compile(r"[.(\[?!]")


def _js_required_call(index, f, name, where, local, res) -> list[tuple]:
    """``m(...)`` where ``m = require(spec)`` (and no definition of the file is ``m``):
    what the module exports (graph/commonjs.py)."""
    if name in local:
        return []
    hit = commonjs.required_file(index, f, name, where)
    return commonjs.default_export(index, *hit, res.wants) if hit else []


def _js_member_targets(index, f, name, receiver, where, scope: Scope, local,
                       classes, res) -> tuple[str, list]:
    """(how, targets) of ``receiver.name(...)`` in JavaScript/TypeScript. Only what the
    receiver is makes it sure: ``this`` in a class is that class's method (inferred, as
    Python's ``self``), an imported name (``path.join``, ``Option.parse``) is that
    module's or class's member (resolved), and so is a ``require``-bound name's export
    member (graph/commonjs.py) or the file's own object literal's (``posix.join``); a value
    ``new`` or a factory built (graph/js_types.py) has its class's methods (inferred). Any
    other receiver's method found by name in an imported file is a guess (commander's
    ``argument.default()`` also "resolved" to ``Option.default``): a name match."""
    if name in ("apply", "call") and "." in receiver and "(" not in receiver:
        # `path.join.apply(null, args)`: a call of path.join
        receiver, _, name = receiver.rpartition(".")
    root = _JS_ROOT.split(receiver, 1)[0]
    head, dot, member = receiver.partition(".")
    if dot and root == head and "." not in member and head not in local \
            and head not in scope.imported:
        # `path.posix.join()` where the module's `posix.posix = posix`: its own member
        hit = commonjs.required_file(index, f, head, where)
        if hit and commonjs.is_export_alias(index, *hit, member):
            receiver = root
    if root == "this":     # a class's method, or an ES5 constructor's prototype method
        cls = next((p for p in enclosing(where) if p in classes
                    or js_types.is_class(index, f.repo, f.path, p)), None)
        method = js_types.method_of(index, f.repo, f.path, cls, name) if cls else None
        if method is not None:
            return "inferred", [(f.repo, f.path, method)]
    elif root == receiver and root in scope.imported:
        hits = [(repo, path, d.qualname) for repo, path, sym in scope.imported[root]
                for d in _code_defs(index, repo, path, name)
                if d.qualname == (f"{sym}.{name}" if sym else name)]
        if hits:
            return "resolved", hits
    if root == receiver and f"{root}.{name}" in local.get(name, ()):
        # `posix.normalize()` where the file's `var posix = { normalize: function ... }`
        return "resolved", [(f.repo, f.path, f"{root}.{name}")]
    if root == receiver and root not in scope.imported and root not in local:
        # `const m = require('./m'); m.name()`: what m's module exports as name
        hit = commonjs.required_file(index, f, root, where)
        hits = commonjs.member_export(index, *hit, name, res.wants) if hit else []
        if hits:
            return "resolved", hits
    built = []
    if root == receiver:    # `const p = new Command(); p.option()`: Command's option
        built = _js_built_class(index, f, root, where, scope, local, res.wants)
    elif (callee := js_types.called(receiver)) is not None:   # `walk(x).forEach()`
        built = js_types.call_classes(index, f, callee, where, scope, local, res.wants)
    hits = [(repo, path, q) for repo, path, cls in built
            if (q := js_types.method_of(index, repo, path, cls, name))]
    if hits:
        return "inferred", hits
    hits = _resolved_targets(index, f, name, scope.imported, scope.files, local)
    # an imported module's own function called as a member is a call through its
    # namespace (`utils.fn()`, `require('./u').fn()`): no other object holds it
    top = [h for h in hits if "." not in h[2] and h[:2] != (f.repo, f.path)]
    return ("resolved", top) if top else ("name_match", hits)


def _js_built_class(index, f, var: str, where, scope: Scope, local, wants: set) -> list[tuple]:
    """(repo, path, class qualname) that ``var`` holds where every binding of it in its
    innermost binding scope, ``new C(...)`` or a call returning one (graph/js_types.py),
    gives one class; [] if unknown or several."""
    key = ("js built", f.repo, f.path)
    built = index.memo.get(key)
    if built is None:
        built = index.memo[key] = defaultdict(set)
        for r in f.refs_of("bind_new"):
            built[(r.scope, r.name)].add(("new", r.module or ""))
        for r in f.refs_of("js_bind_call"):
            if r.module != "require":      # `m = require(...)` is commonjs.py's
                built[(r.scope, r.name)].add(("call", r.module or ""))
    for p in (*enclosing(where), None):
        bindings = built.get((p, var))
        if bindings is None:
            continue
        found: set[tuple] = set()
        for how, text in bindings:
            got = (_js_new_class(index, f, text, where, scope, local, wants) if how == "new"
                   else js_types.call_classes(index, f, text, where, scope, local, wants))
            if not got:
                return []
            found |= set(got)
        return sorted(found) if len(found) == 1 else []
    return []


def _js_new_class(index, f, written: str, where, scope: Scope, local, wants: set) -> list[tuple]:
    """The class ``new <written>(...)`` builds: imported, the file's own, a member of a
    required module (``new walk.Walker(x)`` with ``walk.Walker = Walker`` there), or one of
    that name in a file the file imports."""
    head, _, cls = written.rpartition(".")
    if not head and cls in scope.imported:
        return [(repo, path, sym) for repo, path, sym in scope.imported[cls] if sym]
    if not head and cls in local:
        return [(f.repo, f.path, q) for q in local[cls] if q == cls]
    if not head:    # `var E = require('events'); new E()`: what the module exports
        hit = commonjs.required_file(index, f, cls, where)
        got = commonjs.default_export(index, *hit, wants) if hit else []
        if got:
            return [t for t in got if js_types.is_class(index, *t)]
    if head and "." not in head and head not in local:
        hit = commonjs.required_file(index, f, head, where)
        got = commonjs.member_export(index, *hit, cls, wants) if hit else []
        if got:
            return [t for t in got if js_types.is_class(index, *t)]
    return [(repo, path, cls) for repo, path in sorted(scope.files)
            if js_types.is_class(index, repo, path, cls)]


def _note_own_method(index, f, name, line, scope_sym, res, noted: set[tuple]) -> None:
    """``x.name`` on an untyped receiver may be a method of this very file, which the
    name match leaves out (its own definitions: a bare name there resolves locally). An
    unresolved reference, not an edge: no evidence that it runs, but a test of the
    method cannot be ruled out (attrs' ``new._setattrs(...)`` in ``Attribute.evolve``
    ran at import time and was called untested). Once per name and enclosing symbol:
    ``tests affected`` selects the tests running each such symbol (cachetools' five
    ``cached`` wrappers call ``cache.setdefault`` on the cache they were given).
    Unresolved references are looked up by name, so a method of that name elsewhere
    reads unknown too: the receiver may hold it as well (attrs' ``last.__call__``)."""
    if (name, scope_sym) in noted:
        return
    noted.add((name, scope_sym))
    if any("." in d.qualname for d in _code_defs(index, f.repo, f.path, name)):
        res.unresolved.append({"kind": "name", "name": name, "line": line,
                               "reason": f"{UNTYPED}: not name-matched to this "
                                         "file's own methods"})


def _self_like(receiver: str | None) -> bool:
    return receiver in SELF_RECEIVERS or (receiver or "").startswith("super(")


# Languages whose code can call each other's by name (a name match across others is noise:
# Python's `names.add(...)` is no call of a C or Rust `add`).
_FAMILY = {"javascript": "js", "typescript": "js", "tsx": "js", "c": "c", "cpp": "c"}


def _family(lang: str | None) -> str | None:
    return _FAMILY.get(lang or "", lang)


_BUILTINS = frozenset(dir(builtins))


def _name_match(index, f, name, line, res, shape: str | None = None) -> tuple[str, list]:
    """Definitions of ``name`` in other files of the language family, weighted; ``shape``
    "methods" keeps methods only (``self.x``), "top" top-level definitions only (a
    Python bare name)."""
    family = _family(f.lang)
    holders = [h for h in index.defs_by_name.get(name, ()) if h != (f.repo, f.path)
               and _family(getattr(index.files.get(h), "lang", None)) == family]
    if shape == "top":      # count only the files a bare name could mean
        holders = [h for h in holders if any(d.qualname == name
                                             for d in _code_defs(index, *h, name))]
    if len(holders) > MAX_CANDIDATE_FILES:
        res.unresolved.append({"kind": "name", "name": name, "line": line,
                               "reason": f"ambiguous: defined in {len(holders)} files"})
        return "name_match", []
    w = name_weight(name, len(holders))
    return "name_match", [((repo, path, d.qualname), w) for repo, path in sorted(holders)
                          for d in [d for d in _code_defs(index, repo, path, name)
                                    if (shape != "methods" or "." in d.qualname)
                                    and (shape != "top" or "." not in d.qualname)
                                    and not _function_local(index, repo, path, d)][:3]]


def _function_local(index, repo: str, path: str, d) -> bool:
    """Is ``d`` defined inside a function's body? Only that function sees its name
    (attrs: a test's nested ``def v`` was "called" by ``v(...)`` in the package)."""
    parent = d.qualname.rpartition(".")[0]
    return bool(parent) and any(
        p.qualname == parent and p.kind in ("function", "method")
        for p in index.defs_named(repo, path, parent.rpartition(".")[2]))


# --- config ------------------------------------------------------------------

def _config_edges(index, f, res) -> None:
    for r in f.refs_of("config"):
        last = r.name.rsplit(".", 1)[-1]
        res.wants.add(("name", last))
        for repo, path in sorted(index.defs_by_name.get(last, ())):
            for d in index.defs_named(repo, path, last):
                if d.kind == "key" and (d.qualname == r.name or d.name == r.name):
                    res.edges.append(_edge(f, "config", r.scope, repo, path, d.qualname,
                                           r.line, "name_match"))


# --- tests -------------------------------------------------------------------

def _test_edges(f, res) -> None:
    seen = set()
    for e in list(res.edges):
        if e.kind not in ("imports", "calls", "references") or is_test_path(e.dst_path):
            continue
        key = (e.src_symbol, e.dst_repo, e.dst_path, e.dst_symbol)
        if key not in seen:
            seen.add(key)
            res.edges.append(Edge("tests", e.src_repo, e.src_path, e.src_symbol, e.dst_repo,
                                  e.dst_path, e.dst_symbol, e.line, e.how, e.weight, e.realm))


# --- documents ---------------------------------------------------------------

def _section_at(f: FileFacts, line: int) -> str | None:
    best = None
    for d in f.defs:
        if d.start <= line <= d.end:
            best = d.qualname  # defs are sorted outer-first
    return best


def _symbol_at(index, repo, path, line: int) -> str | None:
    best = None
    for d in sorted(index.defs(repo, path), key=lambda d: (d.start, -d.end)):
        if d.start <= line <= d.end:
            best = d.qualname
    return best


def _link_file(index, f, target: str) -> tuple[str, str] | None:
    from urllib.parse import unquote

    t = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if not t:
        return None
    full = posixpath.normpath(posixpath.join(f.repo, t.lstrip("/") if t.startswith("/")
                                             else posixpath.join(posixpath.dirname(f.path), t)))
    for repo in sorted(index.repos(), key=len, reverse=True):
        if full.startswith(repo.rstrip("/") + "/"):
            return repo, full[len(repo.rstrip("/")) + 1:]
    return None


def _doc_edges(index, f, res) -> None:
    for ln in f.links:
        if ln.kind == "anchor" and ln.broken:
            res.broken.append({"line": ln.line, "target": ln.target, "kind": ln.kind})
        if ln.kind != "file":
            continue
        hit = _link_file(index, f, ln.target)
        if hit is not None:
            res.wants.add(("path", hit[0], hit[1]))
        if hit is None or not (index.exists(*hit) or index.is_dir(*hit)):
            res.broken.append({"line": ln.line, "target": ln.target, "kind": ln.kind})
            continue
        if not index.exists(*hit):
            continue  # a directory: nothing to point an edge at
        frag = _LINE_FRAG_RE.match(ln.target.partition("#")[2])
        sym = _symbol_at(index, hit[0], hit[1], int(frag.group(1))) if frag else None
        res.edges.append(_edge(f, "documents", _section_at(f, ln.line), hit[0], hit[1], sym,
                               ln.line, "link", 1.0))
    for r in f.refs_of("code_span"):
        _span_edges(index, f, r, res)


def _span_edges(index, f, r, res) -> None:
    section = _section_at(f, r.line)
    if "/" in r.name or re.search(r"\.[a-z]{1,5}$", r.name) and "::" not in r.name:
        for base in (posixpath.dirname(f.path), ""):
            p = posixpath.normpath(posixpath.join(base, r.name.rstrip("/")))
            res.wants.add(("path", f.repo, p))
            if index.exists(f.repo, p):
                res.edges.append(_edge(f, "documents", section, f.repo, p, None, r.line, "link"))
                return
        if "/" in r.name:
            return
    dotted = r.name.replace("::", ".")
    name = dotted.rsplit(".", 1)[-1]
    res.wants.add(("name", name))
    holders = index.defs_by_name.get(name, ())
    if not holders or len(holders) > MAX_CANDIDATE_FILES:
        return
    w = name_weight(name, len(holders))
    for repo, path in sorted(holders):
        for d in _code_defs(index, repo, path, name):
            if "." in dotted and not (d.qualname == dotted or d.qualname.endswith("." + dotted)
                                      or _module_qual(path, d.qualname).endswith(dotted)):
                continue
            res.edges.append(_edge(f, "documents", section, repo, path, d.qualname, r.line,
                                   "name_match", w))


def _module_qual(path: str, qualname: str) -> str:
    mod = posixpath.splitext(path)[0].replace("/", ".").removesuffix(".__init__")
    return f"{mod}.{qualname}"


# Imported last, after every definition here: these modules import this one
# too, and a function-level import cost ~1.6 us per call (2M calls per stdlib
# graph build). Any import order then finds the names it asks for defined.
from .dispatch import dispatch_edges  # noqa: E402
from .dunder import dunder_edges  # noqa: E402
from .fixtures import fixture_edges  # noqa: E402
from .passed import passed_edges  # noqa: E402
from .reads import constant_read_edges  # noqa: E402
from .types import _bindings, bound_in_function, instance_members  # noqa: E402
