"""Import resolution and edges for JS/TS, Go and Rust."""

from __future__ import annotations

from graph_helpers import build


def imports_of(graph, path):
    return {(e.dst_path) for e in graph.edges(["imports"]) if e.src_path == path}


def test_typescript_relative_index_tsconfig_and_workspace(tree):
    web = tree("web", {
        "tsconfig.json": '{\n // comment\n "compilerOptions": {"baseUrl": ".", "paths": {"@app/*": ["src/app/*"]}}\n}\n',
        "src/index.ts": ('import { formatPrice } from "./util/format.js";\n'
                         'import * as widgets from "./widgets";\n'
                         'import { Store } from "@app/store";\n'
                         'import { shared } from "@acme/shared";\n'
                         'import React from "react";\n'
                         'export * from "./types";\n'
                         'const cfg = require("./config.cjs");\n'
                         'export function main(): string { return formatPrice(2) + process.env.API_URL; }\n'),
        "src/util/format.ts": "export function formatPrice(n: number): string { return `${n}`; }\n",
        "src/widgets/index.tsx": "export const Button = () => null;\n",
        "src/app/store.ts": "export class Store {}\n",
        "src/types.d.ts": "export type Id = string;\n",
        "src/config.cjs": "module.exports = {};\n",
        "src/index.test.ts": 'import { main } from "./index";\ntest("x", () => main());\n',
    })
    shared = tree("shared", {
        "package.json": '{"name": "@acme/shared", "main": "lib/main.js"}\n',
        "lib/main.js": "export function shared() {}\n",
    })
    g = build("r", web, shared)
    assert imports_of(g, "src/index.ts") == {
        "src/util/format.ts", "src/widgets/index.tsx", "src/app/store.ts", "lib/main.js",
        "src/types.d.ts", "src/config.cjs"}
    calls = {(e.src_symbol, e.dst_path, e.dst_symbol, e.how) for e in g.edges(["calls"])
             if e.src_path == "src/index.ts"}
    assert ("main", "src/util/format.ts", "formatPrice", "resolved") in calls
    res = g.impact("web/src/util/format.ts", depth=2)
    assert {i["path"] for i in res["tests"]} == {"src/index.test.ts"}
    assert any(u["name"] == "react" for u in g.deps("src/index.ts")["external"])


def test_go_module_packages(tree):
    repo = tree("svc", {
        "go.mod": "module example.com/svc\n\ngo 1.22\n",
        "main.go": ('package main\n\nimport (\n\t"fmt"\n\t"example.com/svc/internal/store"\n)\n\n'
                    'func main() { fmt.Println(store.Open("x")) }\n'),
        "internal/store/store.go": "package store\n\nfunc Open(p string) int { return helperCount() }\n",
        "internal/store/helpers.go": ('package store\n\nimport "os"\n\n'
                                      'func helperCount() int { _ = os.Getenv("STORE_DIR"); return 1 }\n'),
        "internal/store/store_test.go": ('package store\n\nimport "testing"\n\n'
                                         'func TestOpen(t *testing.T) { Open("x") }\n'),
    })
    g = build("r", repo)
    assert imports_of(g, "main.go") == {"internal/store/store.go", "internal/store/helpers.go"}
    calls = {(e.src_path, e.src_symbol, e.dst_path, e.dst_symbol, e.how)
             for e in g.edges(["calls"])}
    assert ("main.go", "main", "internal/store/store.go", "Open", "resolved") in calls
    # Same-package call across files resolves without an import.
    assert ("internal/store/store.go", "Open", "internal/store/helpers.go", "helperCount",
            "resolved") in calls
    res = g.impact("internal/store/helpers.go", depth=3)
    assert "main.go" in {i["path"] for i in res["affected"]}
    assert {i["path"] for i in res["tests"]} == {"internal/store/store_test.go"}


def test_rust_mod_and_use(tree):
    repo = tree("crate", {
        "Cargo.toml": '[package]\nname = "my-crate"\nversion = "0.1.0"\n',
        "src/lib.rs": "mod net;\npub mod util;\nuse crate::util::strings::shout;\npub fn run() { shout(); }\n",
        "src/net/mod.rs": "mod tcp;\nuse super::util::{strings, Helper};\n",
        "src/net/tcp.rs": "use crate::util::strings::shout;\npub fn connect() { shout(); }\n",
        "src/util.rs": "pub mod strings;\npub struct Helper;\n",
        "src/util/strings.rs": "pub fn shout() {}\n",
    })
    g = build("r", repo)
    assert imports_of(g, "src/lib.rs") == {"src/net/mod.rs", "src/util.rs", "src/util/strings.rs"}
    assert imports_of(g, "src/net/mod.rs") == {"src/net/tcp.rs", "src/util/strings.rs",
                                               "src/util.rs"}
    assert imports_of(g, "src/util.rs") == {"src/util/strings.rs"}
    refs = g.refs("src/util/strings.rs::shout")["refs"]
    assert {(r["path"], r["symbol"]) for r in refs if r["kind"] == "calls"} == {
        ("src/lib.rs", "run"), ("src/net/tcp.rs", "connect")}


