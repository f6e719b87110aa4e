"""Import-graph quality of indexd's Graph on the Python stdlib, against ``ast`` and grimp.

Copies every stdlib ``*.py`` (site-packages excluded) into a temporary
folder, parses every file in-process with ``indexd.parse.parse_source``
(multiprocessing pool), builds ``indexd.graph.Graph`` and, for every module,
compares its direct importers (``impact(depth=1, kinds=["imports"])``) with a
ground truth built with Python's ``ast`` (``import a.b`` -> the longest
existing prefix module; ``from m import x`` -> m.x when that is a module,
else m; relative imports resolved from the importer's package). Files ``ast``
cannot parse are left out of both sides.

Then, on the stdlib packages grimp can build, grimp's build time vs
``Graph.build`` time (on facts already parsed), per-query answer time and
the agreement of direct importers within each package.

Prints a table and writes it between ``<!-- impact_quality:start -->`` and
``<!-- impact_quality:end -->`` in docs/benchmarks.md.

    .venv/bin/python bench/impact_quality.py [--processes N] [--no-grimp] [--no-write]
"""

from __future__ import annotations

import argparse
import ast
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from agreement import DOC_INTRO, format_table, replace_region, stdlib_files, stdlib_root  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
REALM = "std"
GRIMP_PACKAGES = ("email", "json", "http", "xml", "asyncio", "concurrent", "importlib",
                  "urllib", "logging", "unittest")


# --- ground truth ------------------------------------------------------------
def _module_file(files: set[str], parts: list[str]) -> str | None:
    base = "/".join(parts)
    for suffix in (".py", "/__init__.py"):
        if base + suffix in files:
            return base + suffix
    return None


