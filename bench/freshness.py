"""Freshness of the running daemon on a copy of the standard library.

Measures, in one run:
  * save-to-searchable latency for a one-function edit in a large file, N times
    (keyword search for a new identifier, polled every 5 ms; no `sync`);
  * with the semantic layer, the same for semantic search (when the daemon offers it);
  * time for the index to converge after a burst of 1,000 new files;
  * idle CPU seconds of the daemon over a quiet window, and its RSS;
  * where each save's time went: the daemon's own timing of the batch that
    took it (status ``last_batch.timing``, indexd/batch_timing.py), median and
    p95 per milestone (ms after the first watch event) and per stage.

    .venv/bin/python bench/freshness.py [--edits 50] [--idle 60] [--corpus DIR] [--small]

``--small``: a realm of typing.py and 20 other stdlib modules instead of the
whole stdlib. ``INDEXD_SAVE_DEBOUNCE_MS=250`` in the environment gives the
daemon the debounce it had before the save shortcut.

Results go to docs/benchmarks.md between the freshness markers and, when
matplotlib imports, the latencies' distribution to docs/bench_freshness.png (one
file per region: ``_embed``, ``_small`` appended as the region's name says);
each goal of issue 13 is printed as met / not met (p95 vs goal).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from agreement import format_table, replace_region, stdlib_files, stdlib_root  # noqa: E402
import plots  # noqa: E402

from indexd.client import Client  # noqa: E402

BIN = Path(sys.executable).parent
PLOT = HERE.parent / "docs" / "bench_freshness.png"   # the model-off, whole-stdlib region's
# issue 13's goals: p95 of save -> searchable, ms, per search mode
GOALS_MS = {"keyword": 300, "semantic": 1000}


SMALL_FILES = 20


def copy_corpus(dest: Path, small: bool = False) -> int:
    root = stdlib_root()
    files = stdlib_files(root)
    if small:   # typing.py (the edited file) and the first top-level modules
        top = [f for f in files if f.parent == root and f.name != "typing.py"]
        files = [root / "typing.py"] + top[:SMALL_FILES]
    n = 0
    for src in files:
        target = dest / src.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(src.read_bytes())
        n += 1
    return n


def proc_cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def proc_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def wait_found(client: Client, query: str, symbol: str, mode: str, timeout: float = 60) -> float:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        res = client.call("search", query=query, mode=mode, limit=5)
        if any(h["symbol"] == symbol for h in res["results"]):
            return time.perf_counter() - start
        time.sleep(0.005)
    raise TimeoutError(f"{symbol} not searchable after {timeout}s")


def batch_timing(client: Client, since: float, embedded: bool, timeout: float = 10) -> dict | None:
    """The daemon's timing of the batch that took a save written at ``since``
    (wall clock); with ``embedded``, once it says when the file was embedded."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        timing = (client.call("status").get("last_batch") or {}).get("timing")
        if timing and timing["event_at"] >= since - 0.05 and (
                not embedded or "embedded" in timing["ms"]):
            return timing
        time.sleep(0.05)
    return None


def edit_latencies(client: Client, target: Path, edits: int, mode: str,
                   timings: list | None = None) -> list[float]:
    original = target.read_text()
    out = []
    try:
        for i in range(edits):
            name = f"freshness_probe_{mode}_{i}_zq"
            wall = time.time()
            target.write_text(original + f"\n\ndef {name}(value):\n    return value\n")
            t0 = time.perf_counter()
            wait_found(client, name, name, mode)
            out.append((time.perf_counter() - t0) * 1000)
            if timings is not None:
                timings.append(batch_timing(client, wall, mode == "semantic"))
            time.sleep(0.3)   # the next save is a separate one (not one burst with this)
    finally:
        target.write_text(original)
    return out


def breakdown_rows(timings: list, label: str) -> list[tuple]:
    """Median / p95 per milestone and stage of the daemon's own batch timings."""
    got = [t for t in timings if t]
    rows = []
    for part in ("ms", "stages_ms"):
        names = []
        for t in got:
            names += [n for n in t.get(part, {}) if n not in names]
        for name in names:
            values = [t[part][name] for t in got if name in t.get(part, {})]
            what = "at" if part == "ms" else "took"
            rows.append((f"  {label}: {name} {what} (ms)", len(values),
                         f"{statistics.median(values):.0f}", f"{pct(values, 95):.0f}",
                         f"{max(values):.0f}"))
    return rows


def write_burst(folder: Path, files: int) -> None:
    """``files`` new one-function modules in a new folder, as fast as possible."""
    folder.mkdir()
    for i in range(files):
        (folder / f"m{i:04d}.py").write_text(f"def burst_fn_{i}(x):\n    return x + {i}\n")


