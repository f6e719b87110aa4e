"""The README's web UI pictures, taken by the browser tests themselves.

Runs tests/ui/test_web_ui.py (the real daemon on a small real repo, Debian's
chromium through Playwright) with ``INDEXD_UI_SCREENSHOTS`` set, so every
picture in docs/img/ui-*.png is what a passing test saw:

    .venv/bin/python bench/ui_screenshots.py [--out docs/img]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "img"))
    args = ap.parse_args()
    env = os.environ | {"INDEXD_UI_SCREENSHOTS": str(Path(args.out).resolve())}
    rc = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(ROOT / "tests" / "ui" / "test_web_ui.py")], cwd=ROOT, env=env)
    for png in sorted(Path(args.out).glob("ui-*.png")):
        print(f"{png.relative_to(ROOT) if png.is_relative_to(ROOT) else png}  "
              f"{png.stat().st_size // 1024} KiB")
    return rc


if __name__ == "__main__":
    sys.exit(main())
