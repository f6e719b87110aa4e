"""What a repository's pytest configuration adds to the test files it runs.

``--doctest-modules`` in ``addopts`` makes pytest import every Python module under the
paths it collects, to look for doctests: a script in the test folder that runs a change
when imported then fails with it (parso's test/fuzz_diff_parser.py builds a grammar at
import), although it is no ``test_*.py``.

Read as pytest picks its file at the repository's root: pytest.ini (even without a
``[pytest]`` section), else the first of pyproject.toml (``[tool.pytest.ini_options]``),
tox.ini (``[pytest]``) and setup.cfg (``[tool:pytest]``) that has the section; ``addopts``
split like a shell line (a TOML list as it is). A file that cannot be read or parsed adds
nothing: the answer is then what it was without it, and the log says why.
"""

from __future__ import annotations

import configparser
import logging
import shlex
import tomllib
from pathlib import Path

log = logging.getLogger(__name__)

DOCTEST_MODULES = "--doctest-modules"
_INI = (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))
_NOT_COLLECTED = ("conftest.py", "__init__.py", "setup.py", "__main__.py")


def addopts(root: str | Path) -> list[str]:
    """The ``addopts`` of the pytest configuration at ``root``, as arguments."""
    root = Path(root)
    try:
        ini = root / "pytest.ini"
        if ini.is_file():
            return _split(_ini(ini).get("pytest", "addopts", fallback=""))
        pyproject = root / "pyproject.toml"
        if pyproject.is_file():
            section = tomllib.loads(pyproject.read_text(encoding="utf-8")).get(
                "tool", {}).get("pytest", {}).get("ini_options")
            if section is not None:
                return _split(section.get("addopts", ""))
        for name, header in _INI:
            path = root / name
            if path.is_file() and (parser := _ini(path)).has_section(header):
                return _split(parser.get(header, "addopts", fallback=""))
    except (OSError, UnicodeDecodeError, ValueError, configparser.Error) as exc:
        log.info("pytest configuration under %s not read: %s", root, exc)
    return []


def collects_modules(root: str | Path) -> bool:
    """Does pytest, configured at ``root``, import every module it collects from?"""
    return DOCTEST_MODULES in addopts(root)


def collected_module(path: str) -> bool:
    """A Python module pytest imports under ``--doctest-modules`` (conftest.py and package
    files it imports anyway, setup.py and __main__.py it skips)."""
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and name not in _NOT_COLLECTED


def _ini(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(path.read_text(encoding="utf-8"))
    return parser


def _split(value) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return shlex.split(str(value))
