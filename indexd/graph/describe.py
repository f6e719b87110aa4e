"""File-to-file relationships in words: which pairs are strongest, and why.

Owns ``pair_edges`` (a file's edges grouped by the other file, either
direction), ``strongest`` (the top pairs by strength: kind weight x
confidence summed over the pair's edges, co-change counted once) and
``evidence_sentence``, the description every pair has without a model:
"app.py imports Blueprint from blueprints.py and calls register 3 times".
Pure: a ``Graph`` and its edges in, text out; no store, no LLM. The caller
holds the graph's lock.
"""

from __future__ import annotations

from collections import Counter
from posixpath import basename

from .impact import KIND_WEIGHT, confidence
from .model import Edge

TOP_PAIRS = 5          # pairs per file that get a (model) description
NAMES_SHOWN = 3        # names per clause; the rest are "and N more"

FileKey = tuple        # (realm, repo, path)


def pair_edges(graph, key: FileKey, direction: str = "out") -> dict[FileKey, list[Edge]]:
    """``key``'s edges by the other file: out (key uses it) or in (it uses key)."""
    out: dict[FileKey, list[Edge]] = {}
    if direction == "out":
        res = graph.results.get(key)
        edges = list(res.edges) if res is not None else []
        edges += graph.cochange.get(key, [])
        for e in edges:
            other = (e.realm, e.dst_repo, e.dst_path)
            if other != key:
                out.setdefault(other, []).append(e)
        return out
    for src, at in graph.rev.get(key, {}).items():
        if type(at) is int:
            if src in graph.results and src != key:
                out.setdefault(src, []).extend(graph.results[src].edges_to(at))
        else:   # co-change edges, keyed ("git", *src)
            out.setdefault(src[1:], []).extend(at)
    return out


def strength(edges: list[Edge]) -> float:
    total, cochange = 0.0, 0.0
    for e in edges:
        w = KIND_WEIGHT.get(e.kind, 0.5) * confidence(e)
        if e.kind == "co_change":
            cochange = max(cochange, w)   # one history fact, whatever its count
        else:
            total += w
    return total + cochange


def strongest(graph, key: FileKey, direction: str = "out",
              top: int = TOP_PAIRS) -> list[tuple[FileKey, list[Edge], float]]:
    """The ``top`` strongest pairs of ``key`` in one direction, strongest first; pairs
    only a name agrees on (``name_match``: 15% right on the stdlib sample) are left out."""
    pairs = [(other, edges, strength(edges))
             for other, edges in pair_edges(graph, key, direction).items()
             if any(e.how != "name_match" for e in edges)]
    pairs.sort(key=lambda p: (-p[2], p[0][2]))
    return pairs[:top]


def edges_between(graph, src: FileKey, dst: FileKey) -> list[Edge]:
    """Every edge from file ``src`` to file ``dst`` (co-change included)."""
    at = graph.rev.get(dst, {}).get(src)
    edges = graph.results[src].edges_to(at) if type(at) is int and src in graph.results else []
    return edges + list(graph.rev.get(dst, {}).get(("git",) + src, []))


def evidence_sentence(src_path: str, dst_path: str, edges: list[Edge]) -> str:
    """One sentence from the edges' kinds, names and counts (no model needed)."""
    src, dst = _short(src_path, dst_path)
    clauses = _clauses(edges, dst)
    if not clauses:
        return f"{src} is related to {dst}."
    if not any(dst in c for c in clauses):   # "calls encode": say where
        clauses[0] += f" in {dst}"
    hedge = " (matched by name only)" if all(e.how == "name_match" for e in edges) else ""
    return f"{src} {_join(clauses)}{hedge}."


def _short(src_path: str, dst_path: str) -> tuple[str, str]:
    """Base names, unless they are the same (then the repo-relative paths)."""
    a, b = basename(src_path) or src_path, basename(dst_path) or dst_path
    return (src_path, dst_path) if a == b else (a, b)


def _clauses(edges: list[Edge], dst: str) -> list[str]:
    by_kind: dict[str, list[Edge]] = {}
    for e in edges:
        by_kind.setdefault(e.kind, []).append(e)
    import_lines = {e.line for e in by_kind.get("imports", [])}
    refs = by_kind.get("references", [])
    imported = [e for e in refs if e.line in import_lines]
    used = [e for e in refs if e.line not in import_lines]
    out = []
    if "imports" in by_kind:
        names = _names(imported, counts=False)
        out.append(f"imports {names} from {dst}" if names else f"imports {dst}")
    elif imported:
        out.append(f"imports {_names(imported, counts=False)} from {dst}")
    named = {e.dst_symbol for e in imported}
    # a test's calls are what it tests: said once, as "tests"
    verbs = (("tests", "tests"), ("documents", "documents"), ("config", "configures")) \
        if "tests" in by_kind else (("calls", "calls"), ("documents", "documents"),
                                     ("config", "configures"))
    for kind, verb in verbs:
        if kind in by_kind:
            out.append(f"{verb} {_names(by_kind[kind]) or dst}")
            named |= {e.dst_symbol for e in by_kind[kind]}
    used = [e for e in used if e.dst_symbol not in named]   # no name twice
    if used:
        out.append(f"uses {_names(used, counts=False)}")
    if "package" in by_kind and not out:
        out.append(f"loads its package {dst}")
    for e in by_kind.get("co_change", [])[:1]:
        commits = e.support or 0
        out.append(f"changed together with {dst} in {_times(commits, 'commit')}" if commits
                   else f"changes together with {dst}")
    return out


def _names(edges: list[Edge], counts: bool = True) -> str:
    """'register 3 times and Blueprint' (last part of each symbol, most used first)."""
    counter = Counter(e.dst_symbol.rsplit(".", 1)[-1] for e in edges if e.dst_symbol)
    if not counter:
        return ""
    ranked = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = [f"{name} {_times(n, 'time')}" if counts and n > 1 else name
             for name, n in ranked[:NAMES_SHOWN]]
    if len(ranked) > NAMES_SHOWN:
        shown.append(f"{len(ranked) - NAMES_SHOWN} more")
    return _join(shown)


def _times(n: int, word: str) -> str:
    return f"{n} {word}s" if n != 1 else f"one {word}"


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
