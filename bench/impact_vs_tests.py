"""Impact vs the tests that really fail: indexd's test selection against mutation testing.

On real Python projects nobody here wrote (pinned PyPI sdists, which ship
their test suites), mutate sampled functions of the package source one at a
time (body -> ``raise RuntimeError("mutated")``, signature and decorators
kept), run the project's own pytest suite on each mutant and collect the test
files and test functions that fail (from pytest's junitxml). Then compare
with the test files indexd predicts for that function (the ``tests`` bucket
of ``impact``), statically and after ingesting per-test coverage of the
unmutated suite, next to two baselines: every test file that imports the
function's module transitively (Python's ``ast``), and test files whose name
mentions the module.

Sdists are downloaded once with pip into bench/out/impact_vs_tests/ (ignored
by git); everything else happens in a temporary folder.

    .venv/bin/python bench/impact_vs_tests.py [--quick] [--jobs N] [--seed S]
        [--projects click,attrs] [--mutations N] [--verbose] [--no-write] [--reuse-runs]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from agreement import DOC_INTRO, format_table, replace_region  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
CACHE = HERE / "out" / "impact_vs_tests"
BIN = Path(sys.executable).parent
MUTANT_BODY = 'raise RuntimeError("mutated")'


@dataclass(frozen=True)
class Project:
    name: str
    version: str
    packages: tuple[str, ...]          # package folders, relative to the sdist root
    tests: str = "tests"
    pytest_args: tuple[str, ...] = ()
    mutations: int = 40
    skip: tuple[str, ...] = ()         # test files that cannot run here: never run nor counted


PROJECTS = {
    "click": Project("click", "8.1.8", ("src/click",)),
    # hypothesis' plugin is loaded by hand (autoload is off) to pin its seed.
    "attrs": Project("attrs", "24.2.0", ("src/attr", "src/attrs"),
                     pytest_args=("-p", "_hypothesis_pytestplugin", "--hypothesis-seed=0")),
    # Added 2026-12-05 as a project no change here had been made for: its first run was
    # the held-out check of what was tuned on click and attrs (docs/benchmarks.md).
    "jinja2": Project("jinja2", "3.1.4", ("src/jinja2",)),
    # Added the same day, after the changes jinja2's misses led to: measured once before
    # and once after them, never tuned on (the held-out check of those changes).
    "sqlparse": Project("sqlparse", "0.5.1", ("sqlparse",)),
    # Added in the next session, run once on the code before that session's changes
    # (which sqlparse's misses led to) and once after: a third held-out check. Its
    # tests live inside the package; `tlz` (an import-hook alias of toolz) is left out.
    "toolz": Project("toolz", "1.0.0", ("toolz",), tests="toolz/tests"),
    # Added the same session as toolz, after toolz's misses were read: run once on the
    # code before the session and once after, never read for fixes. Its tests need pytz
    # and simplejson (the `bench` extra).
    "marshmallow": Project("marshmallow", "3.22.0", ("src/marshmallow",)),
    # Added at the end of that session and run once on its final code, never read for fixes:
    # the held-out figure of every rule so far. Its tests need freezegun (the `bench` extra).
    "itsdangerous": Project("itsdangerous", "2.2.0", ("src/itsdangerous",)),
    # Added in the ninth session, after the order of `tests affected` was chosen with the
    # seven above in view: run once, the held-out check of that order (and of everything
    # else). humanize and idna name most test files after modules, cachetools after its
    # classes. (boltons and flask were tried first: their conftest.py files use what
    # pytest 9 removed, so no test of theirs runs here.)
    "humanize": Project("humanize", "4.17.0", ("src/humanize",),
                        skip=("tests/test_benchmarks.py",)),   # needs pytest-benchmark
    "cachetools": Project("cachetools", "5.5.0", ("src/cachetools",)),
    "idna": Project("idna", "3.10", ("idna",)),
    # Added at the end of the ninth session, after every change of that session, and run
    # once, never read for fixes: the held-out figure of the session's rules (test files
    # named after modules, so a check of the order too).
    "tomlkit": Project("tomlkit", "0.13.2", ("tomlkit",)),
    # Added in the twenty-third session, after that session's changes (class attributes
    # holding classes; an untyped use where a handed-out function leads), as their held-out
    # check: run once on the code before them and once after, never read for fixes. Chosen
    # as a pure-Python sdist with a suite of 18 test files, not for any pattern in it.
    "pyasn1": Project("pyasn1", "0.6.1", ("pyasn1",)),
    # Added in the twenty-fourth session, before any change of that session, as its held-out
    # check: run once on the code the session started from, then read for fixes, then again.
    # Chosen as a pure-Python sdist whose suite (unittest classes inside the package) runs
    # here on pytest alone, not for any pattern. (pluggy 1.5.0 was tried beside it and left
    # out: pytest itself imports the mutated pluggy from src/, so 17 of 40 mutants stopped
    # pytest's own start and "failed" every test file for a reason no test of pluggy holds.)
    "pyflakes": Project("pyflakes", "3.2.0", ("pyflakes",), tests="pyflakes/test"),
    # Added later in that session, after the changes pyflakes' misses led to, and run once
    # on their code, never read for fixes: their held-out check. Its suite is unittest's,
    # run by pytest; test_md_in_html.py imports a `TestSuite` with an `__init__`, which
    # pytest 9 refuses to collect (an error), so it is left out.
    "markdown": Project("markdown", "3.7", ("markdown",),
                        skip=("tests/test_syntax/extensions/test_md_in_html.py",)),
    # Added at the end of that session and run once on its final code, never read for
    # fixes: the held-out figure of what markdown's and pyflakes' misses led to. A
    # pure-Python sdist whose suite (20 test files) runs here on pytest alone.
    "parso": Project("parso", "0.8.4", ("parso",), tests="test"),
}


# --- the project -------------------------------------------------------------
def fetch(project: Project) -> Path:
    """The cached sdist, downloaded with pip the first time."""
    CACHE.mkdir(parents=True, exist_ok=True)
    stem = f"{project.name}-{project.version}"
    found = [p for p in CACHE.glob("*.tar.gz") if p.name.lower() == f"{stem}.tar.gz".lower()]
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--no-binary", ":all:", f"{project.name}=={project.version}",
                        "-d", str(CACHE)], check=True)
        found = [p for p in CACHE.glob("*.tar.gz") if p.name.lower() == f"{stem}.tar.gz".lower()]
    return found[0]


def unpack(sdist: Path, dest: Path) -> Path:
    with tarfile.open(sdist) as tar:
        tar.extractall(dest, filter="data")
    (top,) = [p for p in dest.iterdir() if p.is_dir()]
    return top


def test_files(root: Path, project: Project) -> list[str]:
    base = root / project.tests
    found = {p for p in base.rglob("test_*.py")} | {p for p in base.rglob("*_test.py")}
    return sorted(rel for rel in (p.relative_to(root).as_posix() for p in found)
                  if rel not in project.skip)


# --- mutants -----------------------------------------------------------------
@dataclass(frozen=True)
class Target:
    path: str           # relative to the sdist root
    qualname: str
    start: tuple[int, int]   # (line, col) of the first body statement
    end: tuple[int, int]     # (line, col) just past the last one


def _decorator_names(fn) -> set[str]:
    out = set()
    for d in fn.decorator_list:
        node = d.func if isinstance(d, ast.Call) else d
        out.add(node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", ""))
    return out


def _defs(tree: ast.Module):
    """(qualname, def) for module-level functions and methods of module-level classes."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{node.name}.{sub.name}", sub


