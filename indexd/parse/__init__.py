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
            return extract_markdown(text, path, exists)
        if language in ("json", "yaml", "toml"):
            from .configdoc import extract_config
            return extract_config(text, path, language)
        from .plaintext import extract_text
        return extract_text(text, path)
    except RecursionError:
        return ParseResult(language=language, error="parser failed: nesting too deep")
    except Exception as exc:  # noqa: BLE001 - one bad file must not stop a batch
        return ParseResult(language=language, error=f"parser failed: {type(exc).__name__}: {exc}")
