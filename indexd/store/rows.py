"""Domain objects -> store rows (pure; runs in parse workers, no lancedb).

The ``search_text`` column is what full-text search sees: names split into
words, signature, doc, path words and, for documents, the start of the text.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import PurePosixPath

from ..model import Entry, FileRecord, ParseResult, content_hash
from ..enrich.file_summary import outline_summary
from ..enrich.summarizer import docstring_summary
from ..parse.languages import is_code
from ..words import expand_text, split_identifier

DOC_BODY_CHARS = 1500   # sections and file entries: searchable text
DOC_CHARS = 600         # symbols: the first paragraph of the docstring
FILE_HEAD_LINES = 40


def entry_id(file_key: str, kind: str, qualname: str, nth: int) -> str:
    return content_hash(f"{file_key}\x1f{kind}\x1f{qualname}\x1f{nth}")


def file_entry(rec: FileRecord, text: str, result: ParseResult) -> Entry:
    lines = text.splitlines()
    head = "\n".join(lines[:FILE_HEAD_LINES])
    name = PurePosixPath(rec.path).name
    title = result.meta.get("title") if result.meta else None
    first = next((ln.strip() for ln in lines if ln.strip()), "")
    return Entry(kind="file", name=name, qualname=rec.path, start_line=1,
                 end_line=max(1, len(lines)), signature=(title or first)[:200],
                 doc="", parent=None, content_hash=rec.hash, body=head[:2000])


def entry_rows(rec: FileRecord, result: ParseResult, text: str,
               summaries: bool = True) -> list[dict]:
    """Rows of one file; ``summaries`` False (``summarize = "off"``): none at all."""
    entries = list(result.entries)
    if not any(e.kind == "file" for e in entries):
        entries.insert(0, file_entry(rec, text, result))
    seen: dict[tuple, int] = {}
    rows = []
    repo_name = PurePosixPath(rec.repo).name
    for e in entries:
        key = (e.kind, e.qualname)
        nth = seen.get(key, 0)
        seen[key] = nth + 1
        rows.append({
            "id": entry_id(rec.key, e.kind, e.qualname, nth), "file_key": rec.key,
            "realm": rec.realm, "repo": rec.repo, "repo_name": repo_name, "path": rec.path,
            "lang": result.language, "kind": e.kind, "name": e.name, "qualname": e.qualname,
            "parent": e.parent, "start_line": e.start_line, "end_line": e.end_line,
            "level": e.level, "signature": e.signature, "doc": e.doc,
            "summary": "", "summary_source": "docstring" if summaries else "",
            "content_hash": e.content_hash,
            "body": e.body, "search_text": search_text(rec.path, e),
            "embed_hash": None, "vector": None,
        })
    code = is_code(result.language)
    for row in rows if summaries else ():
        # Docstring summaries are pure and cheap: computed here, in the parse
        # workers, not by a background stage rewriting every row afterwards.
        # A code file's own entry has no docstring of its own: its head is code.
        if not (code and row["kind"] == "file"):
            row["summary"] = docstring_summary(row)
    for row in rows if summaries and code else ():
        if row["kind"] == "file":   # its module docstring and its outline instead
            row["summary"] = outline_summary(rec.path, rows, text, result.language)
    return rows


def search_text(path: str, e: Entry) -> str:
    """Name words once, the raw name, signature, first doc paragraph, path words.

    Names used to appear three times (raw, split, re-split) and drowned the
    docstring: measured on bench/queries, meaning-only queries found their
    symbol far less often than the docstring's words deserved.
    """
    doc = e.doc.split("\n\n", 1)[0][:DOC_CHARS]
    parts = [" ".join(split_identifier(e.qualname)), e.qualname, e.signature, doc,
             _path_words(path)]
    if e.kind in ("section", "file", "key"):
        parts.append(expand_text(e.body[:DOC_BODY_CHARS]))
    return " \n".join(p for p in parts if p)


@lru_cache(maxsize=64)
def _path_words(path: str) -> str:
    """The same for every entry of a file: split once per file."""
    return " ".join(split_identifier(path))


def link_columns(result: ParseResult) -> dict[str, list]:
    """``link_rows`` by column, without the columns that name the file (the
    packed path adds those per file): the same values, row for row."""
    links, refs = result.links, result.references
    return {
        "line": [ln.line for ln in links] + [r.line for r in refs],
        "kind": [ln.kind for ln in links] + [r.kind for r in refs],
        "target": [ln.target for ln in links] + [r.name for r in refs],
        "scope": [None] * len(links) + [r.scope for r in refs],
        "module": [None] * len(links) + [r.module for r in refs],
        "broken": [ln.broken for ln in links] + [False] * len(refs),
        "how": ["link"] * len(links) + ["reference"] * len(refs),
    }


def link_rows(rec: FileRecord, result: ParseResult) -> list[dict]:
    key, realm, repo, path = rec.key, rec.realm, rec.repo, rec.path  # once, not per row
    rows = [{"file_key": key, "realm": realm, "repo": repo, "path": path,
             "line": ln.line, "kind": ln.kind, "target": ln.target, "scope": None,
             "module": None, "broken": ln.broken, "how": "link"} for ln in result.links]
    rows += [{"file_key": key, "realm": realm, "repo": repo, "path": path,
              "line": r.line, "kind": r.kind, "target": r.name, "scope": r.scope,
              "module": r.module, "broken": False, "how": "reference"} for r in result.references]
    return rows
