"""Identifier splitting shared by indexing and querying (pure, no imports).

``HTTPResponse._read_chunked`` becomes "http response read chunked" so that
a query in words finds an identifier and vice versa.
"""

from __future__ import annotations

import re
from functools import lru_cache

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_WORD = re.compile(r"[A-Za-z0-9]+")
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# One word whatever the splitter does: lower-case letters only (most of a body's tokens).
_PLAIN = re.compile(r"[a-z]+")


def split_identifier(name: str) -> list[str]:
    """Words of an identifier, lower-cased: snake, camel, dotted, kebab."""
    words: list[str] = []
    for chunk in _WORD.findall(name):
        words.extend(w.lower() for w in _CAMEL.findall(chunk))
    return words


def expand_text(text: str) -> str:
    """Text plus the split words of every identifier-like token in it."""
    extra: list[str] = []
    plain = _PLAIN.fullmatch
    for token in _TOKEN.findall(text):
        if not plain(token):
            extra.extend(_parts(token))
    return text if not extra else f"{text} {' '.join(extra)}"


@lru_cache(maxsize=1 << 16)
def _parts(token: str) -> tuple[str, ...]:
    """A token's words when it has more than one (bodies repeat their names:
    the daemon's save path splits each name once)."""
    parts = split_identifier(token)
    return tuple(parts) if len(parts) > 1 else ()


def dotted_module(path: str) -> str:
    """``logging/handlers.py`` -> ``logging.handlers``; a package's __init__ is the package."""
    stem = re.sub(r"\.[A-Za-z0-9]+$", "", path)
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)
