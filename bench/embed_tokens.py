"""Embedding speed at two input lengths (embed_max_tokens), on real entry texts.

    INDEXD_HOME=... .venv/bin/python bench/embed_tokens.py [--realm std] [--texts 500]
        [--tokens 256,128] [--threads 1,2] [--repeat 3] [--json]

Reads the entry rows of one realm from an indexed store (read only), builds
each entry's text with the daemon's own recipe (``indexd.enrich.texts``,
``embed_recipe`` of the settings), and reports:

- how many of the realm's texts are longer than each cut, in the model's own
  word-pieces (special tokens included, as the model sees them);
- texts/s of ``--texts`` evenly spaced texts through the daemon's embedder
  (``load_embedder``: ONNX, its batch size), per cut and thread count, median
  of ``--repeat`` runs after a warm-up.

``--trims`` instead reports what shorter recipes would save: the realm's
total word-pieces (each text cut at 256, as the model reads it) for the
default recipe and for trimmed variants (no ``path:`` line, fewer body lines,
fewer class-body lines). The embedder sorts each batch by length, so its cost
follows total word-pieces: a trim that saves under a quarter of them cannot
give the 1.3x the speed issue asks, whatever it does to quality.

Search quality at a cut is measured separately: re-embed a copy of the home
(``INDEXD_EMBED_MAX_TOKENS=128 indexd index`` re-embeds everything, the model
id changes) and run ``bench/search_tune.py`` on both (docs/decisions.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexd.config import load_settings  # noqa: E402
from indexd.enrich.embedder import default_model_path, load_embedder  # noqa: E402
from indexd.enrich import texts as recipe  # noqa: E402
from indexd.enrich.texts import embed_text  # noqa: E402
from indexd.store import Store  # noqa: E402

COLUMNS = ["id", "path", "lang", "kind", "name", "qualname", "signature", "doc", "summary", "body"]


def realm_rows(settings, realm: str) -> list[dict]:
    store = Store(settings.paths.store_dir)
    rows = store.entries_where(f"realm = '{realm}'", columns=COLUMNS)
    rows.sort(key=lambda r: r["id"])    # a stable order, so a sample is repeatable
    return rows


def realm_texts(settings, realm: str) -> list[str]:
    return [embed_text(r, settings.embed_recipe) for r in realm_rows(settings, realm)]


def token_counts(texts: list[str]) -> list[int]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(default_model_path() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return [len(e.ids) for e in tok.encode_batch(texts)]


MODEL_LIMIT = 256   # all-MiniLM-L6-v2's max_seq_length: what it reads of a text

# (label, body lines, class-body lines, keep the path line)
TRIMS = [("default", recipe.BODY_LINES, recipe.BODY_LINES, True),
         ("no path line", recipe.BODY_LINES, recipe.BODY_LINES, False),
         ("body 20 lines", 20, 20, True),
         ("body 15 lines", 15, 15, True),
         ("class body 8 lines", recipe.BODY_LINES, 8, True),
         ("body 20, class 8", 20, 8, True),
         ("body 15, class 5, no path", 15, 5, False)]


def trimmed_text(row: dict, body: int, class_body: int, path: bool, name: str) -> str:
    shipped = recipe.BODY_LINES
    recipe.BODY_LINES = class_body if row.get("kind") == "class" else body
    try:
        return embed_text(row if path else {**row, "path": ""}, name)
    finally:
        recipe.BODY_LINES = shipped


def trims(settings, realm: str) -> dict:
    """Total word-pieces the model reads (cut at 256) per trimmed recipe."""
    rows = realm_rows(settings, realm)
    cap = min(settings.embed_max_tokens, MODEL_LIMIT)
    out = []
    for label, body, class_body, path in TRIMS:
        counts = token_counts([trimmed_text(r, body, class_body, path, settings.embed_recipe)
                               for r in rows])
        out.append({"trim": label, "tokens": sum(min(n, cap) for n in counts)})
    base = out[0]["tokens"] or 1
    for r in out:
        r["share"] = round(r["tokens"] / base, 3)
    return {"realm": realm, "texts": len(rows), "cap": cap, "trims": out}


def spaced(items: list, n: int) -> list:
    step = max(1, len(items) // n)
    return items[::step][:n]


def texts_per_s(settings, texts: list[str], tokens: int, threads: int, repeat: int) -> dict:
    embedder = load_embedder(replace(settings, embed_max_tokens=tokens), threads=threads)
    embedder.encode(texts[:32])             # warm-up: the first runs allocate
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        embedder.encode(texts)
        times.append(time.perf_counter() - start)
    secs = statistics.median(times)
    return {"tokens": tokens, "threads": threads, "model_id": embedder.model_id,
            "texts_per_s": round(len(texts) / secs, 1), "seconds": [round(t, 2) for t in times]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--realm", default="std")
    ap.add_argument("--texts", type=int, default=500)
    ap.add_argument("--tokens", default="256,128")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--trims", action="store_true",
                    help="word-pieces saved by trimmed recipes, instead of speed")
    args = ap.parse_args()
    settings = replace(load_settings(), embed_model="default")
    if args.trims:
        report = trims(settings, args.realm)
        if args.json:
            print(json.dumps(report))
            return
        print(f"{report['texts']} {args.realm} texts, word-pieces the model reads "
              f"(each text cut at {report['cap']}):")
        for r in report["trims"]:
            print(f"  {r['trim']:28} {r['tokens']:>10,}  {r['share']:.3f} of default "
                  f"({1 / r['share']:.2f}x fewer)")
        return
    cuts = [int(t) for t in args.tokens.split(",")]
    texts = realm_texts(settings, args.realm)
    counts = token_counts(texts)
    lengths = {"realm": args.realm, "texts": len(texts),
               "median_tokens": statistics.median(counts),
               "over": {c: round(sum(n > c for n in counts) / len(counts), 3) for c in cuts}}
    sample = spaced(texts, args.texts)
    runs = [texts_per_s(settings, sample, c, t, args.repeat)
            for t in (int(x) for x in args.threads.split(",")) for c in cuts]
    report = {"lengths": lengths, "sample": len(sample), "runs": runs,
              "load": os.getloadavg()[0]}
    if args.json:
        print(json.dumps(report))
        return
    print(f"{lengths['texts']} {args.realm} texts, median {lengths['median_tokens']} word-pieces; "
          + ", ".join(f"{v:.1%} over {c}" for c, v in lengths["over"].items()))
    for r in runs:
        print(f"tokens={r['tokens']:<4} threads={r['threads']}  {r['texts_per_s']:7.1f} texts/s "
              f"(median of {r['seconds']} s for {len(sample)})  {r['model_id']}")
    print(f"load average at the end {report['load']:.2f}")


if __name__ == "__main__":
    main()
