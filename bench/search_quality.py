"""Search quality of indexd on a query set, against a ripgrep baseline.

A query set (``--queries stdlib|click|FILE``; bench/query_sets.py) names its
corpus: ``stdlib`` is the running interpreter's stdlib ``*.py`` files
(``site-packages`` and, unless ``--include-tests``, every
``test``/``tests``/``idle_test`` folder left out), ``click`` is click
8.1.8's sdist from PyPI (downloaded once with pip into
bench/out/impact_vs_tests/, unpacked into the work folder; ``src/`` only,
``tests/`` too with ``--include-tests``). The corpus files are copied
(relative paths kept) into a temporary folder (or ``--corpus DIR``); the
bench sets up an isolated ``INDEXD_HOME`` with one realm over it, indexes it
with ``indexd index``, starts ``indexd run``, waits for ``indexctl status
--json --sync`` and for the parse/embed queues to drain, then asks every
query of the chosen split in each mode (keyword, semantic, hybrid) over the
daemon socket, top 10. ``--home HOME`` skips the cold index and embed: a copy
of HOME, whose realm for the set (``std`` / ``click``) already indexed the set's
corpus, is re-indexed warm and asked instead. A mode the daemon does not offer (not in its
advertised ``search_modes``, the call raises, or it answers in another mode)
is reported as n/a.

Every query carries a ``split`` (train / heldout, fixed by a rule over the
texts: bench/query_sets.py). ``--split each`` (default) reports the held-out
rows, then the train rows, then all; ``--split heldout|train|all`` asks and
reports only those queries. Tune on train, quote heldout.

Metrics, per split, mode and query kind (all / meaning / mixed / identifier):

* R@1, R@10: share of queries with an expected (path, symbol) pair, exactly
  equal, at rank 1 / in the top 10;
* MRR@10: mean of 1/rank of the first expected pair (0 past rank 10);
* file R@1, file R@10, file MRR@10: the same on the distinct paths of the
  results, in order of first appearance, against the expected paths.

Baseline: for each query, its words (lower-cased, 3+ characters, stopwords
removed) are counted per file with ``rg -i -c -w -F`` (matching lines);
files are ranked by the number of distinct query words they contain, ties
by total matching lines, then path; file-level metrics only. Without ``rg``
a pure-Python equivalent runs instead, and the output says so.

Prints a table and writes it between ``<!-- search_quality:start -->`` and
``<!-- search_quality:end -->`` (stdlib) or ``<!-- search_quality_click:start
-->`` ... (click) in docs/benchmarks.md (a known set, every query, every
mode; ``--no-doc`` never). The daemon is always shut down at the end.

    .venv/bin/python bench/search_quality.py [--queries stdlib|click|FILE]
        [--split each|heldout|train|all] [--verbose] [--limit-queries N]
        [--modes keyword,semantic,hybrid] [--corpus DIR | --home HOME] [--keep]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import query_sets  # noqa: E402
from agreement import DOC_INTRO, format_table, replace_region  # noqa: E402
from check_queries import check as check_queries  # noqa: E402
from check_queries import query_words  # noqa: E402
from query_sets import KINDS  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
REGION = "search_quality"
REALMS = {"stdlib": "std", "stdlib2": "std"}   # realm name per set; others use the set's name
SPLIT_CHOICES = ("each", "heldout", "train", "all")
MODES = ("keyword", "semantic", "hybrid")
TOP_K = 10


# --- corpus -------------------------------------------------------------------
def corpus_stats(corpus: Path) -> tuple[int, int]:
    files = [p for p in corpus.rglob("*.py") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


# --- indexd processes ---------------------------------------------------------
def _tool(name: str) -> list[str]:
    script = Path(sys.executable).parent / name
    if script.exists():
        return [str(script)]
    module = {"indexd": "indexd.cli.indexd_main", "indexctl": "indexd.cli.indexctl"}[name]
    return [sys.executable, "-c", f"import sys; from {module} import main; sys.exit(main())"]


def _env(home: Path) -> dict:
    env = dict(os.environ)
    env["INDEXD_HOME"] = str(home)
    # Nothing may be downloaded at run time: models must already be installed.
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    return env


def add_realm(home: Path, corpus: Path, realm: str) -> None:
    proc = subprocess.run(_tool("indexctl") + ["realm", "add", realm, str(corpus)],
                          env=_env(home), capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"indexctl realm add failed (rc={proc.returncode}):\n"
                         f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")


def run_index(home: Path, no_embed: bool = False) -> dict:
    """``indexd index --json`` once (it embeds too, unless ``no_embed``); the done event plus
    ``wall``."""
    started = time.perf_counter()
    cmd = _tool("indexd") + ["index", "--json"] + (["--no-embed"] if no_embed else [])
    proc = subprocess.run(cmd, env=_env(home), capture_output=True, text=True)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"indexd index failed (rc={proc.returncode}):\n"
                         f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    done = {}
    for line in proc.stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and event.get("event") == "done":
            done = event
    return done | {"wall": wall}


class Daemon:
    """``indexd run`` in the background, shut down by ``stop`` whatever happens."""

    def __init__(self, home: Path, log: Path, no_embed: bool):
        from indexd.config import load_settings

        self.home = home
        self.log = log
        self.socket = load_settings(env={"INDEXD_HOME": str(home)}).paths.socket
        cmd = _tool("indexd") + ["run"] + (["--no-embed"] if no_embed else [])
        self._log_fh = open(log, "wb")
        self.proc = subprocess.Popen(cmd, env=_env(home), stdout=self._log_fh,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def client(self, timeout: float = 120.0):
        from indexd.client import Client

        return Client(self.socket, timeout=timeout)

    def log_tail(self, n: int = 3000) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")[-n:]
        except OSError:
            return ""

    def wait_ready(self, timeout: float) -> dict:
        """Until ``indexctl status --json --sync`` answers from the daemon."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"indexd run exited with {self.proc.returncode}:\n"
                                 f"{self.log_tail()}")
            proc = subprocess.run(_tool("indexctl") + ["status", "--json", "--sync"],
                                  env=_env(self.home), capture_output=True, text=True)
            if proc.returncode == 0:
                try:
                    status = json.loads(proc.stdout)
                except json.JSONDecodeError:
                    status = {}
                if status.get("daemon"):
                    return status
            last = (proc.stderr or proc.stdout).strip()[-300:]
            time.sleep(1.0)
        raise SystemExit(f"indexd run not ready after {timeout:.0f}s ({last})\n{self.log_tail()}")

    def wait_queues(self, timeout: float) -> tuple[bool, float, dict]:
        """Poll ``status`` until the parse and embed queues are empty and the
        relationship graph is built (its build would share the CPU with the
        first mode's queries and inflate their times)."""
        started = time.monotonic()
        next_note = started + 30
        queues: dict = {}
        with self.client(timeout=60) as client:
            while True:
                status = client.call("status")
                queues = status.get("queues") or {}
                graph = status.get("graph") or {}
                graph_done = graph.get("ready") or graph.get("error") or "ready" not in graph
                if not any(int(v or 0) for v in queues.values()) and graph_done and not graph.get("building"):
                    return True, time.monotonic() - started, queues
                now = time.monotonic()
                if now - started > timeout:
                    return False, now - started, queues
                if now >= next_note:
                    print(f"  waiting for queues: {queues} ({now - started:.0f}s)", flush=True)
                    next_note = now + 30
                if self.proc.poll() is not None:
                    raise SystemExit(f"indexd run exited with {self.proc.returncode}:\n"
                                     f"{self.log_tail()}")
                time.sleep(2.0)

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                with self.client(timeout=10) as client:
                    client.call("shutdown")
            except Exception as exc:  # noqa: BLE001 - fall back to signals below
                print(f"shutdown request failed ({exc}); terminating pid {self.proc.pid}",
                      file=sys.stderr)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        self._log_fh.close()


