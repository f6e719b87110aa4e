"""Impact vs the tests that really fail, for JavaScript: indexd's test selection against
mutation testing on npm packages nobody here wrote.

The Python bench (bench/impact_vs_tests.py) does this on PyPI sdists; this one takes npm
tarballs that ship their test suites (most strip them: `resolve` and `qs` keep theirs).
Sampled functions of the package's own code are mutated one at a time (a block body ->
``{ throw new Error("mutated"); }``), every test file is run with node on each mutant
(tape prints TAP and exits non-zero on a failure), and the test files with an assertion
failing that did not fail unmutated, or fewer assertions passing (a crash), are the
truth. Against it: the ``tests`` bucket of ``indexd impact`` and ``indexctl tests
affected``, static (no per-test coverage is recorded for JavaScript here), next to the
test files that require the function's module transitively and those whose name mentions
it. The tarball and what the tests require come from the npm registry the first time
(bench/out/impact_vs_tests_js/, ignored by git); everything else runs in a temporary folder.

    .venv/bin/python bench/impact_vs_tests_js.py [--projects resolve,qs] [--mutations N]
        [--seed S] [--verbose] [--no-write] [--reuse-runs]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from agreement import DOC_INTRO, format_table, replace_region  # noqa: E402
from impact_vs_tests import (Impact, Target, index_project, module_word, ranking,  # noqa: E402
                             safe_rate, score)

DOC = ROOT / "docs" / "benchmarks.md"
CACHE = HERE / "out" / "impact_vs_tests_js"
MUTANT_BODY = '{ throw new Error("mutated"); }'
FILE_TIMEOUT = 60.0
FUNCTION_NODES = ("function_declaration", "function_expression", "function", "arrow_function",
                  "method_definition", "generator_function_declaration",
                  "generator_function")


@dataclass(frozen=True)
class JsProject:
    name: str
    version: str
    sources: tuple[str, ...]       # the package's own code (folders or files)
    tests: str = "test"
    deps: tuple[str, ...] = ()     # what its tests require, installed beside it
    mutations: int = 40
    skip: tuple[str, ...] = ()     # test files that cannot run here: never run nor counted


PROJECTS = {
    # Added 2026-12-07 as the first JavaScript projects; run once before any change they
    # might lead to. resolve: two resolvers (async, sync) sharing helpers, 20 tape files.
    "resolve": JsProject("resolve", "1.22.10", ("lib",), deps=(
        "tape@5", "tmp@0.0.31", "rimraf@2", "object-keys@1", "mv@2", "mkdirp@0.5",
        "copy-dir@1", "semver@6", "array.prototype.map@1", "tap@0.4.13",
        "is-core-module@2.16.1", "path-parse@1.0.7", "supports-preserve-symlinks-flag@1.0.0")),
    # qs: parse / stringify / utils / formats, 4 tape files.
    "qs": JsProject("qs", "6.14.0", ("lib",), deps=(
        "tape@5", "es-value-fixtures@1", "for-each@0.3", "has-bigints@1",
        "has-override-mistake@1", "has-property-descriptors@1", "has-proto@1",
        "has-symbols@1", "iconv-lite@0.6", "mock-property@1", "object-inspect@1",
        "safer-buffer@2", "side-channel@1.1.0")),
    # Added after the CommonJS and passed-value changes resolve and qs led to, and run once
    # on that code, never read for fixes: the held-out check of those changes. traverse: one
    # module whose tests call methods on what `traverse(obj)` returns; object.assign: an
    # es-shim package (implementation / polyfill / shim / index) with a shared test helper.
    "traverse": JsProject("traverse", "0.6.11", ("index.js",), deps=(
        "tape@5", "es-value-fixtures@1", "gopd@1", "typedarray.prototype.slice@1",
        "which-typed-array@1")),
    "object.assign": JsProject("object.assign", "4.1.7", (
        "implementation.js", "polyfill.js", "shim.js", "index.js", "hasSymbols.js", "auto.js"),
        deps=("tape@5", "call-bind@1", "call-bound@1", "define-properties@1",
              "es-object-atoms@1", "for-each@0.3", "functions-have-names@1", "has-strict-mode@1",
              "has-symbols@1", "hasown@2", "mock-property@1", "object-keys@1"),
        skip=("test/ses-compat.js",)),   # needs `ses`, a lockdown of the whole realm
    # Added at the end of the session that made the rules above and run once on that code as
    # the held-out check (tests affected 0.656, 13/25 safe claims right); then read, and the
    # rules its misses led to added. One module (EventEmitter, prototype methods) against
    # Node's own events tests, ported.
    "events": JsProject("events", "3.3.0", ("events.js",), tests="tests", deps=(
        "tape@5", "functions-have-names@1", "has@1", "has-symbols@1", "isarray@2")),
    # Added after that, run once on the session's final code, never read for fixes: the
    # held-out figure of every JavaScript rule so far. Node's path module for browsers.
    "path-browserify": JsProject("path-browserify", "1.0.1", ("index.js",), deps=("tape@5",)),
}


# --- the project -------------------------------------------------------------
def fetch(project: JsProject) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    tgz = CACHE / f"{project.name}-{project.version}.tgz"
    if not tgz.is_file():
        subprocess.run(["npm", "pack", "--silent", f"{project.name}@{project.version}",
                        "--pack-destination", str(CACHE)], check=True, capture_output=True)
    return tgz


def unpack(tgz: Path, dest: Path) -> Path:
    with tarfile.open(tgz) as tar:
        tar.extractall(dest, filter="data")
    return dest / "package"


def node_modules(project: JsProject, root: Path) -> None:
    """What the tests require, installed once into the cache and linked into ``root``."""
    # a folder named node_modules: node looks up a linked package's own requires from
    # its real path, in the node_modules folders above it
    cached = CACHE / f"{project.name}-{project.version}-deps" / "node_modules"
    if not cached.is_dir():
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "package.json").write_text('{"name": "bench-deps", "private": true}')
            subprocess.run(["npm", "install", "--no-save", "--no-package-lock",
                            "--ignore-scripts", "--no-audit", "--no-fund", *project.deps],
                           cwd=tmp, check=True, capture_output=True)
            cached.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(Path(tmp) / "node_modules"), cached)
    (root / "node_modules").symlink_to(cached)


def test_files(root: Path, project: JsProject) -> list[str]:
    found = (p.relative_to(root).as_posix() for p in (root / project.tests).glob("*.js"))
    return sorted(rel for rel in found if rel not in project.skip)


def source_files(root: Path, project: JsProject) -> list[Path]:
    out = []
    for src in project.sources:
        p = root / src
        out += sorted(p.rglob("*.js")) if p.is_dir() else [p]
    return out


# --- mutants -----------------------------------------------------------------
def _function_bodies(tree, data: bytes) -> dict[int, tuple[int, int]]:
    """Start line -> (start byte, end byte) of the block body of a function there."""
    out, stack = {}, [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in FUNCTION_NODES:
            body = node.child_by_field_name("body")
            if body is not None and body.type == "statement_block":
                out.setdefault(node.start_point[0] + 1, (body.start_byte, body.end_byte))
        stack.extend(node.children)
    return out


def targets(root: Path, project: JsProject) -> list[Target]:
    """Every function indexd names in the package's code that has a block body; the
    qualname is indexd's own, so ``impact`` is asked what the user would ask."""
    import tree_sitter

    from indexd.parse import parse_source
    from indexd.parse.languages import grammar

    parser = tree_sitter.Parser(grammar("javascript"))
    out = []
    for path in source_files(root, project):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(root).as_posix()
        data = text.encode()
        bodies = _function_bodies(parser.parse(data), data)
        entries = [e for e in parse_source(rel, text, "javascript").entries
                   if e.kind in ("function", "method")]
        names = [e.qualname for e in entries]
        for e in entries:
            if names.count(e.qualname) > 1 or e.start_line not in bodies:
                continue
            start, end = bodies[e.start_line]
            out.append(Target(rel, e.qualname, (start, 0), (end, 0)))
    return out


