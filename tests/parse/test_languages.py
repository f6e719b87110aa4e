"""Per-language symbol extraction against hand-checked fixtures.

Each fixture in tests/fixtures/langs/ is small enough to check by eye; the
expected (kind, qualname, start_line, end_line) sets below were written from
the fixture's line numbers, not pasted from the extractor's output.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from indexd.parse.code import query_source

from indexd.parse.code import extract_code
from indexd.parse.languages import GRAMMARS, grammar

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "langs"

EXPECTED: dict[str, tuple[str, set[tuple[str, str, int, int]]]] = {
    "python": ("sample.py", {
        ("constant", "DEFAULT_TIMEOUT", 6, 6),
        ("function", "connect", 9, 11),
        ("class", "Client", 14, 34),
        ("method", "Client.__init__", 19, 20),
        ("method", "Client.send", 23, 24),
        ("method", "Client.name", 27, 28),
        ("class", "Client.Options", 30, 34),
        ("method", "Client.Options.merged", 33, 34),
        ("function", "fetch_all", 37, 41),
        ("function", "fetch_all.inner", 38, 39),
    }),
    "javascript": ("sample.js", {
        ("constant", "MAX_ITEMS", 5, 5),
        ("function", "add", 10, 12),
        ("function", "multiply", 14, 14),
        ("function", "divide", 16, 18),
        ("function", "exported", 20, 22),
        ("function", "helper", 24, 26),
        ("class", "Shape", 29, 42),
        ("method", "Shape.constructor", 30, 32),
        ("method", "Shape.area", 35, 37),
        ("method", "Shape.create", 39, 41),
        ("class", "Circle", 44, 52),
        ("method", "Circle.radius", 45, 47),
        ("method", "Circle.area", 49, 51),
        ("function", "counter", 54, 56),
    }),
    "typescript": ("sample.ts", {
        ("constant", "DEFAULT_PORT", 4, 4),
        ("interface", "ServerOptions", 7, 11),
        ("method", "ServerOptions.onStart", 10, 10),
        ("type", "Handler", 13, 13),
        ("enum", "Color", 15, 18),
        ("class", "Server", 23, 37),
        ("method", "Server.constructor", 26, 28),
        ("method", "Server.start", 30, 32),
        ("method", "Server.register", 34, 36),
        ("class", "Base", 39, 41),
        ("method", "Base.run", 40, 40),
        ("function", "createServer", 43, 45),
        ("function", "route", 47, 47),
        ("namespace", "Util", 49, 53),
        # A namespace is class-like for code.py, so its functions are methods.
        ("method", "Util.clamp", 50, 52),
    }),
    "tsx": ("sample.tsx", {
        ("interface", "ButtonProps", 4, 6),
        ("type", "Size", 8, 8),
        ("function", "Button", 11, 13),
        ("function", "Card", 15, 17),
        ("class", "Panel", 19, 23),
        ("method", "Panel.render", 20, 22),
        ("enum", "Theme", 25, 28),
    }),
    "go": ("sample.go", {
        ("constant", "MaxConns", 10, 10),
        ("constant", "modeA", 13, 13),
        ("constant", "modeB", 14, 14),
        ("struct", "Server", 18, 21),
        ("interface", "Handler", 24, 26),
        ("method", "Handler.Handle", 25, 25),
        ("type", "ID", 28, 28),
        ("struct", "Pair", 30, 33),
        ("function", "NewServer", 36, 38),
        ("method", "Server.Start", 41, 44),
        ("method", "Pair.String", 46, 48),
        ("function", "helper", 50, 53),
    }),
    "rust": ("sample.rs", {
        ("constant", "MAX_ENTRIES", 6, 6),
        ("constant", "GREETING", 8, 8),
        ("struct", "Cache", 12, 14),
        ("enum", "Mode", 16, 19),
        ("trait", "Named", 22, 28),
        ("method", "Named.name", 23, 23),
        ("method", "Named.shout", 25, 27),
        ("method", "Cache.new", 32, 34),
        ("method", "Cache.get", 36, 38),
        ("method", "Cache.fmt", 42, 44),      # impl fmt::Display for Cache
        ("method", "Vec.name", 48, 50),       # impl<T> Named for Vec<T>
        ("macro", "square", 53, 57),
        ("module", "util", 59, 63),
        # A module is class-like for code.py, so its functions are methods.
        ("method", "util.double", 60, 62),
        ("type", "Map", 65, 65),
        ("function", "main", 67, 70),
    }),
    "java": ("sample.java", {
        ("class", "Registry", 9, 47),
        ("constant", "Registry.MAX", 11, 11),
        ("method", "Registry.Registry", 15, 17),
        ("method", "Registry.add", 20, 24),
        ("method", "Registry.log", 26, 28),
        ("class", "Registry.Entry", 31, 37),
        ("method", "Registry.Entry.getId", 34, 36),
        ("enum", "Registry.State", 39, 46),
        ("method", "Registry.State.isOn", 43, 45),
        ("interface", "Visitor", 49, 51),
        ("method", "Visitor.visit", 50, 50),
        ("class", "Point", 53, 61),
        ("method", "Point.Point", 54, 56),
        ("method", "Point.sum", 58, 60),
        ("interface", "Marker", 63, 65),
        ("method", "Marker.value", 64, 64),
    }),
    "c": ("sample.c", {
        ("macro", "BUF_SIZE", 5, 5),
        ("macro", "MIN", 6, 6),
        ("struct", "buffer", 9, 12),
        ("struct", "point_t", 14, 17),
        ("type", "ulong_t", 19, 19),
        ("enum", "color", 21, 21),
        ("enum", "size_kind", 23, 23),
        ("function", "buffer_new", 28, 33),
        ("function", "buffer_free", 36, 39),
        ("function", "add", 41, 41),
        ("function", "get_handler", 43, 46),
        ("function", "main", 48, 52),
    }),
    "cpp": ("sample.cpp", {
        ("macro", "VERSION", 5, 5),
        ("namespace", "geo", 7, 48),
        ("struct", "geo.Point", 10, 12),
        ("enum", "geo.Shape", 14, 14),
        ("class", "geo.Widget", 17, 34),
        ("method", "geo.Widget.Widget", 19, 19),
        ("method", "geo.Widget.~Widget", 20, 20),
        ("method", "geo.Widget.draw", 23, 23),
        ("method", "geo.Widget.id", 25, 25),
        ("class", "geo.Widget.Builder", 27, 30),
        ("method", "geo.Widget.Builder.build", 29, 29),
        # A namespace is class-like for code.py, so its functions are methods.
        ("method", "geo.max_of", 37, 39),
        ("class", "geo.Box", 42, 46),
        ("method", "geo.Box.get", 44, 44),
        # out-of-class definitions carry the namespaces written before the name
        ("method", "geo.Widget.draw", 51, 53),
        ("method", "geo.Widget.Builder.build", 55, 57),
        ("function", "helper", 59, 61),
        ("type", "Id", 63, 63),
        ("type", "score_t", 64, 64),
    }),
    "ruby": ("sample.rb", {
        ("constant", "MAX_RETRIES", 6, 6),
        ("module", "Util", 9, 46),
        ("constant", "Util.VERSION", 10, 10),
        ("method", "Util.format", 13, 15),
        ("method", "Util.helper", 17, 19),
        ("class", "Util.Cache", 22, 45),
        ("method", "Util.Cache.initialize", 25, 27),
        ("method", "Util.Cache.fetch", 30, 32),
        ("method", "Util.Cache.build", 35, 37),   # inside `class << self`
        ("method", "Util.Cache.compute", 42, 44),
        ("class", "Report", 48, 52),
        ("method", "Report.to_s", 49, 51),
        ("function", "main", 54, 56),
    }),
    "bash": ("sample.sh", {
        ("constant", "LOG_DIR", 8, 8),
        ("function", "log", 11, 13),
        ("function", "cleanup", 15, 18),
        ("function", "build", 20, 24),
        ("function", "main", 26, 29),
    }),
}


def _extract(language: str):
    filename, _ = EXPECTED[language]
    return extract_code(language, (FIXTURES / filename).read_text(encoding="utf-8"))


def _by_qualname(result):
    return {e.qualname: e for e in result.entries}


@pytest.mark.parametrize("language", sorted(EXPECTED))
def test_symbols(language):
    result = _extract(language)
    assert result.error is None
    got = {(e.kind, e.qualname, e.start_line, e.end_line) for e in result.entries}
    _, want = EXPECTED[language]
    assert got == want, (sorted(want - got), sorted(got - want))


def test_every_grammar_has_queries():
    assert set(EXPECTED) == set(GRAMMARS)


def _query_files():
    files = resources.files("indexd.parse") / "queries"
    return sorted(f.name for f in files.iterdir() if f.name.endswith(".scm"))


@pytest.mark.parametrize("name", _query_files())
def test_query_compiles(name):
    import tree_sitter

    from indexd.parse.code import SHARED_REFS

    # a shared file compiles as part of every language that appends it
    languages = [lang for lang, shared in SHARED_REFS.items() if shared == name] or \
        [name[:-len(".scm")].removesuffix(".refs")]
    for language in languages:
        source = query_source(language)   # <lang>.scm, .refs.scm and shared, as parsed
        tree_sitter.Query(grammar(language), source)
        if language == "typescript":  # tsx falls back to typescript.scm
            tree_sitter.Query(grammar("tsx"), source)


@pytest.mark.parametrize("language,qualname,doc", [
    ("python", "connect", "Open a connection to host."),
    ("python", "Client.send", "Sends one request."),           # leading # comment
    ("javascript", "add", "Add two numbers."),                   # JSDoc block
    ("javascript", "Shape.area", "Area of the shape."),
    ("typescript", "ServerOptions", "Options for the server."),  # above `export`
    ("typescript", "Server", "A small HTTP-ish server."),
    ("tsx", "Button", "A clickable button."),
    ("go", "Server.Start", "Start starts the server."),
    ("go", "Server", "Server serves requests."),
    ("go", "MaxConns", "MaxConns is the connection limit."),
    ("rust", "Cache", "A key-value cache."),                     # across #[derive]
    ("rust", "Cache.new", "Creates an empty cache."),
    ("rust", "MAX_ENTRIES", "Maximum number of entries."),
    ("java", "Registry", "A registry of widgets."),
    ("java", "Registry.add", "Adds a widget by name."),          # across @Deprecated
    ("c", "buffer_new", "Creates a new buffer."),
    ("c", "buffer_free", "Frees the buffer."),
    ("cpp", "geo.Widget.draw", "Draws the widget."),
    ("cpp", "geo.max_of", "Larger of two values."),              # across template<>
    ("ruby", "Util.Cache.fetch", "Fetches a key."),
    ("ruby", "Util", "Utilities shared by everything."),
    ("bash", "log", "Prints a log line."),
])
def test_docs(language, qualname, doc):
    # a C++ declaration and its out-of-class definition share a qualname
    docs = [e.doc for e in _extract(language).entries if e.qualname == qualname]
    assert doc in docs, docs


@pytest.mark.parametrize("language,qualname,signature", [
    ("python", "connect", "def connect(host, port=80)"),
    ("javascript", "multiply", "const multiply = (a, b) => a * b;"),
    ("typescript", "createServer", "function createServer(opts: ServerOptions): Server"),
    ("go", "Server.Start", "func (s *Server) Start() error"),
    ("rust", "Cache.get", "pub fn get(&self, key: &str) -> Option<&String>"),
    ("java", "Registry.log", "private static void log(String msg)"),
    ("c", "buffer_new", "struct buffer *buffer_new(size_t cap)"),
    ("cpp", "geo.Widget.draw", "void geo::Widget::draw() const"),
    ("ruby", "Util.format", "def self.format(value)"),
    ("bash", "cleanup", "function cleanup"),
])
def test_signatures(language, qualname, signature):
    assert _by_qualname(_extract(language))[qualname].signature == signature


def test_parents():
    go = _by_qualname(_extract("go"))
    assert go["Server.Start"].name == "Start"
    assert go["Server.Start"].parent == "Server"
    cpp = _by_qualname(_extract("cpp"))
    assert cpp["geo.Widget.Builder.build"].name == "build"
    assert cpp["geo.Widget.Builder.build"].parent == "geo.Widget.Builder"
    rust = _by_qualname(_extract("rust"))
    assert rust["Cache.fmt"].parent == "Cache"


@pytest.mark.parametrize("language,kind,name,line,scope", [
    ("python", "import", "collections", 4, None),
    ("python", "call", "connect", 24, "Client.send"),
    ("javascript", "import", "fs", 2, None),
    ("javascript", "import", "path", 3, None),                  # require("path")
    ("javascript", "call", "multiply", 50, "Circle.area"),
    ("typescript", "import", "events", 2, None),
    ("typescript", "call", "emit", 31, "Server.start"),
    ("go", "import", "net/http", 6, None),
    ("go", "call", "ListenAndServe", 43, "Server.Start"),
    ("rust", "import", "std::collections::HashMap", 2, None),
    ("rust", "call", "new", 68, "main"),
    ("rust", "call", "println", 69, "main"),                    # macro call
    ("java", "import", "java.util.List", 4, None),
    ("java", "call", "log", 23, "Registry.add"),
    ("c", "import", "buffer.h", 3, None),
    ("c", "import", "<stdio.h>", 2, None),
    ("c", "call", "malloc", 30, "buffer_new"),
    ("cpp", "call", "max_of", 60, "helper"),
    ("cpp", "import", "widget.hpp", 3, None),
    ("ruby", "import", "lib/helper", 3, None),
    ("ruby", "call", "compute", 31, "Util.Cache.fetch"),
    ("bash", "import", "./lib/common.sh", 5, None),
    ("bash", "call", "log", 22, "build"),
])
def test_references(language, kind, name, line, scope):
    refs = {(r.kind, r.name, r.line, r.scope) for r in _extract(language).references}
    assert (kind, name, line, scope) in refs


BROKEN = {  # language -> (text, symbol before the error, its start line)
    "python": ("def ok():\n    return 1\n\nclass Broken(:\n    pass\n", "ok", 1),
    "javascript": ("function ok() {\n  return 1;\n}\n\nfunction broken( {\n", "ok", 1),
    "go": ("package p\n\nfunc ok() int {\n\treturn 1\n}\n\nfunc broken( {\n", "ok", 3),
    "rust": ("fn ok() -> i32 {\n    1\n}\n\nfn broken( {\n", "ok", 1),
    "java": ("class A {\n    void ok() {}\n    void broken( {\n}\n", "A.ok", 2),
    "c": ("int ok(void) {\n    return 1;\n}\n\nint broken( {\n", "ok", 1),
    "ruby": ("def ok\n  1\nend\n\ndef broken(\n", "ok", 1),
}


@pytest.mark.parametrize("language", sorted(BROKEN))
def test_syntax_error_keeps_earlier_symbols(language):
    text, qualname, line = BROKEN[language]
    result = extract_code(language, text)
    assert result.error is not None
    entries = _by_qualname(result)
    assert qualname in entries
    assert entries[qualname].start_line == line


JS_EXPORTS = """\
export default function () { return 1 }
export default class { area() { return 0 } }
module.exports = function handler(req) { return req }
module.exports = function (x) { return x }
exports.helper = (y) => y
module.exports.other = function () {}
exports.renamed = function inner() {}
config.exports = function () {}
"""


def test_javascript_default_exports_and_commonjs_are_symbols():
    got = {(e.kind, e.qualname, e.start_line) for e in extract_code("javascript", JS_EXPORTS).entries}
    assert got == {("function", "default", 1), ("class", "default", 2),
                   ("method", "default.area", 2), ("function", "handler", 3),
                   ("function", "exports", 4), ("function", "helper", 5),
                   ("function", "other", 6), ("function", "renamed", 7)}
    # config.exports is not CommonJS; TypeScript names anonymous default exports too
    ts = {(e.kind, e.qualname) for e in extract_code("typescript", JS_EXPORTS.split("module")[0]).entries}
    assert ts == {("function", "default"), ("class", "default"), ("method", "default.area")}
