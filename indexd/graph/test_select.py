"""Test selection: which test files to run for a change, and whether that is enough.

Pure: given each changed symbol's impact answer (``Graph.impact`` with
coverage merged), ``select_tests`` groups the tests bucket by test file,
keeps per file its best score, the changed symbols it reaches and the
evidence chain (the ``via`` edges, test -> ... -> changed symbol, each with
its ``how``), and says per changed symbol how well it is tested:

- ``trusted``: some test reaches it over resolved / inferred / coverage edges only,
  at any depth (the tests bucket's reach, Graph.impact);
- ``weak``: tests reach it, but only through a name_match or git (co-change) edge;
  tests one name match beyond a trusted reach are selected too, but never make a
  change trusted on their own (``impact.guess_seeds``);
- ``untested``: provably no test: no test item, no unresolved reference that
  might be it, the answer complete and the walk not cut at its depth;
- ``unknown``: the graph cannot tell (not indexed, walk cut, unresolved names, a
  ``__dunder__`` method or a property no edge reaches: the interpreter calls those
  itself, on an operation or an attribute read (``property`` in the answer), or an
  override of a base method something calls: ``overrides_called`` in the answer), or
  a symbol that runs only through such a dunder or property, or by name (a
  module-level list of strings names it or a caller): ``implicit_caller``; or a
  method of a class deriving from a class outside the realm, whose code may call it
  (``outside_base``); or a caller of it that unresolved references may name
  (``unresolved_caller``: an ambiguous ``p.run(x)``), so the chain's end is no proof.

``safe`` is every changed symbol trusted or untested. When it is not,
``add_fallback`` adds every test file importing the changed modules
transitively; every file there not selected on trusted evidence reads
``fallback: true``.

Only test modules are selected (``model.is_test_module``: what pytest or the language's
runner runs; under pytest's ``--doctest-modules`` every module of a test folder, which it
imports: ``collected``); a helper, ``conftest.py`` or data file under a test dir is support:
a changed one is walked like code, to the tests that use it, and reaching a change only through
support (no test module at any depth) leaves it ``unknown``. A changed test module selects
itself and, walked like code, the test modules using what changed (a base ``TestCase``).

The order is the order to run them in, the likeliest to fail first. Measured on the
mutants of bench/impact_vs_tests.py (docs/benchmarks.md): a test file named after the
changed module, then the shortest chain to the change, then the most test functions
reaching it, then the chain's score (which long chains through a hub give every file
alike).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from .model import is_dunder, is_test_module, node_label

TRUSTED_HOW = ("resolved", "inferred", "coverage")
FALLBACK_SCORE = 0.0   # fallback files rank after every selected one anyway
UNREACHED = 1 << 30    # a row's distance before any chain names one


def path_hows(test_item: dict) -> list[str]:
    return [edge["how"] for edge in test_item.get("via", [])]


def is_trusted(test_item: dict) -> bool:
    hows = path_hows(test_item)
    return bool(hows) and all(h in TRUSTED_HOW for h in hows)


def change_label(ch: dict) -> str:
    return node_label(ch["repo"], ch["path"], ch.get("symbol"))


def _any_file(repo: str, path: str) -> bool:
    return True


def _no_file(repo: str, path: str) -> bool:
    return False


def select_tests(pairs: list[tuple[dict, dict | None]], depth: int,
                 holds_tests=_any_file, collected=_no_file) -> dict:
    """``pairs``: (change row with repo/path/symbol/change, its impact or None when the
    graph does not know it). ``holds_tests(repo, path)``: does a test module by its name
    define a test (``Graph.defines_tests``)? ``collected(repo, path)``: is a file under a
    test folder run all the same (pytest's ``--doctest-modules`` imports every module)?
    -> {"files": {(repo, path): row}, "changed": [...]}."""
    files: dict[tuple, dict] = {}
    changed = []

    def runnable(repo: str, path: str) -> bool:
        return (is_test_module(path) and holds_tests(repo, path)) or collected(repo, path)

    for ch, result in pairs:
        label = change_label(ch)
        itself = runnable(ch["repo"], ch["path"]) and ch.get("change") != "deleted"
        if itself:
            _add(files, ch["repo"], ch["path"], ch.get("symbol"), label, score=1.0, trusted=True,
                 hows=["changed"], via=[], distance=0, module=ch["path"])
        reached = [t for t in (result or {}).get("tests", [])
                   if not (itself and (t["repo"], t["path"]) == (ch["repo"], ch["path"]))]
        tests = [t for t in reached if runnable(t["repo"], t["path"])]
        for t in tests:
            _add(files, t["repo"], t["path"], t.get("symbol"), label, score=t["score"],
                 trusted=is_trusted(t), hows=path_hows(t), via=t.get("via", []),
                 why=t.get("why"), distance=t.get("distance", len(t.get("via", []))),
                 module=ch["path"])
        overrides = (result or {}).get("overrides_called")
        implicit = (result or {}).get("implicit_caller")
        outside = (result or {}).get("outside_base")
        unresolved = (result or {}).get("unresolved_caller")
        tested = ("unknown" if reached and not tests   # support only: a helper no test reaches
                  else _tested(tests, result, depth, ch.get("symbol")))
        if itself:
            # a changed test module runs itself; other test modules using what changed
            # (markdown's test_tools.TestCase.dedent: 18 of them) are selected beside it
            tested = "trusted" if result is None or tested == "untested" else tested
        untyped = _untyped_unreached(result) if tested == "unknown" and tests else []
        changed.append({**_row(ch), "tested": tested,
                        "tests": sorted({t["path"] for t in tests}
                                        | ({ch["path"]} if itself else set())),
                        **({"overrides": overrides} if overrides else {}),
                        **({"run_by": implicit} if implicit and not tests else {}),
                        **({"outside_base": outside} if outside and not tests else {}),
                        **({"unresolved_caller": unresolved}
                           if unresolved and not tests and tested == "unknown" else {}),
                        **({"untyped_use": untyped[0]} if untyped else {}),
                        **({"ran_unimported": result["ran_unimported"][0]}
                           if tested == "unknown" and (result or {}).get("ran_unimported")
                           else {})})
    return {"files": files, "changed": changed}


def _interpreter_run(symbol: str | None, result: dict | None) -> bool:
    """A dunder or a property: run on an operation or an attribute read, which an
    untyped value may be the receiver of."""
    return bool(symbol) and (is_dunder(symbol) or bool((result or {}).get("property")))


def _untyped_unreached(result: dict | None) -> list[str]:
    return ((result or {}).get("tests_walk") or {}).get("untyped_unreached") or []


def _row(ch: dict) -> dict:
    return {"repo": ch["repo"], "path": ch["path"], "symbol": ch.get("symbol"),
            "change": ch.get("change"), "label": change_label(ch)}


def _tested(tests: list[dict], result: dict | None, depth: int,
            symbol: str | None = None) -> str:
    # a trusted chain longer than ``depth`` counts too: on click's mutants (with
    # fixture types) that said safe 28 times, 21 right, against 15 of 22 counting
    # only chains within depth 3, at the same file recall (docs/benchmarks.md)
    if (result or {}).get("ran_unimported"):
        # coverage saw it run outside every test, in a module no test imports: loaded by
        # name, by tests coverage cannot name (markdown's extensions under its generated
        # legacy tests: WikiLinksInlineProcessor._getMeta said safe, test_legacy.py failed)
        return "unknown"
    if any(is_trusted(t) for t in tests):
        if _interpreter_run(symbol, result) and _untyped_unreached(result) and not any(
                "coverage" in path_hows(t) for t in tests):
            # tests run it, but so may code no test leads to, on a value of no known
            # class: cachetools' Cache.maxsize, read by the `getinfo` hung on a wrapper
            # as `cache_info`, said safe once its mixin's tests were typed (a coverage
            # run that recorded it saw every test running it, that code's too)
            return "unknown"
        return "trusted"
    if tests:
        return "weak"
    if result is None or not result.get("complete", False):
        return "unknown"
    if result.get("unresolved_total", 0) or str(depth) in result.get("affected_by_distance", {}):
        return "unknown"   # a name that might be it, or a walk that stopped short
    if result.get("overrides_called"):
        # a call through a receiver typed as the base lands on the base's method and
        # may run this override: click's Path.shell_complete said untested, and
        # test_shell_completion.py failed
        return "unknown"
    if result.get("property"):
        # run by reading an attribute, which no edge names: marshmallow's Nested.schema
        # said untested, and seven test files failed (graph/properties.py)
        return "unknown"
    if symbol and is_dunder(symbol):
        # the interpreter calls these (an attribute read on a value of no known class,
        # C code such as io.TextIOWrapper reading its buffer): no edge is no proof.
        # click's LazyFile.__getattr__ said untested, and three test files failed
        return "unknown"
    if result.get("implicit_caller"):
        # reached only through a dunder or property, which the interpreter calls (pickle
        # runs __reduce__: toolz's _restore_curry said untested, and a test file failed),
        # or run by name (jinja2's runtime.identity, named in what generated code imports)
        return "unknown"
    if result.get("outside_base"):
        # a method of a class deriving from code outside the realm, which may call it:
        # idna's IncrementalDecoder._buffer_decode, run by the standard library's
        # codecs.BufferedIncrementalDecoder.decode, said untested, and a test file failed
        return "unknown"
    if result.get("unresolved_caller"):
        # a caller that references no definition could be tied to may name: markdown's
        # InlineProcessor.__handleInline, called by InlineProcessor.run, which runs as
        # `treeprocessor.run(root)` (`run` defined in 18 files), said untested, and 26
        # test files failed
        return "unknown"
    return "untested"


def _add(files: dict, repo: str, path: str, test_symbol: str | None, changed: str, *,
         score: float, trusted: bool, hows: list[str], via: list[dict],
         why: str | None = None, distance: int, module: str) -> None:
    row = files.setdefault((repo, path), _new_row(repo, path, fallback=False, score=0.0))
    row["score"] = max(row["score"], round(score, 4))
    row["trusted"] = row["trusted"] or trusted
    row["distance"] = min(row["distance"], distance)
    row["named_after"] = row["named_after"] or named_after(path, module)
    if changed not in row["symbols"]:
        row["symbols"].append(changed)
    if test_symbol and test_symbol not in row["nodes"]:
        row["nodes"].append(test_symbol)
    best = row["evidence"].get(changed)
    if best is None or (trusted, score) > (best["trusted"], best["score"]):
        row["evidence"][changed] = {"changed": changed,
                                    "test": node_label(repo, path, test_symbol),
                                    "trusted": trusted, "score": round(score, 4), "how": hows,
                                    "via": via, **({"why": why} if why else {})}


def add_fallback(files: dict, import_impacts: list[tuple[str, dict]],
                 holds_tests=_any_file, collected=_no_file) -> list[str]:
    """Every test file importing a changed module transitively; those not selected on
    trusted evidence get ``fallback: true`` (added, or kept from weak evidence).
    Returns the whole import set's paths."""
    named = []
    for module, result in import_impacts:
        for t in result.get("tests", []):
            if not ((is_test_module(t["path"]) and holds_tests(t["repo"], t["path"]))
                    or collected(t["repo"], t["path"])):
                continue
            if t["path"] not in named:
                named.append(t["path"])
            row = files.setdefault((t["repo"], t["path"]),
                                   _new_row(t["repo"], t["path"], fallback=True,
                                            score=FALLBACK_SCORE))
            row["distance"] = min(row["distance"], t.get("distance", len(t.get("via", []))))
            row["named_after"] = row["named_after"] or named_after(t["path"], module)
            if row["trusted"]:
                continue
            row["fallback"] = True
            if module not in row["symbols"]:
                row["symbols"].append(module)
            row["evidence"].setdefault(module, {
                "changed": module, "test": node_label(t["repo"], t["path"], t.get("symbol")),
                "trusted": False, "score": FALLBACK_SCORE, "how": path_hows(t),
                "via": t.get("via", [])})
    return named


def _new_row(repo: str, path: str, *, fallback: bool, score: float) -> dict:
    return {"repo": repo, "path": path, "score": score, "trusted": False, "fallback": fallback,
            "distance": UNREACHED, "named_after": False, "symbols": [], "nodes": [],
            "evidence": {}}


def _words(path: str, strip_test: bool) -> frozenset[str]:
    stem = PurePosixPath(path).stem.lower()
    if strip_test:
        stem = re.sub(r"^test_|_test$", "", stem)
    return frozenset(w for w in stem.strip("_").split("_") if w)


def named_after(test_path: str, module_path: str) -> bool:
    """Does the test file's name name the changed module (test_fields.py for fields.py,
    test_funcutils_fb.py for funcutils.py, test_compat.py for _compat.py)? Whole words,
    so test_core.py is not named after re.py."""
    test, module = _words(test_path, True), _words(module_path, False)
    return bool(test and module) and (module <= test or test <= module)


def ranked(files: dict) -> list[dict]:
    """Selected first (trusted ones first), fallback after, each tier in the order to run
    it in (the module docstring); evidence as a list."""
    rows = sorted(files.values(), key=lambda r: (
        r["fallback"], not r["trusted"], not r["named_after"], r["distance"],
        -len(r["nodes"]), -r["score"], r["path"]))
    return [{**{k: v for k, v in r.items() if k != "nodes"}, "rank": i + 1,
             "distance": None if r["distance"] == UNREACHED else r["distance"],
             "node_ids": [_node_id(r["path"], n) for n in r["nodes"]],
             "evidence": list(r["evidence"].values())} for i, r in enumerate(rows)]


def _node_id(path: str, symbol: str) -> str:
    """pytest's node id: 'tests/test_a.py::TestK::test_m' for symbol 'TestK.test_m'."""
    return f"{path}::" + symbol.replace(".", "::")
