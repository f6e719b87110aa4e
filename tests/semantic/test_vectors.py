"""The embed stage against a real store: caching by content, model switches, hybrid search."""

from __future__ import annotations

from testlib import settings_with_realm

from indexd.enrich.embedder import HashEmbedder
from indexd.enrich.texts import embed_parts
from indexd.enrich.vectors import VectorStage, pool
from indexd.pipeline import Indexer
from indexd.query.hybrid import fused_search
from indexd.query.search import SearchRequest

CODE = '''
def compute_crc(data):
    """Checksum bytes with a cyclic redundancy check."""
    return 0


def wait_for_lock(timeout):
    """Block until the mutex is free or the timeout passes."""
    return True


class Frobnicator:
    """Look-alike identifiers: meaning cannot tell them apart, words can."""

    def qx(self):
        return 1

    def xq(self):
        return 1

    def qxx(self):
        return 1

    def q_x(self):
        return 1

    def qxq(self):
        return 1

    def xqx(self):
        return 1

    def qqx(self):
        return 1

    def qx_(self):
        return 1



def render_page(template):
    """Render an HTML page from a template."""


def send_email(address):
    """Send a notification e-mail."""
'''


class CountingEmbedder(HashEmbedder):
    """The real hash embedder, counting every text it is asked to encode."""

    def __init__(self, dim=64):
        super().__init__(dim)
        self.seen: list[str] = []

    def encode(self, texts):
        self.seen.extend(texts)
        return super().encode(texts)


TEXT_COLUMNS = ["id", "kind", "name", "qualname", "signature", "doc", "summary",
                "summary_source", "path", "lang", "body"]


def build(git_repo, make_store, embedder, recipe="pooled"):
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    store.switch_model(embedder.model_id, embedder.dim, recipe)
    stage = VectorStage(store, embedder, recipe=recipe, batch=8)
    indexer = Indexer(settings, store)
    indexer.before_write = stage.fill_before_write
    return settings, store, stage, indexer


def test_unchanged_entries_are_never_re_embedded(git_repo, make_store):
    git_repo.write("a.py", CODE)
    git_repo.write("b.py", "def other():\n    return 2\n")
    git_repo.commit("base")
    embedder = CountingEmbedder()
    settings, store, stage, indexer = build(git_repo, make_store, embedder)
    indexer.index()
    stage.drain()
    first = len(embedder.seen)
    texts = {t for r in store.entries_where(None, TEXT_COLUMNS) for t in embed_parts(r)}
    assert first == len(texts) > store.count("entries") and store.count_missing_vectors() == 0

    # one edited function: only its entry's first text (its docstring's is the
    # same) and the file entry's are new texts
    git_repo.write("a.py", CODE.replace("return True", "return False"))
    indexer.index()
    stage.drain()
    new_texts = embedder.seen[first:]
    assert len(new_texts) == 2, new_texts
    assert any("wait for lock" in t for t in new_texts)

    # branch switch there and back recomputes nothing
    git_repo.commit("edit")
    git_repo.branch("other")
    git_repo.checkout("other")
    git_repo.write("b.py", "def other():\n    return 3\n")
    git_repo.commit("other")
    indexer.index()
    stage.drain()
    before_back = len(embedder.seen)
    git_repo.checkout("main")
    indexer.index()
    stage.drain()
    git_repo.checkout("other")
    indexer.index()
    stage.drain()
    assert len(embedder.seen) == before_back
    assert store.count_missing_vectors() == 0


def test_model_switch_re_embeds_and_never_mixes_dimensions(git_repo, make_store):
    git_repo.write("a.py", CODE)
    git_repo.commit()
    small = CountingEmbedder(dim=64)
    settings, store, stage, indexer = build(git_repo, make_store, small)
    indexer.index()
    stage.drain()
    assert store.dim == 64

    other = CountingEmbedder(dim=32)
    assert store.switch_model(other.model_id, other.dim)
    assert store.dim == 32 and store.count_missing_vectors() == store.count("entries")
    # keyword search still answers while vectors are missing
    req = SearchRequest(query="compute crc", mode="keyword")
    assert fused_search(store, other, req)["results"][0]["symbol"] == "compute_crc"
    VectorStage(store, other).drain()
    dims = {len(r["vector"]) for r in store.entries_where(None, ["vector"])}
    assert dims == {32}
    assert store.get_meta("embed_model") == other.model_id
    assert not store.switch_model(other.model_id, other.dim)


def test_hybrid_finds_by_meaning_and_by_identifier(git_repo, make_store, real_model):
    git_repo.write("a.py", CODE)
    git_repo.commit()
    settings, store, stage, indexer = build(git_repo, make_store, real_model)
    indexer.index()
    stage.drain()

    def top(query, mode):
        res = fused_search(store, real_model, SearchRequest(query=query, mode=mode, limit=3))
        return [h["symbol"] for h in res["results"]], res

    # meaning: no query word appears in the symbol or its docstring
    meaning = "verify integrity of a transmitted payload"
    kw, _ = top(meaning, "keyword")
    assert "compute_crc" not in kw
    sem, _ = top(meaning, "semantic")
    assert sem[0] == "compute_crc"
    hyb, res = top(meaning, "hybrid")
    assert hyb[0] == "compute_crc" and "semantic" in res["results"][0]["match"]

    # identifier: a made-up name the model cannot understand
    sem, _ = top("qx", "semantic")
    assert "Frobnicator.qx" not in sem[:1]
    hyb, res = top("qx", "hybrid")
    assert hyb[0] == "Frobnicator.qx" and "keyword" in res["results"][0]["match"]
    assert res["results"][0]["snippet"]

    ctx = fused_search(store, real_model, SearchRequest(query="compute crc", mode="hybrid", context=1))
    assert "def compute_crc(data):" in ctx["results"][0]["context"]


