"""Identifier words: what both the indexer and the query side split names into."""

from __future__ import annotations

import re
import sysconfig
from pathlib import Path

from indexd.words import expand_text, split_identifier


def test_identifiers_split_into_lower_case_words():
    assert split_identifier("HTTPResponse._read_chunked") == ["http", "response", "read", "chunked"]
    assert split_identifier("parse_qsl2") == ["parse", "qsl", "2"]


def test_text_gains_the_words_of_its_compound_names_in_order():
    text = "if self.max_size: return HTTPResponse(x) or plain or __init__"
    assert expand_text(text) == text + " max size http response"
    assert expand_text("nothing to split here") == "nothing to split here"


def _by_definition(text: str) -> str:
    """The definition, token by token: every identifier-like token whose
    split has more than one word adds those words."""
    extra = [w for tok in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)
             if len(parts := split_identifier(tok)) > 1 for w in parts]
    return text if not extra else f"{text} {' '.join(extra)}"


def test_the_fast_path_agrees_with_the_definition_on_real_code():
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[:60]
    assert len(files) >= 30
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert expand_text(text) == _by_definition(text), path.name