def targets(root: Path, project: Project) -> list[Target]:
    out = []
    for pkg in project.packages:
        for path in sorted((root / pkg).rglob("*.py")):
            if path.is_relative_to(root / project.tests):   # toolz keeps them in the package
                continue
            rel = path.relative_to(root).as_posix()
            defs = list(_defs(ast.parse(path.read_text(encoding="utf-8"))))
            names = [q for q, _ in defs]
            for qual, fn in defs:
                # property setters and @overload stubs share a qualname: a
                # target by name would be ambiguous, and stubs never run.
                if names.count(qual) > 1 or "overload" in _decorator_names(fn):
                    continue
                first, last = fn.body[0], fn.body[-1]
                out.append(Target(rel, qual, (first.lineno, first.col_offset),
                                  (last.end_lineno, last.end_col_offset)))
    return out


def mutate(text: str, t: Target) -> str:
    lines = text.splitlines(keepends=True)
    (l0, c0), (l1, c1) = t.start, t.end
    # col offsets are in UTF-8 bytes
    head = lines[l0 - 1].encode()[:c0].decode()
    tail = lines[l1 - 1].encode()[c1:].decode()
    return "".join(lines[:l0 - 1]) + head + MUTANT_BODY + tail + "".join(lines[l1:])


# --- running the suite -------------------------------------------------------
def suite_env(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("INDEXD_", "COV_", "COVERAGE_", "PYTEST_"))}
    env["PYTHONPATH"] = str(root / "src")
    # "just pytest": the bench venv's other plugins (schemathesis, ...) stay out.
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def pytest_cmd(project: Project, junit: Path) -> list[str]:
    # -o junit_family=xunit1: testcases carry their file; -W: the sdists turn
    # warnings into errors and pytest 9 deprecates what they still use.
    return ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit1",
            "-W", "ignore::pytest.PytestRemovedIn10Warning", f"--junitxml={junit}",
            *project.pytest_args, *(f"--ignore={f}" for f in project.skip), project.tests]


