"""What gets embedded: the texts of each entry row, chunks of long sections, cache keys.

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
from ..parse.languages import is_code
from ..words import split_identifier

# all-MiniLM-L6-v2 reads 256 word-pieces; at ~4 chars a piece that is ~1000 chars.
MAX_CHARS = 1000
DOC_CHARS = 400        # default recipe: leave room for the body head
BODY_LINES = 30
# ``pooled`` (the default since 2026-12-06) embeds a documented code entry twice:
# ``default``'s text and a short one of its name and the docstring's first
# sentence; the entry's vector is the normalised sum of the two
# (docs/decisions.md, "Embedding text recipe"). ``default`` keeps its name so
# stores and configs written before stay valid.
RECIPES = ("pooled", "default", "name_doc", "body")
PART_SEP = "\x1e"     # joins an entry's texts into the one text its cache key hashes
FIRST_SENTENCE_CHARS = 300

_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n")
_WORD = re.compile(r"\S+")   # str.split()'s words, with their offsets
# A docstring line: optional string prefix and quotes, the text, closing quotes.
_PARAGRAPH_END = re.compile(r"\n\s*\n")
_FIRST_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_DOC_QUOTES = re.compile(r"""^(?:[rRbBuUfF]{0,2}(?:\"\"\"|'''|"|'))?(.*?)(?:\"\"\"|'''|"|')?$""")


def estimate_tokens(text: str) -> int:
    """Word-pieces, approximately: max(words x 1.3, chars / 4), rounded up."""
    return max(math.ceil(len(text.split()) * 1.3), math.ceil(len(text) / 4))


def embed_hash(text: str, model_id: str) -> str:
    """Cache key of one vector: same text under the same model -> same vector."""
    return content_hash(model_id + "\x1f" + text)


# ---------------------------------------------------------------- entry texts

def embed_text(row: dict, recipe: str = "pooled", max_chars: int = MAX_CHARS) -> str:
    """One row's texts as one string (``embed_parts`` joined by PART_SEP): what
    its cache key hashes, so the key changes whenever any of its texts does."""
    return PART_SEP.join(embed_parts(row, recipe, max_chars))


def embed_parts(row: dict, recipe: str = "pooled", max_chars: int = MAX_CHARS) -> list[str]:
    """The texts to embed for one entry row; its vector pools theirs.

    ``pooled``   ``default``'s text, and for a code entry with a docstring a
                 second: its name's words and the docstring's first sentence
    ``default``  name words, kind, signature, doc (or summary), path, body head
    ``name_doc`` name words, kind, signature, doc (or summary)
    ``body``     name words, kind, signature, path, body head (no doc)
    """
    if recipe not in RECIPES:
        raise ValueError(f"unknown embed recipe {recipe!r}; one of {', '.join(RECIPES)}")
    main = _single_text(row, "default" if recipe == "pooled" else recipe, max_chars)
    doc = _doc_sentence(row) if recipe == "pooled" else ""
    return [main, doc] if doc else [main]


def _single_text(row: dict, recipe: str, max_chars: int) -> str:
    parts = [_title(row), _clean(row.get("signature") or "")]
    if recipe in ("default", "name_doc"):
        doc_cap = DOC_CHARS if recipe == "default" else max_chars
        parts.append(_truncate(_description(row), doc_cap))
    if recipe in ("default", "body"):
        if row.get("path"):
            parts.append(f"path: {row['path']}")
        parts.append(_body_head(row))
    return _truncate("\n".join(p for p in parts if p), max_chars)


def _doc_sentence(row: dict) -> str:
    """``deep copy: Deep copy operation on arbitrary Python objects.``: a code
    entry's name words and its docstring's first sentence, or "" (no docstring,
    or not code: a section's or key's text is all there is of it)."""
    doc = (row.get("doc") or "").strip()
    if not doc or row.get("kind") in ("file", "section", "key") or not is_code(row.get("lang") or ""):
        return ""
    paragraph = " ".join(_PARAGRAPH_END.split(doc, 1)[0].split())
    sentence = _FIRST_SENTENCE_END.split(paragraph, 1)[0][:FIRST_SENTENCE_CHARS]
    words = " ".join(split_identifier(row.get("qualname") or row.get("name") or ""))
    return f"{words}: {sentence}" if words else sentence


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
    if row.get("kind") == "file" and is_code(row.get("lang") or ""):
        # A code file's summary (enrich/file_summary.py) repeats its symbols'
        # names and docs, which have vectors of their own: left out, so the
        # file's vector and the rankings stay as measured (docs/benchmarks.md).
        summary = ""
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
    return [chunk for chunk, _ in chunk_spans(text, max_tokens, overlap)]


def chunk_spans(text: str, max_tokens: int = 512, overlap: int = 50) -> list[tuple[str, int]]:
    """``chunk_text``'s chunks, each with the offset in ``text`` where the chunk's
    own text starts (after the overlap): where a chunk entry's line is.

    Token counts are kept as running (words, chars) totals: a candidate's
    estimate is computed from its parts, never by re-splitting the chunk so far.
    """
    max_tokens = max(1, max_tokens)
    overlap = max(0, min(overlap, max_tokens // 2))
    spans: list[tuple[str, int]] = []
    parts: list[str] = []            # the current chunk, joined by blank lines
    words = chars = own_at = 0
    for para, at in _paragraphs(text):
        for piece, piece_at in _split_to_fit(para, at, max_tokens):
            p_words, p_chars = len(piece.split()), len(piece)
            if parts and _tokens(words + p_words, chars + 2 + p_chars) <= max_tokens:
                parts.append(piece)
                words, chars = words + p_words, chars + 2 + p_chars
                continue
            if parts:
                chunk = "\n\n".join(parts)
                spans.append((chunk, own_at))
                parts, words, chars = _with_overlap(_tail(chunk, overlap), piece, max_tokens)
            else:
                parts, words, chars = [piece], p_words, p_chars
            own_at = piece_at
    if parts:
        spans.append(("\n\n".join(parts), own_at))
    return spans


def _tokens(words: int, chars: int) -> int:
    """estimate_tokens of a text with this many words and characters."""
    return max(math.ceil(words * 1.3), math.ceil(chars / 4))


def _paragraphs(text: str) -> list[tuple[str, int]]:
    """Blank-line separated paragraphs, stripped, with the offset of each."""
    out: list[tuple[str, int]] = []
    pos = 0
    for end, nxt in [(m.start(), m.end()) for m in _BLANK_LINE.finditer(text)] + [(len(text), 0)]:
        _add_stripped(out, text[pos:end], pos)
        pos = nxt
    return out


def _add_stripped(out: list[tuple[str, int]], segment: str, at: int) -> None:
    stripped = segment.strip()
    if stripped:
        out.append((stripped, at + len(segment) - len(segment.lstrip())))


def _split_to_fit(para: str, at: int, max_tokens: int) -> list[tuple[str, int]]:
    if estimate_tokens(para) <= max_tokens:
        return [(para, at)]
    sentences: list[tuple[str, int]] = []
    pos = 0
    for m in _SENTENCE_END.finditer(para):
        _add_stripped(sentences, para[pos:m.start()], at + pos)
        pos = m.end()
    _add_stripped(sentences, para[pos:], at + pos)
    if len(sentences) > 1:
        units = [u for s, s_at in sentences for u in _split_to_fit(s, s_at, max_tokens)]
    else:   # one long sentence: fall back to words
        units = [(m.group(), at + m.start()) for m in _WORD.finditer(para)]
    return _pack(units, max_tokens)


def _pack(units: list[tuple[str, int]], max_tokens: int) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    parts: list[str] = []
    words = chars = at = 0
    for unit, unit_at in units:
        u_words, u_chars = len(unit.split()), len(unit)
        if parts and _tokens(words + u_words, chars + 1 + u_chars) <= max_tokens:
            parts.append(unit)
            words, chars = words + u_words, chars + 1 + u_chars
            continue
        if parts:
            out.append((" ".join(parts), at))
        # A unit over the limit on its own is an unsplittable token.
        parts, words, chars, at = [unit], u_words, u_chars, unit_at
    if parts:
        out.append((" ".join(parts), at))
    return out


def _tail(chunk: str, overlap: int) -> str:
    """The last words of a chunk totalling <= overlap estimated tokens."""
    if overlap <= 0:
        return ""
    tail: list[str] = []
    chars = -1   # the words are joined by single spaces
    for word in reversed(chunk.split()):
        chars += len(word) + 1
        if _tokens(len(tail) + 1, chars) > overlap:
            break
        tail.append(word)
    return " ".join(reversed(tail))


def _with_overlap(tail: str, piece: str, max_tokens: int) -> tuple[list[str], int, int]:
    """A new chunk's parts and running counts: the overlap, if it fits, then the piece."""
    p_words, p_chars = len(piece.split()), len(piece)
    if tail:
        t_words, t_chars = len(tail.split()), len(tail)
        if _tokens(t_words + p_words, t_chars + 2 + p_chars) <= max_tokens:
            return [tail, piece], t_words + p_words, t_chars + 2 + p_chars
    return [piece], p_words, p_chars