def wait_synced(client: Client, timeout: float = 300) -> None:
    """Until the daemon answers a synced status (it may still be starting)."""
    deadline = time.time() + timeout
    while True:
        try:
            client.call("status", sync=True, timeout=timeout)
            return
        except Exception:  # noqa: BLE001 - still starting
            if time.time() > deadline:
                raise
            time.sleep(0.2)


def burst(client: Client, corpus: Path, files: int) -> float:
    t0 = time.perf_counter()
    write_burst(corpus / "burst_pkg", files)
    last = f"burst_fn_{files - 1}"
    wait_found(client, last, last, "keyword", timeout=600)
    while client.call("status")["pending"]:
        time.sleep(0.05)
    return time.perf_counter() - t0


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def goal_lines(latencies: dict[str, list[float]]) -> list[str]:
    """One line per goal: the measured p95 against it, met or not met."""
    out = []
    for mode, goal in GOALS_MS.items():
        got = latencies.get(mode)
        if not got:
            out.append(f"goal save → {mode}-searchable p95 ≤ {goal} ms: not measured")
            continue
        p95 = pct(got, 95)
        verdict = "met" if p95 <= goal else "not met"
        out.append(f"goal save → {mode}-searchable p95 ≤ {goal} ms: p95 {p95:.0f} ms "
                   f"(n {len(got)}) — {verdict}")
    return out


def plot_path(region: str) -> Path:
    """One picture per doc region, so each region shows its own run."""
    return PLOT.with_name(region.replace("freshness", "bench_freshness").replace("-", "_") + ".png")


