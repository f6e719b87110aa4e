"""Search's path filter, with one meaning wherever it is evaluated.

A pattern is either a plain repo-relative path, which names that file or
everything under that folder (``tests`` matches ``tests/a.py`` and never
``tests2/a.py``), or a glob (``*``, ``?``, ``[...]``; ``*`` crosses ``/``, as
SQL's ``%`` does, so ``src/**/*.py`` and ``src/*.py`` both reach
``src/a/b.py``). The table answers it in SQL, the daemon's hot indexes as a
regular expression over stored paths (text_index.py) or per file
(vector_index.py), and Python (``matches``) where SQL cannot.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

from .model import inside

GLOB_CHARS = frozenset("*?[")
# The key under which a path pattern travels in the hot indexes' filters.
FILTER_KEY = "path"


def normalize(pattern: str) -> str:
    """``--path`` as people type it: ``./src/`` is ``src``."""
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return pattern.rstrip("/") or pattern


def is_glob(pattern: str) -> bool:
    return not GLOB_CHARS.isdisjoint(pattern)


def matches(pattern: str, path: str) -> bool:
    return fnmatchcase(path, pattern) if is_glob(pattern) else inside(pattern, path)


def to_sql(pattern: str, quote) -> str | None:
    """A WHERE clause over ``path`` (``quote`` makes an SQL string literal);
    None for a character class, which LIKE cannot say (``matches`` filters)."""
    if not is_glob(pattern):
        return f"(path = {quote(pattern)} OR path LIKE {quote(like_literal(pattern) + '/%')})"
    if "[" in pattern or "]" in pattern:
        return None
    like = like_literal(pattern).replace("**", "*").replace("*", "%").replace("?", "_")
    return f"path LIKE {quote(like)}"


def like_literal(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def to_regex(pattern: str) -> str:
    """A regular expression that matches a whole path as ``matches`` does (the
    syntax tantivy's regex query takes: every ASCII punctuation may be escaped)."""
    if not is_glob(pattern):
        return _escape(pattern) + "(/.*)?"
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[" and (end := _class_end(pattern, i)) > 0:
            body = pattern[i + 1:end]
            neg = body.startswith("!")
            body = body[1:] if neg else body
            out.append("[" + ("^" if neg else "") + body.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(_escape(c))
        i += 1
    return "".join(out)


def _class_end(pattern: str, start: int) -> int:
    """Index of the ``]`` closing the class opened at ``start`` (fnmatch's rules:
    a ``]`` right after ``[`` or ``[!`` is a member); -1 when it never closes."""
    j = start + 1
    if j < len(pattern) and pattern[j] == "!":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    end = pattern.find("]", j)
    return end


def _escape(text: str) -> str:
    return re.sub(r"([!-/:-@\[-`{-~])", r"\\\1", text)
