"""The daemon's hot vector index: every entry's vector in one numpy matrix.

Like text_index.py, a derived view of the ``entries`` table kept in step by
the store's writes and rebuilt when the daemon starts. Exact cosine search
(the vectors are L2-normalised, so a dot product) over a float32 matrix:
LanceDB's flat search read the whole vector column per query (28 ms median
on the stdlib's 21k entries, 2 cores), a matrix product over memory takes a
few. Exact, so results are the table's own, order for order.
"""

from __future__ import annotations

import logging
from typing import Iterable

from .. import pathglob
from .build_window import BuildWindow, held_while_building

log = logging.getLogger(__name__)

COLUMNS = ["id", "file_key", "realm", "repo", "repo_name", "kind", "lang", "vector"]
FILTER_FIELDS = ("realm", "repo", "repo_name", "kind", "lang")


class VectorIndex(BuildWindow):
    def __init__(self, dim: int):
        import numpy as np

        self._np = np
        self.dim = dim
        self._init_window()
        self._meta: dict[str, list] = {f: [] for f in FILTER_FIELDS + ("id", "file_key")}
        self._clear(1024)   # the matrix, its live mask, and the maps from ids and files
        self.ready = False
        self.failed: str | None = None   # why a write missed it (store._turn_off)

    @property
    def vectors(self) -> int:
        return int(self._live.sum())

    # -- writes ---------------------------------------------------------------
    def build(self, batches: Iterable, total: int = 0) -> int:
        """From Arrow record batches of COLUMNS (vectors copied column-wise: a
        Python list per vector would cost ~10x the matrix while building).

        Writes that reached this index before the build began were stored in
        the table before the scan below reads it: the scan has them, and
        keeping theirs too would hold those vectors twice. Writes arriving
        during the scan wait for its end (build_window.py)."""
        with self._building(lambda: self._clear(total)):
            for batch in batches:   # reads the table: never under self._lock
                col = batch.column("vector")
                meta = {f: batch.column(f).to_pylist() for f in self._meta}
                if col.null_count:   # flatten() would skip the nulls and misalign rows
                    vectors = col.to_pylist()
                else:
                    vectors = col.flatten().to_numpy(zero_copy_only=False).reshape(-1, self.dim)
                with self._lock:
                    for j in range(len(batch)):
                        if vectors[j] is not None:
                            self._put({**{f: meta[f][j] for f in meta}, "vector": vectors[j]})
        self.ready = True
        return self.vectors

    def _clear(self, size: int) -> None:
        np = self._np
        size = max(size, 1024)
        self._mat = np.zeros((size, self.dim), dtype=np.float32)
        self._live = np.zeros(size, dtype=bool)
        self._meta = {f: [] for f in self._meta}
        # Filter fields again as small integers per slot: a filter is one
        # np.isin over them (at 270k entries a Python pass over the values
        # cost ~10 ms per field and query).
        self._codes = {f: np.full(size, -1, dtype=np.int32) for f in FILTER_FIELDS}
        self._code_of: dict[str, dict[str, int]] = {f: {} for f in FILTER_FIELDS}
        self._pos: dict[str, int] = {}
        self._by_file: dict[str, set[int]] = {}
        self._free: list[int] = []

    @held_while_building
    def replace_files(self, file_keys: list[str], rows: list[dict]) -> None:
        for key in file_keys:
            self._drop_file(key)
        for row in rows:
            self._put(row)

    @held_while_building
    def delete_files(self, file_keys: list[str]) -> None:
        for key in file_keys:
            self._drop_file(key)

    @held_while_building
    def delete_repo(self, realm: str, repo: str) -> None:
        for i, (r, p) in enumerate(zip(self._meta["realm"], self._meta["repo"])):
            if r == realm and p == repo and self._meta["id"][i] is not None:
                self._drop(i)

    @held_while_building
    def set_vectors(self, rows: list[dict]) -> None:
        for row in rows:
            i = self._pos.get(row["id"])
            if i is not None:
                self._drop(i)
            self._put(row)

    def _put(self, row: dict) -> None:
        vec = row.get("vector")
        if vec is None or len(vec) != self.dim:
            return
        if self._free:
            i = self._free.pop()
        else:
            i = len(self._meta["id"])
            for values in self._meta.values():
                values.append(None)
            if i >= len(self._mat):
                self._grow()
        self._mat[i] = vec
        self._live[i] = True
        for f in self._meta:
            self._meta[f][i] = row.get(f) or ""
        for f, codes in self._code_of.items():
            self._codes[f][i] = codes.setdefault(row.get(f) or "", len(codes))
        self._pos[row["id"]] = i
        self._by_file.setdefault(row.get("file_key") or "", set()).add(i)

    def _grow(self) -> None:
        np = self._np
        self._mat = np.concatenate([self._mat, np.zeros_like(self._mat)])
        self._live = np.concatenate([self._live, np.zeros_like(self._live)])
        self._codes = {f: np.concatenate([c, np.full_like(c, -1)]) for f, c in self._codes.items()}

    def _drop_file(self, key: str) -> None:
        for i in list(self._by_file.get(key, ())):
            self._drop(i)

    def _drop(self, i: int) -> None:
        self._live[i] = False
        ident, key = self._meta["id"][i], self._meta["file_key"][i]
        self._pos.pop(ident, None)
        self._by_file.get(key, set()).discard(i)
        for values in self._meta.values():
            values[i] = None
        for codes in self._codes.values():
            codes[i] = -1
        self._free.append(i)

    # -- reads ----------------------------------------------------------------
    def search(self, vector, filters: dict[str, list[str]], limit: int,
               min_similarity: float) -> list[tuple[float, str]]:
        """(cosine, entry id) of the nearest live vectors passing the filters."""
        np = self._np
        q = np.asarray(vector, dtype=np.float32)
        if q.shape != (self.dim,):   # a query embedded by the model the store switched from
            return []
        with self._lock:
            n = len(self._meta["id"])
            mask = self._live[:n].copy()
            for fields, values in filters.items():
                if fields == pathglob.FILTER_KEY:
                    mask &= self._in_paths(values, n)
                    continue
                allowed = np.zeros(n, dtype=bool)
                for f in fields.split("|"):
                    codes = self._code_of[f]
                    wanted = [codes[v] for v in values if v in codes]
                    if wanted:
                        allowed |= np.isin(self._codes[f][:n], wanted)
                mask &= allowed
            if not mask.any():
                return []
            # One product over the whole matrix beats copying the rows a mask keeps.
            sims = np.where(mask, self._mat[:n] @ q, -np.inf)
            k = min(limit, int(mask.sum()))
            top = np.argpartition(-sims, k - 1)[:k]
            top = top[np.argsort(-sims[top], kind="stable")]
            return [(float(sims[i]), self._meta["id"][i]) for i in top
                    if sims[i] >= min_similarity]

    def _in_paths(self, patterns: list[str], n: int):
        """Rows of the files whose path one of ``patterns`` matches (per file:
        a few thousand keys, not a row each); under self._lock."""
        allowed = self._np.zeros(n, dtype=bool)
        for key, rows in self._by_file.items():
            path = key.split("\x1f", 2)[-1]   # model.file_key: realm, repo, path
            if rows and any(pathglob.matches(p, path) for p in patterns):
                allowed[[i for i in rows if i < n]] = True
        return allowed

    def similarities(self, vector, ids: list[str]) -> dict[str, float]:
        """Cosine of the query to each of these entries that has a vector."""
        np = self._np
        q = np.asarray(vector, dtype=np.float32)
        if q.shape != (self.dim,):
            return {}
        with self._lock:
            pos = [(i, self._pos[i]) for i in ids if i in self._pos]
            if not pos:
                return {}
            sims = self._mat[[p for _, p in pos]] @ q
        return {i: float(s) for (i, _), s in zip(pos, sims)}