def plot(latencies: dict[str, list[float]], title: str, path: Path = PLOT) -> str:
    """Empirical CDF of each mode's save → searchable latencies, with its goal line."""
    plt = plots.pyplot()
    if plt is None:
        return ""
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(8, 4))
    for (mode, goal), color in zip(GOALS_MS.items(), ("#3b6ea5", "#c0504d")):
        got = sorted(latencies.get(mode) or [])
        if got:
            ax.step(got, [(i + 1) / len(got) for i in range(len(got))], where="post",
                    color=color, label=f"{mode} (n {len(got)}, p95 {pct(got, 95):.0f} ms)")
        ax.axvline(goal, color=color, linestyle="--", linewidth=1,
                   label=f"{mode} goal: p95 ≤ {goal} ms")
    ax.axhline(0.95, color="#888", linestyle=":", linewidth=1)
    ax.set_xscale("log")
    plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
    ax.xaxis.set_major_formatter(plain)
    ax.xaxis.set_minor_formatter(plain)
    ax.tick_params(axis="x", which="both", labelsize=7)
    ax.set_xlabel("save → searchable (ms, log)")
    ax.set_ylabel("fraction of saves")
    return plots.finish(plt, fig, ax, path, title, "save → searchable latencies")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--edits", type=int, default=50)
    ap.add_argument("--sem-edits", type=int, help="semantic saves (default: edits / 5, at least 5)")
    ap.add_argument("--idle", type=float, default=60.0)
    ap.add_argument("--burst", type=int, default=1000)
    ap.add_argument("--corpus", type=Path)
    ap.add_argument("--small", action="store_true", help=f"typing.py and {SMALL_FILES} other modules")
    ap.add_argument("--no-doc", action="store_true", help="do not update docs/benchmarks.md")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (corpus, home, log)")
    ap.add_argument("--embed", action="store_true",
                    help="run the daemon with the embedding model (semantic latency is then measured "
                         "while the initial embedding of the corpus runs in the background)")
    args = ap.parse_args(argv)

    load_start = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    work = Path(tempfile.mkdtemp(prefix="ixf"))
    corpus = args.corpus or work / "stdlib"
    if not args.corpus:
        print(f"copying {copy_corpus(corpus, args.small)} stdlib files to {corpus}", flush=True)
    env = os.environ | {"INDEXD_HOME": str(work / "home"), "HF_HUB_OFFLINE": "1",
                        "INDEXD_EMBED_MODEL": "default" if args.embed else "off"}
    (work / "home").mkdir(mode=0o700)
    subprocess.run([str(BIN / "indexctl"), "realm", "add", "std", str(corpus)], env=env, check=True,
                   capture_output=True)
    t0 = time.perf_counter()
    # --no-embed: with --embed the point is saving while the daemon embeds the corpus.
    subprocess.run([str(BIN / "indexd"), "index", "--no-embed"], env=env, check=True,
                   capture_output=True)
    print(f"one-shot index {time.perf_counter() - t0:.1f}s", flush=True)
    log = open(work / "daemon.log", "wb")
    daemon = subprocess.Popen([str(BIN / "indexd"), "run"], env=env, stdout=log, stderr=subprocess.STDOUT)
    sock = work / "home" / "indexd.sock"
    rows = []
    try:
        client = Client(sock, timeout=600)
        wait_synced(client)
        modes = client.call("initialize")["capabilities"]["search_modes"]
        model_deadline = time.time() + 300
        while args.embed and "semantic" not in modes and time.time() < model_deadline:
            time.sleep(0.2)   # the model loads (and is exported once) in the background
            modes = client.call("initialize")["capabilities"]["search_modes"]
        if args.embed and "semantic" not in modes:
            print("warning: the model never became ready; no semantic row", flush=True)
        target = corpus / "typing.py"
        kw_timings, sem_timings = [], []
        kw = edit_latencies(client, target, args.edits, "keyword", kw_timings)
        rows.append(("save → keyword-searchable (ms)", len(kw), f"{statistics.median(kw):.0f}",
                     f"{pct(kw, 95):.0f}", f"{max(kw):.0f}"))
        sem = []
        backlog = None
        if "semantic" in modes:
            backlog = client.call("status")["queues"]["embed"]
            sem = edit_latencies(client, target, max(5, args.edits // 5) if args.sem_edits is None
                                 else args.sem_edits, "semantic", sem_timings)
            rows.append(("save → semantic-searchable (ms)", len(sem), f"{statistics.median(sem):.0f}",
                         f"{pct(sem, 95):.0f}", f"{max(sem):.0f}"))
        breakdown = breakdown_rows(kw_timings, "keyword save")
        breakdown += [r for r in breakdown_rows(sem_timings, "semantic save")
                      if "embedded" in r[0] or "embed_queued" in r[0]]
        client.call("status", sync=True, timeout=300)
        gen = client.call("status")["generation"]
        converge = burst(client, corpus, args.burst)
        batches = client.call("status")["generation"] - gen
        rows.append((f"{args.burst}-file burst → converged (s)", 1, f"{converge:.1f}", "", ""))
        rows.append(("  batches for the burst", 1, str(batches), "", ""))
        client.call("status", sync=True, timeout=300)
        time.sleep(3)
        cpu0 = proc_cpu_s(daemon.pid)
        time.sleep(args.idle)
        idle = proc_cpu_s(daemon.pid) - cpu0
        label = "CPU while embedding the corpus" if args.embed else "idle CPU"
        rows.append((f"{label} over {args.idle:.0f}s (s)", 1, f"{idle:.2f}", "", ""))
        rows.append(("daemon RSS (MB)", 1, f"{proc_rss_mb(daemon.pid):.0f}", "", ""))
        client.call("shutdown")
        daemon.wait(timeout=60)
    finally:
        if daemon.poll() is None:
            daemon.kill()
        log.close()
        if not args.keep:   # a stdlib copy and its store: ~1 GB of /tmp per run otherwise
            shutil.rmtree(work, ignore_errors=True)
    table = format_table(rows + breakdown, ("measure", "n", "median", "p95", "max"))
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(table)
    print(f"load average at the end (1/5/15 min): {load}; embed queue when the semantic saves "
          f"began: {backlog}")
    goals = goal_lines({"keyword": kw, "semantic": sem})
    print("\n".join(goals))
    plotted = ""
    region = ("freshness-embed" if args.embed else "freshness") + ("-small" if args.small else "")
    if not args.no_doc:
        plotted = plot({"keyword": kw, "semantic": sem},
                       f"save → searchable, {'small realm' if args.small else 'stdlib'}, model "
                       f"{'on' if args.embed else 'off'}\nload average {load_start} at the start, "
                       f"{load} at the end (1/5/15 min, {os.cpu_count()} cores)", plot_path(region))
        print(f"plot: {plot_path(region)}" if plotted else
              "plot: skipped (matplotlib is not installed: pip install matplotlib)")
        body = (f"Machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, "
                f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {load_start} at the start and {load} "
                f"at the end (1/5/15 min). "
                f"Corpus: {'typing.py and ' + str(SMALL_FILES) + ' other stdlib modules' if args.small else 'stdlib copy'}. "
                f"Edits to `typing.py`; embed queue when the semantic saves began: {backlog}. "
                f"Embedding model: {'all-MiniLM-L6-v2 through the default runtime (onnx), the initial embedding of the corpus running in the background' if args.embed else 'off'}.\n\n"
                f"```\n{table}\n\n" + "\n".join(goals) + "\n```\n\n"
                + (f"{plotted}\n\n" if plotted else "")
                + "Reproduce: `" + " ".join([".venv/bin/python bench/freshness.py",
                                             *(argv if argv is not None else sys.argv[1:])])
                + "`\n")
        replace_region(HERE.parent / "docs" / "benchmarks.md", region, body,
                       "## Freshness (bench/freshness.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