def mutate(text: str, t: Target) -> str:
    data = text.encode()
    return (data[:t.start[0]] + MUTANT_BODY.encode() + data[t.end[0]:]).decode()


# --- running the tests -------------------------------------------------------
@dataclass
class FileRun:
    code: int
    passed: int
    failed: set[tuple[str, int, str]] = field(default_factory=set)
    timeout: bool = False


_TAP = re.compile(r"^(not ok|ok) \d+\s*(.*)$")


def parse_tap(out: str) -> tuple[int, set]:
    """Passing assertions, and the failing ones as (test name, ordinal in it, text)."""
    passed, failed, test, k = 0, set(), "", 0
    for line in out.splitlines():
        if line.startswith("# "):
            test, k = line[2:].strip(), 0
            continue
        m = _TAP.match(line)
        if not m:
            continue
        k += 1
        if m.group(1) == "ok":
            passed += 1
        else:
            failed.add((test, k, m.group(2).strip()))
    return passed, failed


def run_file(root: Path, rel: str) -> FileRun:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INDEXD_", "NODE_"))}
    # a HOME of its own per run: resolve's home_paths tests write $HOME/.node_modules, and
    # a crashed one left it behind for the next run (and in the user's home)
    with tempfile.TemporaryDirectory(prefix="ivtjs-home-") as home:
        try:
            proc = subprocess.run(["node", rel], cwd=root, env=env | {"HOME": home},
                                  capture_output=True, text=True, timeout=FILE_TIMEOUT)
        except subprocess.TimeoutExpired:
            return FileRun(code=-1, passed=0, timeout=True)
    passed, failed = parse_tap(proc.stdout)
    return FileRun(proc.returncode, passed, failed)


