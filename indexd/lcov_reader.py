"""LCOV tracefiles for `indexctl tests ingest`: per-test line coverage from any language.

A tracefile (geninfo(1)'s format, written by lcov, gcov tools, c8/istanbul,
grcov, cargo-llvm-cov, ...) is a sequence of records::

    TN:<test name>          applies to every record after it, until the next TN
    SF:<source file>        starts a record
    DA:<line>,<count>[,..]  one instrumented line; count > 0: the test ran it
    FN/FNDA/BRDA/LF/LH/...  functions, branches, totals: not needed, ignored
    end_of_record           ends it

Per-test data means several ``TN:`` sections (``geninfo --test-name`` runs
merged by ``lcov -a``, or one tracefile per test). This module reads one into
the shape `coverage_ingest.read_data` returns (measured file -> line -> test
names) so the plan and the edges stay shared; `lcov_names` maps the free-text
test names to test entries. Malformed input is an InvalidParams naming the
line, before anything is stored. Detection is by content, never by extension:
coverage.py data files are SQLite, tracefiles are text whose first records
are LCOV keys.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from .errors import InvalidParams

SNIFF_BYTES = 64 * 1024
SNIFF_LINES = 20
_KNOWN = re.compile(r"^(TN|SF|DA|FN|FNDA|FNF|FNH|FNL|FNA|BRDA|BRF|BRH|LF|LH|VER):|^end_of_record$")
_RECORD = re.compile(r"^([A-Z][A-Z0-9_]*):(.*)$")
_OUTSIDE_OK = ("TN", "VER")          # the only records allowed between end_of_record and SF
HOW_TO_RECORD = ("record one tracefile per test with its name (geninfo --test-name NAME, or "
                 "your tool's per-test option) and merge them with lcov -a a.info -a b.info "
                 "-o all.info: each test keeps its own TN: section")


def is_tracefile(path: str) -> bool:
    """True when the file's first records are LCOV ones (TN:, SF:, DA:, end_of_record)."""
    try:
        with open(Path(path).expanduser(), "rb") as f:
            head = f.read(SNIFF_BYTES)
    except OSError:
        return False
    if head.startswith(b"SQLite format 3\x00"):
        return False
    lines = [ln.strip() for ln in head.decode("utf-8", "replace").splitlines() if ln.strip()]
    return any(_KNOWN.match(ln) for ln in lines[:SNIFF_LINES])


@dataclass
class Tracefile:
    """test name -> source file (as written) -> covered lines; ``unnamed``: sources
    recorded under an empty or absent TN (no per-test data)."""

    tests: dict[str, dict[str, set[int]]] = field(default_factory=dict)
    unnamed: set[str] = field(default_factory=set)
    sources: int = 0


def parse_tracefile(path: str) -> Tracefile:
    src = Path(path).expanduser()
    try:
        with open(src, encoding="utf-8", errors="replace") as f:
            out = _parse_lines(f, path)
    except OSError as exc:
        raise InvalidParams(f"cannot read the LCOV tracefile {path}: {exc.strerror}",
                            {"path": path}) from None
    if not out.sources:
        raise InvalidParams(f"{path} is an LCOV tracefile with no source file records (SF:)",
                            {"path": path})
    if not out.tests:
        raise InvalidParams(f"{path} carries no per-test data: every record is under one "
                            f"empty or absent test name (TN:); {HOW_TO_RECORD}", {"path": path})
    return out


def _parse_lines(lines, path: str) -> Tracefile:
    out = Tracefile()
    test, source, covered = "", None, None
    for n, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line == "end_of_record":
            if source is None:
                _malformed(path, n, "end_of_record outside a record (no SF: before it)")
            _keep(out, test, source, covered)
            source = covered = None
            continue
        m = _RECORD.match(line)
        if m is None:
            _malformed(path, n, f"not an LCOV record: {line[:40]!r}")
        key, value = m.group(1), m.group(2).strip()
        if key == "SF":
            if source is not None:
                _malformed(path, n, f"SF: inside the record for {source} (no end_of_record)")
            if not value:
                _malformed(path, n, "SF: with no file name")
            source, covered = value, set()
        elif source is None:
            if key not in _OUTSIDE_OK:
                _malformed(path, n, f"{key}: before any SF: (outside a record)")
            if key == "TN":
                test = value
        elif key == "TN":
            _malformed(path, n, f"TN: inside the record for {source} (no end_of_record)")
        elif key == "DA":
            lineno, count = _da(path, n, value)
            if count > 0:
                covered.add(lineno)
    if source is not None:
        _malformed(path, "end", f"the record for {source} has no end_of_record (truncated?)")
    return out


def _da(path: str, n: int, value: str) -> tuple[int, int]:
    parts = value.split(",")
    try:
        lineno, count = int(parts[0]), int(float(parts[1]))
    except (IndexError, ValueError, OverflowError):
        _malformed(path, n, f"DA: needs <line>,<count>, got {value[:40]!r}")
    if lineno < 1:
        _malformed(path, n, f"DA: line numbers start at 1, got {lineno}")
    return lineno, count


def _keep(out: Tracefile, test: str, source: str, covered: set[int]) -> None:
    out.sources += 1
    if not test:
        out.unnamed.add(source)
    elif covered:
        # `lcov -a` of one test's runs may repeat a (TN, SF) pair: lines add up.
        out.tests.setdefault(test, {}).setdefault(source, set()).update(covered)


def _malformed(path: str, n, why: str) -> NoReturn:
    where = "at its end" if n == "end" else f"line {n}"
    raise InvalidParams(f"{path} is not a valid LCOV tracefile ({where}): {why}; nothing "
                        f"was stored", {"path": path, "line": n})


# -- source files ----------------------------------------------------------------

def source_bases(path: str, cwd: str | None) -> list[Path]:
    """Where a relative SF: may be relative to, in order: the tracefile's folder, the
    current folder of whoever asked, then the tracefile's parent folders (a
    coverage/lcov.info beside the project root its tool ran in)."""
    here = Path(path).expanduser().resolve().parent
    bases = [here] + ([Path(cwd)] if cwd else []) + list(here.parents)
    return list(dict.fromkeys(bases))


def resolve_source(sf: str, bases: list[Path]) -> str | None:
    """An absolute path for SF:, or None when a relative one names no file under any base."""
    p = Path(sf).expanduser()
    if p.is_absolute():
        return os.path.normpath(p)
    for base in bases:
        if (base / p).is_file():
            return os.path.normpath(base / p)
    return None
