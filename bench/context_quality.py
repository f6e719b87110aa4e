"""Context-pack quality: how often a pack holds a relevant symbol, against search hits alone.

For every query of a query set (``--queries stdlib|click``, bench/query_sets.py;
the held-out split is what docs/benchmarks.md quotes) and every budget
(``--budgets``, default 1000,3000,8000 tokens), the bench asks the daemon
for two packs over the socket, in the same run:

* **context** — the ``context`` method as shipped: the top search hits (as
  many as the budget's default ``hits`` asks, 10 to 50), then their graph
  neighbours by personalised PageRank, fitted to the budget;
* **hits only** — the same method with ``graph: false`` and ``hits: 50``:
  the best search hits and nothing else, fitted to the same budget by the
  same code (signatures plus the best bodies), so only the graph differs.

A pack *contains* a relevant symbol when one of its items is an expected
(path, qualified symbol) of the query, or a body holding it (a class shown
whole holds its methods, which the pack then leaves out as items); *as
body* when that item is shown whole. Reported per split, kind and budget: the share of packs that contain
one, the share with it as a body, the median items and tokens, and the
median time of a context call.

Token counts are the embedding model's tokenizer (all-MiniLM-L6-v2's
WordPiece); the same run measures the stated fallback estimate
(``ceil(chars / 4)``) against it on every item text the packs hold: the
median and 90th percentile of |estimate - tokens| / tokens.

The index: ``--home HOME`` (an indexed and embedded INDEXD_HOME holding a
realm over the set's corpus, e.g. the one bench/search_quality.py --keep
leaves) is copied to a temporary folder first, so it is only read; without
it the corpus is copied and indexed as bench/search_quality.py does. The
daemon is always shut down at the end. Writes its table between
``<!-- context_quality:start -->`` markers (stdlib) or
``<!-- context_quality_click:start -->`` (click) in docs/benchmarks.md
unless ``--no-doc`` or a partial run.

    .venv/bin/python bench/context_quality.py [--queries stdlib|click] [--home HOME]
        [--realm NAME] [--split each|heldout|train|all] [--budgets 1000,3000,8000]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import query_sets  # noqa: E402
from agreement import DOC_INTRO, format_table, replace_region  # noqa: E402
from search_quality import (REALMS, Daemon, checked_queries, prepare_corpus,  # noqa: E402
                            report_splits, start_indexed_daemon)
from query_sets import KINDS  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
REGION = "context_quality"
BUDGETS = (1000, 3000, 8000)
BASELINE_HITS = 50
ENGINES = ("context", "hits only")


def parse_args(argv) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", default="stdlib", help="stdlib | click | FILE")
    p.add_argument("--home", type=Path, help="an indexed, embedded INDEXD_HOME (copied, "
                                             "only read)")
    p.add_argument("--realm", help="the realm over the corpus (default: std / the set's name)")
    p.add_argument("--split", choices=("each", "heldout", "train", "all"), default="each")
    p.add_argument("--budgets", default=",".join(map(str, BUDGETS)))
    p.add_argument("--limit-queries", type=int, metavar="N")
    p.add_argument("--corpus", type=Path, help="without --home: the corpus folder to use")
    p.add_argument("--include-tests", action="store_true")
    p.add_argument("--embed-timeout", type=float, default=1800.0)
    p.add_argument("--start-timeout", type=float, default=300.0)
    p.add_argument("--no-doc", action="store_true")
    p.add_argument("--save", type=Path, help="per-query results as JSON")
    args = p.parse_args(argv)
    args.qs = query_sets.load(args.queries)
    args.budget_list = [int(b) for b in args.budgets.split(",") if b.strip()]
    args.mode_list = ["hybrid"]           # start_indexed_daemon embeds unless keyword-only
    args.realm = args.realm or REALMS.get(args.qs.name, args.qs.name)
    return args


# --- the daemon ---------------------------------------------------------------
def daemon_on_copy(args, work: Path) -> tuple[Daemon, Path, str]:
    """A daemon on a private copy of ``--home``; (daemon, corpus root, note)."""
    home = work / "home"
    shutil.copytree(args.home, home, symlinks=True,
                    ignore=shutil.ignore_patterns("*.sock", "*.lock", "http.json", "log"))
    os.chmod(home, 0o700)
    from indexd.config import load_settings

    realms = load_settings(env={"INDEXD_HOME": str(home)}).realms
    if args.realm not in realms:
        raise SystemExit(f"no realm {args.realm!r} in {args.home}: {', '.join(realms)}")
    daemon = Daemon(home, work / "indexd-run.log", no_embed=False)
    daemon.wait_ready(args.start_timeout)
    drained, waited, queues = daemon.wait_queues(args.embed_timeout)
    note = (f"--home {args.home} (copied), queues drained in {waited:.0f}s"
            if drained else f"--home {args.home}: queues NOT drained ({queues})")
    return daemon, Path(realms[args.realm][0]), note


def fresh_daemon(args, work: Path) -> tuple[Daemon, Path, str]:
    corpus, _root = prepare_corpus(args, work)
    home = work / "home"
    home.mkdir(mode=0o700)
    done, daemon, waited, note = start_indexed_daemon(args, home, corpus, args.realm,
                                                      work / "indexd-run.log")
    return daemon, corpus, f"indexed here: `indexd index` {done['wall']:.0f}s{note}"


# --- asking -------------------------------------------------------------------
def holds(item: dict, path: str, symbol: str) -> bool:
    """Is (path, symbol) this item, or inside its body (a method in its class's body)?
    A pack shows nothing twice, so a method whose class body is shown is no item."""
    if item["path"] != path:
        return False
    if item["symbol"] == symbol:
        return True
    return item["view"] == "body" and (item["symbol"] is None
                                       or (symbol or "").startswith(item["symbol"] + "."))


def relevant(items: list[dict], expected: set) -> tuple[bool, bool]:
    hit = [(i, s) for i in items for p, s in expected if holds(i, p, s)]
    return bool(hit), any(i["view"] == "body" for i, _ in hit)


def ask(daemon: Daemon, queries: list[dict], budgets: list[int], realm: str) -> list[dict]:
    rows = []
    with daemon.client(timeout=300) as client:
        client.call("context", query="warm up the model and the page cache", realm=realm)
        for q in queries:
            expected = {(e["path"], e["symbol"]) for e in q["expected"]}
            for budget in budgets:
                for engine, extra in (("context", {}),
                                      ("hits only", {"graph": False, "hits": BASELINE_HITS})):
                    t0 = time.perf_counter()
                    pack = client.call("context", query=q["query"], budget=budget, realm=realm,
                                       **extra)
                    ms = (time.perf_counter() - t0) * 1000
                    found, body = relevant(pack["items"], expected)
                    assert pack["tokens"] <= budget, (q["id"], budget, pack["tokens"])
                    rows.append({"id": q["id"], "kind": q["kind"], "split": q.get("split"),
                                 "budget": budget, "engine": engine, "found": found,
                                 "body": body, "items": len(pack["items"]),
                                 "tokens": pack["tokens"], "ms": ms,
                                 "tokenizer": pack["tokenizer"],
                                 "texts": [i["text"] for i in pack["items"]] if engine == "context"
                                 and budget == budgets[-1] else []})
    return rows


# --- the token estimate ---------------------------------------------------------
def estimate_error(rows: list[dict]) -> dict:
    from indexd.query.tokens import CHARS_PER_TOKEN, token_counter

    counter = token_counter(type("S", (), {"embed_model": "default"})())
    texts = list(dict.fromkeys(t for r in rows for t in r["texts"]))
    counts = counter.counts(texts)
    errs = sorted(abs(math.ceil(len(t) / CHARS_PER_TOKEN) - n) / n
                  for t, n in zip(texts, counts) if n)
    over = sum(math.ceil(len(t) / CHARS_PER_TOKEN) for t in texts) / max(1, sum(counts))
    return {"texts": len(errs), "median": statistics.median(errs) if errs else 0.0,
            "p90": errs[int(0.9 * (len(errs) - 1))] if errs else 0.0, "total_ratio": over}


# --- report ---------------------------------------------------------------------
def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def table(rows: list[dict], splits: list[str], budgets: list[int]) -> str:
    header = ("split", "kind", "budget", "engine", "queries", "contains relevant %",
              "as body %", "median items", "median tokens", "median ms")
    out = []
    for split in splits:
        part = rows if split == "all" else [r for r in rows if r["split"] == split]
        for kind in ("all",) + KINDS:
            sub = part if kind == "all" else [r for r in part if r["kind"] == kind]
            for budget in budgets:
                for engine in ENGINES:
                    cell = [r for r in sub if r["budget"] == budget and r["engine"] == engine]
                    if not cell:
                        continue
                    n = len(cell)
                    out.append((split, kind, budget, engine, n,
                                _pct(sum(r["found"] for r in cell) / n),
                                _pct(sum(r["body"] for r in cell) / n),
                                f"{statistics.median(r['items'] for r in cell):.0f}",
                                f"{statistics.median(r['tokens'] for r in cell):.0f}",
                                f"{statistics.median(r['ms'] for r in cell):.1f}"))
    return format_table(out, header)


def facts(args, rows, queries, note, err, load: tuple) -> list[str]:
    kinds = {k: sum(q["kind"] == k for q in queries) for k in KINDS}
    return [
        f"date: {dt.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}; load average "
        f"{load[0]:.2f} at the start, {load[1]:.2f} at the end",
        f"machine: {platform.machine()}, nproc {os.cpu_count()}, python "
        f"{platform.python_version()}",
        f"queries: {len(queries)} ({', '.join(f'{v} {k}' for k, v in kinds.items() if v)}) from "
        f"{args.qs.path.relative_to(ROOT)}, realm {args.realm}; index: {note}",
        f"context: the method's defaults (hits by budget, depth 2, hybrid search); hits only: "
        f"graph false, hits {BASELINE_HITS}; both fitted by the same code; tokens: "
        f"{rows[0]['tokenizer'] if rows else '?'}",
        f"estimate ceil(chars/4) vs the tokenizer on {err['texts']} item texts: median error "
        f"{_pct(err['median'])}%, p90 {_pct(err['p90'])}%, total {err['total_ratio']:.2f}x "
        "the tokenizer's count",
        "contains relevant: an item is an expected (path, qualified symbol), or a body holding it "
        "(its class's); as body: shown whole",
    ]


def write_doc(args, text: str) -> None:
    region = REGION if args.qs.name == "stdlib" else f"{REGION}_{args.qs.name}"
    cmd = ".venv/bin/python bench/context_quality.py" + (
        "" if args.qs.name == "stdlib" else f" --queries {args.qs.name}") + (
        " --home HOME" if args.home else "")
    body = "\n".join(["Generated by `bench/context_quality.py`.", "", "Reproduce:", "", "```sh",
                      cmd, "```", "", "```text", text, "```"])
    replace_region(DOC, region, body, DOC_INTRO)
    print(f"wrote {DOC} ({region})")


def main(argv=None) -> int:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda s, f: (_ for _ in ()).throw(SystemExit(128 + s)))
    work = Path(tempfile.mkdtemp(prefix="ixcq"))
    load0 = os.getloadavg()[0]
    daemon = None
    try:
        daemon, root, note = (daemon_on_copy if args.home else fresh_daemon)(args, work)
        queries = checked_queries(args, root)
        print(f"{len(queries)} queries, budgets {args.budget_list}", flush=True)
        rows = ask(daemon, queries, args.budget_list, args.realm)
    finally:
        if daemon is not None:
            daemon.stop()
        shutil.rmtree(work, ignore_errors=True)
    err = estimate_error(rows)
    text = table(rows, report_splits(args.split), args.budget_list) + "\n\n" + "\n".join(
        facts(args, rows, queries, note, err, (load0, os.getloadavg()[0])))
    print(text)
    if args.save:
        args.save.write_text(json.dumps([{k: v for k, v in r.items() if k != "texts"}
                                         for r in rows], indent=1))
    if not args.no_doc and not args.limit_queries and args.split == "each" \
            and args.qs.name in query_sets.SETS:
        write_doc(args, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
