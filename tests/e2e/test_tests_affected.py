"""`indexctl tests affected`: the tests to run for a change, on a real git repo, through
the real daemon and offline, and run for real with pytest."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from indexd.errors import InvalidParams
from testlib import BIN, run_cli, settings_with_realm, wait_until

A_PY = "def bump(x):\n    return x + 1\n\n\ndef unbump(x):\n    return x - 1\n"
A_EDIT = A_PY.replace("x + 1", "x + 2")          # breaks test_a
B_PY = "class Widget:\n    def frobnicate(self):\n        return 1\n"
B_EDIT = B_PY.replace("return 1", "value = 1\n        return value")
C_PY = "from pkg.b import Widget\n\n\ndef make():\n    return Widget()\n"
TEST_A = "from pkg.a import bump\n\n\ndef test_bump():\n    assert bump(1) == 2\n"
TEST_UNBUMP = "from pkg.a import unbump\n\n\ndef test_unbump():\n    assert unbump(1) == 0\n"
# frobnicate is reached by name only: `thing` is a fixture, its type unknown
TEST_B = ("import pytest\n\nfrom pkg.c import make\n\n\n@pytest.fixture\ndef thing():\n"
          "    return make()\n\n\ndef test_frob(thing):\n    assert thing.frobnicate() == 1\n")
TEST_C = "from pkg import c\n\n\ndef test_make():\n    assert c.make() is not None\n"


def make_package(git_repo):
    for rel, text in (("pkg/__init__.py", ""), ("pkg/a.py", A_PY), ("pkg/b.py", B_PY),
                      ("pkg/c.py", C_PY), ("tests/test_a.py", TEST_A),
                      ("tests/test_unbump.py", TEST_UNBUMP), ("tests/test_b.py", TEST_B),
                      ("tests/test_c.py", TEST_C)):
        git_repo.write(rel, text)
    git_repo.commit("v1")


def stage(git_repo, rel: str) -> None:
    git_repo.repo.index.add(rel)
    git_repo.repo.index.write()


def affected_cli(repo, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "indexctl"), "tests", "affected", *map(str, args)],
                          cwd=repo, capture_output=True, text=True, timeout=120)


def paths(answer: dict) -> list[str]:
    return [t["path"] for t in answer["tests"]]


def affected_after_edit(git_repo, files: dict[str, str], rel: str, old: str, new: str) -> dict:
    """Commit ``files``, replace ``old`` by ``new`` in ``rel`` (uncommitted), index
    offline and return `tests affected --json` for the working tree."""
    for path, text in files.items():
        git_repo.write(path, text)
    git_repo.commit("v1")
    settings_with_realm("work", git_repo.path)
    git_repo.write(rel, files[rel].replace(old, new))
    run_cli("index", "--json", tool="indexd", check=True)
    return json.loads(affected_cli(git_repo.path, "--json").stdout)


def test_changed_function_selects_its_test_with_evidence_daemon(git_repo, daemon):
    make_package(git_repo)
    settings_with_realm("work", git_repo.path)
    git_repo.write("pkg/a.py", A_EDIT)
    d = daemon()
    d.call("status", sync=True)
    answer = d.call("tests.affected", repo=str(git_repo.path))
    assert paths(answer) == ["tests/test_a.py"], answer["tests"]
    top = answer["tests"][0]
    assert top["rank"] == 1 and top["trusted"] and not top["fallback"]
    assert top["symbols"] == ["repo/pkg/a.py::bump"] and top["node_ids"] == [
        "tests/test_a.py::test_bump"]
    ev = top["evidence"][0]
    assert ev["changed"] == "repo/pkg/a.py::bump" and ev["trusted"]
    assert ev["how"] and set(ev["how"]) <= {"resolved", "inferred", "coverage"}
    assert ev["via"][-1]["to"] == "repo/pkg/a.py::bump"
    assert answer["safe"] is True and answer["fallback"] is None and answer["unsafe"] == []
    assert [(c["symbol"], c["tested"]) for c in answer["changed"]] == [("bump", "trusted")]

    # the same change committed: --since HEAD~1 gives the same selection (CLI, daemon up)
    git_repo.commit("bump by two")
    assert d.call("tests.affected", repo=str(git_repo.path))["tests"] == []
    out = affected_cli(git_repo.path, "--since", "HEAD~1", "--json")
    assert out.returncode == 0, out.stderr
    since = json.loads(out.stdout)
    assert paths(since) == ["tests/test_a.py"] and since["safe"] is True
    assert since["tests"][0]["evidence"][0]["how"] == ev["how"]


def test_staged_sees_only_staged_changes_daemon(git_repo, daemon):
    make_package(git_repo)
    settings_with_realm("work", git_repo.path)
    git_repo.write("pkg/a.py", A_PY.replace("x - 1", "x - 1 + 0"))   # unbump, staged
    stage(git_repo, "pkg/a.py")
    git_repo.write("pkg/a.py", A_PY.replace("x - 1", "x - 1 + 0").replace("x + 1", "1 + x"))
    d = daemon()
    d.call("status", sync=True)
    staged = d.call("tests.affected", repo=str(git_repo.path), staged=True)
    assert [c["symbol"] for c in staged["changed"]] == ["unbump"]
    assert paths(staged) == ["tests/test_unbump.py"] and staged["staged"] is True
    everything = d.call("tests.affected", repo=str(git_repo.path))
    assert sorted(paths(everything)) == ["tests/test_a.py", "tests/test_unbump.py"]


def test_name_match_only_is_not_safe_and_names_the_fallback_offline(git_repo):
    make_package(git_repo)
    settings_with_realm("work", git_repo.path)
    git_repo.write("pkg/b.py", B_EDIT)
    run_cli("index", "--json", tool="indexd", check=True)
    out = affected_cli(git_repo.path, "--json")
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["safe"] is False
    assert answer["unsafe"] == ["repo/pkg/b.py::Widget.frobnicate"]
    assert [c["tested"] for c in answer["changed"]] == ["weak"]
    fb = answer["fallback"]
    assert fb["modules"] == ["repo/pkg/b.py"] and "name_match" in fb["reason"]
    # test_b imports pkg.c, which imports pkg.b; so does test_c (import pkg.c): both
    assert sorted(fb["files"]) == ["tests/test_b.py", "tests/test_c.py"]
    rows = {t["path"]: t for t in answer["tests"]}
    assert set(rows) == {"tests/test_b.py", "tests/test_c.py"}
    assert all(r["fallback"] and not r["trusted"] for r in rows.values())
    weak = rows["tests/test_b.py"]["evidence"][0]
    assert weak["changed"] == "repo/pkg/b.py::Widget.frobnicate" and "name_match" in weak["how"]
    assert paths(answer)[0] == "tests/test_b.py"      # the name_match hit ranks first


def test_format_pytest_runs_exactly_the_selection_offline(git_repo):
    make_package(git_repo)
    settings_with_realm("work", git_repo.path)
    git_repo.write("pkg/a.py", A_EDIT)
    run_cli("index", "--json", tool="indexd", check=True)
    out = affected_cli(git_repo.path, "--format", "pytest")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["tests/test_a.py"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INDEXD_", "PYTEST_"))}
    env["PYTHONPATH"] = str(git_repo.path)
    ran = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                          *out.stdout.split()], cwd=git_repo.path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 1, ran.stdout          # bump(1) is 3 now: test_bump fails
    assert "tests/test_a.py::test_bump FAILED" in ran.stdout
    assert "collected 1 item" in ran.stdout and "test_unbump" not in ran.stdout

    # nothing changed: empty stdout, exit 1
    git_repo.write("pkg/a.py", A_PY)
    run_cli("index", "--json", tool="indexd", check=True)
    none = affected_cli(git_repo.path, "--format", "pytest")
    assert none.returncode == 1 and none.stdout == ""
    # in words: nothing changed, not "no test file reaches the change ... safe: every
    # changed symbol has a path to a test" (as if there had been a change)
    said = affected_cli(git_repo.path)
    assert said.returncode == 1 and "nothing changed" in said.stdout, said.stdout
    assert "safe" not in said.stdout and "reaches the change" not in said.stdout
    changes = subprocess.run([str(BIN / "indexctl"), "changes"], cwd=git_repo.path,
                             capture_output=True, text=True, timeout=120)
    assert changes.returncode == 0 and changes.stdout.startswith("nothing changed (uncommitted)"), \
        changes.stdout


def test_targets_and_bad_params(git_repo, daemon):
    make_package(git_repo)
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True)
    out = affected_cli(git_repo.path, "pkg/a.py::unbump", "--json")
    assert out.returncode == 0, out.stderr
    assert paths(json.loads(out.stdout)) == ["tests/test_unbump.py"]
    by_name = affected_cli(git_repo.path, "unbump", "--json")   # the symbol's name alone
    assert by_name.returncode == 0, by_name.stderr
    assert paths(json.loads(by_name.stdout)) == ["tests/test_unbump.py"]
    for params, words in (({"since": "HEAD", "staged": True}, "one of"),
                          ({"since": "no-such-rev"}, "cannot diff"),
                          ({"targets": []}, "targets must be"),
                          ({"staged": "yes"}, "staged must be")):
        with pytest.raises(InvalidParams) as err:
            d.call("tests.affected", repo=str(git_repo.path), **params)
        assert err.value.code == -32602 and words in err.value.message, err.value.message


def test_changed_test_file_selects_itself_and_unused_code_is_untested_offline(git_repo):
    make_package(git_repo)
    settings_with_realm("work", git_repo.path)
    git_repo.write("tests/test_unbump.py", TEST_UNBUMP + "\n\ndef test_more():\n    assert 1\n")
    git_repo.write("pkg/a.py", A_PY + "def spare():\n    return 0\n")   # nothing uses it
    run_cli("index", "--json", tool="indexd", check=True)
    out = affected_cli(git_repo.path, "--json")
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert paths(answer) == ["tests/test_unbump.py"]
    assert answer["tests"][0]["evidence"][0]["how"] == ["changed"]
    assert {c["label"]: c["tested"] for c in answer["changed"]} == {
        "repo/pkg/a.py::spare": "untested", "repo/tests/test_unbump.py::test_more": "trusted"}
    assert answer["safe"] is True and answer["untested"] == ["repo/pkg/a.py::spare"]
    text = affected_cli(git_repo.path)
    assert text.returncode == 0 and "no tests at all: repo/pkg/a.py::spare" in text.stdout


def test_deleted_function_selects_the_tests_that_used_it_offline(git_repo):
    make_package(git_repo)
    settings_with_realm("work", git_repo.path)
    git_repo.write("pkg/a.py", A_PY[:A_PY.index("\n\ndef unbump")] + "\n")
    run_cli("index", "--json", tool="indexd", check=True)
    answer = json.loads(affected_cli(git_repo.path, "--json").stdout)
    assert [(c["symbol"], c["change"]) for c in answer["changed"]] == [("unbump", "deleted")]
    assert paths(answer) == ["tests/test_unbump.py"] and answer["safe"] is True, answer


def test_coverage_makes_a_name_match_only_change_safe_offline(git_repo, tmp_path):
    from e2e.test_coverage_ingest import record

    make_package(git_repo)
    settings_with_realm("work", git_repo.path)
    run_cli("index", "--json", tool="indexd", check=True)
    data = record(git_repo.path, tmp_path, "all")
    run_cli("tests", "ingest", data, "--json", check=True)
    git_repo.write("pkg/b.py", B_EDIT)
    run_cli("index", "--json", tool="indexd", check=True)
    answer = json.loads(affected_cli(git_repo.path, "--json").stdout)
    assert answer["safe"] is True and answer["fallback"] is None, answer["unsafe"]
    assert paths(answer) == ["tests/test_b.py"]
    ev = answer["tests"][0]["evidence"][0]
    assert ev["how"] == ["coverage"] and ev["test"] == "repo/tests/test_b.py::test_frob"


BOX_PY = ("class Box:\n    def evolve(self, other):\n        other._fill()\n"
          "        return other\n\n    def _fill(self):\n        return 1\n")


def test_own_method_on_an_untyped_receiver_is_not_safe_offline(git_repo):
    """attrs' `Attribute._setattrs`: reached only by `new._setattrs()` in its own file on
    an untyped receiver (no edge), it was called untested, so safe, while every test
    importing attr failed."""
    answer = affected_after_edit(git_repo, {
        "pkg/__init__.py": "from pkg import models\n", "pkg/box.py": BOX_PY,
        "pkg/models.py": "from pkg.box import Box\n\nB = Box().evolve(Box())\n",
        "tests/test_pkg.py": "import pkg\n\n\ndef test_it():\n    assert pkg.models.B\n"},
        "pkg/box.py", "return 1", "raise RuntimeError")
    assert [(c["symbol"], c["tested"]) for c in answer["changed"]] == [("Box._fill", "unknown")]
    assert answer["safe"] is False and answer["untested"] == []
    assert "cannot tell" in answer["fallback"]["reason"]
    assert paths(answer) == ["tests/test_pkg.py"] and answer["tests"][0]["fallback"]


def test_the_fallback_follows_package_imports_and_conftests_offline(git_repo):
    """attrs: `from attr import _config` runs attr/__init__.py (a package edge), and the
    root conftest.py's `from attr._compat import ...` breaks every test, but the
    fallback followed `imports` edges only: `_setattrs`'s answer left out test_config.py
    and test_pyright.py, which failed with it."""
    answer = affected_after_edit(git_repo, {
        "pkg/__init__.py": "from pkg import box\n", "pkg/box.py": BOX_PY,
        "pkg/_compat.py": "FLAG = True\n", "conftest.py": "from pkg._compat import FLAG\n",
        "tests/test_compat.py": "from pkg import _compat\n\n\ndef test_flag():\n"
                                "    assert _compat.FLAG\n",
        "tests/test_plain.py": "def test_plain():\n    assert True\n"},
        "pkg/box.py", "return 1", "raise RuntimeError")
    assert answer["safe"] is False, answer["changed"]
    assert sorted(answer["fallback"]["files"]) == ["tests/test_compat.py", "tests/test_plain.py"]
    assert sorted(paths(answer)) == ["tests/test_compat.py", "tests/test_plain.py"]
    assert all(t["fallback"] for t in answer["tests"])


LAZY_PY = ("class Lazy:\n    def __init__(self, inner):\n        self._inner = inner\n\n"
           "    def __getattr__(self, name):\n        return getattr(self._inner, name)\n")


def test_a_dunder_no_edge_reaches_is_never_untested_offline(git_repo):
    """click's `LazyFile.__getattr__` / `_FixupStream.__getattr__`: the interpreter calls
    them (an attribute read on an untyped value; io.TextIOWrapper's C code), which no
    edge records, so no path read as untested, so safe, while three test files failed."""
    answer = affected_after_edit(git_repo, {
        "pkg/__init__.py": "", "pkg/lazy.py": LAZY_PY,
        "pkg/use.py": "from pkg.lazy import Lazy\n\n\ndef shout(f):\n    return f.upper()\n\n\n"
                      "def run(x):\n    return shout(Lazy(x))\n",
        "tests/test_use.py": "from pkg.use import run\n\n\ndef test_it():\n"
                             "    assert run('ab') == 'AB'\n"},
        "pkg/lazy.py", "return getattr(self._inner, name)", "raise RuntimeError(name)")
    assert [(c["symbol"], c["tested"]) for c in answer["changed"]] == [
        ("Lazy.__getattr__", "unknown")]
    assert answer["safe"] is False and answer["untested"] == []
    assert "tests/test_use.py" in paths(answer)


TYPES_PY = ("class Param:\n    def complete(self, x):\n        return []\n\n\n"
            "class Path(Param):\n    def complete(self, x):\n        return [x]\n")


def test_an_override_of_a_called_base_method_is_never_untested_offline(git_repo):
    """click's `Path.shell_complete`: called on a value whose class is known only as its
    base, the edge lands on the base method; the override said untested, so safe, while
    test_shell_completion.py failed. Here the value comes from a factory annotated
    `-> Param`: the override stays `unknown`, never untested."""
    answer = affected_after_edit(git_repo, {
        "pkg/__init__.py": "", "pkg/types.py": TYPES_PY,
        "pkg/use.py": "from pkg.types import Param, Path\n\n\ndef make() -> Param:\n"
                      "    return Path()\n\n\ndef run(x):\n    p = make()\n"
                      "    return p.complete(x)\n",
        "tests/test_use.py": "from pkg.use import run\n\n\n"
                             "def test_it():\n    assert run('a') == ['a']\n"},
        "pkg/types.py", "return [x]", "raise RuntimeError(x)")
    assert [(c["symbol"], c["tested"]) for c in answer["changed"]] == [("Path.complete", "unknown")]
    assert answer["changed"][0]["overrides"].endswith("pkg/types.py::Param.complete")
    assert answer["safe"] is False
    assert "tests/test_use.py" in paths(answer)


def test_an_override_called_through_an_annotated_parameter_is_tested(git_repo):
    """`def run(p: Param)`: an annotated Param may be any subclass, so `p.complete()` also
    reaches Path.complete (jinja2's `node: nodes.Expr` and `node.as_const()`): the test
    is found by a trusted chain, and the answer can be safe."""
    answer = affected_after_edit(git_repo, {
        "pkg/__init__.py": "", "pkg/types.py": TYPES_PY,
        "pkg/use.py": "from pkg.types import Param\n\n\ndef run(p: Param, x):\n"
                      "    return p.complete(x)\n",
        "tests/test_use.py": "from pkg.types import Path\nfrom pkg.use import run\n\n\n"
                             "def test_it():\n    assert run(Path(), 'a') == ['a']\n"},
        "pkg/types.py", "return [x]", "raise RuntimeError(x)")
    assert [(c["symbol"], c["tested"]) for c in answer["changed"]] == [("Path.complete", "trusted")]
    assert answer["safe"] is True
    assert "tests/test_use.py" in paths(answer)


HELPERS_PY = "from pkg.a import bump\n\n\ndef twice(x):\n    return bump(bump(x))\n"
SUPPORT = {
    "pkg/__init__.py": "", "pkg/a.py": A_PY, "tests/__init__.py": "",
    "tests/helpers.py": HELPERS_PY,
    "tests/conftest.py": "import pytest\n\nfrom pkg.a import bump\n\n\n@pytest.fixture\n"
                         "def one():\n    return bump(0)\n",
    "tests/data/expected.txt": "2\n",
    "tests/test_a.py": TEST_A,
    "tests/test_twice.py": "from tests.helpers import twice\n\n\ndef test_twice():\n"
                           "    assert twice(0) == 2\n",
    "tests/test_one.py": "def test_one(one):\n    assert one == 1\n",
}


def run_selection(repo) -> subprocess.CompletedProcess:
    """`pytest $(indexctl tests affected --format pytest)`, as a user runs it."""
    out = affected_cli(repo, "--format", "pytest")
    assert out.returncode == 0, out.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INDEXD_", "PYTEST_"))}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *out.stdout.split()], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=120)


def test_only_test_modules_are_selected_and_a_changed_helper_selects_its_users_offline(
        git_repo):
    """A helper module, a conftest.py, an `__init__.py` and a data file under tests/ are
    no tests pytest runs: listing them made `pytest $(indexctl tests affected --format
    pytest)` collect nothing from them (and a changed helper selected only itself, so
    the tests using it never ran)."""
    answer = affected_after_edit(git_repo, SUPPORT, "pkg/a.py", "x + 1", "x + 2")
    assert sorted(paths(answer)) == ["tests/test_a.py", "tests/test_one.py",
                                     "tests/test_twice.py"], paths(answer)
    ran = run_selection(git_repo.path)
    assert "3 failed" in ran.stdout, ran.stdout

    git_repo.write("pkg/a.py", A_PY)
    git_repo.write("tests/helpers.py", HELPERS_PY.replace("bump(bump(x))", "bump(x) + 2"))
    run_cli("index", "--json", tool="indexd", check=True)
    answer = json.loads(affected_cli(git_repo.path, "--json").stdout)
    assert paths(answer) == ["tests/test_twice.py"], answer["tests"]
    assert [(c["symbol"], c["tested"]) for c in answer["changed"]] == [("twice", "trusted")]
    ran = run_selection(git_repo.path)
    assert "1 failed" in ran.stdout and "test_twice" in ran.stdout, ran.stdout


DEC_PY = ("import codecs\n\n\nclass Decoder(codecs.BufferedIncrementalDecoder):\n"
          "    def _buffer_decode(self, data, errors, final):\n"
          "        return data.decode('ascii').upper(), len(data)\n\n\n"
          "def find(name):\n    if name == 'shout':\n"
          "        return codecs.CodecInfo(None, None, incrementaldecoder=Decoder, name=name)\n"
          "    return None\n\n\ncodecs.register(find)\n")


def test_an_override_of_an_outside_base_class_is_never_untested_offline(git_repo):
    """idna's `IncrementalDecoder._buffer_decode` overrides a hook of the standard
    library's `codecs.BufferedIncrementalDecoder`, whose `decode` calls it: no edge in the
    realm reaches it, so it was called untested (safe), and test_idna_codec.py failed."""
    answer = affected_after_edit(git_repo, {
        "pkg/__init__.py": "", "pkg/dec.py": DEC_PY,
        "tests/test_dec.py": "import codecs\n\nimport pkg.dec  # noqa: F401 (registers)\n\n\n"
                             "def test_shout():\n    decoder = codecs.getincrementaldecoder("
                             "'shout')()\n    assert decoder.decode(b'ab', final=True) == 'AB'\n"},
        "pkg/dec.py", ".upper()", ".lower()")
    changed = {c["symbol"]: c for c in answer["changed"]}
    assert changed["Decoder._buffer_decode"]["tested"] == "unknown", answer["changed"]
    assert changed["Decoder._buffer_decode"]["outside_base"] == "codecs.BufferedIncrementalDecoder"
    assert answer["safe"] is False
    assert "derives from codecs.BufferedIncrementalDecoder, outside the realm" in \
        answer["fallback"]["reason"]
    assert paths(answer) == ["tests/test_dec.py"]
    ran = run_selection(git_repo.path)
    assert "1 failed" in ran.stdout, ran.stdout


def test_a_function_passed_through_its_package_path_is_tested_offline(git_repo):
    """idna's test_idna_compat.py checks `assertRaises(NotImplementedError,
    idna.compat.nameprep, "a")`: the function passed by its dotted path was no
    reference, so `nameprep` was called untested (safe), and that test file failed."""
    answer = affected_after_edit(git_repo, {
        "pkg/__init__.py": "", "pkg/compat.py": "def prep(s):\n    raise NotImplementedError(s)\n",
        "tests/test_compat.py": "import unittest\n\nimport pkg.compat\n\n\n"
                                "class T(unittest.TestCase):\n    def test_prep(self):\n"
                                "        self.assertRaises(NotImplementedError, pkg.compat.prep, 'a')\n"},
        "pkg/compat.py", "NotImplementedError(s)", "RuntimeError(s)")
    assert [(c["symbol"], c["tested"]) for c in answer["changed"]] == [("prep", "trusted")]
    assert paths(answer) == ["tests/test_compat.py"] and answer["safe"] is True
    ran = run_selection(git_repo.path)
    assert "1 failed" in ran.stdout, ran.stdout


CACHE_PY = ("class Cache:\n    def __init__(self):\n        self.data = {}\n\n"
            "    def get(self, key, default=None):\n        return self.data.get(key, default)\n\n"
            "    def put(self, key, value):\n        self.data[key] = value\n")
MIXIN_PY = ("class CacheTestMixin:\n    Cache = None\n\n    def test_get(self):\n"
            "        cache = self.Cache()\n        cache.put(1, 2)\n"
            "        assert cache.get(1) == 2\n")


def test_tests_a_mixin_gives_run_from_the_test_modules_using_it_offline(git_repo):
    """cachetools' tests live in a mixin in tests/__init__.py; test_lru.py and the others
    run them through `class LRUCacheTest(unittest.TestCase, CacheTestMixin)`. A trusted
    chain from another test made `Cache.get` safe while the mixin's runners, which
    failed, were not selected (11 of 17 safe claims wrong)."""
    answer = affected_after_edit(git_repo, {
        "pkg/__init__.py": "", "pkg/cache.py": CACHE_PY,
        "tests/__init__.py": MIXIN_PY,
        "tests/test_cache.py": "import unittest\n\nfrom pkg.cache import Cache\n\n"
                               "from . import CacheTestMixin\n\n\n"
                               "class CacheTest(unittest.TestCase, CacheTestMixin):\n"
                               "    Cache = Cache\n",
        "tests/test_other.py": "from pkg.cache import Cache\n\n\ndef test_direct():\n"
                               "    assert Cache().get(1) is None\n"},
        "pkg/cache.py", "self.data.get(key, default)", "default")
    assert sorted(paths(answer)) == ["tests/test_cache.py", "tests/test_other.py"], answer["tests"]
    runner = next(t for t in answer["tests"] if t["path"] == "tests/test_cache.py")
    assert runner["node_ids"] == ["tests/test_cache.py::CacheTest::test_get"]
    ran = run_selection(git_repo.path)
    assert "1 failed" in ran.stdout and "test_cache.py" in ran.stdout, ran.stdout
    # an edit of the mixin's test runs from its runner
    git_repo.write("pkg/cache.py", CACHE_PY)
    git_repo.write("tests/__init__.py", MIXIN_PY.replace("== 2", "== 3"))
    run_cli("index", "--json", tool="indexd", check=True)
    answer = json.loads(affected_cli(git_repo.path, "--json").stdout)
    assert paths(answer) == ["tests/test_cache.py"], answer
    assert answer["changed"][0]["tested"] == "trusted" and answer["safe"] is True
    assert answer["tests"][0]["evidence"][0]["how"] == ["resolved"]


def test_a_function_as_a_default_by_its_package_path_is_tested_offline(git_repo):
    """cachetools' test_keys.py: `def test_hashkey(self, key=cachetools.keys.hashkey)`:
    the default named no reference, so `hashkey` was trusted through another test alone
    (safe) while test_keys.py, which failed, was not selected."""
    answer = affected_after_edit(git_repo, {
        "pkg/__init__.py": "", "pkg/keys.py": "def hashkey(*args):\n    return tuple(args)\n",
        "tests/test_keys.py": "import pkg.keys\n\n\n"
                              "def test_hashkey(key=pkg.keys.hashkey):\n"
                              "    assert key(1, 2) == (1, 2)\n"},
        "pkg/keys.py", "tuple(args)", "list(args)")
    assert [(c["symbol"], c["tested"]) for c in answer["changed"]] == [("hashkey", "trusted")]
    assert paths(answer) == ["tests/test_keys.py"]


def test_a_module_named_like_a_test_but_holding_none_is_code_offline(git_repo):
    """indexd's own graph/test_select.py: a change there selected that file alone (it is
    named test_*.py, so it was taken for a test) and said safe; pytest collects no test
    from it, and the tests of `select_tests` never ran."""
    answer = affected_after_edit(git_repo, {
        "pkg/__init__.py": "", "pkg/test_select.py": "def select_tests(xs):\n    return sorted(xs)\n",
        "tests/test_sel.py": "from pkg.test_select import select_tests\n\n\n"
                             "def test_sorted():\n    assert select_tests([2, 1]) == [1, 2]\n"},
        "pkg/test_select.py", "sorted(xs)", "list(xs)")
    assert paths(answer) == ["tests/test_sel.py"], answer["tests"]
    assert [(c["symbol"], c["tested"]) for c in answer["changed"]] == [("select_tests", "trusted")]
    ran = run_selection(git_repo.path)
    assert "1 failed" in ran.stdout, ran.stdout


MEMO_PY = ("class Store:\n    def __init__(self):\n        self.data = {}\n\n"
           "    def setdefault(self, key, value):\n"
           "        return self.data.setdefault(key, value)\n\n\n"
           "def memo(cache):\n    def decorator(func):\n        def wrapper(n):\n"
           "            return cache.setdefault(n, func(n))\n        return wrapper\n"
           "    return decorator\n")
# as cachetools' func.py: a factory called by the tests (`lru_cache(maxsize)(f)`)
FUNCS_PY = ("from pkg.memo import Store, memo\n\n\ndef memoized(func):\n"
            "    return memo(Store())(func)\n")
TEST_STORE = ("from pkg.memo import Store\n\n\ndef test_setdefault():\n"
              "    assert Store().setdefault(1, 2) == 2\n")
TEST_FUNCS = ("from pkg.funcs import memoized\n\n\ndef test_square():\n"
              "    assert memoized(lambda n: n * n)(3) == 9\n")


def test_code_calling_a_same_named_method_on_an_untyped_value_selects_its_tests_offline(
        git_repo):
    """cachetools' `cached(cache)` returns a decorator whose wrapper calls
    `cache.setdefault(...)` on the cache it was given, in the file defining
    `_TimedCache.setdefault`. A bare name there resolves locally, so no name match
    leaves the file: `tests affected` said safe with test_ttl.py alone while
    test_func.py (decorated functions) failed. The tests running that wrapper are
    selected now, as weak evidence (impact's guess walk starts there too; `return
    decorator` is a reference)."""
    answer = affected_after_edit(git_repo, {
        "pkg/__init__.py": "", "pkg/memo.py": MEMO_PY, "pkg/funcs.py": FUNCS_PY,
        "tests/test_store.py": TEST_STORE, "tests/test_funcs.py": TEST_FUNCS},
        "pkg/memo.py", "return self.data.setdefault(key, value)", "return None")
    assert [(c["symbol"], c["tested"]) for c in answer["changed"]] == [
        ("Store.setdefault", "trusted")]
    assert paths(answer) == ["tests/test_store.py", "tests/test_funcs.py"], answer["tests"]
    funcs = answer["tests"][1]
    assert not funcs["trusted"]
    guess = funcs["evidence"][0]["via"][-1]   # the wrapper's cache.setdefault: by name
    assert (guess["how"], guess["from"]) == ("name_match", "repo/pkg/memo.py::memo.decorator.wrapper")
    ran = run_selection(git_repo.path)
    assert "2 failed" in ran.stdout, ran.stdout


BOUNDED_PY = ("class Bounded:\n    def __init__(self):\n        self.data = {}\n\n"
              "    def __setitem__(self, key, value):\n        self.evict()\n"
              "        self.data[key] = value\n\n"
              "    def __getitem__(self, key):\n        return self.data[key]\n\n"
              "    def evict(self):\n        if len(self.data) > 2:\n"
              "            self.data.clear()\n\n\n"
              "def remember(cache):\n    def decorator(func):\n        def wrapper(n):\n"
              "            cache[n] = func(n)\n            return cache[n]\n        return wrapper\n"
              "    return decorator\n")
TEST_BOUNDED = ("from pkg.bounded import Bounded\n\n\ndef test_evicts():\n    b = Bounded()\n"
                "    for i in range(4):\n        b[i] = i\n    assert len(b.data) == 1\n")
TEST_REMEMBER = ("from pkg.bounded import Bounded, remember\n\n\ndef test_remember():\n"
                 "    assert remember(Bounded())(lambda n: n + 1)(1) == 2\n")


def test_a_change_behind_a_dunder_run_on_an_untyped_value_selects_its_tests_offline(git_repo):
    """cachetools' `Cache.__delitem__` said safe while test_func.py failed: the `cached`
    wrapper does `cache[k] = v` on the cache it was given, whose `__setitem__` evicts. A
    subscript is a dunder call now (an edge where the receiver's class is known), and on
    a value of no known class beside the class, a guess `tests affected` follows from
    every symbol on the way to the change, in impact's one guess walk."""
    answer = affected_after_edit(git_repo, {
        "pkg/__init__.py": "", "pkg/bounded.py": BOUNDED_PY,
        "tests/test_bounded.py": TEST_BOUNDED, "tests/test_remember.py": TEST_REMEMBER},
        "pkg/bounded.py", "if len(self.data) > 2:", "if self.data.full:")
    assert [(c["symbol"], c["tested"]) for c in answer["changed"]] == [("Bounded.evict",
                                                                       "trusted")]
    assert paths(answer) == ["tests/test_bounded.py", "tests/test_remember.py"], answer["tests"]
    trusted, guessed = answer["tests"]
    assert trusted["trusted"] and not guessed["trusted"]
    hows = [v["how"] for v in guessed["evidence"][0]["via"]]
    assert "name_match" in hows, hows
    ran = run_selection(git_repo.path)
    assert "2 failed" in ran.stdout, ran.stdout


def test_a_plain_folder_says_it_has_no_git_diff_offline_and_daemon(tmp_path, daemon):
    """`indexctl changes` and `tests affected` in a plain folder (no git) answered
    "internal error": pygit2's "Repository not found" escaped."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "tool.py").write_text("def tool():\n    return 1\n")
    settings_with_realm("plain", folder)
    run_cli("index", "--json", tool="indexd", check=True)
    for args in (("changes",), ("tests", "affected")):
        out = subprocess.run([str(BIN / "indexctl"), *args], cwd=folder, capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 4, (args, out.stdout, out.stderr)
        assert "not a git repository" in out.stderr and "internal error" not in out.stderr, out.stderr
    d = daemon()
    wait_until(lambda: d.call("status", sync=True)["graph"].get("edges") is not None, timeout=60,
               what="the graph built")
    for args in (("changes",), ("tests", "affected")):
        out = subprocess.run([str(BIN / "indexctl"), *args], cwd=folder, capture_output=True,
                             text=True, timeout=120, env=d.env)
        assert out.returncode == 4 and "not a git repository" in out.stderr, (args, out.stderr)
    # a target needs no diff: still answered
    out = subprocess.run([str(BIN / "indexctl"), "tests", "affected", "tool.py::tool"], cwd=folder,
                         capture_output=True, text=True, timeout=120, env=d.env)
    assert "internal error" not in out.stderr, out.stderr


OPS_FILES = {
    "pkg/__init__.py": "",
    "pkg/ops.py": ("def helper(x):\n    return x * 2\n\n\ndef double(x):\n    return helper(x)\n\n\n"
                   "def negate(x):\n    return -x\n\n\nOPS = {'double': double, 'negate': negate}\n"),
    "pkg/engine.py": ("from pkg.ops import OPS\n\n\nclass Engine:\n    def __init__(self):\n"
                      "        self.ops = OPS.copy()\n\n    def run(self, name, x):\n"
                      "        return self.ops[name](x)\n"),
    "tests/test_double.py": ("from pkg.engine import Engine\n\n\ndef test_double():\n"
                             "    assert Engine().run('double', 2) == 4\n"),
    "tests/test_negate.py": ("from pkg.engine import Engine\n\n\ndef test_negate():\n"
                             "    assert Engine().run('negate', 2) == -2\n"),
}


def test_coverage_rules_out_a_static_chain_its_recorded_test_never_ran_offline(git_repo,
                                                                              tmp_path):
    """jinja2: every test building an Environment statically reaches every filter (the
    registry is read there); coverage recorded which tests ran the changed filter, on code
    that has not changed on the way, so `tests affected` with coverage selects those only
    and says which static chains it ruled out."""
    from e2e.test_coverage_ingest import record

    for path, text in OPS_FILES.items():
        git_repo.write(path, text)
    git_repo.commit("v1")
    settings_with_realm("work", git_repo.path)
    run_cli("index", "--json", tool="indexd", check=True)
    static = json.loads(affected_cli(git_repo.path, "--json", "pkg/ops.py::helper").stdout)
    assert sorted(paths(static)) == ["tests/test_double.py", "tests/test_negate.py"], static
    run_cli("tests", "ingest", record(git_repo.path, tmp_path, "all"), "--json", check=True)
    git_repo.write("pkg/ops.py", OPS_FILES["pkg/ops.py"].replace("x * 2", "x * 3"))
    run_cli("index", "--json", tool="indexd", check=True)
    answer = json.loads(affected_cli(git_repo.path, "--json").stdout)
    assert paths(answer) == ["tests/test_double.py"], answer
    assert answer["safe"] is True, answer["unsafe"]
    assert "repo/tests/test_negate.py::test_negate" in answer["ruled_out"], answer
    human = affected_cli(git_repo.path).stdout
    assert "ruled out by coverage" in human and "test_negate" in human, human
    # a path that changed since the recording is not vouched for: back to the static chain
    git_repo.write("pkg/engine.py", OPS_FILES["pkg/engine.py"].replace(
        "self.ops = OPS.copy()\n", "self.ops = OPS.copy()\n        self.calls = 0\n"))
    run_cli("index", "--json", tool="indexd", check=True)
    answer = json.loads(affected_cli(git_repo.path, "--json", "pkg/ops.py::helper").stdout)
    assert sorted(paths(answer)) == ["tests/test_double.py", "tests/test_negate.py"], answer
