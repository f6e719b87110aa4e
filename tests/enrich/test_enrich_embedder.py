"""Embedders: the real bundled MiniLM offline, the hash embedder, Ollama via the fake."""

from __future__ import annotations

import inspect
import json.decoder
import logging
import math
import os
import shutil
import socket
from pathlib import Path

import pytest

from indexd.enrich.embedder import (
    Embedder,
    HashEmbedder,
    OllamaEmbedder,
    SentenceTransformerEmbedder,
    bf16_fast,
    cpuinfo_has_bf16,
    default_model_path,
    load_embedder,
)
from indexd.enrich.onnx_embedder import GRAPH_VERSION, OnnxEmbedder
from indexd.errors import ModelUnavailable

from enrich_fixtures import fake_ollama, load_real_model, settings  # noqa: F401 - fixtures

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _norm(v) -> float:
    return math.sqrt(sum(x * x for x in v))


def _cos(a, b) -> float:
    return sum(x * y for x, y in zip(a, b))


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to connect anywhere but loopback fails the test loudly."""
    real = socket.socket.connect

    def guarded(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost") \
                and not host.startswith("/"):
            raise AssertionError(f"network access attempted: {address!r}")
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    """The real default model, loaded once per module with the network blocked."""
    return load_real_model(tmp_path_factory.mktemp("home"))


# ------------------------------------------------------------------ real model

def test_default_model_loads_offline_with_384_normalised_vectors(minilm):
    # onnxruntime is a dependency, so "auto" runs the model without torch
    assert isinstance(minilm, OnnxEmbedder) and minilm.runtime == "onnx"
    assert isinstance(minilm, Embedder)
    assert minilm.dim == 384
    assert minilm.max_tokens == 256
    assert minilm.model_id.startswith("all-MiniLM-L6-v2@") and minilm.model_id.endswith("/384")
    vecs = minilm.encode(["def parse_header(line): ...", "a heading about threads"])
    assert len(vecs) == 2 and all(len(v) == 384 for v in vecs)
    assert all(abs(_norm(v) - 1.0) < 1e-4 for v in vecs)
    assert all(isinstance(x, float) for x in vecs[0][:5])


def test_semantic_sanity(minilm):
    url = ("function urlparse (urlparse)\ndef urlparse(url, scheme='', allow_fragments=True)\n"
           "Parse a URL into 6 components: <scheme>://<netloc>/<path>;<params>?<query>#<fragment>")
    threads = ("class Thread (thread)\nclass Thread\nA class that represents a thread of control. "
               "start() runs the activity in a separate OS thread; join() waits for it.")
    q = minilm.encode_query("parse a URL")
    u, t = minilm.encode([url, threads])
    assert _cos(q, u) > _cos(q, t) + 0.1


def test_counters_and_empty_input(minilm):
    calls, texts = minilm.calls, minilm.texts_encoded
    assert minilm.encode([]) == []
    minilm.encode(["a", "b", "c"])
    minilm.encode_query("d")
    assert (minilm.calls - calls, minilm.texts_encoded - texts) == (2, 4)


def test_a_repeated_query_is_answered_without_the_model(minilm):
    from indexd.enrich.embedder import QUERY_CACHE

    first = minilm.encode_query("parse a date string into a datetime")
    calls = minilm.calls
    assert minilm.encode_query("parse a date string into a datetime") == first
    assert minilm.calls == calls                      # from the cache
    minilm.encode_query("another query")
    assert minilm.calls == calls + 1
    for i in range(QUERY_CACHE):                      # bounded: the oldest go
        minilm.encode_query(f"filler query {i}")
    before = minilm.calls
    assert minilm.encode_query("parse a date string into a datetime") == pytest.approx(first)
    assert minilm.calls == before + 1


def test_model_id_stable_across_loads(minilm, no_network):
    again = SentenceTransformerEmbedder(default_model_path(), name="all-MiniLM-L6-v2")
    assert again.model_id == minilm.model_id
    # Same weights under another directory name: same hash, different label.
    assert again.model_id.split("@")[1] == minilm.model_id.split("@")[1]


def test_onnx_and_torch_runtimes_give_the_same_vectors(minilm, settings):
    """Same model id, same vectors (short, long and over-the-limit texts), so
    switching embed_runtime re-embeds nothing."""
    torch_model = load_embedder(settings(embed_model="default", embed_runtime="torch"))
    assert isinstance(torch_model, SentenceTransformerEmbedder) and torch_model.runtime == "torch"
    assert torch_model.model_id == minilm.model_id
    source = Path(inspect.getsourcefile(json.decoder)).read_text()
    texts = ["x", "parse a url", source[:400], source[:3000], source[2000:12000]] + \
        [source[i:i + 90] for i in range(0, 2700, 300)]
    a, b = minilm.encode(texts), torch_model.encode(texts)
    cosines = [_cos(u, v) for u, v in zip(a, b)]
    assert min(cosines) > 0.9999, cosines
    assert _cos(minilm.encode_query("decode json"), torch_model.encode_query("decode json")) > 0.9999


def test_onnx_export_is_cached_by_weights(minilm, settings, tmp_path):
    cache = tmp_path / "models"
    s = settings(embed_model="default", model_cache=str(cache))
    load_embedder(s)
    exports = list(cache.glob("*/model.onnx"))
    assert len(exports) == 1 and exports[0].with_suffix(".json").is_file()
    stamp = exports[0].stat().st_mtime_ns
    assert load_embedder(s).model_id == minilm.model_id
    assert exports[0].stat().st_mtime_ns == stamp   # reused, not exported again


def _ops(path: Path) -> dict:
    import collections

    import onnx

    return collections.Counter(n.op_type for n in onnx.load(str(path)).graph.node)


def test_the_export_runs_fused_attention_kernels(minilm, settings, tmp_path):
    """The speed fix of docs/decisions.md ("Embedding runtime"): the served graph
    has onnxruntime's fused attention, not the 42 MatMul of a default trace,
    and (test above) the same vectors as torch."""
    cache = tmp_path / "models"
    load_embedder(settings(embed_model="default", model_cache=str(cache)))
    [export] = cache.glob("*/model.onnx")
    layout = json.loads(export.with_suffix(".json").read_text())
    assert layout["fused"] is True and layout["graph_version"] >= 2
    ops = _ops(export)
    assert ops["Attention"] == 6 and ops["MatMul"] == 18 and "Softmax" not in ops, ops


def test_a_fused_graph_that_disagrees_is_dropped_for_the_plain_one(monkeypatch, tmp_path):
    """A model the optimizer's patterns mis-fuse keeps its plain graph: the
    export checks the fused vectors against the plain ones before it keeps them."""
    import numpy as np
    import onnxruntime as ort

    from indexd.enrich import onnx_export
    from indexd.enrich.onnx_embedder import _tokenizer

    monkeypatch.setattr(onnx_export, "FUSED_MIN_COSINE", 1.5)   # nothing can agree this well
    out = tmp_path / "plain" / "model.onnx"
    layout = onnx_export.export(default_model_path(), out)
    assert layout["fused"] is False
    assert "Attention" not in _ops(out) and not list(out.parent.glob("*.fused"))
    tok = _tokenizer(default_model_path(), 256)
    enc = tok.encode_batch(["decode json", "parse a url into parts"])
    feeds = {"input_ids": np.array([e.ids for e in enc]),
             "attention_mask": np.array([e.attention_mask for e in enc]),
             "token_type_ids": np.array([e.type_ids for e in enc])}
    plain = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    reference = SentenceTransformerEmbedder(default_model_path()).encode(
        ["decode json", "parse a url into parts"])
    assert min(_cos(a, b) for a, b in zip(plain, reference)) > 0.9999


def test_an_older_export_is_made_again_and_removed(minilm, settings, tmp_path):
    """A cache from before the fused graph (no -gN in its name) is not served:
    it is exported again, and the old ~90 MB copy is removed."""
    cache = tmp_path / "models"
    # The fixture's export stands in for the old one: one export here, not two.
    current = minilm.onnx_path
    assert current.parent.name.endswith(f"-g{GRAPH_VERSION}")
    old = cache / current.parent.name.rsplit("-g", 1)[0]
    shutil.copytree(current.parent, old)
    assert load_embedder(settings(embed_model="default", model_cache=str(cache))).model_id \
        == minilm.model_id
    assert [p.parent.name for p in cache.glob("*/model.onnx")] == [current.parent.name]


def test_runtime_settings(settings, tmp_path, caplog):
    with pytest.raises(ModelUnavailable, match="embed_runtime 'gpu'"):
        load_embedder(settings(embed_model="default", embed_runtime="gpu"))
    # a model ONNX cannot run (no tokenizer.json): auto falls back to torch, onnx says why
    copy = tmp_path / "model"
    shutil.copytree(default_model_path(), copy)
    (copy / "tokenizer.json").unlink()
    with pytest.raises(ModelUnavailable, match="no tokenizer.json.*embed_runtime"):
        load_embedder(settings(embed_model=str(copy), embed_runtime="onnx"))
    with caplog.at_level(logging.WARNING):
        fallback = load_embedder(settings(embed_model=str(copy), embed_runtime="auto"))
    assert isinstance(fallback, SentenceTransformerEmbedder)
    assert "using torch" in caplog.text and "no tokenizer.json" in caplog.text


def test_embed_max_tokens_truncates_and_is_part_of_the_model_id(minilm, settings, no_network):
    """Vectors made at another input length are other vectors: a new model id
    (so the store re-embeds, never mixes), and text past the limit is ignored
    by both runtimes alike."""
    source = Path(inspect.getsourcefile(json.decoder)).read_text()
    head = source[:1500]                      # far more than 64 word-pieces
    a, b = head + " alpha beta gamma", head + " unrelated tail words"
    short = {rt: load_embedder(settings(embed_model="default", embed_runtime=rt,
                                        embed_max_tokens=64)) for rt in ("onnx", "torch")}
    for model in short.values():
        assert model.max_tokens == 64
        assert model.model_id != minilm.model_id and model.model_id.startswith("all-MiniLM-L6-v2@")
        va, vb = model.encode([a, b])
        assert _cos(va, vb) > 0.99999          # the differing tails were cut off
    assert short["onnx"].model_id == short["torch"].model_id
    assert _cos(short["onnx"].encode([a])[0], short["torch"].encode([a])[0]) > 0.9999
    full_a, full_b = minilm.encode([a, b])
    assert _cos(full_a, short["onnx"].encode([a])[0]) < 0.999   # 256 tokens see more text
    # the model's own limit (or more) is the default, and keeps the old id: nothing re-embeds
    at_limit = load_embedder(settings(embed_model="default", embed_max_tokens=512))
    assert (at_limit.max_tokens, at_limit.model_id) == (256, minilm.model_id)


def test_int8_precision_has_its_own_model_id_and_the_same_neighbours(minilm, settings, no_network):
    """int8 weights give other vectors: their own id (/int8, so a store re-embeds
    rather than mixing), close to fp32's, ranking real code alike; torch cannot run them."""
    q8 = load_embedder(settings(embed_model="default", embed_precision="int8"))
    assert isinstance(q8, OnnxEmbedder) and q8.model_id == minilm.model_id + "/int8.g2"
    # quantized from the fused graph its vectors differ from the older graph's
    # int8 (cosine min 0.989): a store of those re-embeds instead of mixing
    assert q8.model_id != minilm.model_id + "/int8"
    source = Path(inspect.getsourcefile(json.decoder)).read_text()
    chunks = [c for c in source.split("\ndef ") if len(c) > 200][:6]
    queries = ["decode a JSON string", "scan a string literal with escapes", "parse an object"]
    for a, b in zip(q8.encode(chunks), minilm.encode(chunks)):
        assert _cos(a, b) > 0.97
    for q in queries:
        def order(model):
            v = model.encode_query(q)
            return sorted(range(len(chunks)), key=lambda i: -_cos(v, model.encode([chunks[i]])[0]))
        assert order(q8)[0] == order(minilm)[0], q
    with pytest.raises(ModelUnavailable, match="onnxruntime only"):
        load_embedder(settings(embed_model="default", embed_runtime="torch", embed_precision="int8"))


