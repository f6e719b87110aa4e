"""CommonJS exports as npm packages write them, and tape tests that call through them
(found by bench/impact_vs_tests_js.py on resolve 1.22.10 and qs 6.14.0: `tests affected`
called 4 of 6 mutated functions safe, and every one of them failed tests)."""

from __future__ import annotations

from graph_helpers import build

# resolve: the package's main re-exports one module's function with another's hung on it
RESOLVE = {
    "package.json": '{"name": "resolve", "main": "index.js"}\n',
    "index.js": ("var async = require('./lib/async');\n"
                 "async.sync = require('./lib/sync');\n"
                 "module.exports = async;\n"),
    "lib/async.js": ("module.exports = function resolve(x, opts, cb) {\n"
                     "    cb(null, x);\n"
                     "};\n"),
    "lib/sync.js": ("module.exports = function resolveSync(x, opts) {\n"
                    "    function loadAsFileSync(f) {\n        return f;\n    }\n"
                    "    return loadAsFileSync(x);\n"
                    "};\n"),
    "test/sync.js": ("var test = require('tape');\nvar resolve = require('../');\n\n"
                     "test('sync', function (t) {\n"
                     "    t.equal(resolve.sync('./a'), './a');\n    t.end();\n});\n"),
    "test/async.js": ("var test = require('tape');\nvar resolve = require('../');\n\n"
                      "test('async', function (t) {\n"
                      "    resolve('./a', {}, function (err, res) { t.end(); });\n});\n"),
}

# qs: the main (named by package.json) exports an object of the modules' exports
QS = {
    "package.json": '{"name": "qs", "main": "lib/index.js"}\n',
    "lib/index.js": ("var stringify = require('./stringify');\nvar parse = require('./parse');\n"
                     "module.exports = {\n    parse: parse,\n    stringify: stringify\n};\n"),
    "lib/utils.js": ("var compact = function compact(value) {\n    return value;\n};\n\n"
                     "function merge(a, b) {\n    return a;\n}\n\n"
                     "module.exports = {\n    compact: compact,\n    merge: merge\n};\n"),
    "lib/parse.js": ("var utils = require('./utils');\n\n"
                     "module.exports = function (str, opts) {\n"
                     "    return utils.compact(str);\n};\n"),
    "lib/stringify.js": ("var utils = require('./utils');\n\n"
                         "module.exports = function (object, opts) {\n"
                         "    return utils.merge(object, opts);\n};\n"),
    "test/parse.js": ("var test = require('tape');\nvar qs = require('../');\n\n"
                      "test('parse', function (t) {\n"
                      "    t.deepEqual(qs.parse('a=b'), { a: 'b' });\n    t.end();\n});\n"),
    "test/stringify.js": ("var test = require('tape');\nvar qs = require('../');\n\n"
                          "test('stringify', function (t) {\n"
                          "    t.equal(qs.stringify({ a: 'b' }), 'a=b');\n    t.end();\n});\n"),
    "test/utils.js": ("var test = require('tape');\nvar utils = require('../lib/utils');\n\n"
                      "test('merge', function (t) {\n"
                      "    t.deepEqual(utils.merge({}, {}), {});\n    t.end();\n});\n"),
}


def reached_tests(graph, target: str) -> set[str]:
    return {t["path"] for t in graph.impact(target, depth=3)["tests"]}


def calls_from(graph, path: str) -> dict:
    return {(e.dst_path, e.dst_symbol): e.how for e in graph.edges(["calls"])
            if e.src_path == path}


def test_a_function_the_main_hangs_on_another_export_is_called_through_it(tree):
    repo = tree("resolve", RESOLVE)
    g = build("r", repo)
    assert calls_from(g, "test/sync.js").get(("lib/sync.js", "resolveSync")) == "resolved"
    assert calls_from(g, "test/async.js").get(("lib/async.js", "resolve")) == "resolved"
    assert reached_tests(g, f"{repo}/lib/sync.js::resolveSync.loadAsFileSync") == {"test/sync.js"}
    assert reached_tests(g, f"{repo}/lib/async.js::resolve") == {"test/async.js"}


