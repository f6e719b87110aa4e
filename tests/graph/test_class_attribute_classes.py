"""A class attribute holding a class (Python): ``self.Cache(...)`` in a test mixin.

cachetools' suite tests every cache through one mixin: ``CacheTestMixin`` has
``Cache = None`` and tests like ``cache = self.Cache(maxsize=1); len(cache);
repr(cache)``; each test module's ``class LRUCacheTest(unittest.TestCase,
CacheTestMixin)`` says ``Cache = LRUCache``. ``impact Cache.__repr__`` named none of
the eight test modules that fail when it breaks (bench/impact_vs_tests.py): what
``self.Cache`` holds was unknown. It is what the class body binds, in the class
or the nearest base, and in any subclass (``self`` may be one), where that names a
class of the realm."""

from __future__ import annotations

import pytest
from graph_helpers import build, parse_file, write_tree
from indexd.graph.coverage import CoverageIndex, CovEdge, covering_tests, merge_tests
from indexd.graph.test_select import select_tests
from indexd.relations import _with_runners
from indexd.tests_affected import _reason

CORE = ("class Cache:\n"
        "    def __init__(self, maxsize):\n        self.__maxsize = maxsize\n\n"
        "    def __len__(self):\n        return 0\n\n"
        "    def __repr__(self):\n        return 'C'\n\n"
        "    @property\n    def maxsize(self):\n        return self.__maxsize\n\n\n"
        "class LRUCache(Cache):\n    pass\n\n\n"
        "class Sized:\n    def __len__(self):\n        return 1\n")
FILES = {
    "pkg/__init__.py": "from .core import Cache, LRUCache\n",
    "pkg/core.py": CORE,
    "tests/__init__.py": ("class CacheTestMixin:\n    Cache = None\n\n"
                          "    def test_defaults(self):\n        cache = self.Cache(maxsize=1)\n"
                          "        assert len(cache) == 0\n        assert cache.maxsize == 1\n"
                          "        assert repr(cache)\n"),
    "tests/test_cache.py": ("import unittest\nimport pkg\nfrom . import CacheTestMixin\n\n\n"
                            "class CacheTest(unittest.TestCase, CacheTestMixin):\n"
                            "    Cache = pkg.Cache\n"),
    "tests/test_lru.py": ("import unittest\nfrom pkg import LRUCache as Lru\n"
                          "from . import CacheTestMixin\n\n\n"
                          "class LRUCacheTest(unittest.TestCase, CacheTestMixin):\n"
                          "    Cache = Lru\n"),
    # a class attribute the class itself binds, read in its own method
    "pkg/pool.py": ("from pkg.core import Cache\n\n\n"
                    "class Pool:\n    factory = Cache\n    limit = 3\n\n"
                    "    def make(self):\n        c = self.factory(self.limit)\n"
                    "        return len(c)\n\n"
                    "    def other(self):\n        n = self.limit()\n        return len(n)\n"),
    # nothing binds a class: no answer
    "tests/test_plain.py": ("class Holder:\n    thing = None\n\n"
                            "    def test_it(self):\n        t = self.thing()\n"
                            "        return len(t)\n"),
}
CORE_PATH = "pkg/core.py"


@pytest.fixture
def repo(tmp_path):
    return write_tree(tmp_path, FILES)


def calls_into_core(graph, path, symbol):
    # a property read (`cache.maxsize`) is a `references` edge
    return {(e.dst_symbol, e.how) for e in graph.edges(["calls", "references"])
            if e.src_path == path and e.src_symbol == symbol and e.dst_path == CORE_PATH}


def test_a_mixins_class_attribute_holds_what_its_subclasses_bind(repo):
    g = build("r", repo)
    got = calls_into_core(g, "tests/__init__.py", "CacheTestMixin.test_defaults")
    assert {("Cache.__init__", "inferred"), ("Cache.__len__", "inferred"),
            ("Cache.__repr__", "inferred"), ("Cache.maxsize", "inferred")} <= got


def test_impact_of_a_dunder_names_the_test_modules_running_the_mixin(repo):
    """As the daemon answers: the mixin's test, then its runs from each test module."""
    g = build("r", repo)
    for symbol in ("Cache.__len__", "Cache.__repr__", "Cache.maxsize"):
        answer = _with_runners(g.impact(f"{CORE_PATH}::{symbol}"), g)
        tests = {(t["path"], t["symbol"]) for t in answer["tests"]}
        assert {("tests/test_cache.py", "CacheTest.test_defaults"),
                ("tests/test_lru.py", "LRUCacheTest.test_defaults")} <= tests, symbol


