"""Path-taking params with a NUL byte, through the real daemon over its socket.

A NUL can never be part of a file name; the OS refuses it with a ValueError
deep inside pathlib, which used to surface as -32603 "internal error" with a
traceback in the log. Each must be a clear -32602 naming the param.
"""

from __future__ import annotations

import pytest
from testlib import settings_with_realm

from indexd.errors import InvalidParams


def _nul_requests(root: str) -> list[tuple[str, dict, str]]:
    """(method, params, name of the offending param) for every path-taking param."""
    return [
        ("symbols", {"path": "a\x00b.py"}, "path"),
        ("symbols", {"path": f"{root}/a\x00b.py"}, "path"),
        ("symbols", {"realm": "work", "repo": root, "path": "a\x00.py"}, "path"),
        ("symbols", {"realm": "work", "repo": root + "\x00", "path": "a.py"}, "repo"),
        ("impact", {"target": f"{root}/a\x00.py"}, "target"),
        ("impact", {"target": "a\x00.py::f"}, "target"),
        ("deps", {"target": f"{root}/a\x00.py"}, "target"),
        ("refs", {"target": f"{root}/a.py\x00::f"}, "target"),
        ("changes", {"repo": root + "\x00"}, "repo"),
        ("annotate", {"target": f"{root}/a\x00.py", "text": "note"}, "target"),
        ("annotations", {"path": f"{root}/a\x00.py"}, "path"),
        ("reindex", {"paths": [f"{root}/a.py", f"{root}/a\x00.py"]}, "paths[1]"),
        ("realm.add", {"realm": "other", "paths": [root + "\x00"]}, "paths[0]"),
        ("realm.remove", {"realm": "work", "paths": [root + "\x00"]}, "paths[0]"),
        ("search", {"query": "alpha", "path": "a\x00*"}, "path"),
        ("search", {"query": "alpha", "repo": root + "\x00"}, "repo"),
        ("graph.export", {"scope": root + "\x00"}, "scope"),
    ]


def test_nul_byte_in_a_path_param_is_invalid_params(git_repo, daemon):
    git_repo.write("a.py", "def alpha():\n    return 1\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    root = str(git_repo.path)

    wrong = []
    for method, params, name in _nul_requests(root):
        try:
            d.call(method, **params)
        except InvalidParams as exc:
            if name not in exc.message or "NUL" not in exc.message:
                wrong.append((method, name, exc.message))
        except Exception as exc:  # noqa: BLE001 - collect every wrong answer, then fail once
            wrong.append((method, name, f"{type(exc).__name__}: {getattr(exc, 'code', '')} {exc}"))
        else:
            wrong.append((method, name, "accepted"))
    assert not wrong, "\n".join(map(repr, wrong))
    # Nothing was lost or half-done: the realm is intact and still served.
    assert d.call("realm.list")["realms"] == [{"name": "work", "repos": [root]}]
    outline = d.call("symbols", path=f"{root}/a.py")["results"]
    assert "alpha" in [h["symbol"] for h in outline]
    assert "Traceback" not in d.output()
