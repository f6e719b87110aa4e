"""Any other text file -> one ``file`` entry spanning the whole file.

The fallback parser: no structure, just enough for the file to be found by
name and by its opening text. Pure: text in, ParseResult out.
"""

from __future__ import annotations

import posixpath

from ..model import Entry, ParseResult, content_hash

MAX_BODY = 2000
MAX_SIGNATURE = 200


def extract_text(text: str, path: str) -> ParseResult:
    n_lines = text.count("\n") + (0 if text.endswith("\n") else 1) if text else 0
    first = text.lstrip().split("\n", 1)[0].strip()
    entry = Entry(
        kind="file", name=posixpath.basename(path) or path, qualname=path,
        start_line=1, end_line=max(1, n_lines),  # an empty file still has line 1
        signature=first[:MAX_SIGNATURE], doc="", parent=None,
        content_hash=content_hash(text), body=text[:MAX_BODY], level=0)
    return ParseResult(language="text", entries=(entry,))
