"""What gets embedded: one text per entry row, chunks of long sections, cache keys.

Owns the embedding-text recipes (so retrieval quality can be compared by
recipe name), the paragraph chunker for long markdown sections, and the
embedding cache key. Pure string work: must not import torch, the store,
lancedb or the embedders.

Token counts are estimates, not tokenizer output: ``estimate_tokens`` takes
the larger of (whitespace words x 1.3) and (characters / 4). Prose is
word-bound (~1.3 word-pieces per English word), code and paths are
character-bound (identifiers split into many pieces), so the max of the two
rarely undercounts for MiniLM's WordPiece vocabulary.
"""

from __future__ import annotations

import math
import re

from ..model import content_hash
from ..words import split_identifier

# all-MiniLM-L6-v2 reads 256 word-pieces; at ~4 chars a piece that is ~1000 chars.
MAX_CHARS = 1000
DOC_CHARS = 400        # default recipe: leave room for the body head
BODY_LINES = 30
RECIPES = ("default", "name_doc", "body")

_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n")
# A docstring line: optional string prefix and quotes, the text, closing quotes.
_DOC_QUOTES = re.compile(r"""^(?:[rRbBuUfF]{0,2}(?:\"\"\"|'''|"|'))?(.*?)(?:\"\"\"|'''|"|')?$""")


def estimate_tokens(text: str) -> int:
    """Word-pieces, approximately: max(words x 1.3, chars / 4), rounded up."""
    return max(math.ceil(len(text.split()) * 1.3), math.ceil(len(text) / 4))


def embed_hash(text: str, model_id: str) -> str:
    """Cache key of one vector: same text under the same model -> same vector."""
    return content_hash(model_id + "\x1f" + text)


# ---------------------------------------------------------------- entry texts

def embed_text(row: dict, recipe: str = "default", max_chars: int = MAX_CHARS) -> str:
    """The text to embed for one entry row (see module docstring for the cap).

    ``default``  name words, kind, signature, doc (or summary), path, body head
    ``name_doc`` name words, kind, signature, doc (or summary)
    ``body``     name words, kind, signature, path, body head (no doc)
    """
    if recipe not in RECIPES:
        raise ValueError(f"unknown embed recipe {recipe!r}; one of {', '.join(RECIPES)}")
    parts = [_title(row), _clean(row.get("signature") or "")]
    if recipe in ("default", "name_doc"):
        doc_cap = DOC_CHARS if recipe == "default" else max_chars
        parts.append(_truncate(_description(row), doc_cap))
    if recipe in ("default", "body"):
        if row.get("path"):
            parts.append(f"path: {row['path']}")
        parts.append(_body_head(row))
    return _truncate("\n".join(p for p in parts if p), max_chars)


def _title(row: dict) -> str:
    """``function HTTPResponse.read_chunked (http response read chunked)``."""
    qualname = row.get("qualname") or row.get("name") or ""
    words = " ".join(split_identifier(qualname))
    kind = row.get("kind") or ""
    title = f"{kind} {qualname}".strip()
    # The split words are what a natural-language query matches against;
    # the raw qualname keeps exact identifiers for identifier queries.
    return f"{title} ({words})" if words and words != qualname.lower() else title


def _description(row: dict) -> str:
    doc = (row.get("doc") or "").strip()
    summary = (row.get("summary") or "").strip()
    # A docstring-sourced summary repeats the doc; an LLM one adds to it.
    if summary and (not doc or (row.get("summary_source") == "llm" and summary not in doc)):
        return f"{doc}\n{summary}".strip()
    return doc


def _body_head(row: dict) -> str:
    body = row.get("body") or ""
    if row.get("kind") in ("section", "file", "key"):
        return _clean(body)
    lines = _skip_header(body.splitlines(), row.get("signature") or "", row.get("doc") or "")
    return _clean("\n".join(lines[:BODY_LINES]))


def _skip_header(lines: list[str], signature: str, doc: str) -> list[str]:
    """Drop the leading signature and docstring lines: already in the text once."""
    sig = " ".join(signature.split())
    doc_lines = {ln.strip() for ln in doc.splitlines() if ln.strip()}
    for i, line in enumerate(lines):
        s = line.strip()
        core = _DOC_QUOTES.match(s).group(1).strip()
        if not core or core in doc_lines or s.rstrip(":{ ") in sig:
            continue
        return lines[i:]
    return []


def _clean(text: str) -> str:
    """Collapse runs of spaces per line: indentation is free for the tokenizer
    but would eat the character budget."""
    lines = (" ".join(ln.split()) for ln in text.splitlines())
    return "\n".join(ln for ln in lines if ln)


def _truncate(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    # Cut at a word boundary unless that would throw away most of the budget.
    return cut[:space] if space > max_chars * 0.8 else cut


# ------------------------------------------------------------------- chunking

def chunk_text(text: str, max_tokens: int = 512, overlap: int = 50) -> list[str]:
    """Split long section text into chunks of <= max_tokens (estimated).

    Paragraphs (blank-line separated) are packed whole; a paragraph over the
    limit is split at sentence ends and line breaks, then at spaces. Each
    chunk after the first starts with ~``overlap`` tokens of the previous
    chunk's tail so a passage cut at a boundary is still found whole. Only a
    single whitespace-free token longer than the limit can exceed it.
    """
    max_tokens = max(1, max_tokens)
    overlap = max(0, min(overlap, max_tokens // 2))
    pieces = [p for para in _paragraphs(text) for p in _split_to_fit(para, max_tokens)]
    chunks: list[str] = []
    current = ""
    for piece in pieces:
        candidate = f"{current}\n\n{piece}" if current else piece
        if not current or estimate_tokens(candidate) <= max_tokens:
            current = candidate
            continue
        chunks.append(current)
        current = _with_overlap(_tail(current, overlap), piece, max_tokens)
    if current:
        chunks.append(current)
    return chunks


def _paragraphs(text: str) -> list[str]:
    return [p.strip() for p in _BLANK_LINE.split(text) if p.strip()]


def _split_to_fit(para: str, max_tokens: int) -> list[str]:
    if estimate_tokens(para) <= max_tokens:
        return [para]
    sentences = [s for s in _SENTENCE_END.split(para) if s.strip()]
    if len(sentences) > 1:
        units = [u for s in sentences for u in _split_to_fit(s.strip(), max_tokens)]
    else:
        units = para.split()   # one long sentence: fall back to words
    return _pack(units, max_tokens)


def _pack(units: list[str], max_tokens: int) -> list[str]:
    out: list[str] = []
    current = ""
    for unit in units:
        candidate = f"{current} {unit}" if current else unit
        if current and estimate_tokens(candidate) > max_tokens:
            out.append(current)
            current = unit   # may itself be over: an unsplittable token
        else:
            current = candidate
    if current:
        out.append(current)
    return out


def _tail(chunk: str, overlap: int) -> str:
    """The last words of a chunk totalling <= overlap estimated tokens."""
    if overlap <= 0:
        return ""
    words = chunk.split()
    tail: list[str] = []
    for word in reversed(words):
        if estimate_tokens(" ".join([word, *tail])) > overlap:
            break
        tail.insert(0, word)
    return " ".join(tail)


def _with_overlap(tail: str, piece: str, max_tokens: int) -> str:
    if tail:
        candidate = f"{tail}\n\n{piece}"
        if estimate_tokens(candidate) <= max_tokens:
            return candidate
    return piece
