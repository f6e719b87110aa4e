"""Import resolution for JS/TS, Go and Rust (Python lives in ``resolve``).

JS/TS: relative specs with extension and ``index.*`` resolution (a ``.js``
spec may name a ``.ts`` file), tsconfig/jsconfig ``baseUrl`` + ``paths``,
and workspace packages named by package.json. Go: the go.mod module path
maps an import to a package directory and so to every .go file in it
(``_test.go`` only for test importers). Rust: ``mod x;`` -> x.rs or
x/mod.rs; ``use crate::/self::/super::/<crate>::a::b`` walks module files as
far as they exist and treats the rest as items. Pure.
"""

from __future__ import annotations

import posixpath
import re

from .model import FileFacts
from .resolve import RealmIndex, Target, find_definition

JS_LANGS = ("javascript", "typescript", "tsx")
JS_EXTS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
JS_TO_TS = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}


def targets(index: RealmIndex, f: FileFacts) -> list[Target]:
    if f.lang in JS_LANGS:
        return _js_targets(index, f)
    if f.lang == "go":
        return _go_targets(index, f)
    if f.lang == "rust":
        return _rust_targets(index, f)
    return []


def scope_files(index: RealmIndex, f: FileFacts) -> list[tuple[str, str]]:
    """Files whose names a file sees without importing them (Go: its package)."""
    if f.lang != "go":
        return []
    d = posixpath.dirname(f.path)
    return [(f.repo, p) for p in index.files_in(f.repo, d) if p.endswith(".go") and p != f.path]


def _norm(path: str) -> str | None:
    n = posixpath.normpath(path)
    if n == ".":
        return ""
    return None if n == ".." or n.startswith("../") or n.startswith("/") else n


# --- JS / TS -----------------------------------------------------------------

def _js_targets(index, f) -> list[Target]:
    out = []
    for r in f.refs_of("import", "import_default"):
        spec = r.module if r.module is not None else r.name
        hit = resolve_js(index, f, spec)
        if r.module is None:
            out.append(Target(r.line, spec, None, *(hit or (None, None)), None, r.scope))
            continue
        if hit is None:
            out.append(Target(r.line, spec, r.name, None, None, None, r.scope))
            continue
        d = (_default_export(index, *hit) if r.kind == "import_default" else None) \
            or find_definition(index, hit[0], hit[1], r.name)
        out.append(Target(r.line, spec, r.name, hit[0], hit[1], d.qualname if d else None, r.scope))
    return out


def _default_export(index, repo: str, path: str):
    """The definition ``export default`` names in a file (``export default function
    parseQuery``, ``export default format``; an anonymous one is ``default``), else the
    CommonJS export an ES import of the file gets; None: unknown."""
    f = index.files.get((repo, path))
    if f is None:
        return None
    for r in f.refs_of("esm_default"):
        d = find_definition(index, repo, path, r.name)
        if d is not None:
            return d
    d = find_definition(index, repo, path, "default")
    if d is not None and d.qualname == "default":
        return d
    from .commonjs import default_export
    hits = default_export(index, repo, path, set())
    return find_definition(index, *hits[0]) if len(hits) == 1 and hits[0][:2] == (repo, path) \
        else None


def resolve_js(index: RealmIndex, f: FileFacts, spec: str) -> tuple[str, str] | None:
    if spec.startswith((".", "/")):
        if spec.startswith("/"):
            return None
        base = _norm(posixpath.join(posixpath.dirname(f.path), spec))
        return _js_file(index, f.repo, base) if base is not None else None
    return _js_tsconfig(index, f, spec) or _js_workspace(index, spec)


def _js_file(index, repo: str, base: str) -> tuple[str, str] | None:
    stem, ext = posixpath.splitext(base)
    cands = [base] + [base + e for e in JS_EXTS]
    cands += [stem + e for e in JS_TO_TS.get(ext, ())]
    # a folder with a package.json: its main (`require('../')` in qs' tests: lib/index.js)
    manifest = index.manifests.get((repo, posixpath.join(base, "package.json").lstrip("/")))
    for main in (manifest or {}).get("main") or ():
        main = _norm(posixpath.join(base, str(main)))
        if main:
            cands += [main] + [main + e for e in JS_EXTS]
    cands += [posixpath.join(base, "index" + e) for e in JS_EXTS]
    for c in cands:
        c = c.lstrip("/")
        if c and index.exists(repo, c):
            return repo, c
    return None