def _stdlib_chunks(n: int = 6) -> list[str]:
    source = Path(inspect.getsourcefile(json.decoder)).read_text()
    return [c for c in source.split("\ndef ") if len(c) > 200][:n]


@pytest.mark.skipif(not bf16_fast(), reason="this CPU has neither AMX nor AVX-512 BF16: bf16 is not offered as fast")
def test_bf16_keeps_the_model_id_because_its_vectors_are_fp32s(minilm, settings, no_network):
    """bf16 products (torch autocast on AMX) change the vectors by less than the
    runtimes differ, so the id, the cache and a teammate's shard stay valid."""
    b16 = load_embedder(settings(embed_model="default", embed_precision="bf16"))
    assert isinstance(b16, SentenceTransformerEmbedder)
    assert (b16.precision, b16.model_id) == ("bf16", minilm.model_id)
    chunks = _stdlib_chunks() + ["parse a url", "x" * 3000]   # short, and past the cut
    for a, b in zip(b16.encode(chunks), minilm.encode(chunks)):
        assert abs(_norm(a) - 1) < 1e-3 and _cos(a, b) > 0.9999
    assert _cos(b16.encode_query("decode a JSON string"),
                minilm.encode_query("decode a JSON string")) > 0.9999


def test_bf16_hardware_is_read_from_the_cpu_flags_amx_or_avx512_bf16():
    # An AMD EPYC (Zen 4) of these machines has avx512_bf16 and no AMX: bf16 ran
    # 1.47x onnx fp32 there (docs/decisions.md), so either flag counts.
    epyc = "processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_bf16 avx512_vnni\n"
    xeon = "processor\t: 0\nflags\t\t: fpu avx512f amx_bf16 amx_tile amx_int8\n"
    older = "processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_vnni\n"
    assert cpuinfo_has_bf16(epyc) and cpuinfo_has_bf16(xeon)
    assert not cpuinfo_has_bf16(older)
    assert not cpuinfo_has_bf16("model name\t: avx512_bf16 in a name, not a flag\n")


