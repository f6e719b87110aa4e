"""Faster embedding must not change a vector (issue 13 part 2).

Real model (the packaged all-MiniLM-L6-v2 through onnxruntime, offline):
batches ordered by word-pieces pad the least, a text's vector does not depend
on its batch neighbours, on repeats or on the thread count, and a daemon that
embeds a repository from a cold start stores the one-shot index's vectors.
"""

from __future__ import annotations

import inspect
import json.decoder
import os
import socket
from dataclasses import replace
from pathlib import Path

import pytest

from testlib import run_cli, wait_until

from indexd.config import ConfigError, default_paths, load_settings, Settings
from indexd.enrich.embedder import auto_threads, default_threads, load_embedder, settings_threads
from indexd.store import Store

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _cos(a, b) -> float:
    return sum(x * y for x, y in zip(a, b))


def _refuse(self, address):
    raise AssertionError(f"network access attempted while loading the model: {address!r}")


@pytest.fixture(scope="module")
def base_settings(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    return replace(Settings(paths=default_paths({"INDEXD_HOME": str(home)})),
                   embed_model="default")


def _model(settings, **kw):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", _refuse)
        return load_embedder(settings, **kw)


@pytest.fixture(scope="module")
def minilm(base_settings):
    return _model(base_settings, threads=1)


def _mixed_texts() -> list[str]:
    """Texts whose length in characters orders them unlike their word-pieces:
    digit-letter runs split into ~3 pieces per 4 characters, common words into
    one, so sorting by characters interleaves the two kinds."""
    dense = [" ".join(f"q{i}z" for i in range(n)) for n in range(20, 36, 2)]
    sparse = [" ".join(["the"] * n) for n in range(20, 36, 2)]
    return [t for pair in zip(dense, sparse) for t in pair]


def test_batches_are_ordered_by_word_pieces_so_they_pad_least(minilm):
    texts = _mixed_texts()
    lengths = minilm._lengths(texts)
    batches = []
    real_run = minilm._run

    def recording(batch):
        batches.append(list(batch))
        return real_run(batch)

    minilm._run = recording
    try:
        minilm.encode(texts)
    finally:
        del minilm._run
    size = minilm.batch_size
    by_text = dict(zip(texts, lengths))
    padded = sum(max(by_text[t] for t in b) * len(b) for b in batches)
    ordered = sorted(lengths)
    least = sum(max(ordered[i:i + size]) * len(ordered[i:i + size])
                for i in range(0, len(ordered), size))
    assert len(batches) == -(-len(texts) // size)
    assert padded == least, (padded, least, [[by_text[t] for t in b] for b in batches])


def test_a_text_gets_the_same_vector_alone_repeated_or_among_others(minilm):
    """Sorting and padding with other texts of a step, and duplicates in it,
    leave every text's vector as it is alone (cosine > 0.9999)."""
    source = Path(inspect.getsourcefile(json.decoder)).read_text()
    texts = _mixed_texts() + ["x", "parse a url", source[:400], source[:3000]] + \
        [source[i:i + 90] for i in range(0, 2700, 300)]
    texts = texts + texts[::3]                  # repeats, at other places
    together = minilm.encode(texts)
    alone = {t: minilm.encode([t])[0] for t in set(texts)}
    cosines = [_cos(v, alone[t]) for t, v in zip(texts, together)]
    assert min(cosines) > 0.9999, min(cosines)
    firsts: dict[str, list[float]] = {}
    for t, v in zip(texts, together):
        assert _cos(firsts.setdefault(t, v), v) > 0.99999


def test_two_threads_give_the_same_vectors_as_one(minilm, base_settings):
    two = _model(base_settings, threads=2)
    assert (two.threads, minilm.threads) == (2, 1) and two.model_id == minilm.model_id
    texts = _mixed_texts()
    cosines = [_cos(a, b) for a, b in zip(two.encode(texts), minilm.encode(texts))]
    assert min(cosines) > 0.9999, min(cosines)


def test_auto_threads_take_every_core_only_when_the_machine_is_idle():
    assert auto_threads(load=0.3, cores=2) == 2
    assert auto_threads(load=1.4, cores=2) == 2         # more than half a core free
    assert auto_threads(load=1.6, cores=2) == default_threads()
    assert auto_threads(load=9.0, cores=2) == default_threads()
    assert auto_threads(load=0.0, cores=16) == 4         # MiniLM stops scaling past 4
    assert settings_threads(replace(Settings(paths=default_paths({})), embed_threads=3)) == 3


@pytest.mark.parametrize("value", ["-1", "65", "two"])
def test_embed_threads_out_of_range_is_a_config_error(value):
    with pytest.raises(ConfigError, match="embed_threads"):
        load_settings(env={"INDEXD_HOME": "/tmp/unused", "INDEXD_EMBED_THREADS": value})


FILES = {
    "net/retry.py": "def retry_with_backoff(call, attempts=3):\n"
                    "    '''Call again after an exponentially growing pause when it fails.'''\n"
                    "    return call()\n\n\n"
                    "class Session:\n"
                    "    def get(self, url):\n        return self.request('GET', url)\n\n"
                    "    def close(self):\n        pass\n",
    "fmt/colors.py": "def hex_to_rgb(value):\n"
                     "    '''Turn a #rrggbb string into a red, green, blue triple.'''\n"
                     "    return tuple(int(value[i:i + 2], 16) for i in (1, 3, 5))\n",
    "fmt/dup.py": "def hex_to_rgb(value):\n"
                  "    '''Turn a #rrggbb string into a red, green, blue triple.'''\n"
                  "    return tuple(int(value[i:i + 2], 16) for i in (1, 3, 5))\n",
}


def _vectors(home: Path) -> dict:
    store = Store(load_settings(env={"INDEXD_HOME": str(home)}).paths.store_dir)
    rows = store.entries_where(None, ["path", "kind", "qualname", "vector"])
    return {(r["path"], r["kind"], r["qualname"]): r["vector"] for r in rows}


def test_a_daemon_from_a_cold_start_stores_the_one_shot_vectors(git_repo, daemon, tmp_path):
    """Two threads in the one-shot, one in the daemon, steps of other sizes and
    neighbours, a duplicate file: the same vector for every entry."""
    for path, text in FILES.items():
        git_repo.write(path, text)
    git_repo.commit()
    run_cli("realm", "add", "work", git_repo.path, check=True)
    d = daemon(extra_env={"INDEXD_EMBED_MODEL": "default", "INDEXD_EMBED_THREADS": "1"})
    wait_until(lambda: (s := d.call("status"))["embedding"]["ready"]
               and s["queues"]["embed"] == 0 and s["queues"]["parse"] == 0,
               timeout=300, what="daemon embedded everything")
    status = d.call("status")["embedding"]
    assert status["threads"] == 1 and status["error"] is None
    d.stop()
    daemon_vectors = _vectors(d.home)

    one_shot = tmp_path / "oneshot"
    env = os.environ | {"INDEXD_HOME": str(one_shot), "INDEXD_EMBED_MODEL": "default",
                        "INDEXD_EMBED_THREADS": "2"}
    run_cli("realm", "add", "work", git_repo.path, env=env, check=True)
    run_cli("index", "--json", tool="indexd", env=env, check=True, timeout=600)
    want = _vectors(one_shot)
    assert want.keys() == daemon_vectors.keys() and len(want) >= 6
    cosines = {k: _cos(want[k], daemon_vectors[k]) for k in want}
    assert min(cosines.values()) > 0.9999, cosines