def test_a_name_match_stays_within_a_language_family(tree):
    """`deps externals.py::used_by` listed `sample.js::add`, `sample.rs::Named.name` and
    `sample.c::add` (Python's `names.add(...)` matched by name): Python cannot call
    them. A name match needs a language that can call it (JS and TS share one)."""
    repo = tree("mixed", {
        "py/use.py": "def collect(names):\n    names.register_item(1)\n    return names.flush_all()\n",
        "py/other.py": "class Box:\n    def register_item(self, x):\n        return x\n",
        "web/lib.js": "export function register_item(x) { return x; }\n"
                      "export function flush_all() { return 1; }\n",
        "web/app.ts": "declare const q: any;\nexport function go() { return q.flush_all(); }\n",
        "native/lib.rs": "pub fn flush_all() -> i32 { 1 }\n",
        "native/lib.c": "int register_item(int x) { return x; }\n",
    })
    g = build("r", repo)
    deps = {(d["path"], d["symbol"]) for d in g.deps("py/use.py::collect")["deps"]}
    assert ("py/other.py", "Box.register_item") in deps
    assert not {p for p, _ in deps} & {"web/lib.js", "native/lib.rs", "native/lib.c"}, deps
    ts = {(d["path"], d["symbol"]) for d in g.deps("web/app.ts::go")["deps"]}
    assert ("web/lib.js", "flush_all") in ts and ("native/lib.rs", "flush_all") not in ts, ts


def test_a_js_method_call_is_resolved_only_through_what_the_receiver_is(tree):
    """commander 12: `refs Option.default` listed `Command.argument calls resolved` for
    `argument.default(fn)` on an Argument (argument.js and option.js both define a
    `default` method): a method name found in an imported file is a name match, a
    `this.m()` of the enclosing class is inferred, and only an imported name as the
    receiver (`path.join`, `Option.parse`) or a bare imported function resolves."""
    repo = tree("cmdr", {
        "lib/option.js": "class Option {\n  default(v) { return v; }\n"
                         "  static parse(s) { return s; }\n}\nexports.Option = Option;\n",
        "lib/argument.js": "class Argument {\n  default(v) { return v; }\n}\n"
                           "exports.Argument = Argument;\n",
        "lib/similar.js": "function suggestSimilar(w) { return w; }\n"
                          "exports.suggestSimilar = suggestSimilar;\n",
        "lib/command.js": (
            "const { Option } = require('./option.js');\n"
            "const { Argument } = require('./argument.js');\n"
            "const { suggestSimilar } = require('./similar.js');\n"
            "class Command {\n"
            "  argument(name) {\n"
            "    const argument = this.createArgument(name);\n"
            "    argument.default(name);\n"
            "    return Option.parse(suggestSimilar(name));\n"
            "  }\n"
            "  createArgument(name) { return new Argument(name); }\n"
            "}\n"
            "exports.Command = Command;\n"),
    })
    g = build("r", repo)
    hows = {(e.dst_path, e.dst_symbol): e.how for e in g.edges(["calls"])
            if e.src_path == "lib/command.js" and e.src_symbol == "Command.argument"}
    assert hows.get(("lib/command.js", "Command.createArgument")) == "inferred", hows
    assert hows.get(("lib/option.js", "Option.default")) in (None, "name_match"), hows
    assert hows.get(("lib/argument.js", "Argument.default")) in (None, "name_match"), hows
    assert hows.get(("lib/option.js", "Option.parse")) == "resolved", hows
    assert hows.get(("lib/similar.js", "suggestSimilar")) == "resolved", hows
    built = {(e.dst_path, e.dst_symbol): e.how for e in g.edges(["calls"])
             if e.src_symbol == "Command.createArgument"}
    assert built.get(("lib/argument.js", "Argument")) == "resolved", built


def test_a_js_variable_built_with_new_holds_that_class(tree):
    """What a JavaScript test does (`const program = new Command(); program.option(...)`): the
    variable holds the class it was built from, so the call is that class's method, inferred
    (as Python's `p = Popen(...)`), not a name match. Built twice from two classes, or from
    something else: no inference."""
    repo = tree("jsnew", {
        "lib/command.js": "class Command {\n  option(f) { return f; }\n}\nexports.Command = Command;\n",
        "lib/help.js": "class Help {\n  option(f) { return f; }\n}\nexports.Help = Help;\n",
        "test/command.test.js": (
            "const commander = require('../lib/command.js');\n"
            "const { Help } = require('../lib/help.js');\n"
            "function testOption() {\n"
            "  const program = new commander.Command();\n"
            "  program.option('-p');\n"
            "  const other = new Help();\n"
            "  other.option('-q');\n"
            "}\n"
            "function testEither(flag) {\n"
            "  let either = new Help();\n"
            "  if (flag) { either = new commander.Command(); }\n"
            "  either.option('-r');\n"
            "}\n"),
    })
    g = build("r", repo)

    def calls_of(sym):
        return {(e.dst_path, e.dst_symbol): e.how for e in g.edges(["calls"])
                if e.src_path == "test/command.test.js" and e.src_symbol == sym}

    first = calls_of("testOption")
    assert first.get(("lib/command.js", "Command.option")) == "inferred", first
    assert first.get(("lib/help.js", "Help.option")) == "inferred", first
    either = calls_of("testEither")
    assert "inferred" not in {h for (p, s), h in either.items() if s.endswith(".option")}, either
