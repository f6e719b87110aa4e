"""The MCP tools' params against the one param table (indexd/server/params.py).

A tool may offer an agent less than the socket method takes (smaller limits
keep answers short), never more: whatever range a tool declares must lie inside
the range the method validates, with the same type, so a call the tool accepts
is never refused by the daemon for a bound the agent was told was fine.
"""

from __future__ import annotations

import inspect
import re
import typing

import pytest

pytest.importorskip("pydantic")
from indexd.mcp import server as mcp_server  # noqa: E402
from indexd.server import params  # noqa: E402

TOOLS = [fn for name, fn in vars(mcp_server).items()
         if name.startswith("index_") and inspect.isfunction(fn)]


def _bounds(annotation) -> tuple[type | None, float | None, float | None]:
    """(base type, ge, le) of an ``Annotated[T, Field(ge=..., le=...)]``."""
    if typing.get_origin(annotation) is not typing.Annotated:
        return None, None, None
    base, *extras = typing.get_args(annotation)
    lo = hi = None
    for extra in extras:
        for meta in getattr(extra, "metadata", []):
            lo = getattr(meta, "ge", lo)
            hi = getattr(meta, "le", hi)
    return base, lo, hi


def _methods(fn) -> list[str]:
    return re.findall(r'_call\("([\w.]+)"', inspect.getsource(fn))


def test_every_tool_calls_known_methods():
    assert TOOLS
    for fn in TOOLS:
        for method in _methods(fn):
            assert method in params.SPECS, (fn.__name__, method)


def test_tool_bounds_lie_within_the_socket_methods_bounds():
    checked, wrong = 0, []
    for fn in TOOLS:
        hints = typing.get_type_hints(fn, include_extras=True)   # the module's annotations are strings
        for name in inspect.signature(fn).parameters:
            base, lo, hi = _bounds(hints.get(name))
            if lo is None and hi is None:
                continue
            for method in _methods(fn):
                spec = next((q for q in params.SPECS[method].params if q.name == name), None)
                if spec is None:
                    continue
                checked += 1
                if spec.type != {int: "integer", float: "number"}.get(base, spec.type):
                    wrong.append((fn.__name__, name, f"type {base} vs {spec.type}"))
                if lo is not None and spec.lo is not None and lo < spec.lo:
                    wrong.append((fn.__name__, name, f"tool allows {lo}, {method} {spec.lo}.."))
                if hi is not None and spec.hi is not None and hi > spec.hi:
                    wrong.append((fn.__name__, name, f"tool allows {hi}, {method} ..{spec.hi}"))
    assert checked >= 5, checked
    assert not wrong, wrong
