"""The MCP tools' params against the one param table (indexd/server/params.py).

A tool may offer an agent less than the socket method takes (smaller limits
keep answers short), never more: whatever range a tool declares must lie inside
the range the method validates, with the same type, so a call the tool accepts
is never refused by the daemon for a bound the agent was told was fine.

And the schemas come from the table itself: every published property is the
method's row plus the tool's declared override, so a row changed in the table
shows up in the tool (tests/mcp/test_mcp_schema_session.py: over a real session).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing

import anyio
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


# ------------------------------------------------- schemas from the table itself

def as_table(prop: dict) -> dict:
    """pydantic's JSON Schema of one tool param in `params.param_schema`'s dialect:
    no titles, ``T | None`` as T (None counts as absent, as the daemon reads it),
    any other union as oneOf."""
    out = {k: v for k, v in prop.items() if k != "title"}
    alts = [a for a in out.pop("anyOf", []) if a != {"type": "null"}]
    if len(alts) == 1:
        out.update(alts[0])
    elif alts:
        out["oneOf"] = alts
    if "default" in out and out["default"] is None:
        del out["default"]
    return out


def expected_params(fn) -> list[params.Param]:
    """A tool's params as the table states them for its method, plus its declared
    overrides; a tool-own param (a Param of its own) must not shadow a method param."""
    method, overrides = fn.params_from
    known = {p.name for p in params.SPECS[method].params}
    out = []
    for name in inspect.signature(fn).parameters:
        override = overrides.get(name, {})
        if isinstance(override, params.Param):
            assert name not in known, (fn.__name__, name, "a second copy of a table row")
            out.append(override)
        else:
            out.append(dataclasses.replace(params.param(method, name), **override))
    return out


def assert_schemas_are_the_tables(listed: dict[str, dict]) -> None:
    """``listed``: tool name -> its published input schema."""
    assert set(listed) == {fn.__name__ for fn, _ in mcp_server.TOOLS}
    for fn, _ in mcp_server.TOOLS:
        want = expected_params(fn)
        schema = listed[fn.__name__]
        got = {name: as_table(prop) for name, prop in schema["properties"].items()}
        assert got == {p.name: params.param_schema(p) for p in want}, fn.__name__
        assert schema.get("required", []) == [p.name for p in want if p.required], fn.__name__


def test_every_tool_param_is_the_tables_plus_its_declared_override():
    pytest.importorskip("mcp")
    server = mcp_server.build_server()
    listed = anyio.run(server.list_tools)
    assert_schemas_are_the_tables({t.name: t.input_schema for t in listed})


def test_a_change_in_the_table_reaches_the_tool_schema(monkeypatch):
    pytest.importorskip("mcp")
    from mcp.server.mcpserver.tools.base import Tool

    spec = params.SPECS["summary"]
    top = dataclasses.replace(params.param("summary", "top"), hi=7, description="changed")
    monkeypatch.setitem(params.SPECS, "summary",
                        dataclasses.replace(spec, params=(spec.params[0], top)))

    def index_probe(path, top):
        return f"{path} {top}"

    tool = Tool.from_function(mcp_server._params_from("summary")(index_probe),
                              structured_output=False)
    assert tool.parameters["properties"]["top"]["maximum"] == 7
    assert tool.parameters["properties"]["top"]["description"] == "changed"
    assert index_probe("a.py") == "a.py 5"      # the table's default, for Python callers too
