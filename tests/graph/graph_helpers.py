"""Helpers for graph tests: real files on disk, parsed by the real parser.

(A plain module, not conftest.py: tests/conftest.py already owns that name.)
"""

from __future__ import annotations

import os
from pathlib import Path

from indexd.graph import Graph, facts_from_parse
from indexd.parse import detect_language, parse_source


# A small app with every edge kind (imports, calls, tests, docs, config): test_edges,
# test_snapshot.
APP_FILES = {
    "app/__init__.py": "",
    "app/db.py": ("import os\n\nclass Database:\n    def connect(self):\n"
                  "        return os.environ['DATABASE_URL']\n\n"
                  "def open_database_connection():\n    return Database()\n"),
    "app/service.py": ("from app.db import open_database_connection\n\n"
                       "def handle_request():\n    db = open_database_connection()\n"
                       "    return db.connect()\n\n"
                       "def _tiny():\n    return settings['feature_flag']\n"),
    "app/other.py": "def render_invoice_total():\n    return handle_request()\n",
    "tests/test_service.py": ("from app.service import handle_request\n\n"
                              "def test_handle():\n    handle_request()\n"),
    "config/settings.yaml": "DATABASE_URL: postgres://x\nfeature_flag: true\n",
    "README.md": ("# Overview\nCall `handle_request` or `app.db.Database`; see [db](app/db.py#L3)\n"
                  "and [gone](missing.md) and [anchor](#nope).\n\n## Files\nSee `app/service.py`.\n"),
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


def parse_file(realm: str, repo: Path, rel: str, status: str | None = None):
    text = (repo / rel).read_text(encoding="utf-8")
    lang = detect_language(rel, text[:200])
    result = parse_source(rel, text, lang, exists=lambda p: (repo / p).exists())
    st = status or ("failed" if result.error else "indexed")
    return facts_from_parse(realm, repo.as_posix(), rel, lang, result, st, text=text)


def repo_facts(realm: str, repo: Path) -> list:
    out = []
    for dirpath, dirs, names in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        for n in names:
            rel = (Path(dirpath) / n).relative_to(repo).as_posix()
            out.append(parse_file(realm, repo, rel))
    return out


def build(realm: str, *repos: Path, cochange=()) -> Graph:
    facts = [f for r in repos for f in repo_facts(realm, r)]
    return Graph().build(facts, list(cochange))


def paths(items) -> set[str]:
    return {i["path"] for i in items}


def edge_set(graph: Graph) -> set:
    return {(e.kind, e.src_repo, e.src_path, e.src_symbol, e.dst_repo, e.dst_path,
             e.dst_symbol, e.line, e.how, e.weight) for e in graph.edges()}


def calls_from(graph: Graph, path: str, symbol: str) -> set[tuple]:
    """(dst_path, dst_symbol, how) of every calls edge out of ``path::symbol``."""
    return {(e.dst_path, e.dst_symbol, e.how) for e in graph.edges(["calls"])
            if e.src_path == path and e.src_symbol == symbol}


def hows_to(graph: Graph, path: str, symbol: str, target: str) -> set[str]:
    """The ``how`` of every calls edge from ``path::symbol`` to ``path::target``."""
    return {how for p, s, how in calls_from(graph, path, symbol) if p == path and s == target}


def trusted_tests(graph: Graph, target: str, depth: int = 3) -> set[tuple[str, str | None]]:
    """(path, symbol) of each test ``impact`` reaches from ``target`` over resolved and
    inferred edges only: the chains ``tests affected`` trusts."""
    answer = graph.impact(target, depth=depth)
    return {(t["path"], t["symbol"]) for t in answer["tests"]
            if t["via"] and all(e["how"] in ("resolved", "inferred") for e in t["via"])}