def test_auto_precision_is_bf16_only_for_a_one_shot_on_a_cpu_with_amx(minilm, settings,
                                                                     monkeypatch, caplog):
    """The daemon keeps onnxruntime's small footprint; `indexd index` takes bf16
    where the CPU multiplies it in hardware, and fp32 everywhere else."""
    auto = settings(embed_model="default", embed_precision="auto")
    daemon = load_embedder(auto)
    assert isinstance(daemon, OnnxEmbedder) and daemon.precision == "fp32"
    one_shot = load_embedder(auto, bulk=True)
    if bf16_fast():
        assert isinstance(one_shot, SentenceTransformerEmbedder) and one_shot.precision == "bf16"
    assert one_shot.model_id == daemon.model_id
    monkeypatch.setenv("INDEXD_NO_AMX", "1")     # a CPU without AMX
    assert not bf16_fast()
    assert isinstance(load_embedder(auto, bulk=True), OnnxEmbedder)
    with caplog.at_level(logging.WARNING):
        asked = load_embedder(settings(embed_model="default", embed_precision="bf16"))
    assert asked.precision == "fp32" and asked.model_id == daemon.model_id
    assert "no AMX" in caplog.text
    with pytest.raises(ModelUnavailable, match="torch only"):
        load_embedder(settings(embed_model="default", embed_runtime="onnx", embed_precision="bf16"))
    with pytest.raises(ModelUnavailable, match="is not one of auto, fp32, int8, bf16"):
        load_embedder(settings(embed_model="default", embed_precision="fp16"))


