"""`tests.affected`: the test files to run for a change, ranked, with evidence.

The change is a repo's diff (working tree vs HEAD, ``since`` REV, or
``staged``: the index vs HEAD; graph/changes.py) or explicit targets. Each
changed symbol's impact (the warm graph's reverse walk plus coverage edges,
``Relations.impact``; deleted/renamed symbols as their committed file had
them) is turned into a selection by graph/test_select.py. When some changed
symbol has no trusted path to a test, the answer is not ``safe`` and adds
every test file importing the changed module transitively (an imports-only
impact of the file, and what imports it through a package or below a
conftest.py that does), so running the answer still runs what could break.
"""

from __future__ import annotations

import time

from .errors import InvalidParams, RealmError
from .graph.impact import bounded, item
from .graph.model import is_test_path, node_label
from .graph.targets import target_error
from .graph.test_select import add_fallback, ranked, select_tests
from .pytest_config import collected_module, collects_modules

FALLBACK_DEPTH = 10   # imports chains are short; this reaches any real one


def tests_affected(rel, repo: str | None = None, since: str | None = None, staged: bool = False,
                   targets: list[str] | None = None, depth: int = 3, pending=None,
                   limit: int | None = 200) -> dict:
    t0 = time.perf_counter()
    rel._ready()
    changed = (_target_changes(rel, targets) if targets
               else _diff_changes(repo, since, staged))
    doubts: list[str] = []
    pairs = _impacts(rel, repo, since, changed, depth, pending, doubts)
    known: dict[tuple[str, str], bool] = {}

    def holds_tests(repo: str, path: str) -> bool:
        if (repo, path) not in known:
            known[(repo, path)] = rel.defines_tests(repo, path)
        return known[(repo, path)]

    collects: dict[str, bool] = {}

    def collected(repo: str, path: str) -> bool:
        """pytest's --doctest-modules imports every module of a test folder."""
        if not (is_test_path(path) and collected_module(path)):
            return False
        if repo not in collects:
            collects[repo] = collects_modules(repo)
        return collects[repo]

    picked = select_tests(pairs, depth, holds_tests, collected)
    unsafe = [c for c in picked["changed"] if c["tested"] not in ("trusted", "untested")]
    fallback = None
    if unsafe:
        modules = list(dict.fromkeys((c["repo"], c["path"]) for c in unsafe))
        fallback = {"reason": _reason(unsafe),
                    "modules": [node_label(r, p, None) for r, p in modules],
                    "files": add_fallback(picked["files"],
                                          _import_impacts(rel, modules, pending, doubts),
                                          holds_tests, collected)}
    rows = ranked(picked["files"])
    results = [r for _, r in pairs if r is not None]
    reasons = [r["incomplete_reason"] for r in results if r.get("incomplete_reason")] + doubts
    return {"repo": repo, "since": since, "staged": staged, "targets": targets,
            "changed": picked["changed"], **bounded("tests", rows, limit),
            "safe": not unsafe, "unsafe": [c["label"] for c in unsafe],
            "untested": [c["label"] for c in picked["changed"] if c["tested"] == "untested"],
            "ruled_out": sorted({t for r in results for t in r.get("tests_ruled_out", ())}),
            "fallback": fallback,
            "complete": all(r["complete"] for r in results) and not doubts,
            "incomplete_reason": "; ".join(dict.fromkeys(reasons)) or None,
            "limit": limit, "truncated": len(rows) > (limit or len(rows)),
            "took_ms": round((time.perf_counter() - t0) * 1000, 2)}


def _reason(unsafe: list[dict]) -> str:
    weak = [c["label"] for c in unsafe if c["tested"] == "weak"]
    unknown = [c["label"] + _why_unknown(c) for c in unsafe if c["tested"] == "unknown"]
    parts = []
    if weak:
        parts.append("only name_match/git paths to tests for " + ", ".join(weak))
    if unknown:
        parts.append("cannot tell which tests reach " + ", ".join(unknown))
    return "; ".join(parts) + ": added every test file importing the changed module(s)"


def _why_unknown(change: dict) -> str:
    """What runs the symbol that no edge says, where the answer knows it."""
    if change.get("outside_base"):
        return (f" (its class derives from {change['outside_base']}, outside the realm, "
                "whose code may call it)")
    if change.get("overrides"):
        return f" (it overrides {change['overrides']}, which something calls)"
    if change.get("run_by"):
        return f" (run through {change['run_by']})"
    if change.get("ran_unimported"):
        return (f" (coverage saw it run outside every test, and no test imports "
                f"{change['ran_unimported']}: it is loaded by name)")
    if change.get("unresolved_caller"):
        return (f" (its caller {change['unresolved_caller']} is named by references no "
                "definition could be tied to, which may lead to tests)")
    if change.get("untyped_use"):
        return (f" (also run on a value of no known class in {change['untyped_use']}, "
                "which no test is seen to reach)")
    return ""


