"""A built ``Graph`` on disk, so a restart answers ``impact`` in seconds.

A full build of the stdlib's graph takes 17-25 s after a start; reading it back
from a pickle takes under a second. The snapshot is a cache, never the truth:
the caller compares every file's facts in the store with the snapshot's
(``changed_keys``) and applies the files that differ as ordinary updates, so a
snapshot written minutes or days ago is as good as a fresh build once those are
applied. One is refused (``load`` answers None and says why in the log) when it
was written by other code (a digest of the package's sources), another Python,
or cannot be read; the caller then builds.

The file is a header pickle, then the graph's. Kind and how codes are numbered
per process as they are first used (model.ref_code, packed._code): the header
carries the writer's tables; reference kinds are translated to the reader's
codes, and edge kinds and hows (fixed lists, grown only by a new kind) are taken
when the reader's are a prefix of the writer's. A pickle can run code, so
only a file owned by this user and writable by no one else is read; it lives in
the store's folder, which is the user's (docs/decisions.md, "Graph snapshot").
"""

from __future__ import annotations

import copyreg
import logging
import os
import pickle
import stat
import sys
import tempfile
import time
from pathlib import Path

from . import model, packed
from ..stat_sidecar import PACKAGE, files_digest
from .graph import Graph
from .model import FileFacts

log = logging.getLogger(__name__)

NAME = "graph_snapshot.pickle"
FORMAT = 1


def code_digest() -> str:
    """Every source file of the package: the graph's edges depend on the loader,
    the resolvers and the model, so any change builds afresh."""
    return files_digest(sorted(PACKAGE.rglob("*.py")))


def _header(build_s: float) -> dict:
    return {"format": FORMAT, "python": list(sys.version_info[:2]), "code": code_digest(),
            "ref_kinds": list(model._REF_KINDS), "edge_kinds": list(packed._KINDS),
            "hows": list(packed._HOWS), "build_s": build_s, "written": time.time()}


# -- FileFacts, columns as they are ------------------------------------------
# FileFacts' own __reduce__ rebuilds every reference as a tuple (kinds by name):
# 2.5 s of a 5 s dump on the stdlib. Here its packed columns go as they are, and
# the reader translates their kind codes through the header's table.
_SLOTS = FileFacts.__slots__


def _facts_raw(f: FileFacts):
    return _facts_back, tuple(getattr(f, s, None) for s in _SLOTS)


def _facts_back(*values) -> FileFacts:
    f = FileFacts.__new__(FileFacts)
    for slot, value in zip(_SLOTS, values):
        setattr(f, slot, value)
    return f


class _Unpickler(pickle.Unpickler):
    """Reads FileFacts with their kind codes turned into this process's: the reader
    numbered kinds as it read the store (loader.load_facts), in another order."""

    def __init__(self, fh, writers_kinds: list[str]):
        super().__init__(fh)
        codes = bytes(model.ref_code(k) for k in writers_kinds)
        self._table = codes + bytes(256 - len(codes))

    def find_class(self, module: str, name: str):
        if module == __name__ and name == "_facts_back":
            return self._facts_back
        return super().find_class(module, name)

    def _facts_back(self, *values) -> FileFacts:
        f = _facts_back(*values)
        f._kinds = f._kinds.translate(self._table)
        return f


def save(graph: Graph, store_dir: Path, build_s: float) -> Path | None:
    """Write ``graph`` beside the store (temp file, fsync, rename); None, logged,
    when it could not be written (a snapshot is only ever a shortcut)."""
    path = Path(store_dir) / NAME
    _drop_leftovers(path)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{NAME}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(_header(build_s), fh, protocol=pickle.HIGHEST_PROTOCOL)
            pickler = pickle.Pickler(fh, protocol=pickle.HIGHEST_PROTOCOL)
            pickler.dispatch_table = copyreg.dispatch_table.copy()
            pickler.dispatch_table[FileFacts] = _facts_raw
            pickler.dump(graph)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        return path
    except (OSError, pickle.PicklingError, RecursionError, TypeError) as exc:
        log.warning("graph snapshot not written: %s", exc)
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        return None


def _drop_leftovers(path: Path) -> None:
    """A write cut by a kill leaves its temp file (as big as a snapshot). Only the
    daemon holding the instance lock writes one, one write at a time, so any is stale."""
    for stale in path.parent.glob(f".{NAME}.*.tmp"):
        try:
            stale.unlink()
        except OSError as exc:
            log.warning("stale graph snapshot temp file not removed: %s", exc)


def discard(store_dir: Path) -> None:
    try:
        (Path(store_dir) / NAME).unlink(missing_ok=True)
    except OSError as exc:
        log.warning("graph snapshot not removed: %s", exc)


def load(store_dir: Path) -> tuple[Graph, dict] | None:
    """(graph, header) from the store's snapshot, or None: none there, or refused
    (the reason logged)."""
    path = Path(store_dir) / NAME
    try:
        with open(path, "rb") as fh:
            why = _untrusted(os.fstat(fh.fileno()))
            if why:
                log.warning("graph snapshot %s ignored: %s", path, why)
                return None
            header = pickle.load(fh)
            why = _incompatible(header)
            if why:
                log.info("graph snapshot ignored: %s", why)
                return None
            _adopt_edge_codes(header)
            graph = _Unpickler(fh, header["ref_kinds"]).load()
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - any unreadable snapshot means build instead
        log.warning("graph snapshot %s unreadable, building instead: %s: %s",
                    path, type(exc).__name__, exc)
        return None
    if not isinstance(graph, Graph):
        log.warning("graph snapshot %s holds a %s, building instead", path, type(graph).__name__)
        return None
    return graph, header


def _untrusted(st: os.stat_result) -> str | None:
    if st.st_uid != os.getuid():
        return f"owned by uid {st.st_uid}, not this user"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "writable by others"
    return None


def _incompatible(header) -> str | None:
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        return "another snapshot format"
    if header.get("python") != list(sys.version_info[:2]):
        return f"written by Python {header.get('python')}"
    if header.get("code") != code_digest():
        return "written by other indexd code"
    if len(header.get("ref_kinds") or ()) > 256:
        return "more than 256 reference kinds"
    for ours, theirs in ((packed._KINDS, header["edge_kinds"]), (packed._HOWS, header["hows"])):
        if theirs[:len(ours)] != ours:
            return "edge kind codes numbered otherwise in this process"
    return None


def _adopt_edge_codes(header: dict) -> None:
    """The writer's edge kinds and hows past ours (a prefix of theirs: _incompatible)."""
    packed._KINDS.extend(header["edge_kinds"][len(packed._KINDS):])
    packed._HOWS.extend(header["hows"][len(packed._HOWS):])


# -- what changed since ---------------------------------------------------------
def same_facts(a: FileFacts, b: FileFacts) -> bool:
    """Two facts of one file equal, field by field (FileFacts has no __eq__)."""
    return all(getattr(a, s, None) == getattr(b, s, None) for s in _SLOTS)


def changed_keys(graph: Graph, facts: list[FileFacts]) -> list[tuple]:
    """File keys whose facts in the store differ from the snapshot's: new, gone, or
    changed (in the store's order, then the gone ones)."""
    now = {f.key: f for f in facts}
    out = [k for k, f in now.items() if k not in graph.facts or not same_facts(f, graph.facts[k])]
    return out + sorted(k for k in graph.facts if k not in now)