@dataclass
class Outcome:
    files: set[str] = field(default_factory=set)       # failing test files
    tests: set[tuple[str, str]] = field(default_factory=set)   # (file, test qualname)
    ran: int = 0
    timeout: bool = False
    startup: bool = False    # pytest stopped before any test (a conftest import failed)
    seconds: float = 0.0


def run_suite(root: Path, project: Project, timeout: float) -> Outcome:
    junit = root.parent / f"{root.name}.junit.xml"
    junit.unlink(missing_ok=True)
    t0 = time.perf_counter()
    try:
        subprocess.run([sys.executable, *pytest_cmd(project, junit)], cwd=root,
                       env=suite_env(root), capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Outcome(timeout=True, seconds=time.perf_counter() - t0)
    # no junitxml at all: pytest gave up while loading conftest.py, so no test could run
    out = parse_junit(junit, root) if junit.exists() else Outcome(startup=True)
    out.seconds = time.perf_counter() - t0
    return out


def _test_file(case: ET.Element, root: Path) -> str | None:
    """The test file to run for a test case: the module that collects it. `file` is where
    the test function is defined, which for a test inherited from a mixin elsewhere
    (cachetools' `tests/__init__.py`) is no file pytest runs it from."""
    defined = case.get("file")
    # a collection error names the module (tests.test_x), a test case its class's module
    dotted = case.get("classname") or case.get("name") or ""
    parts = dotted.split(".")
    collected = None
    for k in range(len(parts), 0, -1):
        rel = "/".join(parts[:k]) + ".py"
        if (root / rel).is_file():
            collected = rel
            break
    if defined and collected and collected != defined and _runs_tests(collected):
        return collected
    return defined or collected


def _runs_tests(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith("_test.py")


def _test_qualname(case: ET.Element, rel: str) -> str:
    module = rel[:-3].replace("/", ".")
    cls = case.get("classname") or ""
    cls = cls[len(module):].lstrip(".") if cls.startswith(module) else ""
    name = (case.get("name") or "").split("[", 1)[0]
    return f"{cls}.{name}" if cls else name


def parse_junit(path: Path, root: Path) -> Outcome:
    out = Outcome()
    for case in ET.parse(path).getroot().iter("testcase"):
        out.ran += 1
        if case.find("failure") is None and case.find("error") is None:
            continue
        rel = _test_file(case, root)
        if rel is None:
            continue
        out.files.add(rel)
        out.tests.add((rel, _test_qualname(case, rel)))
    return out


def mutation_runs(base: Path, work: Path, project: Project, sample: list[Target],
                  timeout: float, jobs: int) -> dict[Target, Outcome]:
    """Each worker mutates its own copy of the tree, one function at a time."""
    copies = []
    for i in range(jobs):
        dest = work / f"mut{i}" / base.name
        shutil.copytree(base, dest)
        copies.append(dest)
    chunks = [sample[i::jobs] for i in range(jobs)]

    def work_on(i: int) -> dict:
        root, res = copies[i], {}
        for t in chunks[i]:
            path = root / t.path
            original = path.read_text(encoding="utf-8")
            path.write_text(mutate(original, t), encoding="utf-8")
            try:
                res[t] = run_suite(root, project, timeout)
            finally:
                path.write_text(original, encoding="utf-8")
        return res

    with ThreadPoolExecutor(jobs) as pool:
        results = {}
        for part in pool.map(work_on, range(jobs)):
            results.update(part)
    return results


# --- baselines ---------------------------------------------------------------
def module_map(root: Path, project: Project) -> dict[str, str]:
    """dotted module name -> file, for the package (under src/) and the tests."""
    out = {}
    src_roots = {root / Path(p).parent for p in project.packages}
    for pkg in project.packages:
        for path in (root / pkg).rglob("*.py"):
            for sr in src_roots:
                if path.is_relative_to(sr):
                    out[_dotted(path.relative_to(sr))] = path.relative_to(root).as_posix()
    for path in (root / project.tests).rglob("*.py"):
        rel = path.relative_to(root)
        out[_dotted(rel)] = rel.as_posix()                       # tests.x (rootdir on path)
        out[_dotted(path.relative_to(root / project.tests))] = rel.as_posix()   # x (rootdir-less)
    return out


def _dotted(rel: Path) -> str:
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports_of(rel: str, text: str, modules: dict[str, str]) -> set[str]:
    """Files one file imports: every package on the way and the module itself (none for
    a file that does not parse: parso's test data holds Python with errors on purpose)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set()
    # the file's own dotted name (src/click/core.py is click.core), for relative imports
    own = max((m for m, f in modules.items() if f == rel), key=len, default=rel[:-3]).split(".")
    pkg = own if rel.endswith("__init__.py") else own[:-1]
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[:len(pkg) - (node.level - 1)] if node.level - 1 <= len(pkg) else []
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names.append(base)
            names += [f"{base}.{a.name}" for a in node.names if a.name != "*"]
    out = set()
    for name in names:
        parts = name.split(".")
        for k in range(1, len(parts) + 1):
            hit = modules.get(".".join(parts[:k]))
            if hit:
                out.add(hit)
    return out


def import_closure(root: Path, project: Project, tests: list[str]) -> dict[str, set[str]]:
    """test file -> every package file it imports transitively (its conftests' imports too)."""
    modules = module_map(root, project)
    files = set(modules.values())
    direct = {f: _imports_of(f, (root / f).read_text(encoding="utf-8", errors="replace"), modules)
              for f in files}
    conftests = sorted(p.relative_to(root).as_posix() for p in root.rglob("conftest.py")
                       if "src" not in p.relative_to(root).parts)
    for c in conftests:
        direct.setdefault(c, _imports_of(c, (root / c).read_text(encoding="utf-8"), modules))
    out = {}
    for t in tests:
        seen, todo = set(), [t] + [c for c in conftests if _applies(c, t)]
        while todo:
            f = todo.pop()
            if f in seen:
                continue
            seen.add(f)
            todo += direct.get(f, ())
        out[t] = seen
    return out


def _applies(conftest: str, test: str) -> bool:
    """A conftest's fixtures (and its imports) reach every test below its folder."""
    folder = Path(conftest).parent
    return folder == Path(".") or Path(test).is_relative_to(folder)


def module_word(path: str) -> str:
    p = Path(path)
    name = p.parent.name if p.stem == "__init__" else p.stem
    return name.strip("_")


def name_mentions(path: str, tests: list[str]) -> set[str]:
    word = module_word(path)
    return {t for t in tests if word and word in Path(t).stem.removeprefix("test_")}


# --- indexd ------------------------------------------------------------------
def index_project(root: Path, home: Path) -> dict:
    env = indexd_env(home)
    subprocess.run([str(BIN / "indexctl"), "realm", "add", "bench", str(root), "--json"],
                   env=env, check=True, capture_output=True)
    proc = subprocess.run([str(BIN / "indexd"), "index", "--json"], env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def indexd_env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INDEXD_")}
    return env | {"INDEXD_HOME": str(home), "INDEXD_EMBED_MODEL": "hash"}


class Impact:
    """impact answered in-process from the store, as `indexctl impact` does offline."""

    def __init__(self, home: Path):
        from indexd.config import load_settings
        from indexd.server.methods import Methods
        from indexd.store import Store

        settings = load_settings(env=indexd_env(home))
        self.store = Store(settings.paths.store_dir)
        self.methods = Methods(lambda: settings, self.store)

    def tests(self, root: Path, t: Target) -> tuple[set[str], set[tuple[str, str]], str]:
        res = self.methods.call_sync("impact", {"target": f"{root / t.path}::{t.qualname}",
                                                "limit": 10000})
        files = {i["path"] for i in res["tests"]}
        funcs = {(i["path"], i["symbol"]) for i in res["tests"] if i.get("symbol")}
        return files, funcs, res.get("tests_from", "")

    def affected(self, root: Path, t: Target) -> tuple[set[str], bool, list[str]]:
        """`indexctl tests affected TARGET`: the test files, whether it calls them safe, and
        the files in its order (the order a user runs them in)."""
        res = self.methods.call_sync("tests.affected", {
            "targets": [f"{root / t.path}::{t.qualname}"], "limit": 10000})
        order = [_rel_test(i) for i in res["tests"]]
        return set(order), bool(res.get("safe")), order


def _rel_test(item) -> str:
    return item["path"] if isinstance(item, dict) else str(item)


def record_coverage(root: Path, project: Project, data: Path, timeout: float) -> None:
    rc = data.with_suffix(".rc")
    sources = ",".join(str(root / p) for p in project.packages)
    rc.write_text(f"[run]\ndata_file = {data}\ndynamic_context = test_function\n"
                  f"source = {sources}\n")
    junit = data.with_suffix(".xml")
    cmd = [sys.executable, "-m", "coverage", "run", f"--rcfile={rc}",
           *pytest_cmd(project, junit)]
    subprocess.run(cmd, cwd=root, env=suite_env(root), capture_output=True, timeout=timeout)


def ingest(home: Path, data: Path) -> dict:
    proc = subprocess.run([str(BIN / "indexctl"), "tests", "ingest", str(data), "--json"],
                          env=indexd_env(home), capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def has_tests_affected(home: Path) -> bool:
    proc = subprocess.run([str(BIN / "indexctl"), "tests", "--help"], env=indexd_env(home),
                          capture_output=True, text=True)
    return "affected" in proc.stdout


# --- scoring -----------------------------------------------------------------
def score(cases: list[tuple[set[str], set[str]]], all_tests: list[str]) -> dict:
    """cases: (failing files, selected files) per mutated function."""
    universe = set(all_tests)
    failing = [(f, s) for f, s in cases if f]
    pairs = sum(len(f) for f, _ in failing)
    hit = sum(len(f & s) for f, s in failing)
    full = sum(1 for f, s in failing if f <= s)
    ratios = [len(s & universe) / len(universe) for _, s in cases]
    return {"recall": hit / pairs if pairs else 1.0, "pairs": pairs,
            "full": full / len(failing) if failing else 1.0,
            "selection": sum(ratios) / len(ratios) if ratios else 0.0}


def safe_rate(claims: dict | None, runs: dict, sel: dict) -> str:
    """Of the functions it called safe, how many had every failing file selected."""
    if claims is None:
        return "-"
    said = [t for t, safe in claims.items() if safe]
    right = sum(1 for t in said if runs[t].files <= sel[t])
    return f"{right}/{len(said)} right"


def ranking(cases: list[tuple[set[str], list[str]]]) -> dict:
    """How early a ranked selection puts the failing files, over the mutants with a failing
    file selected (a mutant that breaks the suite's start fails every file, in any order:
    the caller leaves those out), each as a mean next to what a random order of the same
    files gives: APFD (1 - mean failing position / n + 1 / 2n; random 0.5), the passing
    files run before the first failure (a fail-fast run; random (n - k) / (k + 1)) and the
    share of the selection run until every failing file has run (random k(n + 1) / (k + 1)n)."""
    apfd, first, first_random, last, last_random = [], [], [], [], []
    for failing, order in cases:
        n = len(order)
        at = [i for i, f in enumerate(order, 1) if f in failing]
        if not at:
            continue
        k = len(at)
        apfd.append(1 - sum(at) / (n * k) + 1 / (2 * n))
        first.append(at[0] - 1)
        first_random.append((n - k) / (k + 1))
        last.append(at[-1] / n)
        last_random.append(k * (n + 1) / ((k + 1) * n))
    mean = statistics.fmean
    return {"n": len(apfd)} | ({"apfd": mean(apfd), "first": mean(first),
                                "first_random": mean(first_random), "last": mean(last),
                                "last_random": mean(last_random)} if apfd else {})


def func_recall(cases: list[tuple[set, set]]) -> str:
    pairs = sum(len(f) for f, _ in cases)
    hit = sum(len(f & s) for f, s in cases)
    return f"{hit / pairs:.3f}" if pairs else "-"


# --- one project -------------------------------------------------------------
def bench_project(project: Project, n: int, seed: int, jobs: int, verbose: bool,
                  reuse: bool = False) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix=f"ivt-{project.name}-"))
    try:
        return _bench_project(project, n, seed, jobs, verbose, tmp, reuse)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _outcome_json(o: Outcome) -> dict:
    return {"files": sorted(o.files), "tests": sorted(o.tests), "ran": o.ran,
            "timeout": o.timeout, "startup": o.startup, "seconds": o.seconds}


def _outcome(d: dict) -> Outcome:
    return Outcome(set(d["files"]), {tuple(t) for t in d["tests"]}, d["ran"], d["timeout"],
                   d["startup"], d["seconds"])


def save_runs(path: Path, clean: Outcome, runs: dict) -> None:
    """The suite's outcomes (they depend on the sdist and the sample, not on indexd)."""
    path.write_text(json.dumps({"clean": _outcome_json(clean), "runs": {
        f"{t.path}::{t.qualname}": _outcome_json(o) for t, o in runs.items()}}))


def load_runs(path: Path, sample: list[Target]) -> tuple[Outcome, dict]:
    data = json.loads(path.read_text())
    return _outcome(data["clean"]), {t: _outcome(data["runs"][f"{t.path}::{t.qualname}"])
                                     for t in sample}


def _bench_project(project, n, seed, jobs, verbose, tmp: Path, reuse: bool) -> dict:
    t_start = time.perf_counter()
    base = unpack(fetch(project), tmp / "base")
    all_tests = test_files(base, project)
    pool = targets(base, project)
    sample = random.Random(seed).sample(pool, min(n, len(pool)))
    sample.sort(key=lambda t: (t.path, t.qualname))

    cached = CACHE / f"runs-{project.name}-{project.version}-seed{seed}-n{len(sample)}.json"
    if reuse and cached.is_file():
        clean, runs = load_runs(cached, sample)
        timeout = max(60.0, 5 * clean.seconds + 30)
        log(f"{project.name}: mutant outcomes reused from {cached.name}")
    else:
        clean = run_suite(base, project, timeout=600)
        timeout = max(60.0, 5 * clean.seconds + 30)
        log(f"{project.name}: {len(pool)} functions, {len(sample)} sampled, {len(all_tests)} "
            f"test files, clean run {clean.seconds:.1f}s ({len(clean.tests)} failing already)")
        runs = mutation_runs(base, tmp, project, sample, timeout, jobs)
        save_runs(cached, clean, runs)
    for out in runs.values():      # failures of the unmutated suite are not the mutant's
        out.tests -= clean.tests
        # a suite that cannot start fails every test file; which functions is unknown
        out.files = set(all_tests) if out.startup else {f for f, _ in out.tests}
    log(f"{project.name}: mutants done in {time.perf_counter() - t_start:.0f}s")

    home = tmp / "home"
    index_project(base, home)
    static = Impact(home)
    static_sel = {t: static.tests(base, t) for t in sample}
    affected = has_tests_affected(home)
    aff_static = {t: static.affected(base, t) for t in sample} if affected else {}

    data = tmp / "cov.data"
    record_coverage(base, project, data, timeout=max(600.0, 10 * clean.seconds))
    report = ingest(home, data)
    covered = Impact(home)
    cov_sel = {t: covered.tests(base, t) for t in sample}
    aff_cov = {t: covered.affected(base, t) for t in sample} if affected else {}

    closure = import_closure(base, project, all_tests)
    by_import = {t: {f for f, deps in closure.items() if t.path in deps} for t in sample}
    by_name = {t: name_mentions(t.path, all_tests) for t in sample}

    ok = [t for t in sample if not runs[t].timeout]
    methods = {"indexd static": {t: static_sel[t][0] for t in ok},
               "indexd + coverage": {t: cov_sel[t][0] for t in ok},
               "imports (transitive)": {t: by_import[t] for t in ok},
               "file name mentions module": {t: by_name[t] for t in ok},
               # the least any selection with full recall can pick
               "failing files (oracle)": {t: runs[t].files for t in ok}}
    claims = {}
    if affected:
        methods["tests affected, static"] = {t: aff_static[t][0] for t in ok}
        methods["tests affected + coverage"] = {t: aff_cov[t][0] for t in ok}
        claims = {"tests affected, static": {t: aff_static[t][1] for t in ok},
                  "tests affected + coverage": {t: aff_cov[t][1] for t in ok}}
    ranks = {label: ranking([(runs[t].files, aff[t][2]) for t in ok if not runs[t].startup])
             for label, aff in (("tests affected, static", aff_static),
                                ("tests affected + coverage", aff_cov)) if aff}
    rows = []
    for label, sel in methods.items():
        s = score([(runs[t].files, sel[t]) for t in ok], all_tests)
        fr = "-"
        if label.startswith("indexd"):
            funcs = static_sel if label == "indexd static" else cov_sel
            fr = func_recall([(runs[t].tests, funcs[t][1]) for t in ok])
        rows.append((label, f"{s['recall']:.3f}", f"{s['full']:.3f}", fr,
                     f"{100 * s['selection']:.1f}%", safe_rate(claims.get(label), runs, sel)))
    misses = {label: [(t, f) for t in ok for f in sorted(runs[t].files - sel[t])]
              for label, sel in methods.items()
              if not label.startswith(("imports", "file", "failing"))}
    if verbose:
        for label, items in misses.items():
            for t, f in items:
                print(f"missed [{label}]: {t.path}::{t.qualname} -> {f}")
    return {"project": project, "sample": sample, "runs": runs, "rows": rows,
            "failing": sum(1 for t in ok if runs[t].files),
            "timeouts": len(sample) - len(ok), "tests": len(all_tests),
            "startup": sum(1 for t in ok if runs[t].startup),
            "clean_failing": len(clean.tests), "clean_s": clean.seconds,
            "ingest": report, "affected": affected, "misses": misses, "ranks": ranks,
            "seconds": time.perf_counter() - t_start}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def render(results: list[dict], seed: int, jobs: int) -> str:
    parts = []
    for r in results:
        p = r["project"]
        parts.append(
            f"{p.name} {p.version}: {len(r['sample'])} mutated functions, {r['failing']} with "
            f">=1 failing test ({r['startup']} of them break conftest's import, so every test "
            f"file counts as failing), {r['timeouts']} timed out; {r['tests']} test files; "
            f"{r['clean_failing']} tests fail unmutated (left out); coverage ingest "
            f"{r['ingest'].get('tests', '?')} tests, {r['ingest'].get('edges', '?')} edges; "
            f"{r['seconds']:.0f}s")
        parts.append(format_table(r["rows"], (
            "selection", "file recall (micro)", "functions fully covered",
            "test-function recall", "selected test files", "said safe")))
        n_miss = {k: len(v) for k, v in r["misses"].items()}
        parts.append("missed (function, failing file) pairs: "
                     + ", ".join(f"{k} {v}" for k, v in n_miss.items()))
        for label, rk in r.get("ranks", {}).items():
            if rk["n"]:
                parts.append(
                    f"order of {label}, {rk['n']} mutants with a failing file selected "
                    f"(whose suite starts): mean APFD {rk['apfd']:.2f} (random order 0.50); "
                    f"passing files run before the first failure {rk['first']:.1f} (random "
                    f"{rk['first_random']:.1f}); share of the selection run until every failing "
                    f"file has {rk['last']:.0%} (random {rk['last_random']:.0%})")
        if not r["affected"]:
            parts.append("`indexctl tests affected`: not available in this build (no safe rate)")
        parts.append("")
    parts.append(f"seed {seed}, jobs {jobs}, python {sys.version.split()[0]}, "
                 f"nproc {os.cpu_count()}, date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    return "\n".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--quick", action="store_true", help="10 functions of click")
    ap.add_argument("--projects", default=",".join(PROJECTS))
    ap.add_argument("--mutations", type=int, default=None, help="functions per project")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--jobs", type=int, default=1, help="suites run at once")
    ap.add_argument("--verbose", action="store_true", help="list missed pairs")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--reuse-runs", action="store_true",
                    help="reuse the mutants' suite outcomes saved by an earlier run (they do not "
                         "depend on indexd); only indexing, coverage and impact run again")
    args = ap.parse_args()
    names = ["click"] if args.quick else args.projects.split(",")
    results = []
    for name in names:
        project = PROJECTS[name]
        n = 10 if args.quick else (args.mutations or project.mutations)
        results.append(bench_project(project, n, args.seed, args.jobs, args.verbose,
                                     args.reuse_runs))
    table = render(results, args.seed, args.jobs)
    print(table)
    if not args.no_write and not args.quick:
        body = ("Generated by `bench/impact_vs_tests.py`.\n\n```text\n" + table + "\n```")
        replace_region(DOC, "impact_vs_tests", body, DOC_INTRO)


if __name__ == "__main__":
    main()
