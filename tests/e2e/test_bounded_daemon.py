"""Bounded, explained lists through the real daemon, its socket and indexctl:
a function referenced from 260 places answers with the real total, a
truncated flag at the default limit, everything with a high limit, and the
CLI's text says how many were left out."""

from __future__ import annotations

import json
import re

import pytest

from indexd.errors import InvalidParams
from testlib import GitRepo, run_cli, settings_with_realm, wait_until

CALLERS = 260


def make_hub(tmp_path, n: int = CALLERS) -> GitRepo:
    repo = GitRepo(tmp_path / "hub")
    repo.write("lib.py", "def target_fn():\n    return 1\n")
    repo.write("callers/__init__.py", "")
    for i in range(n):
        repo.write(f"callers/c{i:03}.py", f"from lib import target_fn\n\n\n"
                                          f"def use_{i}():\n    return target_fn()\n")
    repo.write("small.py", "def lonely():\n    return 2\n\n\ndef friend():\n    return lonely()\n")
    repo.commit()
    return repo


def test_refs_impact_changes_say_how_many_exist(tmp_path, daemon):
    repo = make_hub(tmp_path)
    settings_with_realm("hub", repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=120)
    target = f"{repo.path}/lib.py::target_fn"
    refs = wait_until(lambda: (r := d.call("refs", target=target)) and r["refs"] and r,
                      timeout=60, what="the graph")
    everything = d.call("refs", target=target, limit=10_000)
    assert everything["refs_truncated"] is False
    assert len(everything["refs"]) == everything["refs_total"]
    assert len({r["path"] for r in everything["refs"]}) == CALLERS
    assert refs["refs_total"] == everything["refs_total"] and refs["refs_truncated"] is True
    assert len(refs["refs"]) == 200

    imp = d.call("impact", target=target, depth=1)
    assert imp["affected_truncated"] is True and len(imp["affected"]) == 200
    full = d.call("impact", target=target, depth=1, limit=10_000)
    assert full["affected_truncated"] is False
    assert imp["affected_total"] == full["affected_total"] == len(full["affected"]) >= CALLERS

    small = d.call("refs", target=f"{repo.path}/small.py::lonely")
    assert small["refs_truncated"] is False and small["refs_total"] == len(small["refs"]) == 1
    for bad in (0, 10_001, "50", True):
        with pytest.raises(InvalidParams, match="limit"):
            d.call("refs", target=target, limit=bad)

    # the human output: the top of each group, then a count of the rest
    out = run_cli("refs", target, "--limit", "10", env=d.env, check=True).stdout
    rest = everything["refs_total"] - 10
    assert f"… and {rest} more" in out and "--limit" in out
    out = run_cli("impact", target, "--depth", "1", env=d.env, check=True).stdout
    more = re.search(r"… and (\d+) more at distance 1", out)
    assert more and int(more.group(1)) == full["affected_total"] - 200
    js = json.loads(run_cli("impact", target, "--depth", "1", "--limit", "5000", "--json",
                            env=d.env, check=True).stdout)
    assert js["affected_truncated"] is False and len(js["affected"]) == js["affected_total"]
    assert "… and" not in run_cli("refs", f"{repo.path}/small.py::lonely", env=d.env,
                                  check=True).stdout

    # changes: the merged buckets of the diff's impact are bounded the same way
    repo.write("lib.py", "def target_fn():\n    return 2\n")
    d.call("status", sync=True, timeout=60)
    ch = d.call("changes", repo=str(repo.path), depth=1, limit=50)
    assert len(ch["affected"]) == 50 and ch["affected_truncated"] is True
    assert ch["affected_total"] >= CALLERS
    out = run_cli("changes", str(repo.path), "--depth", "1", "--limit", "20", env=d.env,
                  check=True).stdout
    assert re.search(r"… and \d+ more at distance 1", out)


def test_the_http_schemas_know_the_limit():
    """The OpenAPI tables and the REST /impact door take the same bounded limit
    the methods check (the REST route refused 'limit' as an unknown field)."""
    from indexd.server.openapi import RPC_PARAMS, _schemas
    from indexd.server.rest_mapping import impact_params
    from indexd.server.methods import LIST_LIMIT, LIST_LIMIT_MAX

    for method in ("impact", "deps", "refs", "changes"):
        limit = RPC_PARAMS[method]["properties"]["limit"]
        assert (limit["minimum"], limit["maximum"], limit["default"]) == (
            1, LIST_LIMIT_MAX, LIST_LIMIT), method
    assert _schemas()["ImpactRequest"]["properties"]["limit"]["maximum"] == LIST_LIMIT_MAX
    assert impact_params({"target": "a.py", "limit": 7}) == {"target": "a.py", "limit": 7}
