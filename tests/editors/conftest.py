"""The editor clients' tests share one realm: a retry helper, its caller and its test,
indexed by a real daemon (tests/editors/test_nvim.py, test_vscode_client.py)."""

from __future__ import annotations

import pytest
from testlib import settings_with_realm

RETRY_PY = ('"""Retry helpers."""\n\n\n'
            'def compute_backoff(attempt):\n'
            '    """Seconds to wait before retry number attempt."""\n'
            '    return min(30, 2 ** attempt)\n')


@pytest.fixture
def retry_repo(git_repo, daemon):
    """pkg/retry.py defines compute_backoff (lines 4-6); app.py and a test call it at line 5."""
    git_repo.write("pkg/__init__.py", "")
    git_repo.write("pkg/retry.py", RETRY_PY)
    git_repo.write("app.py", "from pkg.retry import compute_backoff\n\n\n"
                             "def main():\n    return compute_backoff(3)\n")
    git_repo.write("tests/test_retry.py", "from pkg.retry import compute_backoff\n\n\n"
                                          "def test_backoff():\n"
                                          "    assert compute_backoff(1) == 2\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    return git_repo.path.resolve(), d