def test_an_exported_object_literal_names_what_each_member_calls(tree):
    repo = tree("qs", QS)
    g = build("r", repo)
    assert calls_from(g, "test/parse.js").get(("lib/parse.js", "exports")) == "resolved"
    assert calls_from(g, "test/utils.js").get(("lib/utils.js", "merge")) == "resolved"
    assert calls_from(g, "lib/parse.js").get(("lib/utils.js", "compact")) == "resolved"
    assert reached_tests(g, f"{repo}/lib/utils.js::compact") == {"test/parse.js"}
    assert reached_tests(g, f"{repo}/lib/utils.js::merge") == {"test/stringify.js", "test/utils.js"}


def test_a_function_passed_as_a_value_is_used_by_the_function_passing_it(tree):
    """resolve's `var isFile = opts.isFile || defaultIsFile;` and `isFile(file, onex)` with a
    nested `function onex(err, ex)`: the defaults and callbacks run where they are passed,
    and no test was found for them (10 and 11 failing test files missed)."""
    repo = tree("passed", {
        "package.json": '{"name": "p", "main": "index.js"}\n',
        "index.js": ("var defaultIsFile = function isFile(file, cb) {\n    cb(null, true);\n};\n\n"
                     "module.exports = function find(x, opts, cb) {\n"
                     "    var isFile = opts.isFile || defaultIsFile;\n"
                     "    var options = { check: defaultIsFile };\n"
                     "    isFile(x, onex);\n"
                     "    function onex(err, ex) {\n        cb(err, ex);\n    }\n"
                     "};\n"),
        "test/find.js": ("var test = require('tape');\nvar find = require('../');\n\n"
                         "test('find', function (t) {\n"
                         "    find('a', {}, function (err, ok) { t.ok(ok); t.end(); });\n});\n"),
    })
    g = build("r", repo)
    refs = {(e.src_symbol, e.dst_symbol) for e in g.edges(["references"])
            if e.src_path == "index.js" and e.how == "resolved"}
    assert ("find", "defaultIsFile") in refs and ("find", "find.onex") in refs, refs
    assert reached_tests(g, f"{repo}/index.js::defaultIsFile") == {"test/find.js"}
    assert reached_tests(g, f"{repo}/index.js::find.onex") == {"test/find.js"}


def test_a_module_that_exports_another_modules_export_is_followed(tree):
    """resolve's sync.js is `module.exports = require('./lib/sync');` and home_paths_sync.js
    does `var resolve = require('../sync'); resolve('dot_main')` (12 pairs missed)."""
    files = dict(RESOLVE)
    files["sync.js"] = "'use strict';\n\nmodule.exports = require('./lib/sync');\n"
    files["test/home.js"] = ("var test = require('tape');\nvar resolve = require('../sync');\n\n"
                             "test('home', function (t) {\n"
                             "    t.equal(resolve('dot_main'), 'dot_main');\n    t.end();\n});\n")
    repo = tree("reexport", files)
    g = build("r", repo)
    assert calls_from(g, "test/home.js").get(("lib/sync.js", "resolveSync")) == "resolved"
    assert reached_tests(g, f"{repo}/lib/sync.js::resolveSync") == {"test/sync.js",
                                                                    "test/home.js"}


def test_an_es_module_default_import_names_the_default_export_whatever_its_name(tree):
    """`import parse from './parse.js'` where parse.js has `export default function
    parseQuery` (or `export default format`): the import bound the name `parse`, which no
    definition there has, so every call through it was a name match or nothing."""
    repo = tree("esm", {
        "package.json": '{"name": "esm", "type": "module"}\n',
        "lib/parse.js": "export default function parseQuery(s) {\n    return s;\n}\n",
        "lib/fmt.js": "function format(x) {\n    return x;\n}\n\nexport default format;\n",
        "lib/anon.js": "export default function (x) {\n    return x;\n}\n",
        "test/parse.test.js": ("import parse from '../lib/parse.js';\n"
                               "import fmt from '../lib/fmt.js';\nimport anon from '../lib/anon.js';\n\n"
                               "test('p', () => {\n    parse('a');\n    fmt(1);\n    anon(2);\n});\n"),
    })
    g = build("r", repo)
    calls = calls_from(g, "test/parse.test.js")
    assert calls.get(("lib/parse.js", "parseQuery")) == "resolved", calls
    assert calls.get(("lib/fmt.js", "format")) == "resolved", calls
    assert calls.get(("lib/anon.js", "default")) == "resolved", calls
    assert reached_tests(g, f"{repo}/lib/fmt.js::format") == {"test/parse.test.js"}


