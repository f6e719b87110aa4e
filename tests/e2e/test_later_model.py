"""embed_first: a fast model answers at once, embed_model fills in behind it
and takes over with every vector. Real daemon over its socket, the real
default model (as the later, better model) in its child process, the hash
embedder as the fast first one; real LanceDB."""

from __future__ import annotations

from testlib import settings_with_realm, wait_until

CODE = ("def celsius_to_fahrenheit(degrees):\n"
        "    '''Convert a temperature from Celsius to Fahrenheit.'''\n"
        "    return degrees * 9 / 5 + 32\n\n\n"
        "def parse_http_date(text):\n"
        "    '''Read the date a web server sent in a response header.'''\n"
        "    return text.strip()\n\n\n"
        "def retry_with_backoff(call, attempts):\n"
        "    '''Call again after failures, waiting longer each time.'''\n"
        "    return call()\n")
QUERY = "turn a temperature in celsius into fahrenheit"


def _top(d, query: str) -> str | None:
    res = d.call("search", query=query, mode="semantic", limit=1)["results"]
    return res[0]["symbol"] if res else None


def _later(d) -> dict | None:
    return d.call("status")["embedding"]["later"]


def test_the_better_model_fills_in_behind_the_first_and_takes_over(git_repo, daemon, model_cache):
    git_repo.write("conv.py", CODE)
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    env = {"INDEXD_EMBED_MODEL": "default", "INDEXD_EMBED_FIRST": "hash",
           "INDEXD_MODEL_CACHE": str(model_cache)}
    d = daemon(extra_env=env)
    d.call("status", sync=True, timeout=120)
    # The first model answers while the later one loads and embeds behind it.
    wait_until(lambda: "semantic" in d.call("initialize")["capabilities"]["search_modes"],
               timeout=120, what="the first model")
    first = d.call("status")["embedding"]
    assert first["model"].startswith("hash-embedder"), first
    assert first["later"]["model"] == "default" and first["later"]["state"] in (
        "loading", "embedding", "complete"), first["later"]

    done = wait_until(lambda: (_later(d) or {}).get("at") and _later(d), timeout=300,
                      what="the later model to take over")
    now = d.call("status")["embedding"]
    assert now["model"].startswith("all-MiniLM-L6-v2@") and done["model_id"] == now["model"]
    assert done["from"].startswith("hash-embedder") and done["embedded"] == 7   # file + 3 functions, each with its docstring's text
    # Its vectors came from its own cache: the take-over embedded nothing again.
    wait_until(lambda: d.call("status")["queues"]["embed"] == 0, timeout=120,
               what="the refill from the cache")
    assert d.call("status")["embedding"]["embedded"] == 0
    wait_until(lambda: _top(d, QUERY) == "celsius_to_fahrenheit", timeout=30,
               what="a search by meaning with the later model")
    d.stop()

    # A restart loads the later model directly: no first model, nothing embedded.
    d = daemon(extra_env=env)
    d.call("status", sync=True, timeout=120)
    wait_until(lambda: "semantic" in d.call("initialize")["capabilities"]["search_modes"],
               timeout=120, what="the model after the restart")
    again = d.call("status")["embedding"]
    assert again["model"] == now["model"] and again["later"] is None, again
    assert _top(d, QUERY) == "celsius_to_fahrenheit"
    assert d.call("status")["queues"]["embed"] == 0 and again["embedded"] == 0


def test_a_first_model_that_cannot_load_leaves_embed_model_alone(git_repo, daemon, tmp_path):
    git_repo.write("conv.py", CODE)
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon(extra_env={"INDEXD_EMBED_MODEL": "hash",
                          "INDEXD_EMBED_FIRST": str(tmp_path / "no-such-model")})
    d.call("status", sync=True, timeout=120)
    wait_until(lambda: "semantic" in d.call("initialize")["capabilities"]["search_modes"],
               timeout=120, what="embed_model, loaded alone")
    emb = d.call("status")["embedding"]
    assert emb["model"].startswith("hash-embedder") and emb["later"] is None and not emb["error"], emb
    wait_until(lambda: d.call("status")["queues"]["embed"] == 0, timeout=60, what="its vectors")
    assert "embed_first" in d.output() and "no-such-model" in d.output()


def test_a_later_model_that_cannot_load_leaves_the_first_serving_and_says_why(git_repo, daemon,
                                                                             tmp_path):
    git_repo.write("conv.py", CODE)
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon(extra_env={"INDEXD_EMBED_MODEL": str(tmp_path / "no-such-model"),
                          "INDEXD_EMBED_FIRST": "hash"})
    d.call("status", sync=True, timeout=120)
    later = wait_until(lambda: (_later(d) or {}).get("state") == "failed" and _later(d),
                       timeout=120, what="the later model's failure")
    assert "no-such-model" in later["error"], later
    emb = d.call("status")["embedding"]
    assert emb["model"].startswith("hash-embedder") and emb["ready"]
    assert d.call("search", query="celsius", mode="semantic")["results"]
