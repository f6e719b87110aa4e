"""Cold / warm / one-edit indexing of the Python stdlib, against ctags and ``ast``.

Copies every ``*.py`` of the running interpreter's stdlib (``site-packages``
excluded, directory structure kept) into a temporary folder (or ``--corpus
DIR``), then measures, in one run:

* indexd cold index: a fresh ``INDEXD_HOME`` and realm over the copy, timed
  around the ``indexd index --json`` subprocess; ``--runs`` times, median;
* indexd warm re-run (nothing changed; must parse 0 files), and once more
  without the stat sidecar (the store path);
* indexd after editing one function body in a large file (must parse 1);
* ``ctags -R --languages=Python`` over the copy (median of as many runs);
* a Python ``ast`` baseline: parse every file and walk its definitions.

Prints an aligned table, writes it between ``<!-- index_cold:start -->`` and
``<!-- index_cold:end -->`` in docs/benchmarks.md and, when matplotlib
imports, draws docs/bench_index_cold.png.

    .venv/bin/python bench/index_cold.py [--runs 3] [--corpus DIR] [--verbose]
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from agreement import DOC_INTRO, format_table, read_text, replace_region, stdlib_files, stdlib_root  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
PLOT = ROOT / "docs" / "bench_index_cold.png"
REALM = "std"
EDIT_CANDIDATES = ("argparse.py", "typing.py")


# --- corpus ---------------------------------------------------------------
def copy_stdlib(dest: Path) -> tuple[int, int]:
    """Copy the stdlib's *.py files into dest, keeping relative paths."""
    src = stdlib_root()
    count = size = 0
    for path in stdlib_files(src):
        target = dest / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        count += 1
        size += target.stat().st_size
    return count, size


# --- indexd via its command line --------------------------------------------
def _tool(name: str) -> list[str]:
    script = Path(sys.executable).parent / name
    if script.exists():
        return [str(script)]
    module = {"indexd": "indexd.cli.indexd_main", "indexctl": "indexd.cli.indexctl"}[name]
    return [sys.executable, "-c", f"import sys; from {module} import main; sys.exit(main())"]


def _env(home: Path) -> dict:
    env = dict(os.environ)
    env["INDEXD_HOME"] = str(home)
    return env


