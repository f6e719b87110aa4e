"""Two-author git history shared by the owners tests (unit, daemon, MCP).

A top-level module on the tests' pythonpath with a name nothing else has:
importing it as ``owners.test_owners`` broke collection on a fresh clone, where
bench/owners.py (on sys.path for the bench-backed tests) shadowed the folder.
"""

from __future__ import annotations

import pygit2
from testlib import GitRepo

ALICE = pygit2.Signature("Alice Able", "alice@example.com", 1_700_000_000, 0)
BOB = pygit2.Signature("Bob Baker", "bob@example.com", 1_700_500_000, 0)

MODULE_V1 = ("def parse(text):\n"        # 1  Alice
             "    words = text.split()\n"  # 2
             "    return words\n"          # 3
             "\n"                          # 4
             "\n"                          # 5
             "def render(words):\n"        # 6
             "    return ' '.join(words)\n")  # 7
MODULE_V2 = ("def parse(text):\n"
             "    words = text.split()\n"
             "    return words\n"
             "\n"
             "\n"
             "def render(words, sep=' '):\n"       # 6  Bob
             "    out = sep.join(words)\n"         # 7  Bob
             "    return out.strip()\n")           # 8  Bob


def two_authors(repo: GitRepo) -> GitRepo:
    repo.write("text.py", MODULE_V1)
    repo.commit("parse and render", author=ALICE)
    repo.write("text.py", MODULE_V2)
    repo.commit("render with a separator", author=BOB)
    return repo


def people(answer: dict) -> dict:
    return {o["name"]: o["lines"] for o in answer["owners"]}
