"""Direct importers on a slice of the real stdlib vs an ``ast`` ground truth.

The slice (several whole packages, their own test suites included) is copied
to a temp dir and parsed by the real parser; for ~100 modules the graph's
direct importers (impact depth=1, kinds=["imports"]) must match what Python's
import rules give: recall >= 99%, precision >= 98%.
"""

from __future__ import annotations

import ast
import shutil
import sysconfig
import warnings
from pathlib import Path

import pytest

from graph_helpers import parse_file
from indexd.graph import Graph

PACKAGES = ("email", "json", "http", "xml", "concurrent", "importlib", "urllib", "logging",
            "asyncio", "test/test_json")
TOP = ("os.py", "re/__init__.py", "collections/__init__.py", "functools.py", "typing.py")


def _module_file(files: set[str], parts: list[str]) -> str | None:
    base = "/".join(parts)
    for suffix in (".py", "/__init__.py"):
        if base + suffix in files:
            return base + suffix
    return None


def ast_imports(rel: str, text: str, files: set[str]) -> set[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ast.parse(text)
    pkg = rel.split("/")[:-1]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                hit = next((h for n in range(len(parts), 0, -1)
                            if (h := _module_file(files, parts[:n]))), None)
                if hit:
                    out.add(hit)
        elif isinstance(node, ast.ImportFrom):
            mod = node.module.split(".") if node.module else []
            base = pkg[:len(pkg) - (node.level - 1)] + mod if node.level else mod
            for alias in node.names:
                sub = _module_file(files, base + [alias.name]) if alias.name != "*" else None
                hit = sub or _module_file(files, base)
                if hit:
                    out.add(hit)
    out.discard(rel)
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    src = Path(sysconfig.get_paths()["stdlib"])
    dst = tmp_path_factory.mktemp("std") / "stdlib"
    rels = list(TOP)
    for pkg in PACKAGES:
        rels += [p.relative_to(src).as_posix() for p in (src / pkg).rglob("*.py")]
    texts = {}
    for rel in sorted(set(rels)):
        if not (src / rel).is_file():
            continue
        try:
            text = (src / rel).read_text(encoding="utf-8")
            ast.parse(text)
        except (SyntaxError, ValueError, UnicodeDecodeError):
            continue
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, dst / rel)
        texts[rel] = text
    return dst, texts


def test_direct_importers_match_ast(corpus):
    root, texts = corpus
    files = set(texts)
    truth: dict[str, set[str]] = {}
    for rel, text in texts.items():
        for dst in ast_imports(rel, text, files):
            truth.setdefault(dst, set()).add(rel)
    graph = Graph().build([parse_file("std", root, rel) for rel in sorted(texts)])
    modules = sorted(truth)[::max(1, len(truth) // 100)]
    assert len(modules) >= 90
    tp = n_truth = n_mine = 0
    misses, extras = [], []
    for m in modules:
        res = graph.impact(f"stdlib/{m}", depth=1, kinds=["imports"], limit=None)
        mine = {i["path"] for b in ("affected", "tests", "docs") for i in res[b]}
        tp += len(mine & truth[m])
        n_truth += len(truth[m])
        n_mine += len(mine)
        misses += [(x, m) for x in truth[m] - mine]
        extras += [(x, m) for x in mine - truth[m]]
    recall, precision = tp / n_truth, tp / n_mine
    print(f"modules={len(modules)} edges={n_truth} recall={recall:.4f} precision={precision:.4f}")
    assert recall >= 0.99, misses[:20]
    assert precision >= 0.98, extras[:20]