def test_a_dimension_switch_streams_columns_not_python_rows(git_repo, make_store):
    """Switching to a model of another dimension rebuilt the entries table from a list of
    row dicts: a 250-repo realm's `indexd index` with the hash embedder went to 7.4 GB
    of RSS there. The rebuild now stays in Arrow: Python's own heap grows by far less
    than the table's size."""
    import tracemalloc

    for i in range(80):
        git_repo.write(f"pkg/m{i}.py", "".join(
            f"def f{i}_{j}(x):\n    '''Doc {i} {j} with some words.'''\n    return x + {j}\n\n"
            for j in range(40)))
    git_repo.commit()
    settings, store, stage, indexer = build(git_repo, make_store, CountingEmbedder(dim=64))
    indexer.index()
    stage.drain()
    size = store.entries.to_arrow().nbytes
    tracemalloc.start()
    try:
        assert store.switch_model("other/32", 32)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert store.dim == 32 and store.count_missing_vectors() == store.count("entries") >= 3000
    assert peak < size / 2, f"Python heap peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB table"


def test_cache_fed_steps_grow_and_give_the_same_vectors(git_repo, make_store):
    """A one-shot whose vectors all sit in the cache (a team's shared index, a re-index)
    took 256-row steps, each scanning the whole entries table: ~250 rows/s on a realm
    of 900k entries. Fully cached steps now grow (up to 64x); the vectors are the same."""
    for i in range(60):
        git_repo.write(f"pkg/m{i}.py", "".join(f"def g{i}_{j}(x):\n    return x * {j}\n\n"
                                               for j in range(40)))
    git_repo.commit()
    embedder = CountingEmbedder(dim=64)
    settings, store, stage, indexer = build(git_repo, make_store, embedder)
    indexer.index()
    stage.drain()
    total = store.count("entries")
    before = {r["id"]: r["vector"] for r in store.entries_where(None, ["id", "vector"])}
    store.entries.update(where="vector IS NOT NULL", values={"vector": None, "embed_hash": None})
    calls = embedder.calls
    grown = VectorStage(store, embedder, batch=64, grow_cached=True)
    steps = 0
    while grown.step():
        steps += 1
    assert embedder.calls == calls and grown.reused == total   # nothing went to the model
    assert steps <= 3 < total / 256, steps
    assert {r["id"]: r["vector"] for r in store.entries_where(None, ["id", "vector"])} == before


def test_a_documented_entry_pools_its_two_texts_and_an_undocumented_one_keeps_its_own(
        git_repo, make_store):
    git_repo.write("a.py", CODE)
    git_repo.commit("base")
    embedder = CountingEmbedder()
    settings, store, stage, indexer = build(git_repo, make_store, embedder)
    indexer.index()
    stage.drain()
    rows = {r["qualname"]: r for r in store.entries_where(None, TEXT_COLUMNS + ["vector"])}
    documented, bare = rows["compute_crc"], rows["Frobnicator.qx"]
    assert len(embed_parts(documented)) == 2 and len(embed_parts(bare)) == 1
    for row in (documented, bare):
        want = pool(HashEmbedder(embedder.dim).encode(embed_parts(row)))
        assert sum(a * b for a, b in zip(row["vector"], want)) > 0.9999, row["qualname"]
    assert embed_parts(documented)[1] in embedder.seen


def test_switching_from_the_default_recipe_embeds_only_the_docstring_sentences(git_repo, make_store):
    """The upgrade a store of the single-text recipe meets: its vector cache
    holds every entry's first text, so only the new second texts reach the model."""
    git_repo.write("a.py", CODE)
    git_repo.commit("base")
    embedder = CountingEmbedder()
    settings, store, stage, indexer = build(git_repo, make_store, embedder, recipe="default")
    indexer.index()
    stage.drain()
    before = len(embedder.seen)
    assert before == store.count("entries")
    store.switch_model(embedder.model_id, embedder.dim, "pooled")
    assert store.count_missing_vectors() == store.count("entries")   # no vector of the old recipe answers
    pooled = VectorStage(store, embedder, recipe="pooled", batch=8)
    pooled.drain()
    assert store.count_missing_vectors() == 0
    rows = store.entries_where(None, TEXT_COLUMNS)
    seconds = sorted(embed_parts(r)[1] for r in rows if len(embed_parts(r)) == 2)
    assert sorted(embedder.seen[before:]) == seconds and len(seconds) == 5   # 4 functions, 1 class