# ------------------------------------------------------------------ hash embedder

def test_hash_embedder_is_deterministic_and_counts_calls():
    a, b = HashEmbedder(), HashEmbedder()
    texts = ["parse a url", "start a worker thread", ""]
    assert a.encode(texts) == b.encode(texts)
    assert a.model_id == "hash-embedder/64" and a.dim == 64
    assert (a.calls, a.texts_encoded) == (1, 3)
    a.encode_query("x")
    assert (a.calls, a.texts_encoded) == (2, 4)
    v = a.encode(["parse a url"])[0]
    assert len(v) == 64 and abs(_norm(v) - 1) < 1e-9


def test_hash_embedder_similar_texts_are_closer():
    e = HashEmbedder(dim=256)
    q, near, far = e.encode(["parse url string", "parse the url", "thread pool executor"])
    assert _cos(q, near) > _cos(q, far)


# ------------------------------------------------------------------ load_embedder

def test_load_embedder_hash_and_ollama_specs(settings):
    assert isinstance(load_embedder(settings(embed_model="hash")), HashEmbedder)
    e = load_embedder(settings(embed_model="ollama:nomic-embed-text",
                               ollama_url="http://127.0.0.1:9"))
    assert isinstance(e, OllamaEmbedder)
    assert (e.url, e.model) == ("http://127.0.0.1:9", "nomic-embed-text")


def test_load_embedder_missing_path_names_the_config_key(settings, tmp_path):
    s = settings(embed_model=str(tmp_path / "no-such-model"))
    with pytest.raises(ModelUnavailable) as err:
        load_embedder(s)
    msg = str(err.value)
    assert "not found" in msg and "no-such-model" in msg
    assert "embed_model" in msg and "INDEXD_EMBED_MODEL" in msg
    assert str(s.paths.config_file) in msg