def ast_imports(rel: str, text: str, files: set[str]) -> set[str]:
    """Files (in ``files``) that one module imports, per Python's rules."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(text)
    pkg = rel.split("/")[:-1]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                for n in range(len(parts), 0, -1):
                    hit = _module_file(files, parts[:n])
                    if hit:
                        out.add(hit)
                        break
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if node.level - 1 > len(pkg):
                    continue
                base = pkg[:len(pkg) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            else:
                base = node.module.split(".")
            for alias in node.names:
                hit = None
                if alias.name != "*":
                    hit = _module_file(files, base + [alias.name])
                hit = hit or _module_file(files, base)
                if hit:
                    out.add(hit)
    out.discard(rel)
    return out


def ast_truth(texts: dict[str, str]) -> tuple[dict[str, set[str]], set[str]]:
    """importer -> imported files, and the files ``ast`` could not parse."""
    bad = set()
    for rel, text in texts.items():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(text)
        except (SyntaxError, ValueError):
            bad.add(rel)
    files = set(texts) - bad
    return {rel: ast_imports(rel, texts[rel], files) for rel in sorted(files)}, bad


def importers_of(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    rev: dict[str, set[str]] = {}
    for src, dsts in edges.items():
        for d in dsts:
            rev.setdefault(d, set()).add(src)
    return rev


# --- indexd ------------------------------------------------------------------
def _parse_one(args):
    from indexd.graph import facts_from_parse
    from indexd.parse import parse_source

    repo, rel, text = args
    result = parse_source(rel, text, "python")
    return facts_from_parse(REALM, repo, rel, "python", result,
                            "failed" if result.error else "indexed")


def parse_all(repo: str, texts: dict[str, str], processes: int) -> list:
    jobs = [(repo, rel, text) for rel, text in sorted(texts.items())]
    if processes <= 1:
        return [_parse_one(j) for j in jobs]
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        return pool.map(_parse_one, jobs, chunksize=16)


def graph_importers(graph, modules, repo_label: str) -> tuple[dict[str, set[str]], list[float]]:
    out, times = {}, []
    for m in modules:
        t0 = time.perf_counter()
        res = graph.impact(f"{repo_label}/{m}", depth=1, kinds=["imports"], limit=None)
        times.append((time.perf_counter() - t0) * 1000)
        out[m] = {i["path"] for b in ("affected", "tests", "docs") for i in res[b]}
    return out, times


def score(truth: dict[str, set[str]], mine: dict[str, set[str]]) -> dict:
    tp = sum(len(truth.get(m, set()) & mine.get(m, set())) for m in mine)
    n_truth = sum(len(truth.get(m, set())) for m in mine)
    n_mine = sum(len(v) for v in mine.values())
    misses = [(m, x) for m in mine for x in sorted(truth.get(m, set()) - mine[m])]
    extras = [(m, x) for m in mine for x in sorted(mine[m] - truth.get(m, set()))]
    return {"tp": tp, "truth": n_truth, "mine": n_mine,
            "recall": tp / n_truth if n_truth else 1.0,
            "precision": tp / n_mine if n_mine else 1.0, "misses": misses, "extras": extras}


# --- grimp -------------------------------------------------------------------
def grimp_rows(corpus: Path, facts: list, graph_cls) -> list[tuple]:
    import grimp

    sys.path.insert(0, str(corpus))
    rows = []
    try:
        for pkg in GRIMP_PACKAGES:
            rows.append(_grimp_package(grimp, corpus, pkg, facts, graph_cls))
    finally:
        sys.path.remove(str(corpus))
    return [r for r in rows if r]


def _grimp_package(grimp, corpus, pkg, facts, graph_cls):
    t0 = time.perf_counter()
    try:
        g = grimp.build_graph(pkg, cache_dir=None)
    except Exception as exc:  # noqa: BLE001 - report, keep going
        print(f"grimp could not build {pkg}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return None
    grimp_s = time.perf_counter() - t0
    sub = [f for f in facts if f.path.startswith(pkg + "/") or f.path == pkg + ".py"]
    t0 = time.perf_counter()
    mine = graph_cls().build(sub)
    build_s = time.perf_counter() - t0
    mods = sorted(g.modules)
    path_of = {m: _mod_path(corpus, m) for m in mods}
    agree = total = 0
    g_times, m_times = [], []
    for m in mods:
        t0 = time.perf_counter()
        gi = {path_of[x] for x in g.find_modules_that_directly_import(m) if x in path_of}
        g_times.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        res = mine.impact(f"{corpus.name}/{path_of[m]}", depth=1, kinds=["imports"], limit=None)
        m_times.append((time.perf_counter() - t0) * 1000)
        mi = {i["path"] for b in ("affected", "tests", "docs") for i in res[b]}
        agree += len(gi & mi)
        total += len(gi | mi)
    return (pkg, len(mods), f"{grimp_s:.2f}s", f"{build_s:.2f}s",
            f"{statistics.median(g_times):.3f}", f"{statistics.median(m_times):.3f}",
            f"{100 * agree / total:.1f}%" if total else "-")


def _mod_path(corpus: Path, module: str) -> str:
    base = module.replace(".", "/")
    return f"{base}/__init__.py" if (corpus / base / "__init__.py").exists() else f"{base}.py"


# --- main --------------------------------------------------------------------
def copy_corpus(dest: Path) -> dict[str, str]:
    src = stdlib_root()
    texts = {}
    for path in stdlib_files(src):
        rel = path.relative_to(src).as_posix()
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        try:
            texts[rel] = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
    return texts


def run(processes: int, use_grimp: bool, verbose: bool) -> str:
    from indexd.graph import Graph

    tmp = Path(tempfile.mkdtemp(prefix="impactq"))
    corpus = tmp / "stdlib"
    try:
        texts = copy_corpus(corpus)
        truth_edges, bad = ast_truth(texts)
        usable = {r: t for r, t in texts.items() if r not in bad}
        t0 = time.perf_counter()
        facts = parse_all(corpus.as_posix(), usable, processes)
        parse_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        graph = Graph().build(facts)
        build_s = time.perf_counter() - t0
        truth = importers_of(truth_edges)
        mine, times = graph_importers(graph, sorted(usable), corpus.name)
        s = score(truth, mine)
        if verbose:
            for label, items in (("missed", s["misses"]), ("extra", s["extras"])):
                for m, x in items[:40]:
                    print(f"{label}: {x} -> {m}")
        rows = [("modules (ast-parsable stdlib files)", f"{len(usable)}"),
                ("files ast cannot parse (left out)", f"{len(bad)}"),
                ("ground-truth import edges", f"{s['truth']}"),
                ("indexd import edges", f"{s['mine']}"),
                ("recall (direct importers)", f"{100 * s['recall']:.2f}%"),
                ("precision (direct importers)", f"{100 * s['precision']:.2f}%"),
                (f"parse, {processes} processes", f"{parse_s:.1f}s"),
                ("Graph.build (all edge kinds)", f"{build_s:.1f}s"),
                ("impact(depth=1) median / p95", f"{statistics.median(times):.2f} / "
                 f"{sorted(times)[int(0.95 * len(times))]:.2f} ms")]
        out = format_table(rows, ("stdlib, ast ground truth", "value"))
        if use_grimp:
            grows = grimp_rows(corpus, facts, Graph)
            out += "\n\n" + format_table(grows, (
                "package", "modules", "grimp build", "Graph.build", "grimp query ms",
                "impact ms", "importer agreement"))
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--no-grimp", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    table = run(args.processes, not args.no_grimp, args.verbose)
    print(table)
    if not args.no_write:
        body = ("Import graph vs `ast` ground truth on the whole stdlib, and vs grimp on the "
                "packages it builds (`bench/impact_quality.py`; agreement = shared direct "
                "importers / union).\n\n```\n" + table + "\n```")
        replace_region(DOC, "impact_quality", "## Impact quality\n\n" + body, DOC_INTRO)


if __name__ == "__main__":
    main()