def failing(clean: dict[str, FileRun], runs: dict[str, FileRun]) -> set[str]:
    """Test files a mutant broke: a new failing assertion, fewer passing (it stopped
    early), or a non-zero exit where the unmutated run had none."""
    return {rel for rel, r in runs.items()
            if r.failed - clean[rel].failed or r.passed < clean[rel].passed
            or (r.code != 0 and clean[rel].code == 0)}


def run_all(root: Path, tests: list[str]) -> dict[str, FileRun]:
    return {rel: run_file(root, rel) for rel in tests}


def clean_runs(root: Path, tests: list[str]) -> dict[str, FileRun]:
    """The unmutated suite, twice: an assertion failing in either run is no mutant's."""
    first, second = run_all(root, tests), run_all(root, tests)
    return {rel: FileRun(max(first[rel].code, second[rel].code, key=abs),
                         min(first[rel].passed, second[rel].passed),
                         first[rel].failed | second[rel].failed) for rel in tests}


def mutation_runs(root: Path, tests: list[str], clean: dict[str, FileRun],
                  sample: list[Target]) -> dict[Target, dict]:
    out = {}
    for i, t in enumerate(sample, 1):
        path = root / t.path
        text = path.read_text(encoding="utf-8")
        path.write_text(mutate(text, t), encoding="utf-8")
        try:
            runs = run_all(root, tests)
            # a file that failed runs once more: only a failure it repeats counts (resolve's
            # home_paths.js failed now and then on a loaded machine, mutant or not)
            broken = failing(clean, runs)
            again = failing(clean, run_all(root, sorted(broken)))
        finally:
            path.write_text(text, encoding="utf-8")
        out[t] = {"files": sorted(broken & again),
                  "flaky": sorted(broken - again),
                  "timeout": any(r.timeout for r in runs.values())}
        log(f"  {i}/{len(sample)} {t.path}::{t.qualname}: {len(out[t]['files'])} failing")
    return out


# --- baselines ---------------------------------------------------------------
_REQUIRE = re.compile(r"""(?:require\(\s*|from\s+|import\s+)['"](\.{1,2}(?:/[^'"]*)?)['"]""")


def _resolve(root: Path, base: Path, spec: str) -> str | None:
    target = (base.parent / spec).resolve()
    if target == root.resolve():      # require('../'): the package's main
        main = json.loads((root / "package.json").read_text()).get("main", "index.js")
        target = (root / main).resolve()
    for cand in (target, target.with_name(target.name + ".js"), target / "index.js"):
        if cand.is_file():
            try:
                return cand.relative_to(root.resolve()).as_posix()
            except ValueError:
                return None
    return None


def import_closure(root: Path, tests: list[str]) -> dict[str, set[str]]:
    """Per test file, every file of the package it requires, transitively."""
    out = {}
    for test in tests:
        seen, todo = set(), [test]
        while todo:
            rel = todo.pop()
            if rel in seen:
                continue
            seen.add(rel)
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
            for spec in _REQUIRE.findall(text):
                dep = _resolve(root, root / rel, spec)
                if dep and not dep.startswith("node_modules/"):
                    todo.append(dep)
        out[test] = seen
    return out


