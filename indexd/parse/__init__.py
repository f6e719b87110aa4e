"""Parsing: file text + language -> ParseResult. Pure; dispatches by language.

Code goes through tree-sitter queries (code.py), markdown (markdown.py),
JSON/YAML/TOML (configdoc.py); anything else is one file-level entry
(plaintext.py). A parser failure is data (ParseResult.error), never an
exception that aborts a batch.
"""

from __future__ import annotations

from collections.abc import Callable

from ..model import ParseResult
from .languages import detect_language, is_code

__all__ = ["detect_language", "parse_source"]


def parse_source(path: str, text: str, language: str,
                 exists: Callable[[str], bool] | None = None) -> ParseResult:
    try:
        if is_code(language):
            from .code import extract_code
            return extract_code(language, text)
        if language == "markdown":
            from .markdown import extract_markdown
            return chunk_long_sections(extract_markdown(text, path, exists), text)
        if language in ("json", "yaml", "toml"):
            from .configdoc import extract_config
            return extract_config(text, path, language)
        from .plaintext import extract_text
        return extract_text(text, path)
    except RecursionError:
        return ParseResult(language=language, error="parser failed: nesting too deep")
    except Exception as exc:  # noqa: BLE001 - one bad file must not stop a batch
        return ParseResult(language=language, error=f"parser failed: {type(exc).__name__}: {exc}")


SECTION_TOKENS = 512   # a section longer than this is embedded as several chunks
CHUNK_OVERLAP = 50


def chunk_long_sections(result: ParseResult, text: str) -> ParseResult:
    """Long markdown sections get extra entries, one per ~512-token chunk.

    The section entry keeps its first chunk; each further chunk is its own
    entry (same kind, `qualname [part N]`, parent = the section) so it gets
    its own vector and can be found on its own.
    """
    from dataclasses import replace

    from ..enrich.texts import chunk_text, estimate_tokens
    from ..model import content_hash

    lines = text.splitlines()
    starts = sorted(e.start_line for e in result.entries if e.kind == "section")
    out = []
    for e in result.entries:
        out.append(e)
        if e.kind != "section":
            continue
        # Only the section's own text: sub-sections are entries of their own.
        own_end = min([s - 1 for s in starts if s > e.start_line] + [e.end_line])
        body_lines = lines[e.start_line - 1:own_end]
        body = "\n".join(body_lines)
        if estimate_tokens(body) <= SECTION_TOKENS:
            continue
        for n, chunk in enumerate(chunk_text(body, SECTION_TOKENS, CHUNK_OVERLAP)[1:], 2):
            start = e.start_line + _line_of(body_lines, chunk)
            out.append(replace(e, qualname=f"{e.qualname} [part {n}]", parent=e.qualname,
                               start_line=start, end_line=own_end, body=chunk[:2000],
                               content_hash=content_hash(chunk), doc=""))
    return replace(result, entries=tuple(out))


def _line_of(lines: list[str], chunk: str) -> int:
    """Offset of the line where a chunk's own text starts (after the overlap)."""
    probe = next((ln for ln in reversed(chunk.split("\n\n")[:2]) if ln.strip()), "").split("\n")[0]
    for i, line in enumerate(lines):
        if probe and line.startswith(probe[:40]):
            return i
    return 0
