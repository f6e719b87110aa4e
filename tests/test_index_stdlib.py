"""Cold-index acceptance, short: ~200 stdlib files indexed in-process.

Every copied file is stored (or skipped with a reason), a re-run parses
nothing, editing one function re-parses exactly that file (other files keep
their entries and ids), and keyword search finds a function by its split name.
The full-size measurement is ``bench/index_cold.py``.
"""

from __future__ import annotations

import ast
import shutil
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from agreement import sample_files, stdlib_files, stdlib_root  # noqa: E402

EVERY = 9
ALWAYS = ("http/client.py", "argparse.py")
EDIT = "argparse.py"
EDIT_FUNC = "_get_values"      # ArgumentParser._get_values


def _copy_sample(dest: Path) -> list[str]:
    from indexd.scan.listing import DEFAULT_EXCLUDED_DIRS

    root = stdlib_root()
    # The stdlib's own ``venv`` package sits in a directory indexd excludes
    # by default (like a virtualenv), silently: keep it out of the sample.
    files = [p for p in stdlib_files(root)
             if not set(p.relative_to(root).parts[:-1]) & DEFAULT_EXCLUDED_DIRS]
    picked = sample_files(files, EVERY, tuple(root / a for a in ALWAYS))
    rels = []
    for p in picked:
        rel = p.relative_to(root).as_posix()
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, target)
        rels.append(rel)
    return sorted(rels)


def _entries(store) -> dict[str, dict[str, tuple]]:
    """path -> {entry id: (kind, qualname, content_hash)}."""
    out: dict[str, dict[str, tuple]] = {}
    for row in store.entries_where(None, ["id", "path", "kind", "qualname", "content_hash"]):
        out.setdefault(row["path"], {})[row["id"]] = (row["kind"], row["qualname"],
                                                       row["content_hash"])
    return out


def _edit_function(path: Path, name: str) -> None:
    """Append a statement to the body of the first function called ``name``."""
    text = path.read_text(encoding="utf-8")
    func = next(n for n in ast.walk(ast.parse(text))
                if isinstance(n, ast.FunctionDef) and n.name == name)
    last = func.body[-1]
    lines = text.splitlines(keepends=True)
    lines.insert(last.end_lineno, " " * last.col_offset + "_test_edit = 1\n")
    path.write_text("".join(lines), encoding="utf-8")


def test_index_stdlib_sample(tmp_path, monkeypatch):
    from indexd.config import load_settings
    from indexd.model import SKIPPED
    from indexd.pipeline import Indexer
    from indexd.query.search import SearchRequest, keyword_search
    from indexd.realms import add_repos
    from indexd.store import Store

    corpus = tmp_path / "stdlib"
    copied = _copy_sample(corpus)
    assert 150 <= len(copied) <= 260
    monkeypatch.setenv("INDEXD_HOME", str(tmp_path / "home"))
    add_repos(load_settings(), "std", [str(corpus)])
    settings = load_settings()
    assert list(settings.realms["std"]) == [str(corpus.resolve())]
    store = Store(settings.paths.store_dir)

    # Cold: every copied file is stored; skips (if any) carry a reason.
    cold = Indexer(settings, store).index("std")
    records = store.file_records(realm="std", repo=str(corpus.resolve()))
    assert store.count("files") == len(records)
    skipped = {p: r.reason for p, r in records.items() if r.status == SKIPPED}
    assert all(reason for reason in skipped.values()), skipped
    assert sorted(records) == copied, set(copied) ^ set(records)
    assert cold.files == len(copied) - len(skipped)
    assert cold.parsed == len(copied) - len(skipped)
    assert cold.entries > 20 * len(copied)
    before = _entries(store)
    assert set(before) == set(copied) - set(skipped)

    # Warm: nothing changed, nothing parsed or written.
    warm = Indexer(settings, store).index("std")
    assert (warm.parsed, warm.hashed, warm.deleted) == (0, 0, 0), warm.to_json()
    assert warm.unchanged == cold.files

    # One function edited: exactly that file is parsed again.
    _edit_function(corpus / EDIT, EDIT_FUNC)
    edit = Indexer(settings, store).index("std")
    assert edit.parsed == 1, edit.to_json()
    assert [p for _, _, p in edit.changed_paths] == [EDIT]
    after = _entries(store)
    for path in before:
        if path != EDIT:
            assert after[path] == before[path], f"entries of {path} changed"
    # Same symbols in the edited file (same ids); only the edited one's text moved.
    assert set(after[EDIT]) == set(before[EDIT])
    changed = {v[1] for k, v in after[EDIT].items() if v != before[EDIT][k]}
    assert f"ArgumentParser.{EDIT_FUNC}" in changed

    # Keyword search finds a function by the words of its name.
    result = keyword_search(store, SearchRequest(query="read chunked", realm="std", limit=10))
    symbols = [h["symbol"] for h in result["results"]]
    assert "HTTPResponse._read_chunked" in symbols[:3], symbols
    hit = result["results"][symbols.index("HTTPResponse._read_chunked")]
    assert (hit["path"], hit["kind"]) == ("http/client.py", "method")