def test_a_class_attribute_its_own_class_binds(repo):
    g = build("r", repo)
    assert {("Cache.__init__", "inferred"), ("Cache.__len__", "inferred")} <= calls_into_core(
        g, "pkg/pool.py", "Pool.make")
    # `limit = 3` holds no class: `self.limit()` builds nothing known
    assert not calls_into_core(g, "pkg/pool.py", "Pool.other")


def test_an_attribute_nothing_binds_to_a_class_gives_nothing(repo):
    g = build("r", repo)
    assert not {e for e in g.edges(["calls"]) if e.src_path == "tests/test_plain.py"
                and e.dst_path == CORE_PATH}


def test_a_subclass_rebinding_the_attribute_moves_the_mixins_edges(repo):
    """A save of the subclass's file alone: the mixin's edges follow (graph.update_file)."""
    g = build("r", repo)
    for rel, text in (("tests/test_cache.py", FILES["tests/test_cache.py"].replace(
            "pkg.Cache", "pkg.core.Sized").replace("import pkg\n", "import pkg.core\n")),
            ("tests/test_lru.py", FILES["tests/test_lru.py"].replace(
                "from pkg import LRUCache as Lru", "from pkg.core import Sized as Lru"))):
        (repo / rel).write_text(text)
        g.update_file(parse_file("r", repo, rel))
    got = calls_into_core(g, "tests/__init__.py", "CacheTestMixin.test_defaults")
    assert ("Sized.__len__", "inferred") in got
    assert ("Cache.__len__", "inferred") not in got


# cachetools' `cached(cache, info=True)`: `getinfo` reads `cache.maxsize` and `len(cache)`
# on the cache it was given (no known class) and runs from `cache_info`, hung on the
# wrapper, which no edge follows; test_cached.py failed when `Cache.maxsize` broke.
INFO = ("from pkg.core import Cache\n\n\n"
        "def cached(cache):\n"
        "    def decorator(func):\n"
        "        def getinfo():\n            return cache.maxsize, len(cache)\n\n"
        "        def cache_info():\n            return getinfo()\n\n"
        "        def wrapper(*args):\n            return func(*args)\n\n"
        "        wrapper.cache_info = cache_info\n        return wrapper\n"
        "    return decorator\n")


def verdict(graph, repo, symbol):
    target = f"{CORE_PATH}::{symbol}"
    result = _with_runners(graph.impact(target, limit=None), graph)
    result["property"] = graph.is_property(target)
    change = {"repo": repo.as_posix(), "path": CORE_PATH, "symbol": symbol, "change": "target"}
    return result, select_tests([(change, result)], 3)["changed"][0]


def test_a_tested_dunder_also_used_where_no_test_leads_is_not_safe(repo):
    """The mixin's tests reach `Cache.maxsize` and `Cache.__len__` (trusted), but code
    also runs them on a value of no known class whose callers end in a function handed
    out (nested, called by nothing an edge names): `tests affected` cannot call the
    change safe."""
    (repo / "pkg/core.py").write_text(CORE + "\n\n" + INFO.split("\n\n\n", 1)[1])
    g = build("r", repo)
    for symbol in ("Cache.maxsize", "Cache.__len__"):
        result, row = verdict(g, repo, symbol)
        assert any(t["path"] == "tests/test_lru.py" for t in result["tests"])
        assert result["tests_walk"]["untyped_unreached"] == [
            f"{repo.name}/{CORE_PATH}::cached.decorator.getinfo"]
        assert row["tested"] == "unknown", symbol
        assert "no known class in " in _reason([row]) and "getinfo" in _reason([row])
    # a coverage run that recorded the change saw every test running it, that use's too
    result, _ = verdict(g, repo, "Cache.maxsize")
    seed = ("r", repo.as_posix(), CORE_PATH, "Cache.maxsize")
    ran = CovEdge("r", repo.as_posix(), "tests/test_lru.py", "LRUCacheTest.test_defaults", "h",
                  *seed[1:], "h", 3, "tests/test_lru.py::LRUCacheTest::test_defaults")
    merged = merge_tests(result, covering_tests(CoverageIndex([ran]), [seed]))
    change = {"repo": repo.as_posix(), "path": CORE_PATH, "symbol": "Cache.maxsize",
              "change": "target"}
    assert select_tests([(change, merged)], 3)["changed"][0]["tested"] == "trusted"
    # an untyped use whose callers are known and reach no test runs in no test: safe,
    # as it is without that use
    report = ("\n\ndef report(cache):\n    return cache.maxsize\n\n\n"
              "def main():\n    return report(None)\n")
    for text in (CORE + report, CORE):
        (repo / "pkg/core.py").write_text(text)
        g = build("r", repo)
        result, row = verdict(g, repo, "Cache.maxsize")
        assert result["tests_walk"]["untyped_unreached"] == []
        assert row["tested"] == "trusted"
