"""lancedb is imported with the REST client's validators built on first use (store/lancedb_import.py)."""

from __future__ import annotations

import subprocess
import sys

import pydantic
import pytest

from indexd.store.lancedb_import import _deferred, lancedb


def test_a_deferred_validator_still_validates_when_called():
    calls = []

    @_deferred(pydantic.validate_call)
    def add(x: int, y: int = 1) -> int:
        calls.append((x, y))
        return x + y

    @_deferred(pydantic.validate_call)(validate_return=True)
    def name(x: str) -> str:
        return x

    assert add("2", y=3) == 5 and calls == [(2, 3)]   # coerced, as validate_call does
    with pytest.raises(pydantic.ValidationError):
        add("two")
    assert add.__name__ == "add" and name("a") == "a"


def test_lancedb_imports_without_building_the_rest_clients_validators():
    code = ("import pydantic, sys; real = pydantic.validate_call\n"
            "from indexd.store.lancedb_import import lancedb\n"
            "db = lancedb()\n"
            "assert pydantic.validate_call is real, 'validate_call not put back'\n"
            "api = sys.modules['lance_namespace_urllib3_client.api.table_api'].TableApi\n"
            "method = next(v for k, v in vars(api).items() if not k.startswith('_') and callable(v))\n"
            "assert method.__closure__ is not None and 'built' in method.__code__.co_freevars\n"
            "print(db.__name__, hasattr(db, 'connect'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["lancedb", "True"]
    assert lancedb().connect is not None
