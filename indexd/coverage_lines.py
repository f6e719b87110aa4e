"""Which indexed symbol a covered line belongs to, and whether it shows the symbol ran.

A Python ``def``/``class`` header (the ``def`` line through the colon of a
multi-line signature; decorators lie outside the entry already) executes in
the scope around it: at import for a module's functions, when the enclosing
function runs for a nested one. So header lines belong to the enclosing
symbol (or the file), and only body lines say a function ran. A one-line
``def f(): return 1`` has header and body on one line: the line stays the
function's (a test's context there most likely ran it) but proves no run at
import. A class body runs whenever its module is imported (that defines the
class), so only functions and methods are ever said to have run. Pure.
"""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass, field

HEADED = ("function", "method", "class")
RUNS = ("function", "method")
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")


def header_end(row: dict) -> tuple[int, bool] | None:
    """(last header line, body starts on it) of a Python def/class entry, from the
    entry's text (which starts at its ``def``); None when unknown (other kinds or
    languages, text that does not tokenize): the whole entry is then its own."""
    text = row.get("body") or ""
    if row["kind"] not in HEADED or not str(row.get("path", "")).endswith((".py", ".pyi")) \
            or not text:
        return None
    depth = 0
    try:
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        for tok in tokens:
            if tok.type != tokenize.OP:
                continue
            if tok.string in _OPEN:
                depth += 1
            elif tok.string in _CLOSE:
                depth -= 1
            elif tok.string == ":" and depth == 0:
                after = next(t for t in tokens if t.type not in (tokenize.COMMENT, tokenize.NL))
                return row["start_line"] + tok.end[0] - 1, after.type != tokenize.NEWLINE
    except (tokenize.TokenError, IndentationError, SyntaxError, StopIteration):
        pass
    return None


@dataclass
class LineMap:
    owner: list                      # line -> the innermost symbol row whose body holds it
    file_row: dict | None
    shared: set[int] = field(default_factory=set)   # one-line defs' lines

    def at(self, line: int) -> dict | None:
        """The symbol a covered line counts for (the file for module-level lines)."""
        row = self.owner[line] if 0 < line < len(self.owner) else None
        return row or self.file_row

    def ran(self, line: int) -> dict | None:
        """The function this line shows running: a body line, not a header's."""
        row = self.owner[line] if 0 < line < len(self.owner) else None
        if row is None or line in self.shared or row["kind"] not in RUNS:
            return None
        return row


def line_map(rows: list[dict]) -> LineMap:
    """Widest symbols first, narrower ones overwrite their body lines."""
    file_row = next((r for r in rows if r["kind"] == "file"), None)
    symbols = [r for r in rows if r["kind"] != "file" and r["start_line"] and r["end_line"]]
    owner: list = [None] * (max((r["end_line"] for r in symbols), default=0) + 2)
    shared: set[int] = set()
    for r in sorted(symbols, key=lambda r: r["start_line"] - r["end_line"]):
        head = header_end(r)
        first = r["start_line"] if head is None else head[0] + (0 if head[1] else 1)
        if head is not None and head[1]:
            shared.add(head[0])
        for line in range(first, r["end_line"] + 1):
            owner[line] = r
    return LineMap(owner, file_row, shared)