# --- scoring ------------------------------------------------------------------
@dataclass
class QueryResult:
    qid: str
    query: str
    kind: str
    expected: list[tuple[str, str]]
    returned: list[dict] = field(default_factory=list)   # {path, symbol, kind, score}
    sym_rank: int | None = None                            # 1-based, within TOP_K
    file_rank: int | None = None
    ms: float = 0.0
    split: str = ""                                        # heldout | train


def first_rank(items: list, wanted: set) -> int | None:
    for i, item in enumerate(items[:TOP_K], 1):
        if item in wanted:
            return i
    return None


def distinct(items: list) -> list:
    seen, out = set(), []
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def score_query(q: dict, returned: list[dict], ms: float) -> QueryResult:
    expected = [(e["path"], e["symbol"]) for e in q["expected"]]
    r = QueryResult(q["id"], q["query"], q["kind"], expected, returned, ms=ms,
                    split=q.get("split", ""))
    r.sym_rank = first_rank([(h["path"], h["symbol"]) for h in returned], set(expected))
    r.file_rank = first_rank(distinct([h["path"] for h in returned]), {p for p, _ in expected})
    return r


def metrics(results: list[QueryResult]) -> dict:
    n = len(results)
    if not n:
        return {"n": 0}

    def rate(ranks, k):
        return sum(1 for x in ranks if x is not None and x <= k) / n

    def mrr(ranks):
        return sum(1.0 / x for x in ranks if x is not None) / n

    sym = [r.sym_rank for r in results]
    fil = [r.file_rank for r in results]
    return {"n": n, "r1": rate(sym, 1), "r10": rate(sym, TOP_K), "mrr": mrr(sym),
            "f1": rate(fil, 1), "f10": rate(fil, TOP_K), "fmrr": mrr(fil),
            "ms": statistics.median(r.ms for r in results)}


