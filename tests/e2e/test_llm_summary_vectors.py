"""With model summaries on, an entry's vector is of its text as stored, summary included.

The embed recipe puts an LLM summary into the text it embeds (enrich/texts.py),
but the summary arrives after the entry was first embedded. The vector must then
be computed again, or semantic search never sees the summary and the stored
cache key names a text the row no longer has (a teammate reading a published
index then rejects every such row, rightly). Ollama cannot run here: the model
is tests/fakes/ollama_server.py, a local HTTP server speaking Ollama's API.
"""

from __future__ import annotations

from fakes.ollama_server import FakeOllama
from testlib import settings_with_realm, wait_until

MODEL = "qwen2.5-coder:1.5b"
CODE = ('def parse_header(line):\n    """Split a header line."""\n    return line.split(":", 1)\n\n\n'
        'class Cache:\n    def get(self, key):\n        return key\n')


def test_an_entry_is_embedded_again_once_its_model_summary_arrives(git_repo, daemon):
    from indexd.enrich.embedder import HashEmbedder
    from indexd.enrich.texts import embed_hash, embed_text
    from indexd.store import Store

    git_repo.write("mod.py", CODE)
    git_repo.commit()
    settings = settings_with_realm("work", git_repo.path)
    with FakeOllama(models=(MODEL,)) as fake:
        fake.reply = lambda messages: "Caches parsed lines of an HTTP header for the index."
        d = daemon(extra_env={"INDEXD_SUMMARIZE": "llm", "INDEXD_OLLAMA_URL": fake.url,
                              "INDEXD_OLLAMA_MODEL": MODEL})
        d.call("status", sync=True, timeout=60)
        model_id = HashEmbedder().model_id

        def settled():
            rows = Store(settings.paths.store_dir).entries_where(None)
            # The rows are read before the status: a re-embed stored between the
            # two reads made the queue read 0 over a row read without its vector
            # (a CI flake, 2026-12-03), so the rows' own vectors are waited on too.
            done = rows and all(r["summary_source"] == "llm" and r["vector"] is not None
                                for r in rows)
            st = d.call("status", sync=True, timeout=60)
            return rows if done and st["queues"]["embed"] == 0 and st["embedding"]["ready"] else None

        rows = wait_until(settled, timeout=120, what="model summaries and the embed queue drained")
        for row in rows:
            assert row["vector"] is not None, row["qualname"]
            assert row["embed_hash"] == embed_hash(embed_text(row, settings.embed_recipe), model_id), (
                f"{row['qualname']}: the vector is of a text without its summary")