def add_realm(home: Path, corpus: Path) -> None:
    subprocess.run(_tool("indexctl") + ["realm", "add", REALM, str(corpus)], env=_env(home),
                   check=True, stdout=subprocess.DEVNULL)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_index(home: Path) -> dict:
    """Time one ``indexd index --json``; returns the done event plus ``wall`` and
    ``cpu`` (user + system of indexd and its parse workers, all reaped)."""
    cpu = _children_cpu()
    started = time.perf_counter()
    # Structure and keywords only, as ctags: embedding is measured on its own.
    proc = subprocess.run(_tool("indexd") + ["index", "--json", "--no-embed"], env=_env(home),
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    cpu = _children_cpu() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"indexd index failed (rc={proc.returncode}):\n"
                         f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    done = None
    for line in proc.stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and event.get("event") == "done":
            done = event
    if done is None:
        raise SystemExit(f"indexd index printed no done event:\n{proc.stdout[-2000:]}")
    return done | {"wall": wall, "cpu": cpu}


def warm_without_sidecar(home: Path) -> dict:
    """A warm run that plans from the store, as after a daemon wrote it."""
    from indexd.config import load_settings
    from indexd.stat_sidecar import SIDECAR

    settings = load_settings(env={"INDEXD_HOME": str(home)})
    (settings.paths.store_dir / SIDECAR).unlink(missing_ok=True)
    return run_index(home)


def problem_files(home: Path) -> tuple[list, list]:
    """(failed, skipped) as (path, reason) from the store of one run."""
    from indexd.config import load_settings
    from indexd.store import Store

    settings = load_settings(env={"INDEXD_HOME": str(home)})
    records = Store(settings.paths.store_dir).file_records(realm=REALM)
    failed = sorted((r.path, r.reason) for r in records.values() if r.status == "failed")
    skipped = sorted((r.path, r.reason) for r in records.values() if r.status == "skipped")
    return failed, skipped


def edit_one_function(corpus: Path) -> tuple[str, str]:
    """Add a statement to the body of the longest function in a large file."""
    for name in EDIT_CANDIDATES:
        path = corpus / name
        if path.is_file():
            break
    else:
        path = max(corpus.rglob("*.py"), key=lambda p: p.stat().st_size)
    text = path.read_text(encoding="utf-8")
    funcs = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef)]
    func = max(funcs, key=lambda n: n.end_lineno - n.lineno)
    last = func.body[-1]
    lines = text.splitlines(keepends=True)
    indent = " " * last.col_offset
    lines.insert(last.end_lineno, f"{indent}_index_cold_edit = {time.time_ns()}  # bench edit\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path.relative_to(corpus).as_posix(), func.name


# --- baselines --------------------------------------------------------------
def run_ctags(corpus: Path, out: Path) -> tuple[float, int, float] | None:
    ctags = shutil.which("ctags")
    if ctags is None:
        return None
    out.unlink(missing_ok=True)
    cmd = [ctags, "-R", "--languages=Python", "--fields=+n", "--output-format=json",
           "-f", str(out), str(corpus)]
    cpu = _children_cpu()
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    cpu = _children_cpu() - cpu
    if proc.returncode != 0:
        print(f"ctags failed: {proc.stderr.strip()[:500]}", file=sys.stderr)
        return None
    tags = 0
    with open(out, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            tags += '"_type": "tag"' in line
    return wall, tags, cpu


def ctags_version() -> str:
    try:
        out = subprocess.run(["ctags", "--version"], capture_output=True, text=True).stdout
        return out.splitlines()[0].split(",")[0]
    except (OSError, IndexError):
        return "not installed"


def run_ast(corpus: Path) -> tuple[float, int, int]:
    """Parse every file with ``ast`` and count definitions: (seconds, defs, failures)."""
    started = time.perf_counter()
    defs = failures = 0
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in sorted(corpus.rglob("*.py")):
            text = read_text(path)
            if text is None:
                failures += 1
                continue
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError):
                failures += 1
                continue
            defs += sum(isinstance(n, kinds) for n in ast.walk(tree))
    return time.perf_counter() - started, defs, failures


# --- report -----------------------------------------------------------------
def _rate(n, seconds) -> str:
    return f"{n / seconds:,.0f}" if seconds else "-"


def _s(x: float) -> str:
    return f"{x:.2f}"


def build_table(r: dict) -> str:
    cold = r["cold"]
    header = ("step", "wall s", "index s", "files", "parsed", "entries", "files/s",
              "entries/s", "notes")
    rows = [
        ("indexd cold (median)", _s(cold["wall"]), _s(cold["seconds"]), cold["files"],
         cold["parsed"], f"{cold['entries']:,}", _rate(cold["files"], cold["wall"]),
         _rate(cold["entries"], cold["wall"]),
         f"{cold['failed']} parse failures; runs {', '.join(_s(w) for w in r['cold_walls'])} s; "
         f"cpu {_s(cold['cpu'])} s"),
        ("indexd warm re-run", _s(r["warm"]["wall"]), _s(r["warm"]["seconds"]),
         r["warm"]["files"], r["warm"]["parsed"], f"{r['warm']['entries']:,}", "-", "-",
         ("OK: parsed 0" if r["warm"]["parsed"] == 0 else "FAIL: expected parsed 0")
         + f"; median of {len(r['warm_walls'])}: {', '.join(_s(w) for w in r['warm_walls'])} s"
         + f"; cpu {_s(r['warm']['cpu'])} s"
         + ("; store not opened (stat sidecar)" if r["warm"].get("stat_cache") == "sidecar"
            else "")),
        ("indexd warm, no sidecar", _s(r["warm_store"]["wall"]), _s(r["warm_store"]["seconds"]),
         r["warm_store"]["files"], r["warm_store"]["parsed"], f"{r['warm_store']['entries']:,}",
         "-", "-", f"the store path (stat_cache.json removed first); cpu "
         f"{_s(r['warm_store']['cpu'])} s"),
        ("indexd one-function edit", _s(r["edit"]["wall"]), _s(r["edit"]["seconds"]),
         r["edit"]["files"], r["edit"]["parsed"], f"{r['edit']['entries']:,}", "-", "-",
         ("OK: parsed 1" if r["edit"]["parsed"] == 1 else "FAIL: expected parsed 1")
         + f" ({r['edit_file']}:{r['edit_func']})"),
    ]
    if r.get("ctags"):
        c = r["ctags"]
        rows.append(("ctags -R (median)", _s(c["wall"]), "-", r["corpus_files"], "-",
                     f"{c['tags']:,}", _rate(r["corpus_files"], c["wall"]),
                     _rate(c["tags"], c["wall"]),
                     f"tags; runs {', '.join(_s(w) for w in c['walls'])} s; cpu {_s(c['cpu'])} s"))
    else:
        rows.append(("ctags -R", "-", "-", "-", "-", "-", "-", "-", "ctags not found"))
    a = r["ast"]
    rows.append(("python ast (median)", _s(a["wall"]), "-", r["corpus_files"],
                 r["corpus_files"] - a["failures"], f"{a['defs']:,}",
                 _rate(r["corpus_files"], a["wall"]), _rate(a["defs"], a["wall"]),
                 f"1 process, defs only; {a['failures']} files unparsable"))
    if r.get("embed"):
        e = r["embed"]
        rows.append(("embed stage (sample)", _s(e["pipeline_s"]), "-", "-", "-", f"{e['entries']:,}",
                     "-", f"{e['pipeline_rate']:.1f}",
                     f"{e['model']}, batch {e['batch']}; cache, store writes included"))
        rows.append(("model encode-only, same texts", _s(e["encode_s"]), "-", "-", "-",
                     f"{e['entries']:,}", "-", f"{e['encode_rate']:.1f}",
                     f"pipeline reaches {100 * e['pipeline_rate'] / e['encode_rate']:.0f}% of it"))
    table = format_table(rows, header)
    ratios = [f"cold/warm {cold['wall'] / r['warm']['wall']:.1f}x",
              f"cold/one-edit {cold['wall'] / r['edit']['wall']:.1f}x"]
    if r.get("ctags"):
        ratios.append(f"cold/ctags {cold['wall'] / r['ctags']['wall']:.1f}x")
    ratios.append(f"cold/ast {cold['wall'] / a['wall']:.1f}x")
    out = table + "\n\nratios (wall): " + ", ".join(ratios)
    if r.get("ctags"):
        out += "\n" + goals(r)
    return out + "\n\n" + stage_table(r)


# Issue 13's targets, as ratios of wall time to ``ctags -R`` on the same copy.
GOALS = {"cold": (6.0, 10.0), "warm": (1.0, 2.0)}


def goals(r: dict) -> str:
    parts = []
    for name, (goal, bar) in GOALS.items():
        ratio = r[name]["wall"] / r["ctags"]["wall"]
        verdict = "meets the goal" if ratio <= goal else "within the bar" if ratio <= bar \
            else "over the bar"
        parts.append(f"{name}/ctags {ratio:.1f}x (goal <= {goal:g}x, bar {bar:g}x: {verdict})")
    # CPU seconds move less with the load of a shared machine than wall seconds.
    cpu = ", ".join(f"{name}/ctags {r[name]['cpu'] / r['ctags']['cpu']:.1f}x" for name in GOALS)
    return "targets (wall): " + "; ".join(parts) + f"\ntargets (cpu): {cpu}"


STAGE_WHERE = {"plan": "writer: list, stat, store scan", "read": "workers: read, hash, secrets",
               "tree_sitter": "workers: tree-sitter parse (C)",
               "query": "workers: tree-sitter query matches (C + objects)",
               "extract": "workers: entries, references (Python)",
               "rows": "workers: rows, search text, packing",
               "workers": "writer waiting for workers", "store": "writer: LanceDB commits",
               "fts": "writer: full-text index", "compact": "writer: compact, purge"}


def stage_table(r: dict) -> str:
    """The median cold run's stages (the done event's ``stages``), then the rest
    of its wall time (interpreter and imports, exit) and its whole CPU."""
    cold = r["cold"]
    stages = cold.get("stages") or {}
    rows, parent_wall = [], 0.0
    for name, s in stages.items():
        wall = s.get("wall_s")
        parent_wall += wall or 0.0
        rows.append((name, "-" if wall is None else _s(wall), _s(s["cpu_s"]),
                     STAGE_WHERE.get(name, "")))
    rows.append(("start-up + exit", _s(cold["wall"] - parent_wall), "-",
                 "interpreter, imports (lancedb), worker start, exit"))
    rows.append(("whole run", _s(cold["wall"]), _s(cold["cpu"]),
                 f"CPU: indexd and its workers; {os.cpu_count()} cores"))
    return ("stage breakdown, median cold run (wall: the writer process; cpu: summed "
            "over processes):\n" + format_table(rows, ("stage", "wall s", "cpu s", "where")))


def facts(r: dict) -> list[str]:
    return [
        f"date: {r['date']}",
        f"machine: {platform.machine()}, nproc {os.cpu_count()}, {platform.system()} "
        f"{platform.release()}",
        f"python: {platform.python_version()} ({sys.executable})",
        f"load average (1 min) at start/end: {r['load'][0]:.2f} / {r['load'][1]:.2f}",
        f"ctags: {ctags_version()}",
        f"corpus: {r['corpus_files']} files, {r['corpus_bytes'] / 1e6:.1f} MB "
        f"(stdlib {stdlib_root()}, *.py, site-packages excluded)",
        f"runs: {r['runs']} cold (fresh INDEXD_HOME each), median reported; "
        "wall = around the `indexd index --json` subprocess (includes start-up and "
        "store optimize), index s = the done event's `seconds`",
    ]


def write_doc(r: dict, table: str, plotted: str) -> None:
    body = ["Generated by `bench/index_cold.py`.", "", "```text", table, "", *facts(r), "```"]
    if plotted:
        body += ["", plotted]
    replace_region(DOC, "index_cold", "\n".join(body), DOC_INTRO)


def plot(r: dict) -> str:
    try:
        import matplotlib
    except ImportError:
        return ""
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = ["indexd cold", "indexd warm", "indexd one-edit"]
    values = [r["cold"]["wall"], r["warm"]["wall"], r["edit"]["wall"]]
    if r.get("ctags"):
        labels.append("ctags -R")
        values.append(r["ctags"]["wall"])
    labels.append("python ast")
    values.append(r["ast"]["wall"])
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 3.8), gridspec_kw={"width_ratios": [5, 4]})
    bars = ax.bar(labels, values, color=["#3b6ea5", "#6d9bc3", "#9cc0de", "#888", "#bbb"][:len(values)])
    ax.set_yscale("log")
    ax.set_ylabel("wall seconds (log)")
    ax.set_title(f"Indexing {r['corpus_files']} stdlib files (median of {r['runs']})")
    ax.tick_params(axis="x", labelsize=8)
    for bar, v in zip(bars, values):
        ax.annotate(f"{v:.2f}s", (bar.get_x() + bar.get_width() / 2, v),
                    ha="center", va="bottom", fontsize=8)
    plot_stages(ax2, r)
    fig.tight_layout()
    PLOT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(PLOT, dpi=120)
    plt.close(fig)
    return f"![index timings](bench_index_cold.png)"


