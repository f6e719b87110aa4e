"""Plain data shared by every stage: files, entries, links, search hits.

Frozen dataclasses only. This module does no I/O and must not import
anything from the engine (store, parse, lancedb, torch), so the client may
import it freely.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

# Entry kinds produced by the parsers. Code symbols use the tree-sitter
# capture suffix (definition.<kind>); documents use section/key/file.
CODE_KINDS = (
    "function", "method", "class", "struct", "enum", "interface", "trait",
    "module", "constant", "type", "macro", "namespace", "variable",
)
DOC_KINDS = ("section", "key", "file")

# File states recorded on every file row.
INDEXED = "indexed"      # parsed and stored
SKIPPED = "skipped"      # not indexed on purpose; reason says why
FAILED = "failed"        # stored as a file entry, but the parser reported an error

# Skip reasons (visible in status).
SKIP_BINARY = "binary"
SKIP_TOO_LARGE = "too_large"
SKIP_UNREADABLE = "unreadable"
SKIP_ENCODING = "encoding"
SKIP_SYMLINK = "symlink_outside"
SKIP_SECRET = "secret"
SKIP_REASONS = (SKIP_BINARY, SKIP_TOO_LARGE, SKIP_UNREADABLE, SKIP_ENCODING,
                SKIP_SYMLINK, SKIP_SECRET)
# Reason prefix of a file indexed with its secret values masked ("redacted: 1 secret (line 9)").
REDACTED = "redacted"


def content_hash(data: bytes | str) -> str:
    """Stable short hash used for files, entries and caches (blake2b-128)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass(frozen=True)
class Link:
    """A link found in a document (markdown) or an import found in code."""

    line: int
    target: str               # as written: "../x.md#a", "https://...", "#anchor"
    kind: str                 # "file" | "anchor" | "url"
    broken: bool = False      # only meaningful for local targets
    text: str = ""


@dataclass(frozen=True)
class Reference:
    """A use of a name in code (call, import, type use), for the graph layer."""

    name: str
    kind: str                 # "call" | "import" | "type" | ...
    line: int
    scope: str | None = None  # qualified name of the enclosing symbol
    module: str | None = None  # for imports of names: the module they come from


@dataclass(frozen=True)
class Entry:
    """One searchable unit: a code symbol, a markdown section, a config key or a file."""

    kind: str
    name: str
    qualname: str
    start_line: int           # 1-based, inclusive
    end_line: int             # 1-based, inclusive
    signature: str = ""
    doc: str = ""
    parent: str | None = None
    content_hash: str = ""    # hash of the entry's own source text
    body: str = ""            # start of the entry's text, for snippets and embeddings
    level: int = 0            # heading level for sections, nesting depth for keys


@dataclass(frozen=True)
class ParseResult:
    language: str
    entries: tuple[Entry, ...] = ()
    links: tuple[Link, ...] = ()
    references: tuple[Reference, ...] = ()
    error: str | None = None  # set when the parser saw syntax errors or failed
    meta: dict = field(default_factory=dict)  # e.g. markdown frontmatter/title


@dataclass(frozen=True)
class FileRecord:
    """What the store knows about one file (the stat cache lives here too)."""

    realm: str
    repo: str                 # repo root, absolute POSIX path
    path: str                 # repo-relative POSIX path
    hash: str = ""
    size: int = 0
    mtime_ns: int = 0
    inode: int = 0
    language: str = ""
    status: str = INDEXED
    reason: str = ""          # skip reason or parse error
    indexed_at: float = 0.0
    entries: int = 0

    @property
    def key(self) -> str:
        return file_key(self.realm, self.repo, self.path)


def inside(root: str, path: str) -> bool:
    """``path`` is ``root`` or under it (absolute paths, ``/``-separated)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def file_key(realm: str, repo: str, path: str) -> str:
    return f"{realm}\x1f{repo}\x1f{path}"


@dataclass(frozen=True)
class SearchHit:
    realm: str
    repo: str
    path: str
    symbol: str | None
    kind: str
    start_line: int
    end_line: int
    score: float
    match: tuple[str, ...]
    snippet: str
    summary: str = ""
    lang: str = ""
    summary_source: str = ""   # llm | docstring | agent

    def to_json(self) -> dict:
        return {
            "realm": self.realm, "repo": self.repo, "path": self.path,
            "symbol": self.symbol, "kind": self.kind,
            "start_line": self.start_line, "end_line": self.end_line,
            "score": round(self.score, 6), "match": list(self.match),
            "snippet": self.snippet, "summary": self.summary,
            "summary_source": self.summary_source, "lang": self.lang,
        }
