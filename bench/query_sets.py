"""Search-quality query sets: where they live, their corpus, and their train/held-out split.

A query set is a JSON file under ``bench/queries/`` (``stdlib.json``, ``click.json``)::

    {"corpus": "<words>", "source": {...}, "notes": "...",
     "queries": [{"id", "query", "kind", "split", "expected": [{"path", "symbol"}]}]}

``source`` says which files the corpus holds; expected paths are relative to
its root, as indexd reports them for a realm over that root:

* ``{"type": "stdlib", "glob": "*.py", "exclude_dirs": [...]}``: the running
  interpreter's stdlib, minus folders of those names (``test`` folders are
  named in ``test_dirs`` and kept only with ``include_tests``);
* ``{"type": "sdist", "name", "version", "include": ["src"], "test_dirs": ["tests"]}``:
  a pinned PyPI sdist, downloaded once with pip (bench/impact_vs_tests.py's
  cache), unpacked; only the ``include`` folders (plus ``test_dirs`` with
  ``include_tests``).

The split rule (``assign_splits``) is stratified by kind: within each kind the
queries are ordered by ``sha256("indexd-split-v1:" + query text)`` (text
stripped and lower-cased) and the first half (rounded up) is ``heldout``, the
rest ``train``. It depends on nothing but the texts, so anyone can recompute
it; adding a query to a kind moves at most one other query of that kind.

Used by bench/check_queries.py and bench/search_quality.py; imports nothing
from indexd.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sysconfig
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
QUERIES = HERE / "queries"
SETS = {"stdlib": QUERIES / "stdlib.json", "click": QUERIES / "click.json",
        "stdlib2": QUERIES / "stdlib2.json"}   # a second stdlib set, other targets (2026-12-07)
KINDS = ("meaning", "mixed", "identifier")
SPLITS = ("heldout", "train")
SPLIT_SALT = "indexd-split-v1:"


@dataclass(frozen=True)
class QuerySet:
    name: str                 # "stdlib", "click", or the file's stem
    path: Path
    data: dict                # the whole file, as read
    source: dict
    queries: list[dict]


class QuerySetError(ValueError):
    """A query set that cannot be used: unknown name, unreadable file, bad source."""


def resolve(name_or_path: str | Path) -> Path:
    """A known set's file (``stdlib``, ``click``) or the path as given."""
    if str(name_or_path) in SETS:
        return SETS[str(name_or_path)]
    path = Path(name_or_path)
    if not path.is_file():
        raise QuerySetError(f"no query set {str(name_or_path)!r}: not one of "
                            f"{', '.join(SETS)} and not a file")
    return path


def load(name_or_path: str | Path) -> QuerySet:
    path = resolve(name_or_path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise QuerySetError(f"cannot read query set {path}: {exc}") from exc
    if isinstance(data, list):          # a bare list of queries: the stdlib by default
        data = {"queries": data}
    source = data.get("source") or {"type": "stdlib"}
    if source.get("type") not in ("stdlib", "sdist"):
        raise QuerySetError(f"{path}: source type must be stdlib or sdist, not "
                            f"{source.get('type')!r}")
    name = next((k for k, v in SETS.items() if v.resolve() == path.resolve()), path.stem)
    return QuerySet(name, path, data, source, list(data.get("queries") or []))


# --- the split ----------------------------------------------------------------
def split_key(text: str) -> str:
    return hashlib.sha256((SPLIT_SALT + text.strip().lower()).encode("utf-8")).hexdigest()


def assign_splits(queries: list[dict]) -> dict[str, str]:
    """Query text -> "heldout" | "train" by the rule in the module docstring."""
    out: dict[str, str] = {}
    kinds = sorted({str(q.get("kind")) for q in queries})
    for kind in kinds:
        texts = sorted((q["query"] for q in queries if str(q.get("kind")) == kind),
                       key=split_key)
        held = (len(texts) + 1) // 2
        for i, text in enumerate(texts):
            out[text] = "heldout" if i < held else "train"
    return out


def dump(qs: QuerySet, queries: list[dict]) -> str:
    """The file's text: header keys indented, one query per line (diffs stay readable)."""
    head = {k: v for k, v in qs.data.items() if k != "queries"}
    lines = ["{"]
    for key, value in head.items():
        lines.append(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
    lines.append(' "queries": [')
    body = [f"  {json.dumps(q, ensure_ascii=False)}" for q in queries]
    lines.append(",\n".join(body))
    lines.append(" ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


# --- the corpus -----------------------------------------------------------------
def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def source_root(source: dict, work: Path) -> Path:
    """The folder expected paths are relative to; an sdist is unpacked under ``work``."""
    if source["type"] == "stdlib":
        return stdlib_root()
    from impact_vs_tests import PROJECTS, Project, fetch, unpack

    name, version = source["name"], source["version"]
    project = PROJECTS.get(name)
    if project is None or project.version != version:
        project = Project(name, version, tuple(source.get("include") or ()))
    dest = work / f"{name}-{version}-sdist"
    if dest.is_dir() and any(dest.iterdir()):
        (top,) = [p for p in dest.iterdir() if p.is_dir()]
        return top
    dest.mkdir(parents=True, exist_ok=True)
    return unpack(fetch(project), dest)


def corpus_files(source: dict, root: Path, include_tests: bool = False) -> list[Path]:
    """The corpus's files under ``root``, sorted by relative path."""
    pattern = source.get("glob", "*.py")
    tests = set(source.get("test_dirs") or ())
    if source["type"] == "stdlib":
        skipped = set(source.get("exclude_dirs") or ("site-packages", "__pycache__"))
        if not include_tests:
            skipped |= tests or {"test", "tests", "idle_test"}
        tops = [root]
    else:
        skipped = {"__pycache__"}
        tops = [root / d for d in (source.get("include") or ["."])]
        if include_tests:
            tops += [root / d for d in tests]
    out = set()
    for top in tops:
        for path in top.rglob(pattern):
            rel = path.relative_to(root)
            if path.is_file() and not skipped.intersection(rel.parts[:-1]):
                out.add(path)
    return sorted(out, key=lambda p: p.relative_to(root).as_posix())


def copy_corpus(files: list[Path], root: Path, dest: Path) -> tuple[int, int]:
    """Copy ``files`` (relative paths kept) into ``dest``: (count, bytes)."""
    size = 0
    for path in files:
        target = dest / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        size += target.stat().st_size
    return len(files), size


def describe(source: dict, include_tests: bool) -> str:
    """One line saying what the corpus is, for reports."""
    if source["type"] == "stdlib":
        tests = "" if include_tests else ", test/tests/idle_test folders excluded"
        return f"stdlib {stdlib_root()}, {source.get('glob', '*.py')}; site-packages excluded{tests}"
    include = list(source.get("include") or ["."])
    if include_tests:
        include += list(source.get("test_dirs") or ())
    return (f"{source['name']} {source['version']} sdist (PyPI), "
            f"{', '.join(d + '/' for d in include)} {source.get('glob', '*.py')}")