def by_kind(results: list[QueryResult]) -> list[tuple[str, dict]]:
    if not results:     # a split with no queries (--limit-queries): no row
        return []
    out = [("all", metrics(results))]
    for kind in KINDS:
        sub = [r for r in results if r.kind == kind]
        if sub:
            out.append((kind, metrics(sub)))
    return out


# --- indexd queries -----------------------------------------------------------
def run_mode(daemon: Daemon, mode: str, queries: list[dict], advertised: list[str] | None,
             timeout: float, realm: str) -> tuple[list[QueryResult] | None, str]:
    """(results, note); results None when the mode is not available."""
    if advertised is not None and mode not in advertised:
        return None, f"n/a: daemon offers {', '.join(advertised) or 'no modes'}"
    from indexd.errors import IndexdError

    results = []
    with daemon.client(timeout=timeout) as client:
        for q in queries:
            started = time.perf_counter()
            try:
                answer = client.call("search", query=q["query"], mode=mode, limit=TOP_K,
                                     realm=realm)
            except IndexdError as exc:
                return None, f"n/a: {type(exc).__name__}: {exc}"
            ms = (time.perf_counter() - started) * 1000
            got = answer.get("mode")
            if got is not None and got != mode:
                return None, f"n/a: asked for {mode}, the daemon answered in {got} mode"
            hits = [{"path": h.get("path"), "symbol": h.get("symbol"), "kind": h.get("kind"),
                     "score": h.get("score"), "line": h.get("start_line")}
                    for h in answer.get("results") or []]
            results.append(score_query(q, hits, ms))
    return results, ""


# --- ripgrep baseline -----------------------------------------------------------
class WordCounter:
    """Matching lines per file for one whole word, case-insensitive (cached)."""

    def __init__(self, corpus: Path):
        self.corpus = corpus
        self.rg = shutil.which("rg")
        self.cache: dict[str, dict[str, int]] = {}
        self._texts: dict[str, list[str]] | None = None

    @property
    def label(self) -> str:
        if self.rg:
            try:
                ver = subprocess.run([self.rg, "--version"], capture_output=True,
                                     text=True).stdout.split("\n")[0]
            except OSError:
                ver = "rg"
            return ver
        return "pure-Python fallback (rg not installed)"

    def counts(self, word: str) -> dict[str, int]:
        if word not in self.cache:
            self.cache[word] = self._rg(word) if self.rg else self._python(word)
        return self.cache[word]

    def _rg(self, word: str) -> dict[str, int]:
        proc = subprocess.run([self.rg, "-i", "-c", "-w", "-F", "--no-ignore", "--hidden",
                               "--no-messages", "-g", "*.py", "--", word, "."],
                              cwd=self.corpus, capture_output=True, text=True)
        out = {}
        for line in proc.stdout.splitlines():
            path, _, n = line.rpartition(":")
            if path and n.isdigit():
                out[Path(path).as_posix().removeprefix("./")] = int(n)
        return out

    def _python(self, word: str) -> dict[str, int]:
        if self._texts is None:
            self._texts = {}
            for p in sorted(self.corpus.rglob("*.py")):
                try:
                    text = p.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                self._texts[p.relative_to(self.corpus).as_posix()] = text.lower().splitlines()
        pat = re.compile(r"(?<![\w])" + re.escape(word.lower()) + r"(?![\w])")
        out = {}
        for rel, lines in self._texts.items():
            n = sum(1 for ln in lines if pat.search(ln))
            if n:
                out[rel] = n
        return out


