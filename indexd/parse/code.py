"""Code files -> symbols and references, driven by tree-sitter query files.

All language knowledge lives in ``queries/<language>.scm``. The captures this
module understands:

    @definition.<kind>   the node spanning a symbol (kind: function, class, ...)
    @name                the symbol's (or reference's) name node
    @doc                 a docstring node inside the definition
    @receiver            an explicit parent name (Go method receivers)
    @scope.<what>        a container that names its children but is no symbol
                         itself (Rust ``impl Foo``)
    @reference.<kind>    a use of a name (call, import, type, ...)
    @module              with a reference: the module a name is imported from

Nesting (and so qualified names) comes from byte ranges: a definition inside
another is its child. A ``function`` directly inside a class-like container
becomes a ``method``. Pure: text in, ParseResult out.

Cost: one deadline (limits.py) covers the parse, the query and the Python
that builds entries. Node text is sliced from the source bytes, never read
through ``Node.text``: a tree parsed from a read callback calls back into
Python (a 64 KiB copy) for every node text and every text predicate.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from ..model import Entry, ParseResult, Reference, content_hash
from .languages import grammar
from .limits import CHECK_EVERY, NO_DEADLINE, Deadline, ParseTimeout

CLASS_LIKE = {"class", "struct", "interface", "trait", "enum", "impl", "module", "namespace", "type"}
PASSABLE = {"function", "method", "class"}   # what a `reference.passed` may name
DEFINED_ONLY = ("passed", "named")           # kept only for names the file defines
# Node types that may sit between a definition and the comment above it
# (decorators, annotations, template headers, export keywords).
PREFIX_WORDS = ("decorator", "annotation", "modifier", "parameter_list", "comment",
                "attribute")
MAX_DOC = 1200
MAX_BODY = 2000
MAX_MODULE = 200     # a reference's module or receiver text (a long call chain is cut)
# An ERROR node wider than this is not queried whole: tree-sitter's query walk
# is quadratic in its width (100k children: 7 s; 2k: ~3 ms), so its children
# are queried one by one instead (measured on 100k '(' in python, c, bash).
MAX_ERROR_CHILDREN = 2000


# CPU seconds of this process in tree-sitter's parse and in its query (the
# matches and their Python objects), for the pipeline's stage breakdown:
# what the rest of a file's parsing costs is Python (pipeline.process_file).
CLOCK = {"tree_sitter": 0.0, "query": 0.0}


def take_clock() -> tuple[float, float]:
    """(parse, query) CPU seconds since the last call; resets both."""
    out = (CLOCK["tree_sitter"], CLOCK["query"])
    CLOCK["tree_sitter"] = CLOCK["query"] = 0.0
    return out


@dataclass
class _Def:
    node: object
    kind: str
    name: str
    doc_node: object | None
    receiver: str | None
    is_scope: bool


@lru_cache(maxsize=None)
def _query(language: str):
    """The query with every capture on: what ``_compiled`` must read the same as
    (tests/parse/test_query_roles.py, bench/query_cost.py). A separate object, since
    ``_compiled`` disables captures on its own."""
    import tree_sitter

    return tree_sitter.Query(grammar(language), query_source(language))


@lru_cache(maxsize=None)
def _compiled(language: str):
    """The query as extract_code runs it, and per pattern index the reference
    kind its matches stand for (None: read the roles from the captures).

    A pattern whose only role capture is one ``@reference.<kind>`` on exactly
    one node needs no capture to say its kind: the pattern index does. Those
    captures are disabled, so no match builds the Node, the list and the name
    string for a node nothing reads (a third of the objects of a Python
    query's matches). A role capture some other pattern still needs stays."""
    import tree_sitter

    query = tree_sitter.Query(grammar(language), query_source(language))
    roles = [_role(query.capture_name(c)) for c in range(query.capture_count)]
    in_pattern = [[_quantifier(query, p, c) for c in range(query.capture_count)]
                  for p in range(query.pattern_count)]
    single: list[int | None] = []   # per pattern: its one reference capture, if it has one
    for quantifiers in in_pattern:
        mine = [c for c, q in enumerate(quantifiers) if q is not None and roles[c] is not None]
        single.append(mine[0] if len(mine) == 1 and roles[mine[0]][0] == REF
                      and quantifiers[mine[0]] == "" else None)
    needed = {c for p, quantifiers in enumerate(in_pattern) for c, q in enumerate(quantifiers)
              if q is not None and roles[c] is not None and single[p] != c}
    kinds = []
    for c in single:
        if c is None or c in needed:
            kinds.append(None)
            continue
        query.disable_capture(query.capture_name(c))
        kinds.append(roles[c][1])
    return query, tuple(kinds)


def _quantifier(query, pattern: int, capture: int) -> str | None:
    """How often ``capture`` occurs in ``pattern`` ('' once, '?', '*', '+');
    None where it does not (the binding raises for a zero quantifier)."""
    try:
        return query.capture_quantifier(pattern, capture)
    except SystemError:
        return None


# reference patterns several grammars share, written once
SHARED_REFS = {"javascript": "ecmascript.refs.scm", "typescript": "ecmascript.refs.scm"}


def query_source(language: str) -> str:
    """``<lang>.scm`` (symbols) plus ``<lang>.refs.scm`` (references) if present."""
    files = resources.files(__package__) / "queries"
    base = language if (files / f"{language}.scm").is_file() or language != "tsx" else "typescript"
    parts = [(files / f"{base}.scm").read_text(encoding="utf-8")]
    refs = files / f"{base}.refs.scm"
    if refs.is_file():
        parts.append(refs.read_text(encoding="utf-8"))
    if base in SHARED_REFS:
        parts.append((files / SHARED_REFS[base]).read_text(encoding="utf-8"))
    return "\n".join(parts)


def has_queries(language: str) -> bool:
    files = resources.files(__package__) / "queries"
    return (files / f"{language}.scm").is_file() or language == "tsx"


def _parse_tree(language: str, data: bytes, deadline: Deadline):
    import tree_sitter

    parser = tree_sitter.Parser(grammar(language))

    # Only the callback form honours progress_callback (bytes input ignores it),
    # so the deadline-bound parse reads through a callback...
    def read(byte: int, _point) -> bytes:
        return data[byte:byte + 65536]

    started = time.thread_time()
    try:
        tree = parser.parse(read, progress_callback=lambda *_: deadline.expired())
    except ValueError:
        if deadline.expired():   # tree-sitter says "Parsing failed" when stopped
            raise ParseTimeout(deadline.limit_s) from None
        raise
    # ...and a tree that holds the bytes comes from parsing again with that
    # tree as the old one: the unchanged tree is reused (a tenth of the first
    # parse on clean code, about as long as the first on broken code, which
    # no callback can stop: so it is not started when it would overrun).
    if deadline.left() < time.thread_time() - started:
        raise ParseTimeout(deadline.limit_s)
    return parser.parse(data, old_tree=tree)


def extract_code(language: str, text: str, deadline: Deadline = NO_DEADLINE) -> ParseResult:
    import tree_sitter

    data = text.encode("utf-8", "surrogatepass")
    deadline.check()
    started = time.thread_time()
    tree = _parse_tree(language, data, deadline)
    parsed = time.thread_time()
    deadline.check()
    # No progress callback for the query: tree-sitter 0.26's binding keeps a
    # pointer to a stack-local options struct and crashes once a match is found.
    # The query is bounded by querying wide error nodes piecewise instead, with
    # the deadline checked between pieces.
    query, ref_kinds = _compiled(language)
    cursor = tree_sitter.QueryCursor(query)
    matches = []
    for k, node in enumerate(_query_roots(tree.root_node, deadline)):
        matches.extend(cursor.matches(node))
        deadline.every(k)
    CLOCK["tree_sitter"] += parsed - started
    CLOCK["query"] += time.thread_time() - parsed
    deadline.check()
    defs, refs = _collect(matches, data, deadline, ref_kinds)
    entries = _build_entries(defs, data, deadline)
    references = _build_references(refs, entries, data, deadline)
    error = _syntax_error(tree.root_node)
    return ParseResult(language=language, entries=tuple(entries),
                       references=tuple(references), error=error)


def _query_roots(root, deadline: Deadline) -> list:
    """The nodes to query: the root, unless it holds an ERROR node too wide to
    query whole; then that node and its ancestors are split into their children
    (leaves, which no query pattern can match alone, are dropped)."""
    wide = _wide_errors(root, deadline)
    if not wide:
        return [root]
    split: set[int] = set()
    for node in wide:
        while node is not None and node.id not in split:
            split.add(node.id)
            node = node.parent
    roots, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.id not in split:
            roots.append(node)
        else:
            stack.extend(c for c in reversed(node.children) if c.child_count)
    return roots


def _wide_errors(root, deadline: Deadline) -> list:
    """ERROR nodes with more than MAX_ERROR_CHILDREN children. Only subtrees that
    contain an error are walked."""
    wide, stack, seen = [], [root], 0
    while stack:
        node = stack.pop()
        seen += 1
        deadline.every(seen)
        if node.is_error and node.child_count > MAX_ERROR_CHILDREN:
            wide.append(node)
        if node.has_error:
            stack.extend(c for c in node.children if c.has_error)
    return wide


def _text(node, data: bytes) -> str:
    if node is None:
        return ""
    return data[node.start_byte:node.end_byte].decode("utf-8", "replace")


# What a capture name means to _collect: (DEF | SCOPE | REF, kind), or None.
# Cached: the loop below runs once per capture of every match (810k on the
# stdlib), where two startswith calls and a split per capture added up.
DEF, SCOPE, REF = 1, 2, 3
_ROLES: dict[str, tuple[int, str] | None] = {}


def _role(cap: str) -> tuple[int, str] | None:
    role = _ROLES.get(cap, False)
    if role is False:
        role = None
        for prefix, what in (("definition.", DEF), ("scope.", SCOPE), ("reference.", REF)):
            if cap.startswith(prefix):
                role = (what, cap[len(prefix):])
        _ROLES[cap] = role
    return role


def _collect(matches, data: bytes, deadline: Deadline, ref_kinds=()):
    """``ref_kinds``: per pattern index, the reference kind of a pattern whose
    role capture is disabled (see _compiled), else None."""
    defs: dict[int, _Def] = {}
    refs: list[tuple[str, object, object]] = []
    roles = _ROLES
    fixed = len(ref_kinds)
    for k, (pattern, caps) in enumerate(matches):
        if k % CHECK_EVERY == 0:
            deadline.check()
        names = caps.get("name")
        if not names:   # every definition and reference pattern captures a @name
            continue
        kind = ref_kinds[pattern] if pattern < fixed else None
        if kind is not None:
            module = caps.get("module")
            module = module[0] if module else None
            refs.extend((kind, name, module) for name in names)
            continue
        for cap, nodes in caps.items():
            role = roles[cap] if cap in roles else _role(cap)
            if role is None:
                continue
            what, kind = role
            if what == REF:
                module = caps.get("module")
                module = module[0] if module else None
                refs.extend((kind, name, module) for name in names)
                continue
            node = nodes[0]
            if node.id in defs:
                continue
            receiver = caps.get("receiver")
            doc = caps.get("doc")
            defs[node.id] = _Def(
                node=node, kind=kind, name=_text(names[0], data),
                doc_node=doc[0] if doc else None,
                receiver=_receiver_path(receiver[0], data) if receiver else None,
                is_scope=what == SCOPE)
    return sorted(defs.values(), key=lambda d: (d.node.start_byte, -d.node.end_byte)), refs


def _receiver_path(node, data: bytes) -> str:
    """A receiver with the scopes written before it: ``a::b::Widget::draw`` gives
    ``a.b.Widget`` (C++ out-of-class definitions name their namespaces there)."""
    parts = [_text(node, data)]
    inner = node.parent if node.parent is not None and node.parent.type == "template_type" else node
    q = inner.parent
    while q is not None and q.type == "qualified_identifier":
        outer = q.parent
        if outer is None or outer.type != "qualified_identifier" or \
                outer.child_by_field_name("name") is None or \
                outer.child_by_field_name("name").id != q.id:
            break
        scope = outer.child_by_field_name("scope")
        if scope is not None:
            parts.insert(0, _text(scope.child_by_field_name("name") or scope, data)
                         if scope.type == "template_type" else _text(scope, data))
        q = outer
    return ".".join(p for p in parts if p)


def _end_line(node) -> int:
    row, col = node.end_point
    # A node that ends at column 0 stops at the newline of the previous line.
    if col == 0 and row > node.start_point[0]:
        return row
    return row + 1


def _build_entries(defs: list[_Def], data: bytes, deadline: Deadline) -> list[Entry]:
    entries: list[Entry] = []
    stack: list[tuple[_Def, str]] = []  # (def, qualname)
    for k, d in enumerate(defs):
        deadline.every(k)
        while stack and not (d.node.start_byte >= stack[-1][0].node.start_byte
                             and d.node.end_byte <= stack[-1][0].node.end_byte):
            stack.pop()
        parent_def, parent_q = stack[-1] if stack else (None, None)
        kind = d.kind
        if kind == "function" and parent_def is not None and parent_def.kind in CLASS_LIKE:
            kind = "method"
        if d.receiver:
            parent_q = d.receiver if parent_q is None else f"{parent_q}.{d.receiver}"
        qualname = f"{parent_q}.{d.name}" if parent_q else d.name
        stack.append((d, qualname))
        if d.is_scope:
            continue
        node = d.node
        source = data[node.start_byte:node.end_byte].decode("utf-8", "replace")
        entries.append(Entry(
            kind=kind, name=d.name, qualname=qualname,
            start_line=node.start_point[0] + 1, end_line=_end_line(node),
            signature=_signature(node, data), doc=_doc(d, node, data),
            parent=parent_q, content_hash=content_hash(source),
            body=source[:MAX_BODY]))
    return entries


def _signature(node, data: bytes) -> str:
    body = node.child_by_field_name("body")
    end = body.start_byte if body is not None and body.start_byte > node.start_byte else None
    if end is None:
        raw = data[node.start_byte:node.end_byte].split(b"\n", 1)[0]
    else:
        raw = data[node.start_byte:end]
    sig = " ".join(raw.decode("utf-8", "replace").split())
    return sig.rstrip("{:").rstrip()[:300]


def _doc(d: _Def, node, data: bytes) -> str:
    if d.doc_node is not None:
        return _clean_docstring(_text(d.doc_node, data))
    return _leading_comment(node, data)


def _clean_docstring(raw: str) -> str:
    s = raw.strip()
    while s and s[0] in "rRbBuUfF" and len(s) > 1 and s[1] in "'\"rRbBuUfF":
        s = s[1:]
    for q in ('"""', "'''", '"', "'"):
        if s.startswith(q) and s.endswith(q) and len(s) >= 2 * len(q):
            s = s[len(q):-len(q)]
            break
    lines = [ln.strip() for ln in s.strip().splitlines()]
    return "\n".join(lines).strip()[:MAX_DOC]


def _outer(node):
    """Climb from a definition to the node that carries its decorators/export."""
    cur = node
    while cur.parent is not None and cur.parent.end_byte == cur.end_byte:
        parent = cur.parent
        before = []
        for child in parent.named_children:
            if child.id == cur.id:
                break
            before.append(child)
        if any(not any(w in c.type for w in PREFIX_WORDS) for c in before):
            break
        if parent.parent is None:
            break
        cur = parent
    return cur


def _leading_comment(node, data: bytes) -> str:
    cur = _outer(node)
    lines: list[str] = []
    want_row = cur.start_point[0]
    sib = cur.prev_sibling
    # Attributes written as siblings (Rust ``#[derive]``) sit between a
    # definition and its doc comment: step over them.
    while (sib is not None and "comment" not in sib.type
           and any(w in sib.type for w in PREFIX_WORDS)
           and sib.end_point[0] >= want_row - 1):
        want_row = sib.start_point[0]
        sib = sib.prev_sibling
    while sib is not None and "comment" in sib.type and sib.end_point[0] >= want_row - 1:
        lines.insert(0, _strip_comment(_text(sib, data)))
        want_row = sib.start_point[0]
        sib = sib.prev_sibling
    return "\n".join(x for x in lines if x).strip()[:MAX_DOC]


def _strip_comment(raw: str) -> str:
    out = []
    for line in raw.splitlines():
        s = line.strip()
        for prefix in ("///", "//!", "//", "/**", "/*", "*/", "#", "*", "--"):
            if s.startswith(prefix):
                s = s[len(prefix):]
                break
        if s.endswith("*/"):
            s = s[:-2]
        out.append(s.strip())
    return "\n".join(x for x in out if x)


def _build_references(refs, entries: list[Entry], data: bytes,
                      deadline: Deadline) -> list[Reference]:
    # Paint each line with its innermost symbol (outer spans first, inner ones
    # overwrite): linear in the file's length, where a scan per reference was
    # quadratic and dominated parse time on big files.
    last = max((e.end_line for e in entries), default=0)
    scope_at: list[str | None] = [None] * (last + 2)
    for e in sorted(entries, key=lambda e: (e.start_line, -e.end_line)):
        scope_at[e.start_line:e.end_line + 1] = [e.qualname] * (e.end_line - e.start_line + 1)
    out = []
    append, new = out.append, _new_reference
    # a name passed as an argument is a reference only where the file defines it: most
    # are variables, and every reference kept is a stored row
    defined = {e.name for e in entries if e.kind in PASSABLE}
    owners = {e.parent for e in entries if e.kind == "method" and e.parent}
    for k, (kind, node, module) in enumerate(refs):
        if k % CHECK_EVERY == 0:
            deadline.check()
        line = node.start_point[0] + 1
        name = data[node.start_byte:node.end_byte].decode("utf-8", "replace")
        if kind in DEFINED_ONLY and name not in defined:
            continue
        if kind == "js_keyed" and name not in owners:   # `xs[i]`: no object of functions
            continue
        text = _text(module, data)[:MAX_MODULE] if module is not None else None
        if kind == "named" and text == "__all__":
            continue
        append(new(name=name, kind=kind, line=line,
                   scope=scope_at[line] if line <= last else None, module=text))
    return out


def _fast_constructor(cls, given: tuple[str, ...]):
    """``cls(**fields)`` without a frozen dataclass's ``__init__``, which sets
    each field through ``object.__setattr__`` (2 us a Reference, 0.7 us this
    way; the stdlib has 810k references). Only for a plain dataclass whose
    fields are exactly ``given`` (what the caller passes, every time):
    anything else gets the real constructor."""
    import dataclasses

    plain = (dataclasses.is_dataclass(cls) and not hasattr(cls, "__slots__")
             and not hasattr(cls, "__post_init__")
             and {f.name for f in dataclasses.fields(cls)} == set(given))
    if not plain:
        return cls
    new = object.__new__

    def make(**values):
        obj = new(cls)
        obj.__dict__.update(values)
        return obj
    return make


_new_reference = _fast_constructor(Reference, ("name", "kind", "line", "scope", "module"))


def _syntax_error(root) -> str | None:
    if not root.has_error:
        return None
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            what = "missing " + node.type if node.is_missing else "unexpected input"
            return f"syntax error: {what} at line {node.start_point[0] + 1}"
        if node.has_error:
            stack.extend(reversed(node.children))
    return "syntax error"
