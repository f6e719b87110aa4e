"""File summaries and relationship descriptions in answers (impact, related, summary).

Owns the cache key of a relationship's model sentence (``relation_key``: the
model and both files' paths and content hashes, so it is never recomputed while
both ends are unchanged), the store lookups of files' summaries and hashes
(``file_infos``), and ``Describer``, which adds them to graph answers: impact
items for files get ``summary``, every ``via`` edge between two files gets
``describe`` and ``describe_source`` (``llm`` when the enrich stage cached a
model sentence for that pair as it is now, else ``evidence``: the sentence
built from the edges, always there). Reads only; the enrich stage writes.
"""

from __future__ import annotations

import logging

from .graph.describe import TOP_PAIRS, edges_between, evidence_sentence, strongest
from .graph.model import repo_name
from .model import content_hash, file_key
from .store.rows import entry_id

log = logging.getLogger(__name__)

FileKey = tuple    # (realm, repo, path)
CHUNK = 400        # keys per IN (...) query
# Items per impact answer whose file summary and via sentences are filled in, best
# first: an answer of 200 items on indexd's own tree held ~580 via edges, and
# describing them all cost 5x the graph walk (median 95 ms vs 18 ms).
DESCRIBED_ITEMS = 50


def relation_key(model: str, src: tuple[str, str], dst: tuple[str, str]) -> str:
    """``src``/``dst``: (path, content hash). The paths too: the sentence names the
    files, and two files with the same text (copies, empty ``__init__.py``) must not
    share one naming the other."""
    return content_hash(f"relation\x1f{model}\x1f{src[0]}\x1f{src[1]}\x1f{dst[0]}\x1f{dst[1]}")


def model_key(settings) -> str:
    """The summarizer's model when model sentences are on, else "" (evidence only)."""
    return settings.ollama_model if settings.summarize == "llm" and settings.ollama_model else ""


def file_infos(store, keys, hashes: bool = True) -> dict[FileKey, dict]:
    """{key: {hash, summary, summary_source}} from the files' own entry rows. Without
    ``hashes`` the daemon's hot text index answers by entry id (no table scan: the
    scan cost 23 ms an answer); ``hash`` is then "" and what it misses is read below."""
    want = {file_key(*k): k for k in keys}
    out: dict[FileKey, dict] = {}
    if not hashes and getattr(store, "text_index", None) is not None and want:
        ids = {entry_id(name, "file", k[2], 0): k for name, k in want.items()}
        for i, row in store.text_index.rows_by_id(list(ids)).items():
            out[ids[i]] = {"hash": "", "summary": row.get("summary") or "",
                           "summary_source": (row.get("summary_source") or "").split(":")[0]}
        want = {name: k for name, k in want.items() if k not in out}
    names = list(want)
    for start in range(0, len(names), CHUNK):
        chunk = ", ".join("'" + n.replace("'", "''") + "'" for n in names[start:start + CHUNK])
        for row in store.entries_where(f"kind = 'file' AND file_key IN ({chunk})",
                                       ["file_key", "content_hash", "summary", "summary_source"]):
            out[want[row["file_key"]]] = {
                "hash": row["content_hash"] or "", "summary": row["summary"] or "",
                "summary_source": (row["summary_source"] or "").split(":")[0]}
    return out