def _js_tsconfig(index, f, spec: str):
    configs = [(posixpath.dirname(p), m) for (repo, p), m in index.manifests.items()
               if repo == f.repo and "ts_paths" in m]
    configs.sort(key=lambda c: -len(c[0]))
    for d, m in configs:
        if d and not f.path.startswith(d + "/"):
            continue
        base_url = _norm(posixpath.join(d, m.get("ts_base_url") or "."))
        if base_url is None:
            continue
        for pattern, subs in (m.get("ts_paths") or {}).items():
            star = _match_pattern(pattern, spec)
            if star is None or not isinstance(subs, list):
                continue
            for sub in subs:
                base = _norm(posixpath.join(base_url, str(sub).replace("*", star)))
                hit = base is not None and _js_file(index, f.repo, base)
                if hit:
                    return hit
        if m.get("ts_base_url"):
            base = _norm(posixpath.join(base_url, spec))
            hit = base is not None and _js_file(index, f.repo, base)
            if hit:
                return hit
    return None


def _match_pattern(pattern: str, spec: str) -> str | None:
    if "*" not in pattern:
        return "" if pattern == spec else None
    prefix, suffix = pattern.split("*", 1)
    if spec.startswith(prefix) and spec.endswith(suffix) and len(spec) >= len(prefix) + len(suffix):
        return spec[len(prefix):len(spec) - len(suffix)]
    return None


def _js_workspace(index, spec: str):
    for (repo, p), m in sorted(index.manifests.items()):
        name = m.get("js_package")
        if not name or not (spec == name or spec.startswith(name + "/")):
            continue
        d = posixpath.dirname(p)
        rest = spec[len(name) + 1:]
        if rest:
            bases = [posixpath.join(d, rest), posixpath.join(d, "src", rest)]
        else:
            bases = [posixpath.join(d, x) for x in m.get("main") or ()]
            bases += [posixpath.join(d, "index"), posixpath.join(d, "src", "index")]
        for base in bases:
            base = _norm(base)
            hit = base is not None and _js_file(index, repo, base)
            if hit:
                return hit
    return None


# --- Go ----------------------------------------------------------------------

def _go_targets(index, f) -> list[Target]:
    modules = sorted(((m["go_module"], repo, posixpath.dirname(p))
                      for (repo, p), m in index.manifests.items() if m.get("go_module")),
                     key=lambda x: -len(x[0]))
    test = f.path.endswith("_test.go")
    out = []
    for r in f.refs_of("import"):
        files = _go_package(index, modules, r.name, test)
        if not files:
            out.append(Target(r.line, r.name, None, None, None, None, r.scope))
        out += [Target(r.line, r.name, None, repo, p, None, r.scope) for repo, p in files]
    return out


def _go_package(index, modules, spec: str, test: bool) -> list[tuple[str, str]]:
    for mod, repo, d in modules:
        if spec == mod or spec.startswith(mod + "/"):
            pkg = _norm(posixpath.join(d, spec[len(mod) + 1:]))
            if pkg is None:
                continue
            files = [p for p in index.files_in(repo, pkg)
                     if p.endswith(".go") and (test or not p.endswith("_test.go"))]
            if files:
                return [(repo, p) for p in files]
    return []


# --- Rust --------------------------------------------------------------------

def _rust_targets(index, f) -> list[Target]:
    out = []
    for r in f.refs_of("mod", "import"):
        if r.kind == "mod":
            md = _rs_module_dir(f.path)
            hit = _rs_file(index, f.repo, posixpath.join(md, r.name) if md else r.name)
            out.append(Target(r.line, r.name, None, f.repo if hit else None, hit, None, r.scope))
        elif r.kind == "import" and r.module is None:
            out += _rs_use(index, f, r)
    return out


