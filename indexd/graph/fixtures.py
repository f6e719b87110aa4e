"""pytest fixtures (Python): what a test's parameter named like a fixture holds.

pytest calls a test (a ``test*`` function or method of a test file) or a fixture
with the value of each fixture its plain parameters name: one defined in the same
file (in the requester's class, else at module level), else in the nearest
``conftest.py`` up the directory tree (the nearest definition wins, as in pytest).
A fixture is a function decorated ``@pytest.fixture``, ``@pytest.fixture(...)`` or
``@fixture``. Its type is its ``-> X`` annotation (``Iterator[X]`` /
``Generator[X, ...]`` for a yield fixture), or the one class every ``return
X(...)`` / ``yield X(...)`` of its body builds (graph/types.py). click's
tests/conftest.py: ``def runner(request): return CliRunner()``, so ``def
test_x(runner): runner.invoke(cli)`` reaches ``CliRunner.invoke``.

``fixture_edges`` adds the requester -> fixture function edge (``calls``, how
``inferred``: pytest runs the fixture before the test). Plugin fixtures
(``pytest_plugins``, entry points) and pytest's own (``tmp_path``) are not
followed. Pure; depends only on the realm index.
"""

from __future__ import annotations

import posixpath

from .model import is_test_path
from .properties import decorated

FIXTURE_MODULES = (None, "pytest")
DECORATOR_GAP = 20      # lines from a `@pytest.fixture(...)` to its `def` (long params=[...])
GENERATORS = ("Iterator", "Iterable", "Generator", "AsyncIterator", "AsyncGenerator")


def fixture_quals(f) -> set[str]:
    """Qualnames of the file's fixture functions: the first function after each
    ``fixture`` decorator, in the decorator's own scope."""
    return decorated(f, [r for r in f.refs_of("decorator", "call")
                         if r.name == "fixture" and r.module in FIXTURE_MODULES], DECORATOR_GAP)


def _fixtures(index, f) -> set[str]:
    key = ("fixtures", f.repo, f.path)
    if key not in index.memo:
        index.memo[key] = fixture_quals(f) if f.lang == "python" else set()
    return index.memo[key]


def requests_fixtures(index, f, qual: str | None) -> bool:
    """Does pytest pass fixtures to ``qual``'s parameters: a test of a test file or
    conftest.py, or a fixture?"""
    if not qual or not (is_test_path(f.path) or _is_conftest(f.path)):
        return False
    return qual.rsplit(".", 1)[-1].startswith("test") or qual in _fixtures(index, f)


def _is_conftest(path: str) -> bool:
    return posixpath.basename(path) == "conftest.py"


def conftest_paths(path: str) -> list[str]:
    """The conftest.py files pytest loads for ``path``, nearest first."""
    out, d = [], posixpath.dirname(path)
    while True:
        out.append(posixpath.join(d, "conftest.py") if d else "conftest.py")
        if not d:
            return out
        d = posixpath.dirname(d)


def visible_fixture(index, f, name: str, requester: str) -> tuple | None:
    """(file facts, qualname) of the fixture ``name`` a parameter of ``requester``
    gets, or None."""
    cls = requester.rpartition(".")[0]
    own = _fixtures(index, f)
    for qual in ([f"{cls}.{name}"] if cls else []) + [name]:
        if qual in own and qual != requester:   # a fixture overriding itself asks its parent
            return f, qual
    for path in conftest_paths(f.path):
        other = index.files.get((f.repo, path))
        if other is not None and other is not f and name in _fixtures(index, other):
            return other, name
    return None


def fixture_classes(index, f, binding: tuple, name: str) -> list[tuple]:
    """The classes a plain parameter ``name`` holds when it requests a fixture; []
    for any other parameter."""
    where = binding[3]
    if not requests_fixtures(index, f, where):
        return []
    found = visible_fixture(index, f, name, where)
    return fixture_type(index, *found) if found else []


def fixture_type(index, f, qual: str) -> list[tuple]:

    scope = _other_scope(index, f)
    text = _returns(index, f).get(qual)
    if not text:
        return body_classes(index, f, scope, qual, yields=True)
    m = _GENERIC.match(_unquote(text))
    if m and m.group(1).rsplit(".", 1)[-1] in GENERATORS:
        text = _split_args(m.group(2))[0]
    return annotation_classes(index, f, scope, text)


def fixture_edges(index, f, res) -> None:
    """Requester -> fixture function (``calls``, inferred) for each plain parameter of
    a test or fixture naming a visible fixture. Depends on the parameter's name and
    on the conftest.py files above (``wants``)."""
    if not (is_test_path(f.path) or _is_conftest(f.path)):
        return
    seen: set[tuple] = set()
    for r in f.refs_of("bind_param"):
        if r.name in ("self", "cls") or not requests_fixtures(index, f, r.scope):
            continue
        res.wants |= {("name", r.name)} | {("path", f.repo, p) for p in conftest_paths(f.path)}
        found = visible_fixture(index, f, r.name, r.scope)
        if found is None:
            continue
        other, qual = found
        key = (r.scope, other.repo, other.path, qual)
        if key not in seen:
            seen.add(key)
            res.edges.append(_edge(f, "calls", r.scope, other.repo, other.path, qual, r.line,
                                   "inferred"))


# Imported last, after every definition here: these modules import this one
# too, and a function-level import cost ~1.6 us per call (2M calls per stdlib
# graph build). Any import order then finds the names it asks for defined.
from .edges import _edge, _other_scope  # noqa: E402
from .types import (  # noqa: E402
    _GENERIC, _returns, _split_args, _unquote, annotation_classes, body_classes)
