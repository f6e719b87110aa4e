"""A daemon that starts on a big backlog embeds it with a bulk model, then goes
back to its steady one (issue 13 part 2).

Real daemon, real socket, the packaged all-MiniLM-L6-v2 offline. Where the CPU
multiplies bf16 in hardware (AMX, AVX-512 BF16) and embed_precision is auto,
a backlog of embed_bulk_rows or more runs through torch's bf16 products (same
model id: docs/decisions.md, "bf16 products"); the queue empty, the bulk model
is dropped and onnxruntime's fp32 model, which answered queries meanwhile,
embeds what saves bring.
"""

from __future__ import annotations

import os
import signal

import pytest

from testlib import descendants, run_cli, wait_until

from indexd.enrich.embedder import bf16_fast

N_FILES, PER_FILE, BIG = 6, 20, 150


def _repo(git_repo, per_file=PER_FILE):
    for f in range(N_FILES):
        git_repo.write(f"pkg/mod_{f}.py", "".join(
            f"def helper_{f}_{i}(value):\n    '''Step {i} of stage {f}: scale the value.'''\n"
            f"    return value * {i}\n\n\n" for i in range(per_file)))
    git_repo.write("net/retry.py", "def retry_with_backoff(call, attempts=3):\n"
                   "    '''Call again after an exponentially growing pause when it fails.'''\n"
                   "    return call()\n")
    git_repo.commit()
    run_cli("realm", "add", "work", git_repo.path, check=True)
    # the structural pass first: the daemon's model then finds the whole backlog
    run_cli("index", "--no-embed", tool="indexd", check=True, timeout=300)


def _spawned(pid: int) -> list[int]:
    """The daemon's spawned Python children (a bulk model, a parse pool)."""
    return [p.pid for p in descendants(pid) if "spawn_main" in p.cmdline]


def _drained(d):
    status = d.call("status")
    emb = status["embedding"]
    return (emb["ready"] and status["queues"]["embed"] == 0 and emb["bulk"]["active"] is None
            and not emb["bulk"]["loading"] and status)


ENV = {"INDEXD_EMBED_MODEL": "default", "INDEXD_EMBED_BULK_ROWS": "50"}


@pytest.mark.skipif(not bf16_fast(), reason="this CPU has no bf16 hardware (AMX, AVX-512 BF16)")
def test_a_cold_backlog_is_embedded_in_bf16_then_the_steady_model_takes_over(git_repo, daemon):
    # ~900 rows: the steady model goes on while the child loads, and must not
    # finish the backlog first
    _repo(git_repo, per_file=BIG)
    d = daemon(extra_env=ENV)
    status = wait_until(lambda: _drained(d), timeout=300, what="embed queue empty")
    bulk = status["embedding"]["bulk"]
    assert bulk["active"] is None and bulk["off"] is None, bulk
    assert [(r["runtime"], r["precision"]) for r in bulk["runs"]] == [("torch", "bf16")], bulk
    # at most every entry's texts: two for a function with a docstring, one for a file
    assert 0 < bulk["runs"][0]["texts"] <= 2 * (N_FILES * BIG + 1) + N_FILES + 1
    emb = status["embedding"]
    assert (emb["runtime"], emb["precision"]) == ("onnx", "fp32")   # the steady model again
    pid = status["daemon"]["pid"]
    wait_until(lambda: not _spawned(pid), timeout=60, what="the bulk model's process gone")
    hits = d.call("search", query="wait longer between attempts after an error",
                  mode="semantic", kind="function", limit=1)["results"]
    assert (hits[0]["path"], hits[0]["symbol"]) == ("net/retry.py", "retry_with_backoff")

    # A save after the backlog: the steady model embeds it, no second bulk run.
    git_repo.write("net/colors.py", "def hex_to_rgb(value):\n"
                   "    '''Turn a #rrggbb string into a red, green, blue triple.'''\n    return value\n")
    wait_until(lambda: any(h["symbol"] == "hex_to_rgb" for h in d.call(
        "search", query="convert a hex colour string to red green blue", mode="semantic",
        kind="function", limit=3)["results"]), timeout=120, what="the saved file embedded")
    assert len(d.call("status")["embedding"]["bulk"]["runs"]) == 1


@pytest.mark.skipif(not bf16_fast(), reason="this CPU has no bf16 hardware (AMX, AVX-512 BF16)")
def test_a_bulk_model_killed_mid_backlog_leaves_the_rest_to_the_steady_model(git_repo, daemon):
    _repo(git_repo, per_file=BIG)   # time to kill the child while it works
    d = daemon(extra_env=ENV)
    pid = d.call("status")["daemon"]["pid"]
    wait_until(lambda: d.call("status")["embedding"]["bulk"]["active"], timeout=300,
               what="the bulk model at work")
    victims = wait_until(lambda: _spawned(pid), timeout=30, what="the bulk model's process")
    for child in victims:
        os.kill(child, signal.SIGKILL)
    status = wait_until(lambda: _drained(d), timeout=300, what="embed queue empty")
    run = status["embedding"]["bulk"]["runs"][0]
    assert "died" in run["error"], run
    wait_until(lambda: not _spawned(pid), timeout=60, what="no bulk process left")
    hits = d.call("search", query="wait longer between attempts after an error",
                  mode="semantic", kind="function", limit=1)["results"]
    assert hits[0]["symbol"] == "retry_with_backoff"


