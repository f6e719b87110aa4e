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
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from ..model import Entry, ParseResult, Reference, content_hash
from .languages import grammar

CLASS_LIKE = {"class", "struct", "interface", "trait", "enum", "impl", "module", "namespace", "type"}
# Node types that may sit between a definition and the comment above it
# (decorators, annotations, template headers, export keywords).
PREFIX_WORDS = ("decorator", "annotation", "modifier", "parameter_list", "comment",
                "attribute")
MAX_DOC = 1200
MAX_BODY = 2000
PARSE_TIMEOUT_S = 5.0


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
    import tree_sitter

    return tree_sitter.Query(grammar(language), query_source(language))


def query_source(language: str) -> str:
    """``<lang>.scm`` (symbols) plus ``<lang>.refs.scm`` (references) if present."""
    files = resources.files(__package__) / "queries"
    base = language if (files / f"{language}.scm").is_file() or language != "tsx" else "typescript"
    parts = [(files / f"{base}.scm").read_text(encoding="utf-8")]
    refs = files / f"{base}.refs.scm"
    if refs.is_file():
        parts.append(refs.read_text(encoding="utf-8"))
    return "\n".join(parts)


def has_queries(language: str) -> bool:
    files = resources.files(__package__) / "queries"
    return (files / f"{language}.scm").is_file() or language == "tsx"


def _parse_tree(language: str, data: bytes, progress):
    import tree_sitter

    parser = tree_sitter.Parser(grammar(language))

    # The callback form is needed: bytes input ignores progress_callback.
    def read(byte: int, _point) -> bytes:
        return data[byte:byte + 65536]

    return parser.parse(read, progress_callback=progress)


def extract_code(language: str, text: str) -> ParseResult:
    data = text.encode("utf-8", "surrogatepass")
    deadline = time.monotonic() + PARSE_TIMEOUT_S

    # One deadline for parsing and querying: a pathological file is abandoned
    # (recorded as a parse failure) instead of wedging a worker.
    def progress(*_state) -> bool:
        return time.monotonic() > deadline

    timed_out = ParseResult(language=language,
                            error=f"parse timed out after {PARSE_TIMEOUT_S:.0f}s (file kept as a file entry)")
    tree = _parse_tree(language, data, progress)
    if tree is None:
        return timed_out
    import tree_sitter

    cursor = tree_sitter.QueryCursor(_query(language))
    # No progress callback here: passing one (with the predicate it requires)
    # crashed tree-sitter 0.26 in our tests; the parse deadline bounds the
    # pathological cases measured (100k nested parens: ~4 s in all).
    matches = cursor.matches(tree.root_node)
    defs, refs = _collect(matches)
    entries = _build_entries(defs, data)
    references = _build_references(refs, entries)
    error = _syntax_error(tree.root_node)
    return ParseResult(language=language, entries=tuple(entries),
                       references=tuple(references), error=error)


def _text(node) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _collect(matches):
    defs: dict[int, _Def] = {}
    refs: list[tuple[str, object, object]] = []
    for _pattern, caps in matches:
        names = caps.get("name") or []
        for cap, nodes in caps.items():
            if cap.startswith(("definition.", "scope.")) and names:
                node = nodes[0]
                if node.id in defs:
                    continue
                receiver = caps.get("receiver")
                doc = caps.get("doc")
                defs[node.id] = _Def(
                    node=node, kind=cap.split(".", 1)[1], name=_text(names[0]),
                    doc_node=doc[0] if doc else None,
                    receiver=_receiver_path(receiver[0]) if receiver else None,
                    is_scope=cap.startswith("scope."))
            elif cap.startswith("reference.") and names:
                module = caps.get("module")
                for name in names:
                    refs.append((cap.split(".", 1)[1], name, module[0] if module else None))
    return sorted(defs.values(), key=lambda d: (d.node.start_byte, -d.node.end_byte)), refs


def _receiver_path(node) -> str:
    """A receiver with the scopes written before it: ``a::b::Widget::draw`` gives
    ``a.b.Widget`` (C++ out-of-class definitions name their namespaces there)."""
    parts = [_text(node)]
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
            parts.insert(0, _text(scope.child_by_field_name("name") or scope)
                         if scope.type == "template_type" else _text(scope))
        q = outer
    return ".".join(p for p in parts if p)


def _end_line(node) -> int:
    row, col = node.end_point
    # A node that ends at column 0 stops at the newline of the previous line.
    if col == 0 and row > node.start_point[0]:
        return row
    return row + 1


def _build_entries(defs: list[_Def], data: bytes) -> list[Entry]:
    entries: list[Entry] = []
    stack: list[tuple[_Def, str]] = []  # (def, qualname)
    for d in defs:
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
            signature=_signature(node, data), doc=_doc(d, node),
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


def _doc(d: _Def, node) -> str:
    if d.doc_node is not None:
        return _clean_docstring(_text(d.doc_node))
    return _leading_comment(node)


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


def _leading_comment(node) -> str:
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
        lines.insert(0, _strip_comment(_text(sib)))
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


def _build_references(refs, entries: list[Entry]) -> list[Reference]:
    # Paint each line with its innermost symbol (outer spans first, inner ones
    # overwrite): linear in the file's length, where a scan per reference was
    # quadratic and dominated parse time on big files.
    last = max((e.end_line for e in entries), default=0)
    scope_at: list[str | None] = [None] * (last + 2)
    for e in sorted(entries, key=lambda e: (e.start_line, -e.end_line)):
        scope_at[e.start_line:e.end_line + 1] = [e.qualname] * (e.end_line - e.start_line + 1)
    out = []
    for kind, node, module in refs:
        line = node.start_point[0] + 1
        scope = scope_at[line] if line <= last else None
        out.append(Reference(name=_text(node), kind=kind, line=line, scope=scope,
                             module=_text(module) if module is not None else None))
    return out


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
