"""The summary stage (LLM mode only): docstring summaries -> LLM summaries.

Rows are stored with a docstring summary (computed while parsing); with
``summarize = "llm"`` this stage, in the daemon's enrich thread after the
embed stage has nothing left, replaces them with model summaries.
LLM summaries are cached by (summarizer model, content hash of the entry),
so an unchanged symbol is never summarized twice, across reindexes and
branch switches. Docstring summaries are cheap and not cached.
"""

from __future__ import annotations

from ..model import content_hash
from ..parse.languages import is_code
from .file_summary import outline_summary


def summary_key(model: str, entry_content_hash: str) -> str:
    """The summary cache's key: one model's summary of one entry's content."""
    return content_hash(f"{model}\x1f{entry_content_hash}")


class SummaryStage:
    def __init__(self, store, summarizer, model_key: str, batch: int = 16):
        self.store = store
        self.summarizer = summarizer
        self.model_key = model_key      # "" for docstring summaries
        self.batch = batch
        self.summarized = 0
        self.reused = 0

    def _key(self, row: dict) -> str:
        return summary_key(self.model_key, row["content_hash"])

    def step(self) -> int:
        rows = self.store.rows_needing_summary(self.batch)
        if not rows:
            return self._files_step()
        keys = [self._key(r) for r in rows]
        cached = self.store.summary_cache_get(keys) if self.model_key else {}
        todo = [(r, k) for r, k in zip(rows, keys) if k not in cached]
        fresh = self.summarizer.summarize([r for r, _ in todo]) if todo else []
        self.summarized += len(fresh)
        self.reused += len(rows) - len(todo)
        results = dict(cached)
        new_llm = {}
        for (row, key), (summary, source) in zip(todo, fresh):
            results[key] = (summary, source)
            if source == "llm":
                new_llm[key] = (summary, source)
        self.store.summary_cache_put(new_llm)
        updates = {r["id"]: _update(*results[k]) for r, k in zip(rows, keys)}
        return self.store.update_entries(updates, guard="summary_source IN ('', 'docstring')",
                                         expect={r["id"]: r["content_hash"] for r in rows})

    def _files_step(self) -> int:
        """File summaries, built from the file's symbol summaries (after those)."""
        rows = self.store.rows_needing_summary(self.batch, files=True)
        if not rows:
            return 0
        keys = [self._key(r) for r in rows]
        cached = self.store.summary_cache_get(keys) if self.model_key else {}
        updates, new_llm = {}, {}
        for row, key in zip(rows, keys):
            if key in cached:
                summary, source = cached[key]
                self.reused += 1
            else:
                where = "file_key = '" + row["file_key"].replace("'", "''") + "' AND kind != 'file'"
                rows_in = self.store.entries_where(
                    where, ["qualname", "summary", "start_line", "kind", "name", "doc", "parent"])
                symbols = [(r["qualname"], r["summary"]) for r in rows_in if r["summary"]]
                summary, source = self.summarizer.summarize_file(row["path"], symbols)
                self.summarized += 1
                if source == "llm":
                    new_llm[key] = (summary, source)
                elif is_code(row.get("lang") or ""):
                    # the model failed: the docstring-and-outline summary the file had
                    # (its stored head holds the module docstring), not a list of names
                    rows_in.sort(key=lambda r: r["start_line"] or 0)
                    summary = outline_summary(row["path"], rows_in, row.get("body") or "",
                                              row.get("lang") or "") or summary
            updates[row["id"]] = _update(summary, source)
        self.store.summary_cache_put(new_llm)
        return self.store.update_entries(updates, guard="summary_source IN ('', 'docstring')",
                                         expect={r["id"]: r["content_hash"] for r in rows})


def _update(summary: str, source: str) -> dict:
    """An entry's new columns. A model summary is part of the text the entry is
    embedded from (texts.embed_text), so its vector is dropped to be computed
    again from the text as it now is (the embed stage goes first)."""
    update = {"summary": summary, "summary_source": _stored(source)}
    if source == "llm":
        update |= {"vector": None, "embed_hash": None}
    return update


def _stored(source: str) -> str:
    """What to record: a fallback is marked so the stage does not retry it forever.

    Results show the part before the colon ("docstring"); reindexing the file
    (or changing it) makes it eligible for the model again.
    """
    return "llm" if source == "llm" else f"{source or 'docstring'}:llm-failed"
