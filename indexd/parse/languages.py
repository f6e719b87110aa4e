"""Which language a file is in, and the tree-sitter grammar for it.

Grammars come from the per-language wheels (tree-sitter-python, ...), which
load offline with tree-sitter 0.26; see docs/decisions.md for the measured
reason. Loading is lazy and cached per process.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from pathlib import PurePosixPath

# language -> (module, function returning the grammar pointer)
GRAMMARS = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "bash": ("tree_sitter_bash", "language"),
}

EXTENSIONS = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
    ".rb": "ruby", ".rake": "ruby",
    ".sh": "bash", ".bash": "bash", ".zsh": "bash",
    ".md": "markdown", ".markdown": "markdown",
    ".json": "json",
    ".yaml": "yaml", ".yml": "yaml",
    ".toml": "toml",
}

FILENAMES = {"Rakefile": "ruby", "Gemfile": "ruby", ".bashrc": "bash", ".profile": "bash"}

SHEBANGS = {"python": "python", "bash": "bash", "sh": "bash", "zsh": "bash",
            "node": "javascript", "ruby": "ruby"}


def detect_language(path: str, head: str = "") -> str:
    """Language name for a repo-relative path; "text" when nothing better is known."""
    p = PurePosixPath(path)
    lang = FILENAMES.get(p.name) or EXTENSIONS.get(p.suffix.lower())
    if lang:
        return lang
    if head.startswith("#!"):
        first = head.split("\n", 1)[0]
        for word, name in SHEBANGS.items():
            if first.rstrip().endswith(word) or f"/{word} " in first or f" {word}" in first:
                return name
    return "text"


def is_code(language: str) -> bool:
    return language in GRAMMARS


@lru_cache(maxsize=None)
def grammar(language: str):
    """The tree_sitter.Language for a code language (imported lazily)."""
    import tree_sitter

    module_name, func = GRAMMARS[language]
    module = importlib.import_module(module_name)
    return tree_sitter.Language(getattr(module, func)())
