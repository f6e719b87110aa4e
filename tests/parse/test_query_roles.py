"""The query as extract_code runs it (reference role captures disabled, the
pattern index naming the kind: code._compiled) reads the same definitions and
references as the query with every capture, in the same order."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexd.parse import code
from indexd.parse.languages import GRAMMARS, grammar
from indexd.parse.limits import NO_DEADLINE

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "langs"
SAMPLES = {"python": "sample.py", "javascript": "sample.js", "typescript": "sample.ts",
           "tsx": "sample.tsx", "go": "sample.go", "rust": "sample.rs", "java": "sample.java",
           "c": "sample.c", "cpp": "sample.cpp", "ruby": "sample.rb", "bash": "sample.sh"}


def _read(language: str, query, ref_kinds):
    import tree_sitter

    data = (FIXTURES / SAMPLES[language]).read_bytes()
    tree = tree_sitter.Parser(grammar(language)).parse(data)
    matches = tree_sitter.QueryCursor(query).matches(tree.root_node)
    defs, refs = code._collect(matches, data, NO_DEADLINE, ref_kinds)
    span = (lambda n: None if n is None else (n.start_byte, n.end_byte))
    return ([(d.kind, d.name, span(d.node), d.receiver, d.is_scope) for d in defs],
            [(kind, span(name), span(module)) for kind, name, module in refs])


def test_every_language_has_a_sample():
    assert set(SAMPLES) == set(GRAMMARS)


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_disabled_role_captures_read_the_same(language):
    query, ref_kinds = code._compiled(language)
    fast = _read(language, query, ref_kinds)
    plain = _read(language, code._query(language), ())
    assert fast == plain
    assert plain[1], "the sample has references"


def test_python_reference_patterns_name_their_kind():
    query, ref_kinds = code._compiled("python")
    assert len(ref_kinds) == query.pattern_count
    named = [k for k in ref_kinds if k is not None]
    assert "call" in named and "iterates" in named
    assert len(named) == query.pattern_count - 3   # class, function, constant definitions
