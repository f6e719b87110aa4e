"""Markdown parser swap (issue 15 part 3): outline agreement and speed, old vs new.

    .venv/bin/python bench/markdown_swap.py baseline            # current parser -> baseline.json
    .venv/bin/python bench/markdown_swap.py compare [--old-rev REV] [--no-timings]

``baseline`` parses a corpus of markdown nobody here wrote (the attrs and click
sdists in bench/out/impact_vs_tests, the *.md under the venv's site-packages)
plus this repo's README and docs/, and saves each file's outline (sections with
qualname and line range, links with kind and broken flag, code-span refs,
title) with timings of a synthetic 1 MiB file and the test suite's
pathological inputs.

``compare`` runs indexd's parser (as in the tree, or as of ``--old-rev`` from
git) and the markdown-it-py candidate (bench/markdown_mdit.py) on the same
texts in this process (docs/ move under other people's edits, so a saved
outline alone would compare different texts), and writes
bench/out/markdown_swap/compare.json: counts of identical / changed files and
every changed file's differences. Times are CPU seconds (thread time), median
of 3; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
OUT = ROOT / "bench" / "out" / "markdown_swap"
TARS = ROOT / "bench" / "out" / "impact_vs_tests"
SITE = ROOT / ".venv" / "lib" / "python3.11" / "site-packages"
MiB = 1 << 20


# -- corpus -----------------------------------------------------------------------------

def corpus(tmp: Path) -> list[tuple[str, Path, str]]:
    """(corpus name, root the file's links resolve from, path under that root)."""
    out: list[tuple[str, Path, str]] = []
    for tar in sorted(TARS.glob("*.tar.gz")):
        with tarfile.open(tar) as tf:
            tf.extractall(tmp, filter="data")
        top = tmp / tar.name.removesuffix(".tar.gz")
        out += [(f"{top.name}/{p.relative_to(top)}", top, str(p.relative_to(top)))
                for p in sorted(top.rglob("*.md"))]
    out += [(f"site-packages/{p.relative_to(SITE)}", SITE, str(p.relative_to(SITE)))
            for p in sorted(SITE.rglob("*.md"))]
    out += [(f"indexd/{p.relative_to(ROOT)}", ROOT, str(p.relative_to(ROOT)))
            for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]]
    return out


def outline(result) -> dict:
    return {
        "error": result.error,
        "title": result.meta.get("title"),
        "frontmatter": "frontmatter" in result.meta,
        "sections": [f"{e.level} {e.qualname} {e.start_line}-{e.end_line}"
                     for e in result.entries],
        "links": [f"{ln.line} {ln.kind}{' BROKEN' if ln.broken else ''} {ln.target}"
                  for ln in result.links],
        "refs": [f"{r.line} {r.name}" for r in result.references],
    }


def outlines(extract, files) -> dict[str, dict]:
    out = {}
    for name, root, rel in files:
        text = (root / rel).read_text(encoding="utf-8", errors="replace")
        out[name] = outline(extract(text, rel, exists=lambda p, r=root: (r / p).exists()))
    return out


# -- speed ------------------------------------------------------------------------------

def synthetic(size: int = MiB) -> str:
    """Mixed markdown: headings, prose with links and code spans, lists, fences, tables."""
    block = []
    for i in range(10_000):
        block.append(f"## Section {i}\n\nProse with a [link](doc{i}.md#part), an "
                     f"![image](img/{i}.png \"t\"), `code.span{i}` and https://ex.com/{i}.\n\n"
                     f"- item one [ref{i}]\n- item *two* <https://auto.ex/{i}>\n"
                     f"  1. nested **bold** <a href=\"x{i}.html\">x</a>\n\n"
                     f"```python\n# not a heading\nprint({i})\n```\n\n"
                     f"| a | b |\n|---|---|\n| {i} | [t](#section-{i}) |\n\n"
                     f"[ref{i}]: ./refs/{i}.md\n\n")
        if sum(map(len, block)) >= size:
            break
    return ("# Synthetic\n\n" + "".join(block))[:size]


