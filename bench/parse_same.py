"""Dump or compare the full parse result of every file of a corpus.

A change to the code parser that should change nothing (a faster query, a
cheaper way to read its matches) is checked with this: dump before, dump
after, compare. What is dumped is everything ``parse_source`` returns for the
file (entries with every field, references in order, links, error, meta),
pickled per file into one file.

    .venv/bin/python bench/parse_same.py dump OUT.pkl [--files LIST]
    .venv/bin/python bench/parse_same.py compare A.pkl B.pkl

The corpus is the stdlib's ``*.py`` (bench/agreement.py's list), plus the
paths listed one a line in ``--files`` (other languages). No deadline: a
file must not differ because the machine was slow.
"""

from __future__ import annotations

import argparse
import dataclasses
import pickle
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agreement import stdlib_files, stdlib_root  # noqa: E402

from indexd.parse import detect_language, parse_source  # noqa: E402


def corpus(extra: Path | None) -> list[Path]:
    files = stdlib_files(stdlib_root())
    if extra is not None:
        files += [Path(line) for line in extra.read_text().splitlines() if line.strip()]
    return files


def as_plain(result) -> tuple:
    return (result.language, [dataclasses.astuple(e) for e in result.entries],
            [dataclasses.astuple(r) for r in result.references],
            [dataclasses.astuple(x) for x in result.links], result.error,
            sorted(result.meta.items()))


def dump(out: Path, extra: Path | None) -> None:
    results = {}
    for path in corpus(extra):
        text = path.read_bytes().decode("utf-8", "replace")
        language = detect_language(str(path), text[:256])
        results[str(path)] = as_plain(parse_source(str(path), text, language, limit_s=1e9))
    out.write_bytes(pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL))
    refs = sum(len(r[2]) for r in results.values())
    entries = sum(len(r[1]) for r in results.values())
    print(f"{len(results)} files, {entries} entries, {refs} references -> {out}")


def compare(a: Path, b: Path) -> int:
    left, right = pickle.loads(a.read_bytes()), pickle.loads(b.read_bytes())
    differ = [p for p in sorted(set(left) | set(right)) if left.get(p) != right.get(p)]
    for path in differ[:20]:
        print(f"differs: {path}")
    refs = sum(len(r[2]) for r in left.values())
    print(f"{len(left)} / {len(right)} files, {refs} references; {len(differ)} differ")
    return 1 if differ else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--files", type=Path, help="more paths to parse, one a line")
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = ap.parse_args()
    if args.cmd == "dump":
        dump(args.out, args.files)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
