"""The daemon's hot keyword index: entries in a tantivy index, field by field.

A derived view of the ``entries`` table, kept in step by the store's own
writes (``Store.attach_text_index``) and rebuilt from the table when the
daemon starts, so it is never a second source of truth. Why tantivy beside
LanceDB's own full-text index (docs/decisions.md): it scores fields
separately (a word in the name counts far more than one in the body), its
segments take single-row updates without going stale (LanceDB's index
leaves every re-written row unindexed, so search slowed to 110+ ms while
vectors were being filled in), and it answers in about a millisecond.

Stored fields carry what a search hit shows, so a keyword answer needs no
table scan; bodies are kept only as a head for snippets (a code symbol's body
is indexed, below its name and doc, but not stored).

Ranking a pool needs only a few short fields per row (names, kind, path), and
fetching a stored document cost 11 us (2.2 of a 3.7 ms keyword leg for a pool
of 200): those fields are also kept in memory, under a ``slot`` number that a
fast field gives each document, and a search returns stubs whose stored rows
are fetched only for the hits an answer shows (``query/hybrid._hydrate``).
"""

from __future__ import annotations

import logging
import sys
from typing import Iterable

from .. import pathglob
from .build_window import BuildWindow, held_while_building
from ..words import dotted_module, expand_text, split_identifier

log = logging.getLogger(__name__)

# Indexed with English stemming; weights are the query-time boosts
# (chosen on the train split, bench/search_tune.py).
# ``text`` is the row's search_text (what the table's own FTS index holds:
# name words, signature, first doc paragraph, path words, a section's text);
# ``name_words`` again on its own, so a name match can weigh more than a word
# anywhere (measured against per-field BM25 sums, which let short fields
# swamp the docstring: bench/search_tune.py); ``body_words``: a code symbol's
# stored body (its whole docstring, comments, the names it uses), for the
# sentence whose words are past the docstring's first paragraph.
TEXT_FIELDS = ("text", "name_words", "body_words")
# name_words: the train split chose 0 of 0..2; body_words: see ranking.RankParams.
DEFAULT_BOOSTS = {"text": 1.0, "name_words": 0.0, "body_words": 1.5}
# Exact terms: filters and identifier lookups; the first five are also shown.
RAW_FIELDS = ("id", "realm", "repo", "kind", "lang", "file_key", "repo_name", "name_lc",
              "qualname_lc", "module_lc")
RAW_STORED = RAW_FIELDS[:5]
STORED = ("path", "name", "qualname", "signature", "doc", "summary", "summary_source", "body")
INT_FIELDS = ("start_line", "end_line")
# What ranking reads of every pool row (query/ranking.py, query/search.py):
# kept in memory per slot, so the pool costs no stored-document fetch.
RANKED = ("id", "realm", "repo", "kind", "path", "name", "qualname")
BODY_HEAD = 400       # snippets show a section's first non-empty line
INDEX_BODY_KINDS = ("section", "file", "key")   # sections' snippets come from the body
COLUMNS = ["id", "file_key", "realm", "repo", "repo_name", "path", "lang", "kind", "name",
           "qualname", "start_line", "end_line", "signature", "doc", "summary", "summary_source",
           "body", "search_text"]
WRITER_HEAP = 64 << 20
ANALYZER = "words_en"   # simple split, lower case, English stop words, Snowball stems


def _analyzer():
    import tantivy

    return (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(40)).filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.ascii_fold()).filter(tantivy.Filter.stopword("english"))
            .filter(tantivy.Filter.stemmer("english")).build())


def _schema():
    import tantivy

    b = tantivy.SchemaBuilder()
    for name in TEXT_FIELDS:
        b.add_text_field(name, stored=False, tokenizer_name=ANALYZER, index_option="freq")
    for name in RAW_FIELDS:
        b.add_text_field(name, stored=name in RAW_STORED, tokenizer_name="raw",
                         index_option="basic")
    for name in STORED:
        b.add_text_field(f"s_{name}", stored=True, tokenizer_name="raw", index_option="basic")
    for name in INT_FIELDS:
        b.add_integer_field(name, stored=True)
    b.add_integer_field("slot", fast=True)   # this document's key in TextIndex._ranked
    return b.build()


def fingerprint(row: dict) -> int:
    """What a row's document is made of, as one number: equal rows give equal
    documents (every field ``_doc_fields`` and ``_ranked`` read is a column)."""
    return hash(tuple(row.get(c) for c in COLUMNS))


def _ranked(row: dict) -> tuple:
    """The row's RANKED fields, repeated strings shared (many rows per file, many
    methods named ``__init__``): 7 MB for the stdlib's 21k entries, 8 without."""
    name = sys.intern(row.get("name") or "")
    qual = row.get("qualname") or ""
    return (row.get("id") or "", sys.intern(row.get("realm") or ""),
            sys.intern(row.get("repo") or ""), sys.intern(row.get("kind") or ""),
            sys.intern(row.get("path") or ""), name, name if qual == name else qual)