WALKER = ("function Walker(obj) {\n    this.value = obj;\n}\n\n"
          "Walker.prototype.forEach = function (cb) {\n    return cb(this.value);\n};\n\n"
          "Walker.prototype.map = function map(cb) {\n    return cb(this.value);\n};\n\n"
          "function walk(obj) {\n    return new Walker(obj);\n}\n\n"
          "module.exports = walk;\nwalk.Walker = Walker;\n")


def test_prototype_methods_are_methods_of_their_function(tree):
    """ES5 classes (`Walker.prototype.forEach = function (cb) {...}`) had no symbol at all:
    nothing to search, nothing `impact` could be asked about."""
    repo = tree("proto", {
        "lib/walk.js": WALKER,
        "test/each.js": ("var test = require('tape');\nvar walk = require('../lib/walk');\n\n"
                         "test('each', function (t) {\n"
                         "    var w = new walk.Walker([1]);\n    w.forEach(function (x) { t.ok(x); });\n"
                         "    t.end();\n});\n"),
    })
    g = build("r", repo)
    methods = {d.qualname: d.kind for d in g.indexes["r"].defs(repo.as_posix(), "lib/walk.js")}
    assert methods.get("Walker.forEach") == "method" and methods.get("Walker.map") == "method"
    assert calls_from(g, "test/each.js").get(("lib/walk.js", "Walker.forEach")) == "inferred"
    assert reached_tests(g, f"{repo}/lib/walk.js::Walker.forEach") == {"test/each.js"}
    assert reached_tests(g, f"{repo}/lib/walk.js::Walker.map") == set()


def test_a_call_returning_new_gives_its_value_that_class(tree):
    """`var w = walk(x); w.map(...)` and `walk(x).forEach(...)`, where every `return` of walk
    is `new Walker(...)`: calls of Walker's methods, inferred (they were name matches); a
    function that may return something else gives no class."""
    repo = tree("returns", {
        "lib/walk.js": WALKER + ("\nfunction either(x) {\n    if (x) {\n        return new Walker(x);\n"
                                 "    }\n    return x;\n}\nwalk.either = either;\n"),
        "test/map.js": ("var test = require('tape');\nvar walk = require('../lib/walk');\n\n"
                        "test('map', function (t) {\n    var w = walk([2]);\n    w.map(String);\n"
                        "    t.end();\n});\n"),
        "test/each.js": ("var test = require('tape');\nvar walk = require('../lib/walk');\n\n"
                         "test('each', function (t) {\n    walk([3]).forEach(String);\n"
                         "    var e = walk.either(0);\n    e.map(String);\n    t.end();\n});\n"),
    })
    g = build("r", repo)
    assert calls_from(g, "test/map.js").get(("lib/walk.js", "Walker.map")) == "inferred"
    each = calls_from(g, "test/each.js")
    assert each.get(("lib/walk.js", "Walker.forEach")) == "inferred", each
    assert each.get(("lib/walk.js", "Walker.map")) in (None, "name_match"), each


EMITTER = ("function Emitter() {\n    this.handlers = {};\n}\nmodule.exports = Emitter;\n\n"
           "function checkHandler(h) {\n    if (typeof h !== 'function') throw new TypeError('h');\n}\n\n"
           "function wrapOnce() {\n    return this.h.apply(this.target, arguments);\n}\n\n"
           "Emitter.prototype.addHandler = function addHandler(type, h) {\n"
           "    checkHandler(h);\n    this.handlers[type] = h;\n    return this;\n};\n\n"
           "Emitter.prototype.on = Emitter.prototype.addHandler;\n\n"
           "Emitter.prototype.once = function once(type, h) {\n"
           "    return this.on(type, wrapOnce.bind({ h: h, target: this }));\n};\n")