def rg_rank(counter: WordCounter, query: str) -> list[str]:
    words = query_words(query)
    distinct_words: dict[str, int] = {}
    total: dict[str, int] = {}
    for w in words:
        for path, n in counter.counts(w).items():
            distinct_words[path] = distinct_words.get(path, 0) + 1
            total[path] = total.get(path, 0) + n
    return sorted(total, key=lambda p: (-distinct_words[p], -total[p], p))


def run_rg(counter: WordCounter, queries: list[dict]) -> list[QueryResult]:
    results = []
    for q in queries:
        started = time.perf_counter()
        files = rg_rank(counter, q["query"])[:TOP_K]
        ms = (time.perf_counter() - started) * 1000
        hits = [{"path": p, "symbol": None, "kind": "file", "score": None} for p in files]
        r = score_query(q, hits, ms)
        r.sym_rank = None
        results.append(r)
    return results


# --- report -------------------------------------------------------------------
def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def split_results(results: list[QueryResult], split: str) -> list[QueryResult]:
    return results if split == "all" else [r for r in results if r.split == split]


def report_splits(split: str) -> list[str]:
    """The split rows a ``--split`` choice reports, in table order."""
    return ["heldout", "train", "all"] if split == "each" else [split]


def build_table(rows_in: list[tuple[str, list[QueryResult] | None, str]],
                rg_results: list[QueryResult], rg_label: str, splits: list[str]) -> str:
    header = ("engine", "split", "kind", "queries", "R@1", "R@10", "MRR@10", "file R@1",
              "file R@10", "file MRR@10", "median ms")
    name = "ripgrep" if not rg_label.startswith("pure-Python") else "grep (python)"
    rows = []
    for split in splits:
        for mode, results, note in rows_in:
            if results is None:
                rows.append((f"indexd {mode}", split, "all", "-", "n/a", "n/a", "n/a", "n/a",
                             "n/a", "n/a", "-"))
                continue
            for kind, m in by_kind(split_results(results, split)):
                rows.append((f"indexd {mode}", split, kind, m["n"], _pct(m["r1"]),
                             _pct(m["r10"]), f"{m['mrr']:.3f}", _pct(m["f1"]), _pct(m["f10"]),
                             f"{m['fmrr']:.3f}", f"{m['ms']:.1f}"))
        for kind, m in by_kind(split_results(rg_results, split)):
            rows.append((f"{name} baseline", split, kind, m["n"], "-", "-", "-", _pct(m["f1"]),
                         _pct(m["f10"]), f"{m['fmrr']:.3f}", f"{m['ms']:.1f}"))
    table = format_table(rows, header)
    notes = [f"{mode}: {note}" for mode, results, note in rows_in if results is None and note]
    return table + ("\n\n" + "\n".join(notes) if notes else "")


def facts(r: dict) -> list[str]:
    return [
        f"date: {r['date']}",
        f"machine: {platform.machine()}, nproc {os.cpu_count()}, {platform.system()} "
        f"{platform.release()}",
        f"python: {platform.python_version()} ({sys.executable})",
        f"corpus: {r['files']} files, {r['bytes'] / 1e6:.1f} MB ({r['corpus']})",
        f"queries: {r['queries']} ({r['kinds']}) from {r['queries_file']}, top {TOP_K}; "
        f"split {r['split']} (train/heldout fixed by bench/query_sets.py)",
        f"index: `indexd index` {r['index_wall']:.1f}s wall{r['index_embed']}, {r['indexed']}; "
        "daemon queues "
        "drained in "
        f"{r['queue_wait']:.1f}s{r['queue_note']}",
        f"baseline: {r['rg_label']}; words = query words of 3+ chars minus stopwords, "
        "files ranked by distinct words matched, then matching lines",
        "R@k / MRR@10: exact (path, qualified symbol) match; file R@k: expected path "
        "among the distinct result paths",
    ]


