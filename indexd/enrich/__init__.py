"""Enrich stage: entry rows -> embedding texts, vectors and summaries.

Owns turning entry rows (``indexd.store.rows``) into the text that gets
embedded, the embedders themselves (local sentence-transformers, a hash
embedder for tests, Ollama) and the summarizers (docstring, Ollama).
Must not import the store, lancedb or the daemon: the daemon calls in,
never the other way. torch / sentence_transformers / ollama are imported
lazily so that importing this package stays cheap.
"""
