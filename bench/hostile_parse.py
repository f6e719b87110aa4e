"""CPU seconds per pathological file, per parser: the bound tests/e2e/test_hostile.py
no longer asserts (tests check that cost grows linearly; the seconds live here).

Each case is the shape tests/e2e/test_hostile.py uses at its full size. Prints one
row per language, the slowest case, and exits 1 when any case costs more than the
budget (default 10 s CPU, twice the parsers' per-file limit of
indexd.parse.limits.PARSE_TIMEOUT_S).

    .venv/bin/python bench/hostile_parse.py [--budget 10] [--lang python,markdown]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexd.parse import parse_source  # noqa: E402
from indexd.parse.languages import GRAMMARS  # noqa: E402
from indexd.parse.limits import PARSE_TIMEOUT_S  # noqa: E402

CASES = {
    "huge_line": "x = 1; " * (900_000 // 7),
    "deep_parens": "(" * 100_000,
    "deep_brackets": "[" * 100_000 + "]" * 100_000,
    "deep_braces": "{" * 50_000,
    "nul_bytes": "def f():\x00\x00 pass\n" * 1000,
    "mixed": "caf\u00e9 \ufffd \u202e\u0000 \U0001f600 \r\n\r" * 2000,
    "many_lines": "a\n" * 200_000,
}
LANGUAGES = sorted(GRAMMARS) + ["markdown", "json", "yaml", "toml", "text"]


def cpu_s(language: str, text: str) -> tuple[float, str]:
    started = time.process_time()
    result = parse_source(f"hostile.{language}", text, language, lambda rel: False)
    return time.process_time() - started, result.error or ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budget", type=float, default=2 * PARSE_TIMEOUT_S,
                    help="CPU seconds a case may cost (default: %(default)s)")
    ap.add_argument("--lang", default="", help="comma list (default: all)")
    args = ap.parse_args()
    languages = [x for x in args.lang.split(",") if x] or LANGUAGES
    print(f"{'language':<11}" + "".join(f"{k:>14}" for k in CASES))
    worst = (0.0, "", "")
    for language in languages:
        row = []
        for kind, text in CASES.items():
            took, error = cpu_s(language, text)
            row.append(f"{took:>13.2f}{'*' if error.startswith('parse timed out') else ' '}")
            worst = max(worst, (took, language, kind))
        print(f"{language:<11}" + "".join(row), flush=True)
    took, language, kind = worst
    print(f"\nslowest: {language} {kind} {took:.2f}s CPU (budget {args.budget:g}s; "
          f"* = stopped by the {PARSE_TIMEOUT_S:g}s per-file limit)")
    return 0 if took <= args.budget else 1


if __name__ == "__main__":
    sys.exit(main())
