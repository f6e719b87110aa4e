"""Parsing: file text + language -> ParseResult. Pure; dispatches by language.

Code goes through tree-sitter queries (code.py), markdown (markdown.py),
JSON/YAML/TOML (configdoc.py); anything else is one file-level entry
(plaintext.py). A parser failure is data (ParseResult.error), never an
exception that aborts a batch. Every parser works under one per-file time
limit (limits.py): a file over it is recorded as "parse timed out" and kept
as a file-level entry.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable

from ..model import ParseResult
from .languages import detect_language, is_code
from .limits import NO_DEADLINE, PARSE_TIMEOUT_S, Deadline, ParseTimeout

__all__ = ["PARSE_TIMEOUT_S", "detect_language", "parse_source"]


def parse_source(path: str, text: str, language: str,
                 exists: Callable[[str], bool] | None = None,
                 limit_s: float | None = None) -> ParseResult:
    """``limit_s``: CPU seconds for this file (None: PARSE_TIMEOUT_S)."""
    deadline = Deadline(PARSE_TIMEOUT_S if limit_s is None else limit_s)
    try:
        deadline.check()
        return _dispatch(path, text, language, exists, deadline)
    except ParseTimeout as exc:
        return ParseResult(language=language, error=str(exc))
    except RecursionError:
        return ParseResult(language=language, error="parser failed: nesting too deep")
    except Exception as exc:  # noqa: BLE001 - one bad file must not stop a batch
        return ParseResult(language=language, error=f"parser failed: {type(exc).__name__}: {exc}")


def _dispatch(path: str, text: str, language: str, exists, deadline: Deadline) -> ParseResult:
    if is_code(language):
        from .code import extract_code
        return extract_code(language, text, deadline)
    if language == "markdown":
        from .markdown import extract_markdown
        return chunk_long_sections(extract_markdown(text, path, exists, deadline), text,
                                   deadline)
    if language in ("json", "yaml", "toml"):
        from .configdoc import extract_config
        return extract_config(text, path, language, deadline)
    from .plaintext import extract_text
    return extract_text(text, path)


SECTION_TOKENS = 512   # a section longer than this is embedded as several chunks
CHUNK_OVERLAP = 50


def chunk_long_sections(result: ParseResult, text: str,
                        deadline: Deadline | None = None) -> ParseResult:
    """Long markdown sections get extra entries, one per ~512-token chunk.

    The section entry keeps its first chunk; each further chunk is its own
    entry (same kind, `qualname [part N]`, parent = the section) so it gets
    its own vector and can be found on its own. A chunk's start line is the
    line where its own text (after the overlap) starts.
    """
    from dataclasses import replace

    from ..enrich.texts import chunk_spans, estimate_tokens
    from ..model import content_hash
    from .markdown import split_lines

    deadline = deadline or NO_DEADLINE
    # Lines as the section entries count them (\n only, not str.splitlines).
    lines = split_lines(text)
    starts = sorted(e.start_line for e in result.entries if e.kind == "section")
    out = []
    for k, e in enumerate(result.entries):
        deadline.every(k)
        out.append(e)
        if e.kind != "section":
            continue
        # Only the section's own text: sub-sections are entries of their own.
        nxt = bisect_right(starts, e.start_line)
        own_end = min(starts[nxt] - 1, e.end_line) if nxt < len(starts) else e.end_line
        body_lines = lines[e.start_line - 1:own_end]
        body = "\n".join(body_lines)
        if estimate_tokens(body) <= SECTION_TOKENS:
            continue
        deadline.check()
        line_at = _line_offsets(body_lines)
        spans = chunk_spans(body, SECTION_TOKENS, CHUNK_OVERLAP)
        for n, (chunk, at) in enumerate(spans[1:], 2):
            start = e.start_line + bisect_right(line_at, at) - 1
            out.append(replace(e, qualname=f"{e.qualname} [part {n}]", parent=e.qualname,
                               start_line=start, end_line=own_end, body=chunk[:2000],
                               content_hash=content_hash(chunk), doc=""))
    return replace(result, entries=tuple(out))


def _line_offsets(lines: list[str]) -> list[int]:
    """Offset of each line's first character in "\\n".join(lines)."""
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line) + 1
    return offsets
