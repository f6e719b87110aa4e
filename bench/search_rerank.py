"""Fit the search's learned second pass on the train split; report held-out.

The daemon's own query code in process (``indexd.query.hybrid``) against an
indexed, embedded home, as bench/search_tune.py does. For every query of the
train split, the head of the fused pool (``--depth`` entries) is turned into
feature rows (``indexd.query.rerank.FEATURES``) and labelled by the query's
expected entries; a linear model is fitted with a pairwise logistic loss (each
expected entry above each other one, every query weighing the same) and an L2
penalty chosen by 5-fold cross-validation over the train queries. The
held-out split never feeds a choice: it is only reported, next to the
shipped fusion without the second pass and each single leg.

    INDEXD_HOME=... .venv/bin/python bench/search_rerank.py \\
        --queries stdlib,click --realms stdlib=std,click=click [--write] [--doc]

``--write`` stores the fitted model in indexd/query/rerank_weights.json.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from search_tune import MemoEmbedder, load_queries, report, split  # noqa: E402

from indexd.config import load_settings  # noqa: E402
from indexd.enrich.embedder import load_embedder  # noqa: E402
from indexd.query import rerank as rr  # noqa: E402
from indexd.query.hybrid import _hydrate, candidates, cosines  # noqa: E402
from indexd.query.ranking import DEFAULT_PARAMS  # noqa: E402
from indexd.query.search import SearchRequest  # noqa: E402
from indexd.store import Store  # noqa: E402

LAMBDAS = (0.001, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
PLAIN = replace(DEFAULT_PARAMS, rerank=None)


def wanted(q: dict) -> set:
    return {(e["path"], e["symbol"]) for e in q["expected"]}


def label(row: dict) -> tuple:
    return (row.get("path"), None if row.get("kind") == "file" else row.get("qualname"))


def pools(store, embedder, queries, depth: int, leg_depth: int = 0) -> list[dict]:
    """Per query: the head's feature rows (rr.head_of: the fused pool's first
    ``depth``, plus each leg's first ``leg_depth``) and which are expected."""
    out = []
    shape = {"depth": depth, "leg_depth": leg_depth}
    for q in queries:
        req = SearchRequest(query=q["query"], limit=10, mode="hybrid", realm=q.get("realm"))
        ordered, legs, qvec = candidates(store, embedder, req, PLAIN)
        ordered, size = rr.head_of(ordered, legs, shape, lambda row: row["id"])
        head = _hydrate(store, ordered[:size])
        X = np.array(rr.feature_rows(head, legs, cosines(store, qvec, head, legs), q["query"]),
                     dtype=np.float64)
        y = np.array([label(e["row"]) in wanted(q) for e in head], dtype=bool)
        out.append({"q": q, "X": X, "y": y})
    return out


def _pairs(data: list[dict], mu, sd):
    """Per query with an expected entry in its head: its weight and its
    (positive - negative) differences. Each query set weighs the same (a
    small project counts as much as the stdlib), each query the same within it."""
    sizes: dict[str, int] = {}
    for d in data:
        sizes[d["q"]["set"]] = sizes.get(d["q"]["set"], 0) + 1
    out = []
    for d in data:
        if not d["y"].any() or d["y"].all():
            continue
        Z = (d["X"] - mu) / sd
        P, N = Z[d["y"]], Z[~d["y"]]
        out.append((1.0 / (len(sizes) * sizes[d["q"]["set"]]),
                    (P[:, None, :] - N[None, :, :]).reshape(-1, Z.shape[1])))
    return out