def test_load_embedder_unloadable_directory(settings, tmp_path, no_network):
    bad = tmp_path / "not-a-model"
    bad.mkdir()
    (bad / "config.json").write_text("{ this is not json")
    with pytest.raises(ModelUnavailable) as err:
        load_embedder(settings(embed_model=str(bad)))
    assert "could not be loaded" in str(err.value) and "INDEXD_EMBED_MODEL" in str(err.value)


def test_load_embedder_empty_ollama_model_is_an_error(settings):
    with pytest.raises(ModelUnavailable, match="embed_model"):
        load_embedder(settings(embed_model="ollama:"))


# ------------------------------------------------------------------ Ollama embedder

def test_ollama_embedder_normal(fake_ollama):
    e = OllamaEmbedder(fake_ollama.url, "all-minilm", timeout=5)
    vecs = e.encode(["alpha", "beta"])
    assert e.dim == 8 and e.model_id == "ollama:all-minilm/8"
    assert all(abs(_norm(v) - 1) < 1e-9 for v in vecs)
    assert vecs == OllamaEmbedder(fake_ollama.url, "all-minilm").encode(["alpha", "beta"])
    assert (e.calls, e.texts_encoded) == (1, 2)
    assert fake_ollama.counts["/api/embed"] == 2
    body = fake_ollama.requests[0][3]
    assert body["model"] == "all-minilm" and body["input"] == ["alpha", "beta"]


def test_ollama_embedder_down(fake_ollama):
    url = fake_ollama.url
    fake_ollama.set_mode("down")
    with pytest.raises(ModelUnavailable) as err:
        OllamaEmbedder(url, "all-minilm", timeout=2).encode(["x"])
    msg = str(err.value)
    assert url in msg and "all-minilm" in msg and "ollama pull all-minilm" in msg
    assert err.value.retryable


@pytest.mark.parametrize("kind", ["invalid_json", "wrong_shape", "error_body", "empty_content"])
def test_ollama_embedder_garbage(fake_ollama, kind):
    fake_ollama.set_mode("garbage", garbage_kind=kind)
    with pytest.raises(ModelUnavailable):
        OllamaEmbedder(fake_ollama.url, "all-minilm", timeout=2).encode(["x"])


def test_ollama_embedder_slow_beyond_timeout(fake_ollama):
    fake_ollama.set_mode("slow", slow_s=1.5)
    with pytest.raises(ModelUnavailable, match="timed out"):
        OllamaEmbedder(fake_ollama.url, "all-minilm", timeout=0.3).encode(["x"])


def test_ollama_embedder_unknown_model_and_500(fake_ollama):
    with pytest.raises(ModelUnavailable, match="404.*not found"):
        OllamaEmbedder(fake_ollama.url, "nope", timeout=2).encode(["x"])
    fake_ollama.set_mode("error500")
    with pytest.raises(ModelUnavailable, match="HTTP 500"):
        OllamaEmbedder(fake_ollama.url, "all-minilm", timeout=2).encode(["x"])


def test_ollama_embedder_wrong_count_is_unavailable(fake_ollama, monkeypatch):
    e = OllamaEmbedder(fake_ollama.url, "all-minilm", timeout=2)
    e.encode(["warm"])
    client = e._get_client()
    real = client.embed

    def one_short(**kw):
        resp = real(**kw)
        resp.embeddings = list(resp.embeddings)[:-1]
        return resp

    monkeypatch.setattr(client, "embed", one_short)
    with pytest.raises(ModelUnavailable, match="returned 1 embeddings"):
        e.encode(["a", "b"])


def test_weights_dir_hash_covers_weights(tmp_path):
    from indexd.enrich.embedder import weights_hash

    d = tmp_path / "m"
    d.mkdir()
    (d / "model.safetensors").write_bytes(b"a" * 10)
    first = weights_hash(d)
    (d / "model.safetensors").write_bytes(b"b" * 10)
    assert weights_hash(d) != first
    assert Path(default_model_path()).is_dir()


def test_onnx_runtime_never_imports_torch_in_the_serving_process(minilm, indexd_home):
    """torch (~260 MB) stays out of the daemon: the export runs in a child process."""
    import subprocess
    import sys

    code = ("import sys; from indexd.config import load_settings; "
            "from indexd.enrich.embedder import load_embedder; "
            "e = load_embedder(load_settings()); v = e.encode(['parse a url']); "
            "print(e.runtime, len(v[0]), 'torch' in sys.modules, "
            "'sentence_transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=os.environ | {"INDEXD_EMBED_MODEL": "default"}, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["onnx", "384", "False", "False"]
