"""A code file's summary without a model: its module docstring and its outline.

"Blueprints group routes. Defines class Blueprint (Routes registered
together), functions make_app and helper." Computed while parsing (pure, no
I/O), from the rows of the same file; the LLM stage may replace it later. The
lead is the module docstring (Python) or a leading comment block; licence
headers are not a lead. Must not import the store or the daemon.
"""

from __future__ import annotations

import re

from .summarizer import _first_paragraph, _shorten

FILE_SUMMARY_CHARS = 300
OUTLINE_NAMES = 4          # names per kind; the rest are "and N more"
# Leading comment and blank lines, then the docstring. Each line is one alternative
# that cannot also match part of its neighbour ([ \t], not \s): with \s a run of
# blank lines split every way, and a file of comments then blanks (pylint's own
# too_many_lines test) backtracked exponentially (tests/e2e/test_hostile.py).
_PY_DOC = re.compile(r'\A(?:[ \t]*#[^\n]*\n|[ \t]*\r?\n)*[ \t]*[rRuU]?("""|\'\'\')(.*?)\1', re.S)
_LINE_COMMENT = re.compile(r"^\s*(//[/!]?|#|--)\s?(.*)$")
_NOT_A_LEAD = re.compile(r"copyright|licen[cs]e|spdx|^!|-\*-|^\s*eslint|@ts-", re.I)
_KIND_WORDS = {"class": ("class", "classes"), "function": ("function", "functions"),
               "method": ("method", "methods"), "struct": ("struct", "structs"),
               "interface": ("interface", "interfaces"), "enum": ("enum", "enums"),
               "trait": ("trait", "traits"), "type": ("type", "types"),
               "constant": ("constant", "constants"), "variable": ("variable", "variables")}


def outline_summary(path: str, rows: list[dict], text: str, lang: str) -> str:
    """One or two sentences: the lead, then what the file defines at its top level."""
    lead = _shorten(_first_paragraph(module_doc(text, lang)), 200)
    outline = _outline(rows)
    parts = [p for p in (_sentence(lead), outline) if p]
    return _shorten(" ".join(parts), FILE_SUMMARY_CHARS) if parts else ""


def module_doc(text: str, lang: str) -> str:
    """The module docstring (Python) or the first comment block (other languages)."""
    if lang == "python":
        m = _PY_DOC.match(text[:4000])
        return m.group(2) if m else ""
    lines = []
    for line in text[:4000].splitlines():
        m = _LINE_COMMENT.match(line)
        if m is None:
            if line.strip() or lines:
                break
            continue
        lines.append(m.group(2))
    block = "\n".join(lines)
    return "" if _NOT_A_LEAD.search(block) else block


def _sentence(text: str) -> str:
    return text if not text or text.endswith((".", "!", "?", "…")) else text + "."


def _outline(rows: list[dict]) -> str:
    top = [r for r in rows if r.get("kind") != "file" and not r.get("parent")]
    if not top:
        return ""
    by_kind: dict[str, list[dict]] = {}
    for r in top:
        by_kind.setdefault(r.get("kind") or "symbol", []).append(r)
    clauses = []
    for kind, items in by_kind.items():
        one, many = _KIND_WORDS.get(kind, (kind, kind + "s"))
        names = [_named(r, with_doc=len(top) <= 3) for r in items]
        more = len(names) - OUTLINE_NAMES
        shown = names[:OUTLINE_NAMES] + ([f"{more} more"] if more > 0 else [])
        word = one if len(items) == 1 else many
        clauses.append(f"{word} {_join(shown)}")
    return f"Defines {'; '.join(clauses)}."


def _named(row: dict, with_doc: bool) -> str:
    """The name, with its doc's first sentence when the file is small enough to afford it."""
    name = row.get("name") or row.get("qualname") or "?"
    doc = _first_paragraph(row.get("doc") or "")
    if with_doc and doc:
        return f"{name} ({_shorten(doc, 80).rstrip('.')})"
    return name


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
