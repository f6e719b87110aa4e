"""indexd's Python symbols agree with Python's own ``ast`` on a stdlib sample.

A deterministic sample (every 12th sorted stdlib file, about 150) is parsed by
both; an ``ast`` definition agrees when indexd has a function/method/class of
the same name starting on the same ``def``/``class`` line and ending on the
same line. The full run is ``bench/ast_agreement.py``; the comparison itself
lives in ``bench/agreement.py`` so bench and test cannot drift apart.
"""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from agreement import compare_files, examples_by_cause, stdlib_files, stdlib_root  # noqa: E402

EVERY = 12
MIN_AGREEMENT = 99.0


def test_python_symbols_agree_with_ast_on_stdlib_sample():
    root = stdlib_root()
    files = stdlib_files(root)[::EVERY]
    assert len(files) >= 100, f"stdlib sample too small: {len(files)} files under {root}"
    result = compare_files(files, root)
    assert result.total > 2000, f"too few definitions compared: {result.total}"
    examples = "\n".join(f"  {d.path}:{d.ast_def.line} {d.ast_def.name}: {d.cause} ({d.detail})"
                         for d in examples_by_cause(result, 20))
    assert result.percent >= MIN_AGREEMENT, (
        f"agreement {result.percent:.2f}% < {MIN_AGREEMENT}% "
        f"({result.agreed}/{result.total}; causes {dict(result.causes())}):\n{examples}")
    # And indexd invents no Python symbols that ast does not have.
    assert len(result.extra) <= result.total // 100, result.extra[:20]


def test_decorated_and_nested_definitions_use_the_def_line():
    from agreement import compare_text

    text = (
        "import functools\n"
        "\n"
        "@functools.cache\n"
        "def cached(x):\n"
        "    return x\n"
        "\n"
        "class Outer:\n"
        "    @property\n"
        "    def value(self):\n"
        "        def inner():\n"
        "            return 1\n"
        "        return inner()\n"
        "\n"
        "    class Nested:\n"
        "        async def run(self):\n"
        "            pass\n"
    )
    result = compare_text(text, "sample.py")
    assert result.total == 6
    assert result.agreed == 6, [(d.ast_def, d.detail) for d in result.disagreements]