def pathological() -> dict[str, str]:
    return {
        "20k headings": "".join(f"## Heading {i}\n\nBody of section {i}.\n\n"
                                for i in range(20_000)),
        "200k-line section": "# Notes\n\n" + "a\n" * 200_000,
        "100k '[' on a line": "[" * 100_000 + "\n",
        "100k '[a](' runs": "[a](" * 100_000 + "\n",
        "50k backtick runs": "` `` " * 50_000 + "\n",
        "100k '*' emphasis": "*a " * 100_000 + "\n",
        "20k nested '>' quotes": ">" * 20_000 + " x\n",
        "2k nested list items": "".join("  " * i + "- x\n" for i in range(2_000)),
    }


def cpu_median(fn, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        t0 = time.thread_time()
        fn()
        times.append(time.thread_time() - t0)
    return statistics.median(times)


def timings(extract) -> dict[str, float]:
    cases = {"synthetic 1 MiB": synthetic(), **pathological()}
    return {name: round(cpu_median(lambda t=text: extract(t, "x.md", exists=lambda p: False)), 3)
            for name, text in cases.items()}


# -- old parser from git ----------------------------------------------------------------

def old_extract(rev: str):
    """extract_markdown as of ``rev``, loaded beside the current one (same package)."""
    src = subprocess.run(["git", "show", f"{rev}:indexd/parse/markdown.py"], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location("indexd.parse._markdown_old", f.name)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up there
    spec.loader.exec_module(mod)
    os.unlink(f.name)
    return mod.extract_markdown


def diff(old: dict, new: dict) -> list[str]:
    lines = []
    for key in old:
        a, b = old[key], new[key]
        if a == b:
            continue
        if isinstance(a, list):
            lines += [f"{key}: {d}" for d in difflib.unified_diff(a, b, lineterm="", n=0)
                      if d[:1] in "+-" and not d.startswith(("+++", "---"))]
        else:
            lines.append(f"{key}: {a!r} -> {b!r}")
    return lines


# -- main -------------------------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["baseline", "compare"])
    ap.add_argument("--old-rev", help="git revision of indexd/parse/markdown.py (default: the tree)")
    ap.add_argument("--no-timings", action="store_true", help="outlines only")
    args = ap.parse_args()
    from indexd.parse.markdown import extract_markdown
    OUT.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        files = corpus(Path(tmp))
        if args.mode == "baseline":
            report = {"loadavg": load, "files": len(files), "timings": timings(extract_markdown),
                      "outlines": outlines(extract_markdown, files)}
            (OUT / "baseline.json").write_text(json.dumps(report, indent=1))
            print(json.dumps({k: v for k, v in report.items() if k != "outlines"}, indent=1))
            return
        from markdown_mdit import extract_markdown as candidate
        old_fn = old_extract(args.old_rev) if args.old_rev else extract_markdown
        old, new = outlines(old_fn, files), outlines(candidate, files)
    changed = {name: diff(old[name], new[name]) for name in old if old[name] != new[name]}
    report = {"loadavg_before": load, "files": len(old), "identical": len(old) - len(changed),
              "changed": len(changed),
              "sections": [sum(len(o["sections"]) for o in d.values()) for d in (old, new)],
              "links": [sum(len(o["links"]) for o in d.values()) for d in (old, new)],
              **({} if args.no_timings else
                 {"timings_old": timings(old_fn), "timings_new": timings(candidate)}),
              "loadavg_after": os.getloadavg(), "diffs": changed}
    (OUT / "compare.json").write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "diffs"}, indent=1))
    for name, lines in changed.items():
        print(f"\n== {name}")
        print("\n".join(lines[:40]) + (f"\n... {len(lines) - 40} more" if len(lines) > 40 else ""))


if __name__ == "__main__":
    main()
