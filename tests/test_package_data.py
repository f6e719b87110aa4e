"""Every data file the package reads ships in a built package (wheel or sdist).

Editable installs read the checkout, so a file missing from
``[tool.setuptools.package-data]`` works here and vanishes from a user's
``pip install``: the learned search weights (indexd/query/rerank_weights.json)
would then be silently off.
"""

from __future__ import annotations

import tomllib
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_non_python_file_of_the_package_is_declared_package_data():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]
    missing = []
    for path in sorted((ROOT / "indexd").rglob("*")):
        if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(ROOT)
        ok = False
        for package, globs in declared.items():
            base = ROOT.joinpath(*package.split("."))
            if base in path.parents:
                inner = path.relative_to(base).as_posix()
                ok = ok or any(fnmatch(inner, g) for g in globs)
        if not ok:
            missing.append(rel.as_posix())
    assert not missing, f"not in [tool.setuptools.package-data]: {missing}"
