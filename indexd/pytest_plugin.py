"""Per-test coverage contexts without pytest-cov: ``pytest -p indexd.pytest_plugin``.

Under ``coverage run -m pytest -p indexd.pytest_plugin`` each test's lines are
recorded in the context ``<nodeid>|setup``, ``|run`` or ``|teardown``, the
form pytest-cov's ``--cov-context=test`` writes, which ``indexctl tests
ingest`` maps to the test function. Without a running coverage it does nothing.
Imports only pytest and coverage (it runs inside the user's test process).
"""

from __future__ import annotations

import pytest


def _switch(context: str) -> None:
    try:
        import coverage
    except ImportError:
        return
    cov = coverage.Coverage.current()
    if cov is not None:
        cov.switch_context(context)


def _phase(item, phase: str):
    _switch(f"{item.nodeid}|{phase}")
    try:
        yield
    finally:
        _switch("")   # lines between tests (collection, other plugins) belong to none


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    yield from _phase(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    yield from _phase(item, "run")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    yield from _phase(item, "teardown")
