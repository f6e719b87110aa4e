"""JSON / YAML / TOML -> one ``key`` entry per top-level and second-level key.

Owns config-file parsing for the index: validating the document, finding the
line range of every key down to depth 2, and turning syntax errors into a
one-line ``ParseResult.error`` that names the line. Pure: text in,
ParseResult out; it never raises (deep nesting included).

How each format finds its key lines:

* JSON: ``json.loads`` validates; a small iterative scanner then walks the
  (known-valid) text and records where each key starts and its value ends.
  JSON with comments / trailing commas (tsconfig.json, VS Code settings) is
  accepted by blanking them out first, keeping every line where it was.
* YAML: ``yaml.compose_all`` (the node graph, with marks) rather than
  ``safe_load``: it gives exact key lines, keeps keys as written (``on`` stays
  ``on``, not ``True``) and does not choke on application tags such as
  CloudFormation's ``!Ref``. Every mapping document contributes its keys.
* TOML: ``tomllib`` validates and gives the key structure; a line scanner
  maps ``[table]`` / ``[[array]]`` headers, dotted keys and ``key =`` lines to
  line numbers.

A key's range ends on the line before the next key at the same or a lower
level (or at EOF), minus trailing blank lines, comments that belong to the
next key, and YAML document markers. JSON ranges end where the value ends.

The file's deadline (limits.py) is checked between the steps and in the
per-key loop; a timeout unwinds to parse_source.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass

import yaml

from .limits import NO_DEADLINE, Deadline, ParseTimeout
from .markdown import unique_qualname
from ..model import Entry, ParseResult, content_hash

MAX_BODY = 2000
MAX_DOC = 500
LANGUAGES = ("json", "yaml", "toml")
# json.loads, PyYAML and tomllib recurse once or more per level: past the interpreter's
# recursion limit that is a RecursionError, and under a raised limit (a host process,
# a test tool) a segfault or a parse with no deadline check. Real config files nest a
# few dozen levels; deeper ones are refused before any parser runs.
MAX_NESTING = 400
_QUOTED_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'')
_NOT_BRACKET_RE = re.compile(r"[^\[\]{}]+")


@dataclass
class _Hit:
    """One key found in the text: path of 1 or 2 names, 0-based lines."""

    path: tuple[str, ...]
    start: int
    end: int | None = None      # None: use the next-sibling rule
    column: int = 0


class ConfigError(Exception):
    """A syntax error, already worded for ParseResult.error."""


def extract_config(text: str, path: str, language: str,
                   deadline: Deadline = NO_DEADLINE) -> ParseResult:
    try:
        return _extract(text, language, deadline)
    except ParseTimeout:
        raise
    except ConfigError as exc:
        return ParseResult(language=language, error=str(exc))
    except RecursionError:
        return ParseResult(language=language, error=f"{language}: nesting too deep to parse")
    except Exception as exc:  # noqa: BLE001 - malformed input is data, not a crash
        msg = " ".join(str(exc).split())[:300]
        return ParseResult(language=language, error=f"{language}: {type(exc).__name__}: {msg}")


def _extract(text: str, language: str, deadline: Deadline) -> ParseResult:
    text = text.removeprefix("\ufeff")  # a BOM is not content (json.loads rejects it)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    if not text.strip():
        return ParseResult(language=language, meta={"top_keys": []})
    if _nesting(text) > MAX_NESTING:
        raise RecursionError(f"more than {MAX_NESTING} levels")
    if language == "json":
        hits, meta = _json_hits(text)
    elif language == "yaml":
        hits, meta = _yaml_hits(text)
    elif language == "toml":
        hits, meta = _toml_hits(text, lines)
    else:
        raise ConfigError(f"unsupported config language: {language!r}")
    deadline.check()
    entries = _entries(hits, lines, language != "json", deadline)
    meta["top_keys"] = list(dict.fromkeys(h.path[0] for h in hits if len(h.path) == 1))
    return ParseResult(language=language, entries=tuple(entries), meta=meta)


def _nesting(text: str) -> int:
    """Deepest ``[``/``{`` nesting outside quoted strings: linear, a regex pass each."""
    brackets = _NOT_BRACKET_RE.sub("", _QUOTED_RE.sub("", text))
    depth = deepest = 0
    for c in brackets:
        depth += 1 if c in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


# --- shared: hits -> entries -------------------------------------------------

def _entries(hits: list[_Hit], lines: list[str], comments: bool,
             deadline: Deadline) -> list[Entry]:
    hits = sorted(hits, key=lambda h: h.start)  # stable: same-line keys keep order
    used: dict[str, int] = {}
    # Latest qualname of each top-level name: a TOML [a.c] may come after [b],
    # and a repeated YAML document reuses names with a " (2)" suffix.
    tops: dict[str, str] = {}
    # Keys sharing lines (JSON on one line) share their text: hashed once, not per key.
    spans: dict[tuple[int, int], tuple[str, str, str]] = {}
    out: list[Entry] = []
    for k, hit in enumerate(hits):
        deadline.every(k)
        end = hit.end if hit.end is not None else _sibling_end(hits, k, lines, comments)
        end = max(end, hit.start)
        if len(hit.path) == 1:
            qual, parent = unique_qualname(hit.path[0], used), None
            tops[hit.path[0]] = qual
        else:
            parent = tops.get(hit.path[0], hit.path[0])
            qual = unique_qualname(f"{parent}.{hit.path[1]}", used)
        if (hit.start, end) not in spans:
            spans[hit.start, end] = _span(lines, hit.start, end)
        digest, body, signature = spans[hit.start, end]
        out.append(Entry(
            kind="key", name=hit.path[-1], qualname=qual, parent=parent,
            start_line=hit.start + 1, end_line=end + 1, level=len(hit.path),
            signature=signature, doc=_comment_above(lines, hit.start) if comments else "",
            content_hash=digest, body=body))
    return out


def _span(lines: list[str], start: int, end: int) -> tuple[str, str, str]:
    """(content hash, body, signature) of the lines start..end."""
    text = "\n".join(lines[start:end + 1])
    signature = lines[start].strip()[:MAX_BODY] if start < len(lines) else ""
    return content_hash(text), text[:MAX_BODY], signature


def _sibling_end(hits: list[_Hit], k: int, lines: list[str], comments: bool) -> int:
    own = hits[k].path
    # The next key that is not inside this one: a sibling, a shallower key, or
    # (TOML tables may be split: [a] [b] [a.c]) a deeper key of another parent.
    # Indexed, not hits[k + 1:]: a copy of the rest per key was quadratic.
    nxt = len(lines)
    for j in range(k + 1, len(hits)):
        h = hits[j]
        if len(h.path) <= len(own) or h.path[:len(own)] != own:
            nxt = h.start
            break
    end = nxt - 1
    if nxt > hits[k].start:
        end = _trim_tail(lines, hits[k].start, end, hits[k].column, comments)
    return end


def _trim_tail(lines, start: int, end: int, column: int, comments: bool) -> int:
    """Drop trailing blanks, YAML doc markers and comments no deeper than the key.

    Comments indented deeper than the key may be part of its value (a YAML
    block scalar holding a shell script), so those stay.
    """
    while end > start:
        line = lines[end]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if not stripped or stripped in ("---", "...") or (
                comments and stripped.startswith("#") and indent <= column):
            end -= 1
        else:
            break
    return end


def _comment_above(lines: list[str], start: int) -> str:
    """The block of ``#`` comment lines directly above a key."""
    block: list[str] = []
    i = start - 1
    while i >= 0 and lines[i].strip().startswith("#"):
        block.append(lines[i].strip().lstrip("#").strip())
        i -= 1
    return "\n".join(reversed(block)).strip()[:MAX_DOC]


# --- JSON --------------------------------------------------------------------

def _json_hits(text: str) -> tuple[list[_Hit], dict]:
    meta: dict = {}
    try:
        json.loads(text)
    except json.JSONDecodeError as strict:
        cleaned = _strip_jsonc(text)
        try:
            json.loads(cleaned)
        except json.JSONDecodeError:
            raise ConfigError(f"JSON syntax error at line {strict.lineno}, "
                              f"column {strict.colno}: {strict.msg}") from None
        text, meta["jsonc"] = cleaned, True
    return _scan_json(text), meta


def _strip_jsonc(text: str) -> str:
    """Blank out // and /* */ comments and trailing commas, keeping newlines."""
    out = list(text)
    i, n = 0, len(text)
    last_comma = None   # index of a comma not yet followed by a value
    while i < n:
        c = text[i]
        if c == '"':
            i = _string_end(text, i) + 1
            last_comma = None
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out[i:j] = " " * (j - i)
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out[i:j] = [ch if ch == "\n" else " " for ch in text[i:j]]
            i = j
            continue
        if c == ",":
            last_comma = i
        elif c in "}]" and last_comma is not None:
            out[last_comma] = " "
            last_comma = None
        elif not c.isspace():
            last_comma = None
        i += 1
    return "".join(out)


def _string_end(text: str, i: int) -> int:
    """Index of the quote closing the JSON string that opens at i (or len-1)."""
    j = i + 1
    n = len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == '"' or c == "\n":
            return j
        j += 1
    return n - 1


@dataclass
class _Frame:
    kind: str                   # "{" or "["
    expect_key: bool
    key: str | None = None
    hit: _Hit | None = None


def _scan_json(text: str) -> list[_Hit]:
    """Iterative walk over valid JSON: key lines and value-end lines to depth 2."""
    hits: list[_Hit] = []
    stack: list[_Frame] = []
    line = last = 0     # current line; line of the last value character seen
    line_start = 0      # offset of the current line (valid JSON strings hold no newline)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line, line_start = line + 1, i + 1
        elif c == '"':
            j = _string_end(text, i)
            top = stack[-1] if stack else None
            if top is not None and top.kind == "{" and top.expect_key:
                _json_key(stack, json.loads(text[i:j + 1]), line, i - line_start, hits)
            last, i = line, j
        elif c in "{[":
            stack.append(_Frame(c, expect_key=c == "{"))
            last = line
        elif c in "}]":
            _close(stack.pop() if stack else None, last)
            last = line
        elif c == ",":
            if stack:
                _close(stack[-1], last)
                stack[-1].expect_key = stack[-1].kind == "{"
        elif not c.isspace():
            last = line
        i += 1
    return hits


def _json_key(stack, key: str, line: int, col: int, hits: list[_Hit]) -> None:
    top = stack[-1]
    top.expect_key, top.key, top.hit = False, key, None
    # Only keys reached through objects alone ("a" -> "b"), as in YAML/TOML.
    if len(stack) <= 2 and all(f.kind == "{" for f in stack):
        path = tuple(f.key for f in stack)
        top.hit = _Hit(path, line, line, col)
        hits.append(top.hit)


def _close(frame: _Frame | None, last: int) -> None:
    if frame is not None and frame.hit is not None:
        frame.hit.end = last
        frame.hit = None


# --- YAML --------------------------------------------------------------------

def _yaml_hits(text: str) -> tuple[list[_Hit], dict]:
    try:
        docs = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise ConfigError(_yaml_message(exc, text)) from None
    hits: list[_Hit] = []
    for doc in docs:
        if isinstance(doc, yaml.MappingNode):
            hits.extend(_yaml_mapping_hits(doc))
    return hits, {"documents": len(docs)}


def _yaml_mapping_hits(doc: yaml.MappingNode) -> list[_Hit]:
    hits: list[_Hit] = []
    for key, value in doc.value:
        if not isinstance(key, yaml.ScalarNode):
            continue  # complex keys (? [a, b]) have no usable name
        hits.append(_Hit((key.value,), key.start_mark.line, None, key.start_mark.column))
        # An alias (b: *a) returns a's node; its marks point back at a's keys.
        if isinstance(value, yaml.MappingNode) and value.start_mark.index >= key.end_mark.index:
            for sub, _ in value.value:
                if isinstance(sub, yaml.ScalarNode):
                    hits.append(_Hit((key.value, sub.value), sub.start_mark.line, None,
                                     sub.start_mark.column))
    return hits


def _yaml_message(exc: Exception, text: str) -> str:
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        what = problem or getattr(exc, "context", None) or "syntax error"
        return f"YAML syntax error at line {mark.line + 1}, column {mark.column + 1}: {what}"
    position = getattr(exc, "position", None)  # ReaderError: bad character
    msg = " ".join(str(exc).split())[:300]
    if isinstance(position, int):
        return f"YAML error at line {text.count(chr(10), 0, position) + 1}: {msg}"
    return f"YAML error: {msg}"


# --- TOML --------------------------------------------------------------------

_BARE_KEY_RE = re.compile(r"[A-Za-z0-9_\-]+")


def _toml_hits(text: str, lines: list[str]) -> tuple[list[_Hit], dict]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"TOML syntax error: {exc}") from None
    where = _toml_positions(lines)
    hits: list[_Hit] = []
    for top, value in data.items():
        line = where.get((top,), 0)
        hits.append(_Hit((top,), line))
        if isinstance(value, dict):  # [[x]] arrays of tables stay one entry
            hits.extend(_Hit((top, sub), where.get((top, sub), line)) for sub in value)
    return hits, {}


def _toml_positions(lines: list[str]) -> dict[tuple[str, ...], int]:
    """First 0-based line mentioning each 1- and 2-part key path."""
    where: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    open_string: str | None = None   # delimiter of a multi-line string in progress
    depth = 0                        # brackets of a multi-line array in progress
    for no, line in enumerate(lines):
        if open_string or depth:
            open_string, depth = _scan_value(line, 0, open_string, depth)
            continue
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("["):
            double = stripped.startswith("[[")
            parts, _ = _read_key(stripped, 2 if double else 1)
            if parts:
                table = parts
                _record(where, parts, no)
            continue
        parts, pos = _read_key(stripped, 0)
        if parts and stripped[pos:pos + 1] == "=":
            _record(where, table + parts, no)
            open_string, depth = _scan_value(stripped, pos + 1, None, 0)
    return where


def _record(where: dict, path: tuple[str, ...], line: int) -> None:
    for n in (1, 2):
        if len(path) >= n:
            where.setdefault(path[:n], line)


def _read_key(s: str, i: int) -> tuple[tuple[str, ...], int]:
    """Parse a dotted key (bare / "basic" / 'literal' parts) at s[i:].

    Returns the parts and the index after the key and its trailing spaces;
    () when s[i:] does not start with a key.
    """
    parts: list[str] = []
    n = len(s)
    while True:
        while i < n and s[i] in " \t":
            i += 1
        if i < n and s[i] in "\"'":
            close = _quote_end(s, i)
            if close < 0:
                return (), i
            raw = s[i:close + 1]
            parts.append(_unquote_basic(raw) if raw[0] == '"' else raw[1:-1])
            i = close + 1
        else:
            m = _BARE_KEY_RE.match(s, i)
            if not m:
                return (), i
            parts.append(m.group(0))
            i = m.end()
        while i < n and s[i] in " \t":
            i += 1
        if i < n and s[i] == ".":
            i += 1
            continue
        return tuple(parts), i


def _quote_end(s: str, i: int) -> int:
    q = s[i]
    j = i + 1
    while j < len(s):
        if q == '"' and s[j] == "\\":
            j += 2
            continue
        if s[j] == q:
            return j
        j += 1
    return -1


def _unquote_basic(raw: str) -> str:
    try:
        return json.loads(raw)
    except ValueError:
        return raw[1:-1]  # TOML-only escapes (\e, \U...) are rare in keys


def _scan_value(s: str, i: int, open_string: str | None, depth: int) -> tuple[str | None, int]:
    """Track multi-line strings and arrays across lines (so their contents are
    never mistaken for keys or headers). Returns the state after this line."""
    n = len(s)
    while i < n:
        if open_string:
            j = _ml_close(s, i, open_string)
            if j < 0:
                return open_string, depth
            open_string, i = None, j
            continue
        c = s[i]
        if c == "#":
            break
        if s.startswith('"""', i) or s.startswith("'''", i):
            open_string, i = s[i:i + 3], i + 3
            continue
        if c in "\"'":
            j = _quote_end(s, i)
            i = n if j < 0 else j + 1
            continue
        if c in "[{":
            depth += 1
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return open_string, depth


def _ml_close(s: str, i: int, delim: str) -> int:
    """Index just past the closing delimiter of a multi-line string, or -1."""
    while True:
        j = s.find(delim, i)
        if j < 0:
            return -1
        if delim == '"""' and _escaped(s, j):
            i = j + 1
            continue
        j += 3
        while j < len(s) and s[j] == delim[0]:  # """"" ends with up to 2 quotes inside
            j += 1
        return j


def _escaped(s: str, j: int) -> bool:
    k = j - 1
    while k >= 0 and s[k] == "\\":
        k -= 1
    return (j - 1 - k) % 2 == 1