def print_misses(mode: str, results: list[QueryResult], top: int = 3) -> None:
    misses = [r for r in results if r.sym_rank is None]
    late = [r for r in results if r.sym_rank is not None and r.sym_rank > 1]
    print(f"\n--- {mode}: {len(misses)} misses (no expected symbol in the top {TOP_K}), "
          f"{len(late)} found below rank 1 ---")
    for r in misses:
        exp = ", ".join(f"{p}:{s}" for p, s in r.expected)
        where = f"file at rank {r.file_rank}" if r.file_rank else "file not in top 10"
        print(f"[{r.qid} {r.kind}] {r.query!r}\n    expected: {exp} ({where})")
        for i, h in enumerate(r.returned[:top], 1):
            sym = h["symbol"] if h["symbol"] is not None else "<file>"
            score = f"{h['score']:.3f}" if isinstance(h.get("score"), (int, float)) else "-"
            print(f"    {i}. {h['path']}:{sym} ({h['kind']}, score {score})")
        if not r.returned:
            print("    (no results)")
    if late:
        print(f"  below rank 1: " + "; ".join(f"{r.qid} rank {r.sym_rank}" for r in late))


def print_rg_misses(results: list[QueryResult]) -> None:
    misses = [r for r in results if r.file_rank is None]
    print(f"\n--- ripgrep baseline: {len(misses)} file misses ---")
    for r in misses:
        top = ", ".join(h["path"] for h in r.returned[:3]) or "(nothing)"
        print(f"[{r.qid}] {r.query!r}: expected {sorted({p for p, _ in r.expected})}; top 3: {top}")


def doc_region(qs: query_sets.QuerySet) -> str | None:
    """The docs/benchmarks.md region a known set writes (None: another file)."""
    if qs.name not in query_sets.SETS or qs.path.resolve() != query_sets.SETS[qs.name].resolve():
        return None
    return REGION if qs.name == "stdlib" else f"{REGION}_{qs.name}"


def write_doc(table: str, r: dict, command: str, region: str) -> None:
    body = ["Generated by `bench/search_quality.py` "
            f"(queries: `{r['queries_file']}`, checked by `bench/check_queries.py`).",
            "", "Reproduce:", "", "```sh", command, "```", "", "```text", table, "",
            *facts(r), "```"]
    replace_region(DOC, region, "\n".join(body), DOC_INTRO)


# --- main -----------------------------------------------------------------------
def _sigterm(signum, frame):
    raise SystemExit(128 + signum)


def parse_args(argv) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", default="stdlib",
                   help=f"{' | '.join(query_sets.SETS)} | FILE (default: %(default)s)")
    p.add_argument("--split", choices=SPLIT_CHOICES, default="each",
                   help="which queries to ask and report; each = heldout, train and all rows "
                        "(default: %(default)s)")
    p.add_argument("--corpus", type=Path,
                   help="use this corpus folder (copied into when empty or absent; kept)")
    p.add_argument("--include-tests", action="store_true",
                   help="keep the corpus's test folders (stdlib test/, tests/, idle_test/; "
                        "an sdist's tests/)")
    p.add_argument("--modes", default=",".join(MODES),
                   help="comma-separated search modes (default: %(default)s)")
    p.add_argument("--limit-queries", type=int, metavar="N", help="only the first N queries")
    p.add_argument("--embed-timeout", type=float, default=1800.0,
                   help="seconds to wait for the daemon's parse/embed queues to drain")
    p.add_argument("--start-timeout", type=float, default=300.0,
                   help="seconds to wait for the daemon to answer status --sync")
    p.add_argument("--search-timeout", type=float, default=120.0, help="per search call")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder")
    p.add_argument("--verbose", action="store_true",
                   help="per-query misses: query, expected, top 3 returned")
    p.add_argument("--home", type=Path,
                   help="an INDEXD_HOME whose realm for this set (std / click) already indexed and "
                        "embedded the set's corpus: copied, re-indexed warm, then asked (no full "
                        "re-embed; the index line says so)")
    p.add_argument("--no-doc", action="store_true", help="do not touch docs/")
    p.add_argument("--save", type=Path, help="write per-query results as JSON here")
    args = p.parse_args(argv)
    args.mode_list = [m.strip() for m in args.modes.split(",") if m.strip()]
    bad = [m for m in args.mode_list if m not in MODES]
    if bad:
        p.error(f"unknown mode(s): {', '.join(bad)}")
    try:
        args.qs = query_sets.load(args.queries)
    except query_sets.QuerySetError as exc:
        p.error(str(exc))
    return args


