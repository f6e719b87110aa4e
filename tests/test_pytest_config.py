"""pytest's configuration as indexd reads it (indexd/pytest_config.py): the file pytest
would pick, and a file it cannot parse adding nothing rather than failing the answer."""

from __future__ import annotations

import pytest

from indexd.pytest_config import addopts, collected_module, collects_modules


def write(root, files: dict[str, str]):
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_pytest_ini_wins_even_without_its_section(tmp_path):
    write(tmp_path, {"pytest.ini": "# nothing\n",
                     "setup.cfg": "[tool:pytest]\naddopts = --doctest-modules\n"})
    assert addopts(tmp_path) == [] and not collects_modules(tmp_path)


def test_pyproject_without_pytest_section_falls_through_to_tox_ini(tmp_path):
    write(tmp_path, {"pyproject.toml": "[tool.black]\nline-length = 99\n",
                     "tox.ini": "[pytest]\naddopts = -q '--doctest-modules'\n"})
    assert addopts(tmp_path) == ["-q", "--doctest-modules"] and collects_modules(tmp_path)


@pytest.mark.parametrize("files", [
    {"pyproject.toml": "[tool.pytest.ini_options\naddopts = 1\n"},     # not TOML
    {"pytest.ini": "addopts = --doctest-modules\n"},                   # no section header
    {"setup.cfg": "[tool:pytest]\naddopts = \"--doctest-modules\n"},   # unbalanced quote
    {},
])
def test_a_config_that_cannot_be_read_adds_nothing(tmp_path, files):
    write(tmp_path, files)
    assert collects_modules(tmp_path) is False


@pytest.mark.parametrize("path, want", [("tests/fuzz.py", True), ("tests/conftest.py", False),
                                        ("tests/__init__.py", False), ("tests/data.json", False)])
def test_which_files_doctest_modules_imports(path, want):
    assert collected_module(path) is want


def test_a_config_not_in_utf8_adds_nothing(tmp_path):
    (tmp_path / "pytest.ini").write_bytes(b"[pytest]\naddopts = \xff --doctest-modules\n")
    assert collects_modules(tmp_path) is False