def test_a_prototype_alias_and_a_bound_function_are_followed(tree):
    """`Emitter.prototype.on = Emitter.prototype.addHandler` (tests call `ee.on(...)`) and
    `wrapOnce.bind(state)` (a use of wrapOnce): Node's events module is written this way."""
    repo = tree("emitter", {
        "package.json": '{"name": "emitter", "main": "./emitter.js"}\n',
        "emitter.js": EMITTER,
        "tests/on.js": ("var assert = require('assert');\nvar Emitter = require('../');\n\n"
                        "var ee = new Emitter();\nee.on('x', function () {});\n"
                        "assert.ok(ee.handlers.x);\n"),
        "tests/once.js": ("var E = require('../');\n\nvar ee = new E();\n"
                          "ee.once('y', function () {});\n"),
    })
    g = build("r", repo)
    assert calls_from(g, "tests/on.js").get(("emitter.js", "Emitter.addHandler")) == "inferred"
    assert calls_from(g, "tests/once.js").get(("emitter.js", "Emitter.once")) == "inferred"
    assert reached_tests(g, f"{repo}/emitter.js::checkHandler") == {"tests/on.js",
                                                                   "tests/once.js"}
    assert reached_tests(g, f"{repo}/emitter.js::wrapOnce") == {"tests/once.js"}


def test_a_test_module_requiring_another_runs_its_tests(tree):
    """Node's events tests: tests/index.js is `require('./add-listeners.js'); require(...)`
    for every test file, each running its checks at import: it fails with any of them."""
    repo = tree("runner", {
        "package.json": '{"name": "emitter", "main": "./emitter.js"}\n',
        "emitter.js": EMITTER,
        "tests/on.js": ("var assert = require('assert');\nvar Emitter = require('../');\n\n"
                        "var ee = new Emitter();\nee.on('x', function () {});\n"),
        "tests/index.js": "require('./on.js');\n",
        "tests/suite.js": "require('./index.js');\n",
        "tests/common.js": "exports.noop = function () {};\n",
    })
    g = build("r", repo)
    # four hops up (checkHandler <- addHandler <- on.js <- index.js <- suite.js): past the
    # depth impact walks every edge to, so only the tests walk finds the runners
    assert reached_tests(g, f"{repo}/emitter.js::checkHandler") == {
        "tests/on.js", "tests/index.js", "tests/suite.js"}


def test_functions_in_an_object_literal_are_its_members(tree):
    """`var posix = { resolve: function resolve() {...}, join: function () {...} };
    module.exports = posix;` (Node's path module for browsers): no symbol for either, so
    nothing to search, ask about or reach."""
    repo = tree("objlit", {
        "package.json": '{"name": "p", "main": "index.js"}\n',
        "index.js": ("function normalizeString(p) {\n    return p;\n}\n\n"
                     "var posix = {\n"
                     "  resolve: function resolve() {\n    return normalizeString('/');\n  },\n"
                     "  join: function () {\n    return posix.normalize('a');\n  },\n"
                     "  normalize: function normalize(p) {\n    return normalizeString(p);\n  }\n"
                     "};\n\nmodule.exports = posix;\n"),
        "test/join.js": ("var test = require('tape');\nvar path = require('../');\n\n"
                         "test('join', function (t) {\n    t.equal(path.join('a'), 'a');\n"
                         "    t.end();\n});\n"),
        "test/resolve.js": ("var test = require('tape');\nvar path = require('../');\n\n"
                            "test('resolve', function (t) {\n    t.ok(path.resolve());\n"
                            "    t.end();\n});\n"),
    })
    g = build("r", repo)
    kinds = {d.qualname: d.kind for d in g.indexes["r"].defs(repo.as_posix(), "index.js")}
    assert {"posix.resolve", "posix.join", "posix.normalize"} <= set(kinds), kinds
    assert calls_from(g, "test/join.js").get(("index.js", "posix.join")) == "resolved"
    assert reached_tests(g, f"{repo}/index.js::posix.normalize") == {"test/join.js"}
    assert reached_tests(g, f"{repo}/index.js::normalizeString") == {"test/join.js",
                                                                    "test/resolve.js"}