@pytest.mark.skipif(not bf16_fast(), reason="this CPU has no bf16 hardware (AMX, AVX-512 BF16)")
def test_a_ctrl_c_or_stop_signal_to_the_group_leaves_the_bulk_model_to_the_daemon(git_repo, daemon):
    # `make run` stopped by Ctrl-C signals the whole process group; the child
    # used to die at once and the daemon logged it as a crash
    _repo(git_repo, per_file=BIG)
    d = daemon(extra_env=ENV)
    pid = d.call("status")["daemon"]["pid"]
    wait_until(lambda: d.call("status")["embedding"]["bulk"]["active"], timeout=300,
               what="the bulk model at work")
    for child in wait_until(lambda: _spawned(pid), timeout=30, what="the bulk model's process"):
        os.kill(child, signal.SIGINT)
        os.kill(child, signal.SIGTERM)
    status = wait_until(lambda: _drained(d), timeout=300, what="embed queue empty")
    run = status["embedding"]["bulk"]["runs"][0]
    assert run["error"] is None and run["texts"] > 0, run
    assert "died" not in d.output()


@pytest.mark.skipif(not bf16_fast(), reason="this CPU has no bf16 hardware (AMX, AVX-512 BF16)")
def test_a_save_while_the_bulk_model_works_stops_it_until_the_save_is_written(git_repo, daemon):
    # The child's batch cannot be cut: it is stopped (SIGSTOP) so the save's parse
    # has the cores, and goes on after; nothing of the backlog is lost.
    _repo(git_repo, per_file=BIG)
    d = daemon(extra_env=ENV)
    wait_until(lambda: d.call("status")["embedding"]["bulk"]["active"], timeout=300,
               what="the bulk model at work")
    git_repo.write("net/colors.py", "def hex_to_rgb(value):\n"
                   "    '''Turn a #rrggbb string into a red, green, blue triple.'''\n    return value\n")
    wait_until(lambda: d.call("search", query="hex_to_rgb", mode="keyword", limit=1)["results"],
               timeout=60, what="the saved file searchable")
    status = wait_until(lambda: _drained(d), timeout=300, what="embed queue empty")
    run = status["embedding"]["bulk"]["runs"][0]
    assert run["error"] is None and run["held_for_saves"] >= 1, run
    for query, symbol in [("wait longer between attempts after an error", "retry_with_backoff"),
                          ("convert a hex colour string to red green blue", "hex_to_rgb")]:
        hits = d.call("search", query=query, mode="semantic", kind="function", limit=1)["results"]
        assert hits[0]["symbol"] == symbol, (query, hits)
    assert status["embedding"]["embedded"] >= N_FILES * BIG


@pytest.mark.parametrize("env, off", [({"INDEXD_EMBED_PRECISION": "fp32"}, None),
                                      ({"INDEXD_NO_AMX": "1"}, "no bf16 hardware")])
def test_no_bulk_model_when_fp32_is_asked_for_or_the_cpu_has_no_bf16(git_repo, daemon, env, off):
    _repo(git_repo)
    d = daemon(extra_env=ENV | env)
    status = wait_until(lambda: _drained(d), timeout=300, what="embed queue empty")
    bulk = status["embedding"]["bulk"]
    assert bulk["runs"] == [] and bulk["active"] is None and bulk["off"] == off, bulk
    assert status["embedding"]["embedded"] >= N_FILES * PER_FILE
    assert (status["embedding"]["runtime"], status["embedding"]["precision"]) == ("onnx", "fp32")


def test_status_says_which_model_embeds_the_backlog():
    from indexd.cli.render import embedding_line

    emb = {"enabled": True, "ready": True, "model": "all-MiniLM-L6-v2@x/384", "runtime": "onnx",
           "precision": "fp32", "threads": 2, "embedded": 700,
           "bulk": {"active": {"runtime": "torch", "precision": "bf16", "threads": 2, "texts": 640}}}
    line = embedding_line(emb)
    assert "onnx fp32, 2 threads, 700 embedded" in line
    assert "bulk model torch bf16 (2 threads, 640 texts so far)" in line
    assert embedding_line({"enabled": True, "ready": False}) == "embedding: model loading"
    assert embedding_line({"enabled": False}) == ""