def reuse_home(args, work: Path, realm: str) -> tuple[Path, Path, Path]:
    """(home copy, its realm's corpus folder, source root) for ``--home``."""
    from indexd.config import load_settings

    home = work / "home"
    shutil.copytree(args.home, home, ignore=shutil.ignore_patterns("*.sock", "*.lock", "log"))
    home.chmod(0o700)   # the daemon refuses a socket folder others can reach
    folders = load_settings(env={"INDEXD_HOME": str(home)}).realms.get(realm)
    if not folders:
        raise SystemExit(f"--home {args.home} has no realm {realm!r}")
    return home, Path(folders[0]), query_sets.source_root(args.qs.source, work)


def prepare_corpus(args, work: Path) -> tuple[Path, Path]:
    """(the corpus folder, the source root the set's paths are relative to)."""
    root = query_sets.source_root(args.qs.source, work)
    if args.corpus:
        corpus = args.corpus.resolve()
        if corpus.exists() and any(corpus.iterdir()):
            print(f"corpus: reusing {corpus}", flush=True)
            return corpus, root
        corpus.mkdir(parents=True, exist_ok=True)
    else:
        corpus = work / "corpus"
        corpus.mkdir()
    files = query_sets.corpus_files(args.qs.source, root, args.include_tests)
    query_sets.copy_corpus(files, root, corpus)
    return corpus, root


def checked_queries(args, root: Path) -> list[dict]:
    """The set's queries of the chosen split, after checking every target exists."""
    queries = args.qs.queries
    errors, _ = check_queries(queries, root, use_indexd=False, splits=args.split != "all")
    if errors:
        print("\n".join(errors), file=sys.stderr)
        raise SystemExit("the query set does not match its corpus: run bench/check_queries.py")
    if args.split in ("heldout", "train"):
        queries = [q for q in queries if q.get("split") == args.split]
    if args.limit_queries:
        queries = queries[:args.limit_queries]
    return queries


def start_indexed_daemon(args, home: Path, corpus: Path, realm: str, log: Path):
    """Index the corpus, start the daemon, wait for its queues: (done, daemon, waited, note)."""
    keyword_only = args.mode_list == ["keyword"]
    if not args.home:
        add_realm(home, corpus, realm)
    done = run_index(home, no_embed=keyword_only)
    embedded = done.get("embed") or {}
    print(f"indexd index: {done['wall']:.1f}s wall, {done.get('files')} files, "
          f"{done.get('entries')} entries, {done.get('failed')} failed, skipped "
          f"{done.get('skipped') or 'none'}"
          + (f"; embed {json.dumps(embedded)}" if embedded else ""), flush=True)
    daemon = Daemon(home, log, no_embed=keyword_only)
    t0 = time.monotonic()
    daemon.wait_ready(args.start_timeout)
    print(f"daemon ready in {time.monotonic() - t0:.1f}s (pid {daemon.proc.pid})", flush=True)
    drained, waited, queues = daemon.wait_queues(args.embed_timeout)
    note = "" if drained else f" (NOT drained after {waited:.0f}s: {queues})"
    print(f"queues {'drained' if drained else 'not drained'} after {waited:.1f}s {queues}",
          flush=True)
    return done, daemon, waited, note


def ask_modes(args, daemon: Daemon, queries: list[dict], realm: str) -> list:
    with daemon.client(timeout=30) as client:
        caps = (client.call("initialize").get("capabilities") or {})
    advertised = caps.get("search_modes")
    print(f"daemon search modes: {advertised}", flush=True)
    rows = []
    for mode in args.mode_list:
        results, note = run_mode(daemon, mode, queries, advertised, args.search_timeout, realm)
        rows.append((mode, results, note))
        if results is None:
            print(f"{mode}: {note}", flush=True)
            continue
        for split in report_splits(args.split):
            m = metrics(split_results(results, split))
            if m["n"]:
                print(f"{mode} [{split}]: R@1 {_pct(m['r1'])}  R@10 {_pct(m['r10'])}  MRR@10 "
                      f"{m['mrr']:.3f}  file R@10 {_pct(m['f10'])}", flush=True)
    return rows


def embed_note(embed: dict | None) -> str:
    """' (embedding N entries included)' from the one-shot's embed report, or ''."""
    if not embed:
        return " (no embedding)"
    if embed.get("error"):
        return f" (not embedded: {embed['error']})"
    return (f" (embedding included: {embed.get('total')} entries, {embed.get('embedded')} "
            f"computed, {embed.get('seconds', 0):.1f}s)")