def test_a_method_through_the_exports_own_alias_and_apply_is_a_call(tree):
    """path-browserify's tests call `path.posix.join.apply(null, args)`, where index.js does
    `posix.posix = posix; module.exports = posix`: a call of posix.join."""
    repo = tree("selfalias", {
        "package.json": '{"name": "p", "main": "index.js"}\n',
        "index.js": ("var posix = {\n  join: function join() {\n    return 'a';\n  }\n};\n\n"
                     "posix.posix = posix;\n\nmodule.exports = posix;\n"),
        "test/join.js": ("var test = require('tape');\nvar path = require('../');\n\n"
                         "test('join', function (t) {\n"
                         "    t.equal(path.posix.join.apply(null, ['a']), 'a');\n"
                         "    t.equal(path.join.call(null, 'a'), 'a');\n    t.end();\n});\n"),
    })
    g = build("r", repo)
    assert calls_from(g, "test/join.js").get(("index.js", "posix.join")) == "resolved"
    assert reached_tests(g, f"{repo}/index.js::posix.join") == {"test/join.js"}


def test_a_method_passed_by_its_path_is_used(tree):
    """path-browserify's test-path.js: `fail(t, path.posix.join, test)` passes the function
    for a helper to call; a data member passed (`f(opts.name)`) is no such use."""
    repo = tree("passedpath", {
        "package.json": '{"name": "p", "main": "index.js"}\n',
        "index.js": ("var posix = {\n  join: function join() {\n    return 'a';\n  },\n"
                     "  sep: '/'\n};\n\nposix.posix = posix;\n\nmodule.exports = posix;\n"),
        "test/fail.js": ("var test = require('tape');\nvar path = require('../');\n\n"
                         "function fail(t, fn) {\n    t.throws(function () { fn(); });\n}\n\n"
                         "test('fails', function (t) {\n    fail(t, path.posix.join);\n"
                         "    t.ok(String(path.sep));\n    t.end();\n});\n"),
    })
    g = build("r", repo)
    refs = {(e.dst_path, e.dst_symbol): e.how for e in g.edges(["references"])
            if e.src_path == "test/fail.js"}
    assert refs.get(("index.js", "posix.join")) == "resolved", refs
    assert reached_tests(g, f"{repo}/index.js::posix.join") == {"test/fail.js"}
    assert not [e for e in g.edges(["references"]) if e.how == "name_match"
                and e.src_path == "test/fail.js"]


def test_a_member_looked_up_by_key_may_be_any_function_of_the_object(tree):
    """qs' stringify: `var generateArrayPrefix = arrayPrefixGenerators[options.arrayFormat];`
    over `var arrayPrefixGenerators = { brackets: function ..., indices: function ... }`:
    whichever the key names runs there."""
    repo = tree("bykey", {
        "package.json": '{"name": "q", "main": "lib/stringify.js"}\n',
        "lib/stringify.js": ("var generators = {\n"
                             "    brackets: function brackets(p) {\n        return p + '[]';\n    },\n"
                             "    repeat: function repeat(p) {\n        return p;\n    }\n};\n\n"
                             "module.exports = function (obj, opts) {\n"
                             "    var gen = generators[opts.arrayFormat];\n    return gen('a');\n};\n"),
        "test/stringify.js": ("var test = require('tape');\nvar stringify = require('../');\n\n"
                              "test('s', function (t) {\n"
                              "    t.equal(stringify({}, { arrayFormat: 'repeat' }), 'a');\n"
                              "    t.end();\n});\n"),
    })
    g = build("r", repo)
    refs = {(e.src_symbol, e.dst_symbol): e.how for e in g.edges(["references"])
            if e.src_path == "lib/stringify.js"}
    assert refs.get(("exports", "generators.brackets")) == "inferred", refs
    assert refs.get(("exports", "generators.repeat")) == "inferred", refs
    assert reached_tests(g, f"{repo}/lib/stringify.js::generators.brackets") == {
        "test/stringify.js"}