def _rs_module_dir(path: str) -> str:
    d, name = posixpath.split(path)
    if name in ("mod.rs", "lib.rs", "main.rs"):
        return d
    return posixpath.join(d, name[:-3]) if name.endswith(".rs") else d


def _rs_file(index, repo: str, base: str) -> str | None:
    for c in (base + ".rs", posixpath.join(base, "mod.rs")):
        if index.exists(repo, c):
            return c
    return None


def _rs_crate_dir(index, repo: str, path: str) -> str:
    d = posixpath.dirname(path)
    probe = d
    while True:
        if index.exists(repo, posixpath.join(probe, "lib.rs")) or \
                index.exists(repo, posixpath.join(probe, "main.rs")):
            return probe
        if not probe:
            return "src" if path.startswith("src/") else d
        probe = posixpath.dirname(probe)


def _rs_root(index, f, first: str):
    """(repo, module dir, module file) that the first path segment names."""
    if first == "crate":
        d = _rs_crate_dir(index, f.repo, f.path)
        return f.repo, d, _rs_dir_file(index, f.repo, d)
    if first in ("self", "super"):
        d = _rs_module_dir(f.path)
        if first == "self":
            return f.repo, d, f.path
        d = posixpath.dirname(d)
        return f.repo, d, _rs_dir_file(index, f.repo, d)
    for (repo, p), m in index.manifests.items():
        if m.get("rust_crate") == first:
            d = posixpath.join(posixpath.dirname(p), "src")
            return repo, d, _rs_dir_file(index, repo, d)
    return None


def _rs_dir_file(index, repo: str, d: str) -> str | None:
    for c in (posixpath.join(d, "lib.rs"), posixpath.join(d, "main.rs"),
              posixpath.join(d, "mod.rs"), d + ".rs"):
        if index.exists(repo, c.lstrip("/")):
            return c.lstrip("/")
    return None


def _rs_split(text: str) -> tuple[list[str], list[str]]:
    t = "".join(re.sub(r"\s+as\s+\w+", "", text).split())
    if "::{" in t:
        base, rest = t.split("::{", 1)
        items = [x.split("::", 1)[0].split("{", 1)[0] for x in _top_level_split(rest[:-1])]
    else:
        base, _, last = t.rpartition("::")
        items = [last]
        if not base:
            base, items = last, []
    return base.split("::"), [x for x in items if x]


def _top_level_split(s: str) -> list[str]:
    out, depth, cur = [], 0, []
    for ch in s:
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
            continue
        depth += (ch == "{") - (ch == "}")
        cur.append(ch)
    out.append("".join(cur))
    return out


def _rs_use(index, f, r) -> list[Target]:
    segs, items = _rs_split(r.name)
    root = _rs_root(index, f, segs[0])
    if root is None:
        return [Target(r.line, r.name, None, None, None, None, r.scope)]
    repo, cur_dir, cur_file = root
    rest = segs[1:]
    while rest and rest[0] == "super":
        cur_dir = posixpath.dirname(cur_dir)
        cur_file = _rs_dir_file(index, repo, cur_dir)
        rest = rest[1:]
    for seg in list(rest):
        hit = _rs_file(index, repo, posixpath.join(cur_dir, seg))
        if hit is None:
            break
        cur_dir, cur_file = posixpath.join(cur_dir, seg), hit
        rest = rest[1:]
    out = []
    for item in (items or [None]):
        if rest and item is not None:
            item = rest[0]  # `use a::Type::{X}`: the item is the type
        sub = _rs_file(index, repo, posixpath.join(cur_dir, item)) if item and not rest else None
        if sub:
            out.append(Target(r.line, r.name, item, repo, sub, None, r.scope))
        elif cur_file:
            name = item if item not in (None, "*", "self") else (rest[0] if rest else None)
            d = find_definition(index, repo, cur_file, name) if name else None
            out.append(Target(r.line, r.name, name, repo, cur_file, d.qualname if d else None, r.scope))
        else:
            out.append(Target(r.line, r.name, item, None, None, None, r.scope))
    return out