def run_facts(args, queries, corpus, done, waited, note, label) -> dict:
    n_files, n_bytes = corpus_stats(corpus)
    kinds = {k: sum(q["kind"] == k for q in queries) for k in KINDS}
    qfile = args.qs.path.resolve()
    return {"date": dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
            "files": n_files, "bytes": n_bytes,
            "corpus": query_sets.describe(args.qs.source, args.include_tests),
            "queries": len(queries),
            "kinds": ", ".join(f"{v} {k}" for k, v in kinds.items() if v),
            "split": args.split,
            "queries_file": qfile.relative_to(ROOT).as_posix() if qfile.is_relative_to(ROOT)
            else str(qfile),
            "index_wall": done["wall"],
            "index_embed": embed_note(done.get("embed")) + (
                f" on a copy of an already embedded home ({args.home})" if args.home else ""),
            "indexed": (f"{done.get('files')} files and {done.get('entries')} entries in all "
                        f"the home's realms (the queries ask realm "
                        f"{REALMS.get(args.qs.name, args.qs.name)})"
                        if args.home else
                        f"{done.get('files')} files ({n_files - (done.get('files') or 0)} of "
                        f"the corpus not indexed: scanner excludes, e.g. venv/), "
                        f"{done.get('entries')} entries")
                       + f", skipped {done.get('skipped') or 'none'}",
            "queue_wait": waited, "queue_note": note, "rg_label": label}


def report(args, rows, rg_results, counter, r: dict) -> None:
    table = build_table(rows, rg_results, counter.label, report_splits(args.split))
    print()
    print(table)
    print()
    for line in facts(r):
        print(line)
    if args.verbose:
        for mode, results, _ in rows:
            if results is not None:
                print_misses(mode, results)
        print_rg_misses(rg_results)
    if args.save:
        payload = {mode: [vars(x) for x in results] if results is not None else note
                   for mode, results, note in rows}
        payload["ripgrep"] = [vars(x) for x in rg_results]
        args.save.write_text(json.dumps(payload, indent=1, default=list), encoding="utf-8")
        print(f"wrote {args.save}")
    region = doc_region(args.qs)
    if args.no_doc:
        return
    if (args.limit_queries or region is None or args.split != "each"
            or args.mode_list != list(MODES)):
        print("docs not updated (partial run or another query set)")
        return
    command = ".venv/bin/python bench/search_quality.py" + (
        "" if args.qs.name == "stdlib" else f" --queries {args.qs.name}") + (
        " --include-tests" if args.include_tests else "")
    write_doc(table, r, command, region)
    print(f"wrote {DOC}")


def main(argv=None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, _sigterm)
    work = Path(tempfile.mkdtemp(prefix="indexd-sq-"))
    daemon = None
    realm = REALMS.get(args.qs.name, args.qs.name)
    try:
        if args.home:
            home, corpus, root = reuse_home(args, work, realm)
        else:
            corpus, root = prepare_corpus(args, work)
        queries = checked_queries(args, root)
        n_files, n_bytes = corpus_stats(corpus)
        print(f"corpus: {n_files} files, {n_bytes / 1e6:.1f} MB in {corpus}; "
              f"{len(queries)} queries (split {args.split})", flush=True)
        missing = sorted({e["path"] for q in queries for e in q["expected"]
                          if not (corpus / e["path"]).is_file()})
        if missing:
            print(f"warning: expected files missing from the corpus: {', '.join(missing)}")
        if not args.home:
            home = work / "home"
            home.mkdir(mode=0o700)   # the daemon refuses a socket folder others can reach
        done, daemon, waited, note = start_indexed_daemon(args, home, corpus, realm,
                                                          work / "indexd-run.log")
        rows = ask_modes(args, daemon, queries, realm)
        daemon.stop()
        daemon = None

        counter = WordCounter(corpus)
        if not counter.rg:
            print("ripgrep (rg) not found: the baseline uses a pure-Python equivalent",
                  flush=True)
        rg_results = run_rg(counter, queries)
        report(args, rows, rg_results, counter,
               run_facts(args, queries, corpus, done, waited, note, counter.label))
        return 0
    finally:
        if daemon is not None:
            daemon.stop()
        if args.keep:
            print(f"kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
