"""Experiment: the relationship graph's fan-in as a prior on fused search results.

Hypothesis (issue 12, part 2): a natural-language query's answer is often a
module's well-known public API (``json.dumps``, ``copy.deepcopy``), and the
graph knows which symbols are well known: many files import, call or
reference them. Each fused candidate in the top ``pool`` gets its score
multiplied by ``1 + a*log1p(strong + b*weak) + p*public + d*documented``
(strong: distinct other files with resolved/inferred edges landing on the
symbol; weak: name-match edges), re-sorted, then exact names pinned and the
list cut, as the daemon does. Parameters are chosen on the train split only
(mean train MRR@10 over the sets, ties R@10); held-out is reported, never
used to choose. Only text-class queries are re-ranked (identifiers are
answered by names). Bench only: nothing here changes the daemon.

Result (2026-12-02, stdlib 106 + click 59 queries, one home, realms std/click):
negative, not shipped. Every fan-in weight that lifts stdlib's train MRR@10
(0.559 -> up to 0.611) lowers click's (0.764 -> 0.756 at best, 0.66 at a=0.5);
the train-chosen a=0.05, p=0.1, d=0.1 gives held-out stdlib 0.547 -> 0.588 but
click 0.767 -> 0.729. In a library's own source the most referenced symbols
are its internal hubs (click's Context, Option), and the stdlib's public API
is rarely called by the stdlib itself (json.dumps: no resolved caller), so
fan-in tracks "central to this code", not "what a user asks for". The
re-rank costs ~0.6 ms a query (100 candidates, dict look-ups); the counts
~0.2 s once per graph build.

    INDEXD_HOME=COPY .venv/bin/python bench/fanin_prior.py --queries stdlib,click \
        --realms stdlib=std,click=click [--diagnose]
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import search_tune as st  # noqa: E402
from indexd.config import load_settings  # noqa: E402
from indexd.enrich.embedder import load_embedder  # noqa: E402
from indexd.graph import Graph  # noqa: E402
from indexd.graph.loader import load_facts  # noqa: E402
from indexd.graph.packed import _HOWS, _KINDS  # noqa: E402
from indexd.query import hybrid  # noqa: E402
from indexd.query.ranking import DEFAULT_PARAMS, query_class  # noqa: E402
from indexd.store import Store  # noqa: E402

USE_KINDS = {"imports", "references", "calls", "import_time"}
STRONG = {"resolved", "inferred"}


def fan_in(graph: Graph, enclosing: bool) -> tuple[dict, dict]:
    """(strong, weak): (realm, repo, path, qualname) -> distinct other files whose
    edges land on the symbol (``enclosing``: or on something inside it)."""
    strong, weak = defaultdict(set), defaultdict(set)
    for src, res in graph.results.items():
        syms = res.dst_syms
        if not syms:
            continue
        for i, sym in enumerate(syms):
            if sym is None or _KINDS[res.kinds[i]] not in USE_KINDS:
                continue
            dst = res.dsts[res.dst_idx[i]]
            if dst == src:
                continue
            bucket = strong if _HOWS[res.hows[i]] in STRONG else weak
            names = [sym]
            if enclosing:
                parts = sym.split(".")
                names = [".".join(parts[:k]) for k in range(1, len(parts) + 1)]
            for s in names:
                bucket[(*dst, s)].add(src)
    return ({k: len(v) for k, v in strong.items()}, {k: len(v) for k, v in weak.items()})


def public(row: dict) -> bool:
    parts = (row.get("qualname") or "").split(".") + [
        p for p in (row.get("path") or "").split("/") if p != "__init__.py"]
    return not any(p.startswith("_") for p in parts if p)


class Prior:
    def __init__(self, counts: dict, a=0.0, b=0.0, p=0.0, d=0.0, pool=100):
        self.counts, self.a, self.b, self.p, self.d, self.pool = counts, a, b, p, d, pool
        self.store = None
        self.text_only = True
        self.spent, self.calls = 0.0, 0

    def factor(self, row: dict) -> float:
        if row.get("kind") == "file":
            return 1.0
        strong, weak = self.counts
        key = (row.get("realm"), row.get("repo"), row.get("path"), row.get("qualname"))
        n = strong.get(key, 0) + self.b * weak.get(key, 0)
        return (1.0 + self.a * math.log1p(n) + self.p * public(row)
                + self.d * bool((row.get("doc") or "").strip()))

    def rerank(self, entries: list[dict]) -> list[dict]:
        if not (self.a or self.p or self.d):
            return entries
        head = hybrid._hydrate(self.store, entries[: self.pool])
        head = sorted((dict(e, score=e["score"] * self.factor(e["row"])) for e in head),
                      key=lambda e: -e["score"])
        return head + entries[self.pool:]


def install(prior: Prior) -> None:
    """Re-rank just before exact names are pinned (the last step before the cut)."""
    pin = hybrid.pin_exact

    def pin_with_prior(entries, query, params):
        if prior.text_only and query_class(query) != "text":
            return pin(entries, query, params)
        t0 = time.perf_counter()
        out = prior.rerank(entries)
        prior.spent += time.perf_counter() - t0
        prior.calls += 1
        return pin(out, query, params)
    hybrid.pin_exact = pin_with_prior


def diagnose(store, embedder, sets, prior: Prior) -> None:
    """For train meaning queries: the expected symbol's fused rank and fan-in vs the top 3."""
    from indexd.query.search import SearchRequest
    for name, queries in sets.items():
        for q in st.split(queries, "train"):
            if q["kind"] != "meaning":
                continue
            req = SearchRequest(query=q["query"], limit=200, mode="hybrid", realm=q.get("realm"))
            res = hybrid.fused_search(store, embedder, req, DEFAULT_PARAMS)["results"]
            want = {(e["path"], e["symbol"]) for e in q["expected"]}
            rank = next((i for i, h in enumerate(res, 1) if (h["path"], h["symbol"]) in want), None)
            strong, weak = prior.counts

            def fi(h):
                k = (h["realm"], h.get("repo"), h["path"], h["symbol"])
                return f"{strong.get(k, 0)}/{weak.get(k, 0)}"
            exp = next((h for h in res if (h["path"], h["symbol"]) in want), None)
            print(f"[{name}] {q['query'][:60]!r} rank={rank} "
                  f"want={sorted(want)[0][1]} fi={fi(exp) if exp else '-'}")
            for h in res[:3]:
                print(f"      {h['path']}::{h['symbol']} fi={fi(h)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", default="stdlib,click")
    ap.add_argument("--realms", default="stdlib=std,click=click")
    ap.add_argument("--diagnose", action="store_true")
    args = ap.parse_args(argv)
    settings = load_settings()
    store = Store(settings.paths.store_dir)
    store.build_text_index()
    t0 = time.perf_counter()
    graph = Graph().build(load_facts(store))
    t1 = time.perf_counter()
    counts = {e: fan_in(graph, e) for e in (False, True)}
    t2 = time.perf_counter()
    print(f"graph build {t1 - t0:.1f}s; fan-in counts (both variants) {t2 - t1:.2f}s; "
          f"{len(counts[False][0])} symbols with strong fan-in, {len(counts[False][1])} weak")
    embedder = st.MemoEmbedder(load_embedder(settings))
    sets = {name: st.load_queries(name) for name in args.queries.split(",")}
    for pair in filter(None, args.realms.split(",")):
        name, realm = pair.split("=", 1)
        for q in sets[name]:
            q["realm"] = realm
    prior = Prior(counts[False])
    prior.store = store
    install(prior)
    if args.diagnose:
        diagnose(store, embedder, sets, prior)
        return 0
    results = []
    for enc, a, b, p, d, pool in itertools.product(
            (False,), (0.0, 0.05, 0.1, 0.25, 0.5), (0.0,),
            (0.0, 0.1, 0.2), (0.0, 0.1), (100,)):
        if a == 0 and (b or enc):
            continue
        prior.counts, prior.a, prior.b, prior.p, prior.d, prior.pool = counts[enc], a, b, p, d, pool
        per = [st.summarize(st.evaluate(store, embedder, st.split(qs, "train"), "hybrid",
                                        DEFAULT_PARAMS)) for qs in sets.values()]
        key = (sum(m["MRR"] for m in per) / len(per), sum(m["R@10"] for m in per) / len(per))
        results.append((key, (enc, a, b, p, d, pool), per))
        print(f"enc={enc:d} a={a} b={b} p={p} d={d} pool={pool}: train MRR "
              + " ".join(f"{m['MRR']:.3f}/{m['R@10']:.2f}" for m in per), flush=True)
    results.sort(key=lambda r: r[0], reverse=True)
    best = results[0][1]
    print("best on train:", best, results[0][0])
    for pool in (50, 300):
        cfg = (*best[:5], pool)
        prior.counts, prior.a, prior.b, prior.p, prior.d, prior.pool = counts[cfg[0]], *cfg[1:]
        per = [st.summarize(st.evaluate(store, embedder, st.split(qs, "train"), "hybrid",
                                        DEFAULT_PARAMS)) for qs in sets.values()]
        print(f"best with pool={pool}: train MRR " + " ".join(f"{m['MRR']:.3f}/{m['R@10']:.2f}" for m in per))
    rows = []
    for label, cfg in (("shipped", (False, 0, 0, 0, 0, 50)), ("fan-in prior", best)):
        enc, a, b, p, d, pool = cfg
        prior.counts, prior.a, prior.b, prior.p, prior.d, prior.pool = counts[enc], a, b, p, d, pool
        q0 = time.perf_counter()
        n = 0
        for name, queries in sets.items():
            for part in ("train", "heldout"):
                qs = st.split(queries, part)
                ranks = st.evaluate(store, embedder, qs, "hybrid", DEFAULT_PARAMS)
                n += len(qs)
                rows.append((label, name, f"{part}/all", st.summarize(ranks)))
                for kind in sorted({q["kind"] for q in qs}):
                    sub = [r for r, q in zip(ranks, qs) if q["kind"] == kind]
                    rows.append((label, name, f"{part}/{kind}", st.summarize(sub)))
        print(f"{label}: {(time.perf_counter() - q0) * 1000 / n:.1f} ms/query (warm embeddings); "
              f"prior re-rank {prior.spent * 1000 / max(prior.calls, 1):.2f} ms/text query")
        prior.spent, prior.calls = 0.0, 0
    print(st.table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
