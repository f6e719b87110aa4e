"""Compare embedding text recipes on bench/queries/stdlib.json (semantic and hybrid).

Step 1 (here): `--prepare HOME` reads an indexed store (an INDEXD_HOME whose realm
is the stdlib corpus of bench/search_quality.py) and writes `.gpu/data.json.gz`
(each entry's text under every recipe of indexd.enrich.texts) and `.gpu/model`
(the packaged all-MiniLM-L6-v2, fp16). Step 2 (a GPU, or the CPU given
patience): `python3 bench/recipe_gpu.py .gpu/data.json.gz .gpu/model OUT.json`.
Step 3 (here): `--score HOME OUT.json` prints Recall@1/@10 and MRR@10 for the
semantic leg per recipe and for hybrid (RRF with the keyword leg run here), and
writes the table into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from agreement import format_table, replace_region  # noqa: E402

RRF_K = 60


def open_store(home: str):
    from indexd.config import load_settings
    from indexd.store import Store

    settings = load_settings(env={"INDEXD_HOME": home})
    return Store(settings.paths.store_dir)


def prepare(home: str) -> None:
    from indexd.enrich.embedder import default_model_path
    from indexd.enrich.texts import RECIPES, embed_text

    store = open_store(home)
    cols = ["id", "path", "lang", "kind", "name", "qualname", "signature", "doc", "summary", "body"]
    rows = store.entries_where(None, cols)
    out = HERE.parent / ".gpu"
    out.mkdir(exist_ok=True)
    data = {"entries": [{"id": r["id"], "path": r["path"], "qualname": r["qualname"], "kind": r["kind"],
                         "texts": {rc: embed_text(r, rc) for rc in RECIPES}} for r in rows],
            "queries": json.loads((HERE / "queries" / "stdlib.json").read_text())}
    with gzip.open(out / "data.json.gz", "wt") as fh:
        json.dump(data, fh)
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(default_model_path()), device="cpu")
    model.half()
    model.save(str(out / "model"))
    print(f"wrote {len(rows)} entries x {len(RECIPES)} recipes to {out}")


def metrics(ranked: dict[str, list[tuple]], queries: list[dict]) -> tuple[float, float, float]:
    r1 = r10 = mrr = 0.0
    for q in queries:
        want = {(e["path"], e["symbol"]) for e in q["expected"]}
        got = ranked.get(q["id"], [])[:10]
        hits = [i for i, key in enumerate(got) if key in want]
        r1 += bool(hits and hits[0] == 0)
        r10 += bool(hits)
        mrr += 1.0 / (hits[0] + 1) if hits else 0.0
    n = len(queries)
    return 100 * r1 / n, 100 * r10 / n, mrr / n


def keyword_top(store, queries: list[dict], depth: int = 50) -> dict[str, list[tuple]]:
    from indexd.query.search import SearchRequest, keyword_leg

    out = {}
    for q in queries:
        scored = keyword_leg(store, SearchRequest(query=q["query"], limit=depth))
        out[q["id"]] = [(r["path"], r["qualname"]) for _, r in scored[:depth]]
    return out


def rrf(*legs: list[tuple]) -> list[tuple]:
    scores: dict[tuple, float] = {}
    for leg in legs:
        for i, key in enumerate(leg):
            scores[key] = scores.get(key, 0.0) + 1.0 / (RRF_K + i + 1)
    return sorted(scores, key=lambda k: -scores[k])


def score(home: str, result_path: str, no_doc: bool) -> None:
    store = open_store(home)
    res = json.loads(Path(result_path).read_text())
    queries = json.loads((HERE / "queries" / "stdlib.json").read_text())["queries"]
    ids = {r["id"]: (r["path"], r["qualname"]) for r in store.entries_where(None, ["id", "path", "qualname"])}
    kw = keyword_top(store, queries)
    rows = [("keyword (reference)", *fmt(metrics(kw, queries)))]
    for recipe, v in res["recipes"].items():
        sem = {qid: [ids[i] for i in top if i in ids] for qid, top in v["top"].items()}
        hyb = {qid: rrf(kw.get(qid, []), sem.get(qid, [])) for qid in sem}
        rows.append((f"semantic, recipe {recipe}", *fmt(metrics(sem, queries))))
        rows.append((f"hybrid, recipe {recipe}", *fmt(metrics(hyb, queries))))
    table = format_table(rows, ("mode / recipe", "R@1", "R@10", "MRR@10"))
    print(table)
    if not no_doc:
        body = (f"{len(queries)} queries of bench/queries/stdlib.json over the stdlib corpus of "
                f"bench/search_quality.py ({res['n_entries']} entries); vectors from all-MiniLM-L6-v2 "
                f"cast to fp16 and computed on {res['device']} (the weights and texts are the ones the "
                f"daemon uses on the CPU). {time.strftime('%Y-%m-%d')}.\n\n```\n{table}\n```\n\n"
                "Reproduce: `bench/recipe_quality.py --prepare HOME`, then "
                "`python3 bench/recipe_gpu.py .gpu/data.json.gz .gpu/model OUT.json` (GPU or CPU), "
                "then `bench/recipe_quality.py --score HOME OUT.json`.\n")
        replace_region(HERE.parent / "docs" / "benchmarks.md", "recipes", body,
                       "## Embedding text recipes (bench/recipe_quality.py)")


def fmt(m: tuple) -> tuple:
    return f"{m[0]:.1f}", f"{m[1]:.1f}", f"{m[2]:.3f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prepare", metavar="HOME")
    ap.add_argument("--score", nargs=2, metavar=("HOME", "RESULT"))
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.prepare:
        prepare(args.prepare)
    if args.score:
        score(*args.score, args.no_doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
