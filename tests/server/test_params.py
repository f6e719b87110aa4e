"""The one param table (indexd/server/params.py) against the method table.

The e2e probe in tests/e2e/test_http_api.py checks the published bounds against
the running daemon; these checks are the fast half: no method without a spec,
and the table's messages name the param and say what it should be.
"""

from __future__ import annotations

import pytest

from indexd.errors import InvalidParams
from indexd.server import params
from indexd.server.methods import Methods


def test_every_method_has_a_spec_and_every_spec_a_method():
    table = Methods(lambda: None, store=None).table
    assert set(table) == set(params.SPECS)


@pytest.mark.parametrize("method, given, text", [
    ("impact", {}, "impact needs a non-empty string 'target'"),
    ("impact", {"target": "  "}, "impact needs a non-empty string 'target'"),
    ("impact", {"target": "a.py", "depth": 11}, "depth must be an integer in 1..10"),
    ("impact", {"target": "a.py", "depth": True}, "depth must be an integer in 1..10"),
    ("impact", {"target": "a.py", "kinds": 3}, "kinds must be a list of strings or a comma"),
    ("status", {"timeout": -1}, "timeout must be a number in 0..3600 (seconds)"),
    ("context", {"query": "q", "budget": 10}, "budget must be an integer in 64..200000 (tokens)"),
    ("context", {"query": "q", "mode": "psychic"}, "mode must be keyword, semantic or hybrid"),
    ("context", {"query": "q", "budgett": 1}, "unknown context params: budgett"),
    ("search", {"query": "q", "files": "yes"}, "files must be true or false"),
    ("realm.add", {"realm": "w", "paths": "/x"}, "paths must be a list of strings"),
])
def test_bad_params_are_refused_naming_the_param(method, given, text):
    with pytest.raises(InvalidParams) as exc:
        params.validate(method, given)
    assert text in exc.value.message


def test_good_params_and_nulls_pass():
    params.validate("impact", {"target": "a.py", "depth": 10, "kinds": ["calls"], "limit": None})
    params.validate("status", {"sync": True, "timeout": 2.5})
    params.validate("changes", {"unknown_names": "are ignored by open methods"})


def test_schema_states_the_same_bounds_the_check_enforces():
    schema = params.json_schema("context")
    assert schema["required"] == ["query"] and schema["additionalProperties"] is False
    budget = schema["properties"]["budget"]
    assert (budget["minimum"], budget["maximum"], budget["default"]) == (64, 200_000, 4000)
    params.validate("context", {"query": "q", "budget": budget["maximum"]})
    with pytest.raises(InvalidParams):
        params.validate("context", {"query": "q", "budget": budget["maximum"] + 1})
