"""The JavaScript reality bench's own judgement (bench/impact_vs_tests_js.py): which test
file a mutant broke, how a function is mutated, what a test file requires. The full run
needs node and the npm registry; these parts need neither."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import impact_vs_tests_js as js  # noqa: E402

TAP = ("TAP version 13\n# parse\nok 1 should be equal\nnot ok 2 should be deeply equal\n"
       "# stringify\nok 1 fine\nnot ok 2 should be equal\n\n1..4\n")


def test_tap_output_gives_passing_count_and_failing_assertions():
    passed, failed = js.parse_tap(TAP)
    assert passed == 2
    assert failed == {("parse", 2, "should be deeply equal"), ("stringify", 2, "should be equal")}


def test_a_file_fails_a_mutant_only_by_what_did_not_fail_unmutated():
    clean = {"a.js": js.FileRun(1, 10, {("t", 3, "x")}), "b.js": js.FileRun(0, 5),
             "c.js": js.FileRun(0, 5), "d.js": js.FileRun(0, 5)}
    runs = {"a.js": js.FileRun(1, 10, {("t", 3, "x")}),     # the same old failure
            "b.js": js.FileRun(1, 5, {("u", 1, "y")}),      # a new one
            "c.js": js.FileRun(1, 2),                       # stopped early
            "d.js": js.FileRun(0, 5)}
    assert js.failing(clean, runs) == {"b.js", "c.js"}


def test_mutants_replace_a_block_body_and_keep_the_rest(tmp_path):
    root = tmp_path / "package"
    (root / "lib").mkdir(parents=True)
    text = ("var helper = function helper(x) {\n    return x + 1;\n};\n\n"
            "module.exports = function main(y) {\n    return helper(y) * 2;\n};\n")
    (root / "lib" / "m.js").write_text(text)
    project = js.JsProject("p", "1", ("lib",))
    targets = {t.qualname: t for t in js.targets(root, project)}
    assert set(targets) == {"helper", "main"}
    mutated = js.mutate(text, targets["helper"])
    assert 'var helper = function helper(x) { throw new Error("mutated"); };' in mutated
    assert "return helper(y) * 2;" in mutated


def test_the_import_baseline_follows_requires_through_the_package_main(tmp_path):
    root = tmp_path / "package"
    for rel, body in {"package.json": '{"main": "lib/index.js"}',
                      "lib/index.js": "module.exports = require('./parse');\n",
                      "lib/parse.js": "var u = require('./utils');\n",
                      "lib/utils.js": "", "test/a.js": "var qs = require('../');\n",
                      "test/b.js": "var u = require('../lib/utils.js');\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(body)
    closure = js.import_closure(root, ["test/a.js", "test/b.js"])
    assert closure["test/a.js"] == {"test/a.js", "lib/index.js", "lib/parse.js", "lib/utils.js"}
    assert closure["test/b.js"] == {"test/b.js", "lib/utils.js"}
