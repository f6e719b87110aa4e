"""The hot vector index's filters answer exactly what a scan of its live rows would.

Filters are kept as integer codes per slot (store/vector_index.py); slots are
reused after deletes and the arrays grow past their first size, so the codes
must follow every put, drop and growth. Checked against a plain Python scan
of the rows the index should hold.
"""

from __future__ import annotations

import numpy as np

from indexd.store.vector_index import VectorIndex

DIM = 8


def _rows(rng, start: int, count: int, files: int) -> list[dict]:
    out = []
    for i in range(start, start + count):
        v = rng.standard_normal(DIM).astype(np.float32)
        out.append({"id": f"e{i}", "file_key": f"f{i % files}", "realm": ("work", "home")[i % 2],
                    "repo": f"/src/r{i % 5}", "repo_name": f"r{i % 5}",
                    "kind": ("function", "method", "class")[i % 3], "lang": "python",
                    "vector": v / np.linalg.norm(v)})
    return out


def _expected(live: dict[str, dict], query, filters: dict, limit: int) -> list[str]:
    def passes(row):
        return all(any(row[f] in values for f in fields.split("|"))
                   for fields, values in filters.items())
    scored = sorted(((float(row["vector"] @ query), i) for i, row in live.items() if passes(row)),
                    key=lambda t: -t[0])
    return [i for _, i in scored[:limit]]


def test_filters_follow_puts_drops_slot_reuse_and_growth():
    rng = np.random.default_rng(7)
    index = VectorIndex(DIM)
    index.build([])
    live: dict[str, dict] = {}
    first = _rows(rng, 0, 1500, files=50)          # past the first 1024 slots: the arrays grow
    index.set_vectors(first)
    live.update({r["id"]: r for r in first})
    dropped = [f"f{k}" for k in range(0, 50, 3)]   # free slots all over the matrix
    index.delete_files(dropped)
    live = {i: r for i, r in live.items() if r["file_key"] not in dropped}
    again = _rows(rng, 2000, 700, files=40)        # reuse the freed slots, other values
    for r in again:
        r["realm"] = "scratch" if int(r["id"][1:]) % 4 == 0 else r["realm"]
    index.set_vectors(again)
    live.update({r["id"]: r for r in again})
    index.delete_repo("home", "/src/r1")
    live = {i: r for i, r in live.items() if not (r["realm"] == "home" and r["repo"] == "/src/r1")}
    query = rng.standard_normal(DIM).astype(np.float32)
    for filters in ({}, {"realm": ["work"]}, {"realm": ["scratch", "home"]}, {"realm": ["nowhere"]},
                    {"kind": ["function", "method"], "realm": ["work"]},
                    {"repo|repo_name": ["r2"]}, {"repo|repo_name": ["/src/r3", "r4"]}):
        got = [i for _, i in index.search(query, filters, 40, -1.0)]
        assert got == _expected(live, query, filters, 40), filters


def test_a_path_pattern_keeps_the_rows_of_the_files_it_names():
    rng = np.random.default_rng(3)
    index = VectorIndex(DIM)
    index.build([])
    paths = ["src/a.py", "src/deep/b.py", "srcs/c.py", "tests/t.py"]
    rows = []
    for i in range(400):
        v = rng.standard_normal(DIM).astype(np.float32)
        rows.append({"id": f"e{i}", "file_key": f"work\x1f/r\x1f{paths[i % 4]}", "realm": "work",
                     "repo": "/r", "repo_name": "r", "kind": "function", "lang": "python",
                     "vector": v / np.linalg.norm(v)})
    index.set_vectors(rows)
    index.delete_files(["work\x1f/r\x1fsrc/deep/b.py"])   # its slots are free, not matched
    query = rng.standard_normal(DIM).astype(np.float32)
    for pattern, kept in (("src", {"src/a.py"}), ("src/**", {"src/a.py"}),
                          ("*.py", {"src/a.py", "srcs/c.py", "tests/t.py"}), ("nowhere", set())):
        got = {i for _, i in index.search(query, {"path": [pattern], "realm": ["work"]}, 400, -np.inf)}
        assert got == {r["id"] for r in rows if r["file_key"].split("\x1f")[2] in kept}, pattern