def plot_stages(ax, r: dict) -> None:
    """Cold run stages: CPU seconds (all processes) beside the writer's wall seconds."""
    stages = r["cold"].get("stages") or {}
    names = list(stages)[::-1]
    cpu = [stages[n]["cpu_s"] for n in names]
    wall = [stages[n]["wall_s"] or 0.0 for n in names]
    ys = range(len(names))
    ax.barh([y + 0.2 for y in ys], cpu, height=0.4, color="#3b6ea5", label="cpu s (all processes)")
    ax.barh([y - 0.2 for y in ys], wall, height=0.4, color="#bbb", label="wall s (writer)")
    ax.set_yticks(list(ys), names, fontsize=8)
    ax.set_xlabel("seconds")
    ax.set_title("cold run by stage (median run)")
    ax.legend(fontsize=7, loc="lower right")


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


# --- main -------------------------------------------------------------------
def embed_stage(home: Path, sample: int) -> dict:
    """The embed stage on `sample` entries of the index vs the model's own encode speed.

    Pipeline: VectorStage.drain() (texts, cache look-ups, model, store writes)
    on a copy of the store; encode-only: the same texts straight to the model.
    """
    import os as _os

    _os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from indexd.config import load_settings
    from indexd.enrich.embedder import load_embedder
    from indexd.enrich.texts import embed_parts
    from indexd.enrich.vectors import VectorStage
    from indexd.store import Store

    settings = load_settings(env={"INDEXD_HOME": str(home)}, flags={"embed_model": "default"})
    store = Store(settings.paths.store_dir)
    embedder = load_embedder(settings)
    store.switch_model(embedder.model_id, embedder.dim)
    keep = {r["id"] for r in store.entries_where(None, ["id"], limit=sample)}
    # Only the sample waits for vectors: give every other row a placeholder.
    others = [r["id"] for r in store.entries_where(None, ["id", "content_hash"]) if r["id"] not in keep]
    zero = [0.0] * embedder.dim
    store.update_entries({i: {"vector": zero, "embed_hash": "placeholder"} for i in others})
    stage = VectorStage(store, embedder, recipe=settings.embed_recipe, batch=settings.embed_batch)
    t0 = time.perf_counter()
    done = stage.drain()
    pipeline_s = time.perf_counter() - t0
    texts = [t for r in store.entries_where(
        "embed_hash != 'placeholder'", ["id", "path", "lang", "kind", "name", "qualname", "signature",
                                        "doc", "summary", "body"])
             for t in embed_parts(r, settings.embed_recipe)]   # a pooled entry's texts, each
    t0 = time.perf_counter()
    step = 4 * settings.embed_batch   # what one VectorStage.step hands the model
    for start in range(0, len(texts), step):
        embedder.encode(texts[start:start + step])
    encode_s = time.perf_counter() - t0
    return {"entries": done, "pipeline_s": pipeline_s, "encode_s": encode_s,
            "pipeline_rate": done / pipeline_s, "encode_rate": len(texts) / encode_s,
            "model": embedder.model_id, "batch": settings.embed_batch}