def _doc_fields(row: dict) -> dict:
    qual = row.get("qualname") or ""
    name = row.get("name") or ""
    body_kind = row.get("kind") in INDEX_BODY_KINDS   # their body is in search_text already
    fields = {
        "text": row.get("search_text") or "",
        "name_words": " ".join(split_identifier(qual or name)),
        "body_words": "" if body_kind else expand_text(row.get("body") or ""),
        "name_lc": name.lower(), "qualname_lc": qual.lower(),
        # A file answers to its module's dotted name (`logging.handlers`).
        "module_lc": (dotted_module(row.get("path") or "").lower()
                      if row.get("kind") == "file" else ""),
    }
    for key in RAW_FIELDS[:7]:
        fields[key] = row.get(key) or ""
    for key in STORED:
        value = row.get(key) or ""
        if key == "body":   # code snippets are signatures: only sections need a head
            value = value[:BODY_HEAD] if row.get("kind") in INDEX_BODY_KINDS else ""
        fields[f"s_{key}"] = value
    fields["start_line"] = int(row.get("start_line") or 1)
    fields["end_line"] = int(row.get("end_line") or 1)
    return fields


class TextIndex(BuildWindow):
    """tantivy in memory; one writer (the store's writes), many readers."""

    def __init__(self, boosts: dict | None = None):
        import tantivy

        self._tantivy = tantivy
        self.schema = _schema()
        self.index = tantivy.Index(self.schema)      # RAM directory
        self.index.register_tokenizer(ANALYZER, _analyzer())
        # Reloaded by _commit only: with the default policy (on commit) the
        # reader's own reload contended with ours and every other save's
        # reload took 100 ms more (bench/freshness.py: hot index p95 175 ms).
        self.index.config_reader("Manual", 1)
        self._writer = self.index.writer(WRITER_HEAP, 1)
        self._init_window()
        self.boosts = dict(boosts or DEFAULT_BOOSTS)
        self.ready = False
        self.failed: str | None = None   # why a write missed it (store._turn_off)
        self.docs = 0
        # slot -> RANKED fields of the document holding it; file_key -> entry
        # id -> (slot, fingerprint of the row's indexed fields). A slot is never
        # reused, so what it maps to never changes: a searcher older than a
        # delete may miss one (it then fetches the document).
        self._ranked: dict[int, tuple] = {}
        self._files: dict[str, dict[str, tuple[int, int]]] = {}
        self._next_slot = 0
        self.added = 0      # documents written since start (status: keyword_index.written)

    @property
    def ranked(self) -> int:
        """Documents whose ranked fields are in memory (``docs`` when in step)."""
        return len(self._ranked)

    # -- writes (called under the store's writer lock) -----------------------
    def build(self, batches: Iterable[list[dict]]) -> int:
        """Index every row of the entries table; searches use it from now on.

        What reached this index before the build began (an annotation, a
        summary) was stored before the scan below reads the table: the scan
        has it, a second document would duplicate it. What arrives during the
        scan waits for its end (build_window.py)."""
        n = 0
        with self._building(self._clear):
            for rows in batches:   # reads the table: never under self._lock
                with self._lock:
                    for row in rows:
                        self._add_kept(row)
                        n += 1
        with self._lock:
            self._commit()
            self.ready = True
        log.info("text index built docs=%s", n)
        return n

    def _clear(self) -> None:
        self._writer.delete_all_documents()
        self._ranked.clear()
        self._files.clear()

    @held_while_building
    def replace_files(self, file_keys: list[str], rows: list[dict]) -> bool:
        """These files' rows are now exactly ``rows`` (the store's write); False
        when every document already was what they make.

        Only rows whose indexed fields changed are written again: a save of a
        277-entry file that edits one function rewrites one document, not 277
        (building a document, its body words above all, was most of a save's
        hot-index time: bench/freshness.py)."""
        by_file: dict[str, list[dict]] = {key: [] for key in file_keys}
        for row in rows:
            by_file.setdefault(row.get("file_key") or "", []).append(row)
        changed = False
        for key, file_rows in by_file.items():
            changed |= self._replace_file(key, file_rows)
        if changed:
            self._commit()
        return changed

    def _replace_file(self, key: str, rows: list[dict]) -> bool:
        held = self._files.pop(key, {})
        now: dict[str, tuple[int, int]] = {}
        changed = False
        for row in rows:
            entry_id = row["id"]
            mark = fingerprint(row)
            old = held.pop(entry_id, None)
            if old is not None and old[1] == mark and entry_id not in now:
                now[entry_id] = old
                continue
            if old is not None:
                self._drop(entry_id, old[0])
            now[entry_id] = (self._add(row), mark)
            changed = True
        for entry_id, (slot, _) in held.items():
            self._drop(entry_id, slot)
            changed = True
        if now:
            self._files[key] = now
        return changed

    @held_while_building
    def upsert(self, rows: list[dict]) -> None:
        for row in rows:
            key = row.get("file_key") or ""
            old = self._files.get(key, {}).pop(row["id"], None)
            if old is not None:
                self._drop(row["id"], old[0])
            self._add_kept(row)
        self._commit()

    @held_while_building
    def delete_files(self, file_keys: list[str]) -> None:
        for key in file_keys:
            self._writer.delete_documents_by_term("file_key", key)
            for slot, _ in self._files.pop(key, {}).values():
                self._ranked.pop(slot, None)
        self._commit()

    @held_while_building
    def delete_repo(self, realm: str, repo: str) -> None:
        self._writer.delete_documents_by_query(self._and_terms({"realm": realm, "repo": repo}))
        gone = {s for s, r in self._ranked.items() if r[1] == realm and r[2] == repo}
        for slot in gone:
            del self._ranked[slot]
        self._files = {k: kept for k, held in self._files.items()
                       if (kept := {i: v for i, v in held.items() if v[0] not in gone})}
        self._commit()

    def _add(self, row: dict) -> int:
        slot = self._next_slot
        self._next_slot += 1
        self._writer.add_document(self._tantivy.Document(**_doc_fields(row), slot=slot))
        self._ranked[slot] = _ranked(row)
        self.added += 1
        return slot

    def _add_kept(self, row: dict) -> None:
        """Add a document and remember its slot and fingerprint under its file."""
        key = row.get("file_key") or ""
        self._files.setdefault(key, {})[row["id"]] = (self._add(row), fingerprint(row))

    def _drop(self, entry_id: str, slot: int) -> None:
        self._writer.delete_documents_by_term("id", entry_id)
        self._ranked.pop(slot, None)

    def _commit(self) -> None:
        self._writer.commit()
        self.index.reload()
        self.docs = self.index.searcher().num_docs

    # -- reads ----------------------------------------------------------------
    def _and_terms(self, terms: dict):
        q = self._tantivy.Query
        Occur = self._tantivy.Occur
        return q.boolean_query([(Occur.Must, q.term_query(self.schema, k, v))
                                for k, v in terms.items()])

    def search(self, words: list[str], filters: dict[str, list[str]], limit: int,
               boosts: dict | None = None) -> list[dict]:
        """Stub rows (RANKED fields and ``_score``; ``rows_by_id`` has the rest)
        for words in any field, best first."""
        text = " ".join(w for w in words if w.isalnum() or "_" in w)
        if not text.strip():
            return []
        try:
            boosts = boosts or self.boosts
            fields = [f for f in TEXT_FIELDS if boosts.get(f, 0) > 0]
            query, _errors = self.index.parse_query_lenient(text, fields, field_boosts=boosts)
        except ValueError:
            return []
        return self._run(self._filtered(query, filters), limit, stubs=True)

    def exact(self, names: list[str], filters: dict[str, list[str]], limit: int) -> list[dict]:
        """Stub rows whose lower-cased name or qualified name is one of ``names``."""
        q = self._tantivy.Query
        Occur = self._tantivy.Occur
        clauses = [(Occur.Should, q.term_query(self.schema, field, n))
                   for n in names for field in ("name_lc", "qualname_lc", "module_lc")]
        if not clauses:
            return []
        return self._run(self._filtered(q.boolean_query(clauses), filters), limit, stubs=True)

    def rows_by_id(self, ids: list[str]) -> dict[str, dict]:
        """The stored rows of these entry ids (the vector leg's hits)."""
        if not ids:
            return {}
        q = self._tantivy.Query
        Occur = self._tantivy.Occur
        query = q.boolean_query([(Occur.Should, q.term_query(self.schema, "id", i)) for i in ids])
        return {row["id"]: row for row in self._run(query, len(ids))}

    def _filtered(self, query, filters: dict[str, list[str]]):
        """filters: field (or "a|b" for either field) -> values, any of which may
        match; pathglob.FILTER_KEY -> path patterns."""
        q = self._tantivy.Query
        Occur = self._tantivy.Occur
        clauses = [(Occur.Must, query)]
        for fields, values in filters.items():
            if fields == pathglob.FILTER_KEY:   # the stored path, matched whole
                options = [(Occur.Should, q.regex_query(self.schema, "s_path", pathglob.to_regex(v)))
                           for v in values]
            else:
                options = [(Occur.Should, q.term_query(self.schema, f, v))
                           for f in fields.split("|") for v in values]
            clauses.append((Occur.Must, q.boolean_query(options)))
        return q.boolean_query(clauses) if len(clauses) > 1 else query

    def _run(self, query, limit: int, stubs: bool = False) -> list[dict]:
        searcher = self.index.searcher()
        hits = searcher.search(query, limit, count=False).hits
        slots = (searcher.fast_field_values("slot", [a for _, a in hits]) if stubs
                 else [None] * len(hits))
        out = []
        for (score, address), slot in zip(hits, slots):
            ranked = self._ranked.get(slot) if slot is not None else None
            if ranked is not None:
                row = dict(zip(RANKED, ranked), _stub=True)
            else:
                row = _stored_row(searcher.doc(address))
            row["_score"] = float(score)
            out.append(row)
        return out


def _stored_row(doc) -> dict:
    row = {key: doc.get_first(f"s_{key}") or "" for key in STORED}
    row.update({key: doc.get_first(key) or "" for key in RAW_STORED})
    row["start_line"] = doc.get_first("start_line")
    row["end_line"] = doc.get_first("end_line")
    return row
