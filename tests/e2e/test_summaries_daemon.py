"""Summaries through the real daemon against a stand-in Ollama server.

No Ollama server can run here: tests/fakes/ollama_server.py speaks its HTTP
API (chat, generate, embed, tags) with the real response shapes.
"""

from __future__ import annotations

from fakes.ollama_server import FakeOllama
from testlib import settings_with_realm, wait_until

CODE = '''def settle(ledger):
    return sum(ledger)


def refund(order):
    """Give the money back."""
    return -order
'''


def summaries(d):
    rows = d.call("symbols", path=str(d.repo / "pay.py"))["results"]
    return {(r["symbol"] or "<file>"): (r["summary"], r["summary_source"]) for r in rows}


def test_llm_summaries_then_fallback_when_ollama_dies(git_repo, daemon):
    git_repo.write("pay.py", CODE)
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    with FakeOllama(models=("qwen2.5-coder:1.5b",)) as ollama:
        d = daemon(extra_env={"INDEXD_SUMMARIZE": "llm", "INDEXD_OLLAMA_URL": ollama.url,
                              "INDEXD_OLLAMA_MODEL": "qwen2.5-coder:1.5b"})
        d.repo = git_repo.path
        d.call("status", sync=True)
        got = wait_until(lambda: (s := summaries(d)) and all(v[1] == "llm" for v in s.values()) and s,
                         timeout=60, what="LLM summaries for symbols and the file")
        assert set(got) == {"<file>", "settle", "refund"}
        assert all(text for text, _ in got.values())
        chats = ollama.counts["/api/chat"]
        assert chats >= 3

        # unchanged content is never summarized twice (cache by content hash)
        git_repo.write("pay.py", CODE + "\n")
        d.call("status", sync=True)
        wait_until(lambda: summaries(d)["settle"][1] == "llm", timeout=60, what="cached summary")
        assert ollama.counts["/api/chat"] - chats <= 1   # at most the file (its hash changed)

        # Ollama goes away: new symbols fall back to their docstring, search still works
        ollama.set_mode("down")
        git_repo.write("more.py", 'def audit(books):\n    """Check every entry twice."""\n')
        d.call("status", sync=True)
        rows = wait_until(lambda: [r for r in d.call("symbols", path=str(git_repo.path / "more.py"))["results"]
                                   if r["symbol"] == "audit" and r["summary_source"]],
                          timeout=90, what="a fallback summary")
        assert rows[0]["summary_source"] == "docstring" and "Check every entry" in rows[0]["summary"]
        assert d.call("search", query="audit books", mode="keyword")["results"]
        assert d.proc.poll() is None
