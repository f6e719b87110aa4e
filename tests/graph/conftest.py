"""Fixtures for graph tests (helpers live in graph_helpers.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graph_helpers import write_tree


@pytest.fixture
def tree(tmp_path):
    """make(name, {rel: text}) -> a directory tmp_path/name holding those files."""
    def make(name: str, files: dict[str, str]) -> Path:
        return write_tree(tmp_path / name, files)
    return make