class Describer:
    """Adds summaries and descriptions to answers; ``relations`` gives graph and lock."""

    def __init__(self, store, settings_provider):
        self.store = store
        self._settings = settings_provider

    # -- the sentences for a set of pairs ---------------------------------------
    def sentences(self, evidence: dict[tuple, str], infos: dict) -> dict[tuple, tuple[str, str]]:
        """(src, dst) -> (text, source): the cached model sentence where there is one."""
        out = {pair: (text, "evidence") for pair, text in evidence.items()}
        model = model_key(self._settings())
        if not model or not evidence:
            return out
        keys = {}
        for src, dst in evidence:
            a, b = infos.get(src, {}).get("hash"), infos.get(dst, {}).get("hash")
            if a and b:
                keys[relation_key(model, (src[2], a), (dst[2], b))] = (src, dst)
        try:
            cached = self.store.summary_cache_get(list(keys))
        except Exception as exc:  # noqa: BLE001 - the evidence still answers
            log.warning("relation descriptions not read: %s", exc)
            return out
        for key, (text, source) in cached.items():
            if source == "llm" and text:
                out[keys[key]] = (text, "llm")
        return out

    # -- impact ----------------------------------------------------------------
    def impact(self, answer: dict, graph, lock) -> dict:
        items = [it for b in ("affected", "tests", "docs") for it in answer.get(b) or []]
        items = sorted(items, key=lambda it: -it["score"])[:DESCRIBED_ITEMS]
        if not items:
            return answer
        keys: dict[tuple, FileKey | None] = {}   # (realm, label) -> file, once per answer
        with lock:
            ends = {}
            for it in items:
                for v in it.get("via") or []:
                    src = _memo(keys, graph, it["realm"], v["from"])
                    dst = _memo(keys, graph, it["realm"], v["to"])
                    if src and dst and src != dst:
                        ends[id(v)] = (src, dst)
            evidence = {pair: evidence_sentence(pair[0][2], pair[1][2],
                                                edges_between(graph, *pair))
                        for pair in set(ends.values())}
        files = {(it["realm"], it["repo"], it["path"]) for it in items if it["symbol"] is None}
        infos = self._infos(files | {k for pair in evidence for k in pair}, self._hashes())
        texts = self.sentences(evidence, infos)
        for it in items:
            if it["symbol"] is None:
                info = infos.get((it["realm"], it["repo"], it["path"]), {})
                it["summary"] = info.get("summary", "")
                it["summary_source"] = info.get("summary_source", "")
            for v in it.get("via") or []:
                if id(v) in ends:
                    v["describe"], v["describe_source"] = texts[ends[id(v)]]
        return answer

    # -- search hits' neighbours --------------------------------------------------
    def related(self, hits: list[dict], graph, lock) -> None:
        ends = {}
        with lock:
            for hit in hits:
                here = (hit.get("realm"), hit.get("repo"), hit.get("path"))
                for r in hit.get("related") or []:
                    other = (here[0], r["repo"], r["path"])
                    if other == here or other not in graph.facts:
                        continue
                    ends[id(r)] = (here, other) if r["direction"] == "out" else (other, here)
            evidence = {pair: evidence_sentence(pair[0][2], pair[1][2],
                                                edges_between(graph, *pair))
                        for pair in set(ends.values())}
        if not evidence:
            return
        infos = self._infos({k for pair in evidence for k in pair}) if self._hashes() else {}
        texts = self.sentences(evidence, infos)
        for hit in hits:
            for r in hit.get("related") or []:
                if id(r) in ends:
                    r["describe"], r["describe_source"] = texts[ends[id(r)]]

    # -- one file: its summary and its strongest relationships ---------------------
    def summary(self, key: FileKey, graph, lock, top: int = TOP_PAIRS) -> dict:
        with lock:
            sides = {name: [(other, edges, s, evidence_sentence(
                        *((key[2], other[2]) if name == "uses" else (other[2], key[2])), edges))
                            for other, edges, s in strongest(graph, key, direction, top)]
                     for name, direction in (("uses", "out"), ("used_by", "in"))}
        pairs = {((key, o) if name == "uses" else (o, key)): ev
                 for name, rows in sides.items() for o, _e, _s, ev in rows}
        infos = self._infos({key} | {k for pair in pairs for k in pair}, self._hashes())
        texts = self.sentences(pairs, infos)
        info = infos.get(key, {})
        out = {"realm": key[0], "repo": key[1], "path": key[2],
               "summary": info.get("summary", ""), "summary_source": info.get("summary_source", "")}
        for name, rows in sides.items():
            out[name] = []
            for other, edges, s, ev in rows:
                pair = (key, other) if name == "uses" else (other, key)
                text, source = texts[pair]
                out[name].append({
                    "repo": other[1], "path": other[2], "strength": round(s, 4),
                    "kinds": sorted({e.kind for e in edges}), "edges": len(edges),
                    "evidence": ev, "describe": text, "describe_source": source,
                    "summary": infos.get(other, {}).get("summary", "")})
        return out

    def _hashes(self) -> bool:
        """Content hashes are needed only to find model sentences in the cache."""
        return bool(model_key(self._settings()))

    def _infos(self, keys, hashes: bool = True) -> dict:
        try:
            return file_infos(self.store, keys, hashes) if keys else {}
        except Exception as exc:  # noqa: BLE001 - the graph's part still answers
            log.warning("file summaries not read: %s", exc)
            return {}


def _memo(keys: dict, graph, realm: str, label: str) -> FileKey | None:
    at = (realm, label)
    if at not in keys:
        keys[at] = _key_of(graph, realm, label)
    return keys[at]


def _key_of(graph, realm: str, label: str) -> FileKey | None:
    """The file of a ``via`` label ('repo_name/path::symbol') in ``realm``."""
    name, _, rest = label.partition("::")[0].partition("/")
    for key in graph.by_path.get(rest, ()):
        if key[0] == realm and repo_name(key[1]) == name:
            return key
    return None