# --- one project -------------------------------------------------------------
def bench_project(project: JsProject, n: int, seed: int, verbose: bool, reuse: bool) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix=f"ivtjs-{project.name}-"))
    try:
        return _bench_project(project, n, seed, verbose, tmp, reuse)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _bench_project(project, n, seed, verbose, tmp: Path, reuse: bool) -> dict:
    t_start = time.perf_counter()
    root = unpack(fetch(project), tmp / "src")
    node_modules(project, root)
    tests = test_files(root, project)
    pool = targets(root, project)
    sample = sorted(random.Random(seed).sample(pool, min(n, len(pool))),
                    key=lambda t: (t.path, t.qualname))
    cached = CACHE / f"runs-{project.name}-{project.version}-seed{seed}-n{len(sample)}.json"
    clean = clean_runs(root, tests)
    if reuse and cached.is_file():
        saved = json.loads(cached.read_text())
        runs = {t: saved[f"{t.path}::{t.qualname}"] for t in sample}
        log(f"{project.name}: mutant outcomes reused from {cached.name}")
    else:
        log(f"{project.name}: {len(pool)} functions, {len(sample)} sampled, {len(tests)} test "
            f"files ({sum(1 for r in clean.values() if r.failed or r.code)} failing unmutated)")
        runs = mutation_runs(root, tests, clean, sample)
        cached.write_text(json.dumps({f"{t.path}::{t.qualname}": r for t, r in runs.items()},
                                     indent=1))
    home = tmp / "home"
    home.mkdir(mode=0o700)
    index_project(root, home)
    impact = Impact(home)
    closure = import_closure(root, tests)
    ok = [t for t in sample if not runs[t]["timeout"]]
    files = {t: set(runs[t]["files"]) for t in ok}
    static = {t: _answer(impact.tests, root, t, (set(), set(), "")) for t in ok}
    affected = {t: _answer(impact.affected, root, t, (set(), False, [])) for t in ok}
    methods = {"indexd impact": {t: static[t][0] & set(tests) for t in ok},
               "tests affected": {t: affected[t][0] for t in ok},
               "imports (transitive)": {t: {f for f in tests if t.path in closure[f]}
                                        for t in ok},
               "file name mentions module": {t: {f for f in tests if module_word(t.path)
                                                 in Path(f).stem} for t in ok},
               "failing files (oracle)": files}
    claims = {"tests affected": {t: affected[t][1] for t in ok}}
    outcome = {t: type("Run", (), {"files": files[t]}) for t in ok}
    rows = []
    for label, sel in methods.items():
        s = score([(files[t], sel[t]) for t in ok], tests)
        rows.append((label, f"{s['recall']:.3f}", f"{s['full']:.3f}",
                     f"{100 * s['selection']:.1f}%", safe_rate(claims.get(label), outcome, sel)))
    misses = {label: [(t, f) for t in ok for f in sorted(files[t] - methods[label][t])]
              for label in ("indexd impact", "tests affected")}
    if verbose:
        for label, items in misses.items():
            for t, f in items:
                print(f"missed [{label}]: {t.path}::{t.qualname} -> {f}")
    ranks = ranking([(files[t], affected[t][2]) for t in ok])
    return {"project": project, "sample": sample, "rows": rows, "tests": len(tests),
            "failing": sum(1 for t in ok if files[t]), "timeouts": len(sample) - len(ok),
            "clean_failing": sum(1 for r in clean.values() if r.failed or r.code),
            "misses": misses, "ranks": ranks, "seconds": time.perf_counter() - t_start}


def _answer(ask, root: Path, t: Target, unknown):
    """indexd's answer for a target, or ``unknown`` when it has no such symbol (an older
    parser named no ES5 prototype method): nothing selected, nothing called safe."""
    from indexd.errors import RealmError

    try:
        return ask(root, t)
    except RealmError:
        return unknown


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def render(results: list[dict], seed: int) -> str:
    parts = []
    for r in results:
        p = r["project"]
        parts.append(f"{p.name} {p.version} (npm): {len(r['sample'])} mutated functions, "
                     f"{r['failing']} with >=1 failing test file, {r['timeouts']} timed out; "
                     f"{r['tests']} test files ({r['clean_failing']} with assertions failing "
                     f"unmutated: only new failures count); {r['seconds']:.0f}s")
        parts.append(format_table(r["rows"], ("selection", "file recall (micro)",
                                              "functions fully covered",
                                              "selected test files", "said safe")))
        parts.append("missed (function, failing file) pairs: " + ", ".join(
            f"{k} {len(v)}" for k, v in r["misses"].items()))
        rk = r["ranks"]
        if rk["n"]:
            parts.append(f"order of tests affected, {rk['n']} mutants with a failing file "
                         f"selected: mean APFD {rk['apfd']:.2f} (random order 0.50)")
        parts.append("")
    parts.append(f"seed {seed}, node {_node_version()}, nproc {os.cpu_count()}, "
                 f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    return "\n".join(parts)


def _node_version() -> str:
    return subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--projects", default=",".join(PROJECTS))
    ap.add_argument("--mutations", type=int, default=None, help="functions per project")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--verbose", action="store_true", help="list missed pairs")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--reuse-runs", action="store_true",
                    help="reuse the mutants' outcomes saved by an earlier run")
    args = ap.parse_args()
    results = [bench_project(PROJECTS[name], args.mutations or PROJECTS[name].mutations,
                             args.seed, args.verbose, args.reuse_runs)
               for name in args.projects.split(",")]
    table = render(results, args.seed)
    print(table)
    if not args.no_write:
        body = ("Generated by `bench/impact_vs_tests_js.py`.\n\n```text\n" + table + "\n```")
        replace_region(DOC, "impact_vs_tests_js", body, DOC_INTRO)


if __name__ == "__main__":
    main()
