"""Choose the search ranking's parameters on the train split; report held-out.

Runs the daemon's own query code in-process (``indexd.query.hybrid.search``)
against an indexed, embedded store (``INDEXD_HOME``; e.g. the home that
``bench/search_quality.py --keep`` leaves, or ``indexctl realm add std DIR &&
indexd index`` over its corpus). Query vectors are computed once and reused.

``--grid`` tries every combination of the fusion weights below on the train
split of each query set, picks the best by mean MRR@10 over the sets (ties:
R@10), and prints train and held-out numbers for the chosen parameters next
to the shipped defaults and each single leg. Held-out numbers never feed the
choice. Without ``--grid`` it only reports the shipped defaults.

    INDEXD_HOME=... .venv/bin/python bench/search_tune.py [--queries stdlib,click] [--grid]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from indexd.config import load_settings  # noqa: E402
from indexd.enrich.embedder import load_embedder  # noqa: E402
from indexd.query.hybrid import fused_search  # noqa: E402
from indexd.query.ranking import DEFAULT_PARAMS, RankParams  # noqa: E402
from indexd.query.search import SearchRequest  # noqa: E402
from indexd.store import Store  # noqa: E402


class MemoEmbedder:
    """The real embedder, each query encoded once across all the runs."""

    def __init__(self, inner):
        self.inner, self.memo = inner, {}
        self.model_id = inner.model_id

    def encode_query(self, text: str):
        if text not in self.memo:
            self.memo[text] = self.inner.encode_query(text)
        return self.memo[text]


def load_queries(name: str) -> list[dict]:
    path = Path(name) if name.endswith(".json") else HERE / "queries" / f"{name}.json"
    data = json.loads(path.read_text())
    for q in data["queries"]:
        q["set"] = path.stem
    return data["queries"]


def first_rank(results: list[dict], q: dict) -> int | None:
    wanted = {(e["path"], e["symbol"]) for e in q["expected"]}
    for i, hit in enumerate(results[:10], 1):
        if (hit["path"], hit["symbol"]) in wanted:
            return i
    return None


def evaluate(store, embedder, queries, mode: str, params: RankParams, realm=None) -> list:
    ranks = []
    for q in queries:
        req = SearchRequest(query=q["query"], limit=10, mode=mode, realm=realm or q.get("realm"))
        ranks.append(first_rank(fused_search(store, embedder, req, params)["results"], q))
    return ranks


def summarize(ranks: list) -> dict:
    n = len(ranks) or 1
    return {"n": len(ranks), "R@1": sum(r == 1 for r in ranks) / n,
            "R@10": sum(r is not None for r in ranks) / n,
            "MRR": sum(1 / r for r in ranks if r) / n}


def grid() -> list[RankParams]:
    out = []
    for k, wi_kw, wt_kw in itertools.product((10, 30, 60), (1.0, 2.0), (0.25, 0.5, 0.75, 1.0)):
        out.append(replace(DEFAULT_PARAMS, fusion="rrf", rrf_k=k, weights={
            "identifier": {"keyword": wi_kw, "semantic": 1.0},
            "text": {"keyword": wt_kw, "semantic": 1.0}}))
    for wi_kw, wt_kw in itertools.product((0.5, 1.0, 2.0), (0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0)):
        out.append(replace(DEFAULT_PARAMS, fusion="convex", weights={
            "identifier": {"keyword": wi_kw, "semantic": 1.0},
            "text": {"keyword": wt_kw, "semantic": 1.0}}))
    return out


def field_grid() -> list[RankParams]:
    return [replace(DEFAULT_PARAMS, field_boosts={**DEFAULT_PARAMS.field_boosts, "name_words": w})
            for w in (0.0, 0.1, 0.25, 0.5, 1.0, 2.0)]


def body_grid(boosts: dict) -> list[RankParams]:
    """The body field's weight, chosen in hybrid mode: it is there for the
    sentences the semantic leg half-finds (docs/decisions.md, "Keyword search")."""
    return [replace(DEFAULT_PARAMS, field_boosts={**boosts, "body_words": w})
            for w in (0.0, 0.3, 0.45, 0.6, 0.8, 1.0, 1.5, 2.0)]


def choose(store, embedder, sets, candidates, mode: str):
    """The candidate with the best mean train MRR@10 over the sets (ties: R@10)."""
    best, best_key = None, None
    for params in candidates:
        per_set = [summarize(evaluate(store, embedder, split(qs, "train"), mode, params))
                   for qs in sets.values()]
        key = (sum(m["MRR"] for m in per_set) / len(per_set),
               sum(m["R@10"] for m in per_set) / len(per_set))
        if best_key is None or key > best_key:
            best, best_key = params, key
    return best, best_key


def describe(p: RankParams) -> str:
    return json.dumps({"fusion": p.fusion, "rrf_k": p.rrf_k, "weights": p.weights,
                       "parent_share": p.parent_share, "field_boosts": p.field_boosts})


def split(queries, name):
    return [q for q in queries if q.get("split") == name]


def table(rows: list[tuple[str, str, str, dict]]) -> str:
    head = f"{'config':24} {'set':8} {'split/kind':18} {'n':>4} {'R@1':>6} {'R@10':>6} {'MRR@10':>7}"
    lines = [head, "-" * len(head)]
    for config, qset, part, m in rows:
        lines.append(f"{config:24} {qset:8} {part:18} {m['n']:>4} {100 * m['R@1']:6.1f} "
                     f"{100 * m['R@10']:6.1f} {m['MRR']:7.3f}")
    return "\n".join(lines)


def report(store, embedder, sets, configs) -> str:
    rows = []
    for label, mode, params in configs:
        for name, queries in sets.items():
            for part in ("train", "heldout"):
                qs = split(queries, part)
                ranks = evaluate(store, embedder, qs, mode, params)
                rows.append((label, name, f"{part}/all", summarize(ranks)))
                for kind in sorted({q["kind"] for q in qs}):
                    sub = [r for r, q in zip(ranks, qs) if q["kind"] == kind]
                    rows.append((label, name, f"{part}/{kind}", summarize(sub)))
    return table(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", default="stdlib")
    ap.add_argument("--grid", action="store_true")
    ap.add_argument("--doc", action="store_true",
                    help="write the table into docs/benchmarks.md (region search_tune)")
    ap.add_argument("--realms", default="",
                    help="SET=REALM,... : search each query set within one realm of the home "
                         "(e.g. stdlib=std,click=click when one home holds both corpora)")
    ap.add_argument("--modes", default="keyword,semantic,hybrid", help="single legs to report")
    ap.add_argument("--table-fts", action="store_true",
                    help="keyword leg from the table's FTS index (what offline readers use), "
                         "not the daemon's hot text index")
    args = ap.parse_args(argv)
    settings = load_settings()
    store = Store(settings.paths.store_dir)
    if not args.table_fts:
        store.build_text_index()   # what the daemon's worker does at start
    embedder = MemoEmbedder(load_embedder(settings)) if args.modes != "keyword" else None
    sets = {name: load_queries(name) for name in args.queries.split(",")}
    for pair in filter(None, args.realms.split(",")):
        name, realm = pair.split("=", 1)
        for q in sets[name]:
            q["realm"] = realm
    modes = args.modes.split(",")
    configs = [(m if m != "hybrid" else "hybrid (shipped)", m, DEFAULT_PARAMS) for m in modes]
    if args.grid:
        fields, key = choose(store, embedder, sets, field_grid(), "keyword")
        print(f"field boosts chosen on train (keyword leg): {json.dumps(fields.field_boosts)} "
              f"(train MRR {key[0]:.3f})")
        configs.append(("keyword (train-chosen)", "keyword", fields))
        if embedder is not None:
            fields, key = choose(store, embedder, sets, body_grid(fields.field_boosts), "hybrid")
            print(f"body weight chosen on train (hybrid): {fields.field_boosts['body_words']} "
                  f"(train MRR {key[0]:.3f})")
            candidates = [replace(p, field_boosts=fields.field_boosts) for p in grid()]
            best, key = choose(store, embedder, sets, candidates, "hybrid")
            print(f"fusion chosen on train: {describe(best)} (train MRR {key[0]:.3f})")
            shares = [replace(best, parent_share=x) for x in (0.0, 0.1, 0.25, 0.5, 1.0)]
            best, key = choose(store, embedder, sets, shares, "hybrid")
            print(f"parent share chosen on train: {best.parent_share} (train MRR {key[0]:.3f})")
            configs.append(("hybrid (train-chosen)", "hybrid", best))
    table = report(store, embedder, sets, configs)
    print(table)
    if args.doc:
        write_doc(table, args, sum(len(v) for v in sets.values()), store.count("entries"))
    return 0


def write_doc(table: str, args, n_queries: int, entries: int) -> None:
    import datetime as dt
    import os

    sys.path.insert(0, str(HERE))
    from agreement import replace_region

    body = (f"The daemon's own search code in process (hot text index built as the daemon "
            f"does), {n_queries} queries of bench/queries/{{{args.queries}}}.json, each set "
            f"searched within its realm ({args.realms or 'one realm'}) of one home "
            f"({entries} entries); parameters chosen on the train split only (`--grid`), "
            f"held-out rows never used to choose. {dt.date.today()}, {os.cpu_count()} cores.\n\n"
            f"```text\n{table}\n```\n\nReproduce: index and embed the stdlib corpus of "
            "bench/search_quality.py and click 8.1.8's src/ as realms std and click of one "
            "INDEXD_HOME, then `INDEXD_HOME=... .venv/bin/python bench/search_tune.py "
            f"--queries {args.queries} --realms {args.realms} [--grid] --doc`\n")
    replace_region(HERE.parent / "docs" / "benchmarks.md", "search_tune", body,
                   "## Search ranking (bench/search_tune.py)")


if __name__ == "__main__":
    sys.exit(main())
