"""Which embedding text recipe retrieves best: encode every entry under each recipe.

Runs where a GPU is lent (the same all-MiniLM-L6-v2 weights, cast to fp16 so
they travel under the transfer limit; cosine of fp16 vs fp32 vectors >= 0.999),
or on the CPU given time. Input: a gzipped JSON written by
`bench/recipe_quality.py --prepare` (entries with one text per recipe, and the
query set). Output: per recipe and query, the top-50 entry ids by cosine.

    python3 bench/recipe_gpu.py DATA.json.gz MODEL_DIR OUT.json
"""

from __future__ import annotations

import gzip
import json
import sys
import time


def main(data_path: str, model_dir: str, out_path: str) -> int:
    import torch
    from sentence_transformers import SentenceTransformer

    device = "cuda" if torch.cuda.is_available() else "cpu"
    data = json.load(gzip.open(data_path, "rt"))
    model = SentenceTransformer(model_dir, device=device)
    entries = data["entries"]
    queries = data["queries"]["queries"]
    qtexts = [q["query"] for q in queries]
    t0 = time.perf_counter()
    qv = model.encode(qtexts, batch_size=256, convert_to_tensor=True, normalize_embeddings=True)
    out = {"device": device, "n_entries": len(entries), "recipes": {}}
    for recipe in entries[0]["texts"]:
        texts = [e["texts"][recipe] for e in entries]
        t1 = time.perf_counter()
        ev = model.encode(texts, batch_size=512, convert_to_tensor=True, normalize_embeddings=True)
        enc_s = time.perf_counter() - t1
        scores = qv @ ev.T
        top = torch.topk(scores, k=50, dim=1).indices.tolist()
        out["recipes"][recipe] = {"encode_s": round(enc_s, 2),
                                  "top": {q["id"]: [entries[i]["id"] for i in row]
                                          for q, row in zip(queries, top)}}
    out["total_s"] = round(time.perf_counter() - t0, 2)
    json.dump(out, open(out_path, "w"))
    print(json.dumps({r: v["encode_s"] for r, v in out["recipes"].items()}), out["device"])
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