def _median_run(results: list[dict]) -> dict:
    """The run whose wall time is the median (lower median for even counts)."""
    ordered = sorted(results, key=lambda d: d["wall"])
    return ordered[(len(ordered) - 1) // 2]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3, help="cold runs (median reported)")
    p.add_argument("--corpus", type=Path,
                   help="copy the stdlib here and keep it, one file edited (must be empty or absent)")
    p.add_argument("--verbose", action="store_true", help="list parse failures and skips")
    p.add_argument("--no-doc", action="store_true", help="do not touch docs/")
    p.add_argument("--embed-sample", type=int, default=1000,
                   help="entries for the embedding-stage measurement (0: skip)")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")

    work = Path(tempfile.mkdtemp(prefix="indexd-bench-"))
    try:
        if args.corpus:
            corpus = args.corpus.resolve()
            if corpus.exists() and any(corpus.iterdir()):
                p.error(f"--corpus {corpus} is not empty")
        else:
            corpus = work / "stdlib"
        corpus.mkdir(parents=True, exist_ok=True)
        n_files, n_bytes = copy_stdlib(corpus)
        print(f"corpus: {n_files} files, {n_bytes / 1e6:.1f} MB in {corpus}", flush=True)
        r: dict = {"corpus_files": n_files, "corpus_bytes": n_bytes, "runs": args.runs,
                   "date": dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
                   "load": [_load(), 0.0]}

        colds, ctags_runs, ast_runs, home = [], [], [], None
        for i in range(args.runs):
            home = work / f"home{i}"
            add_realm(home, corpus)
            done = run_index(home)
            colds.append(done)
            print(f"cold {i + 1}/{args.runs}: {done['wall']:.2f}s wall, {done['cpu']:.2f}s cpu, "
                  f"{done['files']} files, "
                  f"{done['parsed']} parsed, {done['entries']} entries, "
                  f"{done['failed']} failed", flush=True)
            ct = run_ctags(corpus, work / "tags.json")
            if ct:
                ctags_runs.append(ct)
                print(f"ctags {i + 1}/{args.runs}: {ct[0]:.2f}s, {ct[1]} tags", flush=True)
            ast_runs.append(run_ast(corpus))
            print(f"ast {i + 1}/{args.runs}: {ast_runs[-1][0]:.2f}s, {ast_runs[-1][1]} defs",
                  flush=True)
            if i < args.runs - 1:
                shutil.rmtree(home, ignore_errors=True)
        r["cold"] = _median_run(colds) | {"wall": statistics.median(d["wall"] for d in colds)}
        r["cold_walls"] = [d["wall"] for d in colds]
        if ctags_runs:
            r["ctags"] = {"wall": statistics.median(c[0] for c in ctags_runs),
                          "tags": ctags_runs[-1][1], "walls": [c[0] for c in ctags_runs],
                          "cpu": statistics.median(c[2] for c in ctags_runs)}
        r["ast"] = {"wall": statistics.median(a[0] for a in ast_runs),
                    "defs": ast_runs[-1][1], "failures": ast_runs[-1][2]}

        warms = [run_index(home) for _ in range(args.runs)]
        r["warm"] = _median_run(warms) | {"cpu": statistics.median(d["cpu"] for d in warms)}
        r["warm_walls"] = [d["wall"] for d in warms]
        print(f"warm: {', '.join(f'{w:.2f}' for w in r['warm_walls'])}s, parsed "
              f"{max(d['parsed'] for d in warms)}", flush=True)
        r["warm_store"] = warm_without_sidecar(home)
        print(f"warm, no sidecar: {r['warm_store']['wall']:.2f}s", flush=True)
        r["edit_file"], r["edit_func"] = edit_one_function(corpus)
        r["edit"] = run_index(home)
        print(f"one edit ({r['edit_file']}:{r['edit_func']}): {r['edit']['wall']:.2f}s, "
              f"parsed {r['edit']['parsed']}", flush=True)

        if args.embed_sample:
            r["embed"] = embed_stage(home, args.embed_sample)
            e = r["embed"]
            print(f"embed stage: {e['entries']} entries in {e['pipeline_s']:.1f}s "
                  f"({e['pipeline_rate']:.1f}/s) vs encode-only {e['encode_rate']:.1f}/s", flush=True)
        r["load"][1] = _load()
        failed, skipped = problem_files(home)
        table = build_table(r)
        print()
        print(table)
        print()
        for line in facts(r):
            print(line)
        print(f"parse failures: {len(failed)}; skipped: {len(skipped)} "
              f"({', '.join(f'{k}={v}' for k, v in sorted(r['cold']['skipped'].items())) or 'none'})")
        if args.verbose:
            for path, reason in failed:
                print(f"  failed  {path}: {reason}")
            for path, reason in skipped:
                print(f"  skipped {path}: {reason}")
        plotted = ""
        if not args.no_doc:
            plotted = plot(r)
            print(f"plot: {PLOT}" if plotted else
                  "plot: skipped (matplotlib is not installed: pip install matplotlib)")
            write_doc(r, table, plotted)
            print(f"wrote {DOC}")
        ok = r["warm"]["parsed"] == 0 and r["edit"]["parsed"] == 1
        return 0 if ok else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
