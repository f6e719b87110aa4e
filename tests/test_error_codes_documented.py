"""Every JSON-RPC error code indexd can answer with, or that its clients print
in `--json` output, is in docs/protocol.md's error table: a client author
matching on codes should never meet one the protocol document does not name."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import indexd
from indexd import errors

ROOT = Path(__file__).resolve().parent.parent


def _codes_in_code() -> set[int]:
    codes = {cls.code for _, cls in inspect.getmembers(errors, inspect.isclass)
             if issubclass(cls, errors.IndexdError)}
    for path in Path(indexd.__file__).parent.rglob("*.py"):
        codes |= {int(c) for c in re.findall(r"(?<![\w.])(-32\d{3})\b", path.read_text())}
    return codes


def _documented() -> dict[int, str]:
    text = (ROOT / "docs/protocol.md").read_text()
    table = text.split("## Errors", 1)[1].split("\n## ", 1)[0]
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^\| (-32\d{3}) \| (.+) \|$",
                                                             table, re.M)}


def test_every_error_code_is_in_the_protocol_doc():
    documented = _documented()
    missing = sorted(_codes_in_code() - set(documented))
    assert not missing, f"error codes missing from docs/protocol.md's table: {missing}"
    assert all(meaning.strip() for meaning in documented.values())