def _diff_changes(repo: str | None, since: str | None, staged: bool) -> list[dict]:
    from .graph.changes import changed_symbols

    if repo is None:
        raise InvalidParams("tests.affected needs a repo (or targets)")
    try:
        rows = changed_symbols(repo, since, staged=staged)
    except (KeyError, ValueError) as exc:
        raise InvalidParams(f"cannot diff {repo} against {since or 'HEAD'}: {exc}") from None
    return [{**r, "repo": repo} for r in rows]


def _target_changes(rel, targets: list[str]) -> list[dict]:
    out = []
    graph = rel._ready()   # outside the lock, which a rebuild needs to publish
    with rel.lock:
        for target in targets:
            try:
                nodes = graph.resolve_target(target)
            except KeyError as exc:
                raise RealmError(target_error(target, exc)) from None
            out += [{"repo": n[1], "path": n[2], "symbol": n[3], "change": "target"}
                    for n in nodes]
    return out


def _impacts(rel, repo, since, changed, depth, pending,
             doubts) -> list[tuple[dict, dict | None]]:
    """(change, its impact) per change; None: the graph does not know it."""
    out, gone = [], []
    # what coverage may rule out is judged against the whole change, not one symbol of it
    changing = [(None, c["repo"], c["path"], c.get("symbol")) for c in changed]
    for ch in changed:
        try:
            result = rel.impact(_target(ch), depth=depth, pending=pending, limit=None,
                                changing=changing)
            # a changed test method of a mixin runs from the test modules deriving from it
            # (impact adds the runners of the tests it reached)
            if ch.get("symbol") and is_test_path(ch["path"]):
                result["tests"] = result.get("tests", []) + rel.test_runners(
                    [{"repo": ch["repo"], "path": ch["path"], "symbol": ch["symbol"],
                      "score": 1.0, "distance": 0, "via": []}])
            if ch.get("symbol"):
                result["overrides_called"] = rel.called_base_method(_target(ch))
                result["property"] = rel.is_property(_target(ch))
                if not result.get("tests"):   # only an untested verdict needs these
                    result["implicit_caller"] = rel.implicit_caller(_target(ch),
                                                                    result.get("affected", []))
                    result["outside_base"] = rel.outside_base(_target(ch))
                    result["unresolved_caller"] = rel.unresolved_caller(
                        result.get("affected", []))
            out.append((ch, result))
        except RealmError:
            if ch["change"] in ("deleted", "renamed") and repo is not None:
                gone.append(ch)
            else:
                out.append((ch, None))   # a file indexd does not index: cannot tell
    if gone:
        by_target = {r["target"]: r for r in
                     rel._impact_of_gone(repo, since, gone, depth, pending, doubts)}
        out += [(ch, by_target.get(_target(ch))) for ch in gone]
    return out


def _import_impacts(rel, modules, pending, doubts) -> list[tuple[str, dict]]:
    out = []
    for repo, path in modules:
        try:
            result = rel.impact(f"{repo}/{path}", depth=FALLBACK_DEPTH, kinds=["imports"],
                                pending=pending, limit=None)
        except RealmError:
            doubts.append(f"no importers known for {path} (not in the index)")
            continue
        result["tests"] += _also_importing(rel, repo, path, result["tests"])
        out.append((node_label(repo, path, None), result))
    return out


def _also_importing(rel, repo: str, path: str, listed: list[dict]) -> list[dict]:
    """The test files the imports-only walk left out that break with the module all the
    same (Relations.tests_importing): through a package (``from attr import _config`` runs
    attr/__init__.py, which imports the module) or below a conftest.py importing it
    (pytest imports it first: attrs' root conftest.py imports attr._compat). Missing
    them, attrs' ``Attribute._setattrs`` fallback left out two of its failing files."""
    found = rel.tests_importing(f"{repo}/{path}")
    seen = {(t["repo"], t["path"]) for t in listed}
    return [item(n, v, 0.0, "file") for n, v in sorted(found.items())
            if (n[1], n[2]) not in seen]


def _target(ch: dict) -> str:
    return f"{ch['repo']}/{ch['path']}" + (f"::{ch['symbol']}" if ch.get("symbol") else "")