def fit(data: list[dict], lam: float):
    """Weights on standardized features, and the standardization."""
    from scipy.optimize import minimize

    X = np.vstack([d["X"] for d in data])
    mu, sd = X.mean(axis=0), X.std(axis=0)
    sd[sd == 0] = 1.0
    groups = _pairs(data, mu, sd)

    def loss(w):
        total, grad = lam * w @ w, 2 * lam * w
        for weight, D in groups:
            m = D @ w
            total += weight * np.logaddexp(0, -m).mean()
            s = -1.0 / (1.0 + np.exp(m))   # d/dm log(1 + e^-m)
            grad = grad + weight * (D * s[:, None]).mean(axis=0)
        return total, grad

    w = minimize(loss, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B").x
    return w, mu, sd


def head_rr(d: dict, w, mu, sd) -> float:
    """Reciprocal rank (within 10) of the first expected entry of a re-ordered head."""
    order = np.argsort(-(((d["X"] - mu) / sd) @ w), kind="stable")
    hits = np.nonzero(d["y"][order][:10])[0]
    return 1.0 / (hits[0] + 1) if len(hits) else 0.0


def set_mean(values: list[tuple[str, float]]) -> float:
    """Mean over query sets of each set's mean (how search_tune.py chooses too)."""
    per: dict[str, list[float]] = {}
    for name, v in values:
        per.setdefault(name, []).append(v)
    return sum(sum(v) / len(v) for v in per.values()) / max(len(per), 1)


def choose_lambda(train: list[dict], folds: int = 5) -> tuple[float, dict]:
    """The L2 penalty with the best mean cross-validated MRR@10 over the train queries."""
    scores = {}
    for lam in LAMBDAS:
        vals = []
        for k in range(folds):
            fit_on = [d for i, d in enumerate(train) if i % folds != k]
            held = [d for i, d in enumerate(train) if i % folds == k]
            w, mu, sd = fit(fit_on, lam)
            vals.extend((d["q"]["set"], head_rr(d, w, mu, sd)) for d in held)
        scores[lam] = set_mean(vals)
    return max(scores, key=lambda k: (scores[k], k)), scores


def model_from(w, mu, sd, depth: int, lam: float, note: str, leg_depth: int = 0) -> dict:
    raw = w / sd   # a score on raw features: the constant term cannot change an order
    return {"depth": depth, "leg_depth": leg_depth, "l2": lam, "note": note,
            "weights": {f: round(float(v), 6) for f, v in zip(rr.FEATURES, raw)}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", default="stdlib,click")
    ap.add_argument("--realms", default="")
    ap.add_argument("--depth", type=int, default=50)
    ap.add_argument("--leg-depth", type=int, default=0,
                    help="also re-score each leg's first N hits the fusion left below the head")
    ap.add_argument("--write", action="store_true", help="store the model (rerank_weights.json)")
    ap.add_argument("--doc", action="store_true",
                    help="write the table into docs/benchmarks.md (region search_rerank)")
    args = ap.parse_args(argv)
    settings = load_settings()
    store = Store(settings.paths.store_dir)
    store.build_text_index()     # what the daemon's worker does at start
    store.build_vector_index()
    embedder = MemoEmbedder(load_embedder(settings))
    sets = {name: load_queries(name) for name in args.queries.split(",")}
    for pair in filter(None, args.realms.split(",")):
        name, realm = pair.split("=", 1)
        for q in sets[name]:
            q["realm"] = realm
    every = [q for qs in sets.values() for q in qs]
    data = pools(store, embedder, every, args.depth, args.leg_depth)
    for part in ("train", "heldout"):
        sub = [d for d in data if d["q"]["split"] == part]
        inside = sum(bool(d["y"].any()) for d in sub)
        print(f"{part}: {inside}/{len(sub)} queries have an expected entry in the fused "
              f"head of {args.depth} + each leg's {args.leg_depth} (the second pass's ceiling)")
    train = [d for d in data if d["q"]["split"] == "train"]
    lam, cv = choose_lambda(train)
    print("cross-validated train MRR@10 (head only, mean over sets) per L2: "
          + ", ".join(f"{k}: {v:.3f}" for k, v in cv.items()) + f"; chosen {lam}")
    shipped = rr.shipped_weights()
    if shipped is not None:
        raw = np.array([float(shipped["weights"][f]) for f in rr.FEATURES])
        zero, one = np.zeros(len(raw)), np.ones(len(raw))
        print(f"the shipped model ({rr.WEIGHTS_FILE.name}) on the same train heads: MRR@10 "
              f"{set_mean([(d['q']['set'], head_rr(d, raw, zero, one)) for d in train]):.3f}")
    w, mu, sd = fit(train, lam)
    model = model_from(w, mu, sd, args.depth, lam,
                       f"fitted by bench/search_rerank.py on the train split of "
                       f"{args.queries} ({len(train)} queries); held-out never used",
                       args.leg_depth)
    order = sorted(zip(rr.FEATURES, w), key=lambda t: -abs(t[1]))
    print("standardized weights: " + ", ".join(f"{f} {v:+.2f}" for f, v in order))
    learned = replace(DEFAULT_PARAMS, rerank=model)
    configs = [("keyword", "keyword", PLAIN), ("semantic", "semantic", PLAIN),
               ("hybrid, fused only", "hybrid", PLAIN), ("hybrid + 2nd pass", "hybrid", learned)]
    table = report(store, embedder, sets, configs)
    print(table)
    if args.write:
        rr.WEIGHTS_FILE.write_text(json.dumps(model, indent=1) + "\n")
        print(f"wrote {rr.WEIGHTS_FILE}")
    if args.doc:
        write_doc(table, args, len(train), lam, order)
    return 0


def write_doc(table: str, args, n_train: int, lam: float, order) -> None:
    import datetime as dt
    import os

    from agreement import replace_region

    top = ", ".join(f"`{f}` {v:+.2f}" for f, v in order[:8])
    body = (f"`bench/search_rerank.py`, {dt.date.today()}, {os.cpu_count()} cores: the fused "
            f"head of {args.depth}, plus each leg's first {args.leg_depth} hits the fusion left below it, re-scored by a linear model fitted on the {n_train} train "
            f"queries of bench/queries/{{{args.queries}}}.json (pairwise logistic loss, L2 "
            f"{lam} chosen by 5-fold cross-validation within train); held-out rows are only "
            f"reported. Largest standardized weights: {top}.\n\n```text\n{table}\n```\n\n"
            f"Reproduce: the home of bench/search_tune.py, then `INDEXD_HOME=... "
            f".venv/bin/python bench/search_rerank.py --queries {args.queries} --realms "
            f"{args.realms} --depth {args.depth} --leg-depth {args.leg_depth}`\n")
    replace_region(HERE.parent / "docs" / "benchmarks.md", "search_rerank", body,
                   "## Search: the learned second pass (bench/search_rerank.py)")


if __name__ == "__main__":
    sys.exit(main())
