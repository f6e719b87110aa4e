"""Context packs (`context`, `indexctl context`) through the real daemon on a real repo.

The repo has two clusters: retry code (backoff_delay, its caller fetch, its
test, a doc naming it) that the query is about, and a cache cluster
(Cache.get and its caller load_user) that it is not; naming the cache file
in ``files`` must pull the cache cluster in.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from e2e.test_http_api import HttpDaemon, _env, req
from testlib import BIN, GitRepo, embedded, run_cli, wait_until

from indexd.errors import IndexdError, InvalidParams, RealmError
from indexd.query.tokens import token_counter

QUERY = "exponential backoff delay before retrying"
FIELDS = {"repo", "path", "symbol", "start_line", "end_line", "text", "why", "tokens", "view"}


def make_repo(repo):
    repo.write("app/__init__.py", "")
    repo.write("app/retry.py",
               "import random\n\n\n"
               "def backoff_delay(attempt, base=0.5, cap=30.0):\n"
               '    """Exponential backoff delay before retrying a failed request."""\n'
               "    delay = min(cap, base * 2 ** attempt)\n"
               "    return delay * (0.5 + random.random() / 2)\n")
    repo.write("app/client.py",
               "import time\n\nfrom app.retry import backoff_delay\n\n\n"
               "def fetch(url, tries=5):\n"
               '    """Fetch a URL, retrying on errors."""\n'
               "    for attempt in range(tries):\n"
               "        try:\n            return _get(url)\n"
               "        except OSError:\n            time.sleep(backoff_delay(attempt))\n"
               "    raise TimeoutError(url)\n\n\n"
               "def _get(url):\n    return url\n")
    repo.write("app/cache.py",
               "class Cache:\n"
               '    """A small in-memory store of values by key."""\n\n'
               "    def __init__(self):\n        self.items = {}\n\n"
               "    def get(self, key):\n        return self.items.get(key)\n")
    repo.write("app/users.py",
               "from app.cache import Cache\n\nCACHE = Cache()\n\n\n"
               "def load_user(user_id):\n"
               '    """The user record, from the cache when it holds one."""\n'
               "    return CACHE.get(user_id)\n")
    repo.write("tests/test_retry.py",
               "from app.retry import backoff_delay\n\n\n"
               "def test_backoff_grows():\n"
               "    assert backoff_delay(3, base=1.0) <= 8.0\n")
    params = ", ".join(f"option_{i}_value=None" for i in range(40))
    repo.write("app/settings.py", f"def configure_transport({params}):\n    return None\n")
    repo.write("docs/retry.md", "# Retries\n\nFailed requests wait `backoff_delay` seconds, "
                                "see [the code](../app/retry.py).\n")
    repo.commit()


@pytest.fixture(scope="module")
def served():
    """One daemon (with the REST API) for the module: a start costs seconds; no test
    writes to it."""
    from indexd.config import load_settings
    from indexd.realms import add_repos

    home = Path(tempfile.mkdtemp(prefix="ixc"))
    repo = GitRepo(home / "repo")
    make_repo(repo)
    add_repos(load_settings(env={"INDEXD_HOME": str(home)}), "work", [str(repo.path)])
    d = HttpDaemon(home, "--http", "127.0.0.1:0")
    d.env = _env(home)
    try:
        d.wait_ready()
        d.call("status", sync=True, timeout=60)
        wait_until(lambda: embedded(d.call("status")), timeout=60, what="vectors")   # hybrid answers stay put
        # the warm graph is built after the first batch: wait until it links fetch
        wait_until(lambda: any(i["symbol"] == "fetch" for i in context(d, hits=2)["items"]),
                   timeout=30, what="the graph")
        yield d, repo
    finally:
        d.stop()
        shutil.rmtree(home, ignore_errors=True)


def context(d, **params):
    return d.call("context", **({"query": QUERY} | params))


def keys(pack) -> list[tuple]:
    return [(i["path"], i["symbol"]) for i in pack["items"]]


def test_pack_holds_hits_and_their_neighbours_with_why(served):
    d, _ = served
    # One hit: the rest comes from the graph (with two, the second hit is
    # the ranking's call: the doc or the caller, each a fair answer).
    pack = context(d, budget=4000, hits=1)
    assert set(pack) >= {"query", "budget", "tokens", "items"}
    assert pack["query"] == QUERY and pack["budget"] == 4000
    assert pack["tokenizer"] == "tokenizer:all-MiniLM-L6-v2"
    for it in pack["items"]:
        assert FIELDS <= set(it) and it["why"] and it["text"], it
    assert keys(pack)[0] == ("app/retry.py", "backoff_delay")
    assert pack["items"][0]["why"].startswith("search hit 1")
    by_key = {(i["path"], i["symbol"]): i for i in pack["items"]}
    assert "calls" in by_key[("app/client.py", "fetch")]["why"]
    assert "backoff_delay" in by_key[("app/client.py", "fetch")]["why"]
    test = by_key[("tests/test_retry.py", "test_backoff_grows")]
    assert "backoff_delay" in test["why"] and "PageRank" in test["why"]
    doc = by_key[("docs/retry.md", "Retries")]
    assert doc["why"].startswith("documents") and doc["kind"] == "section"
    # the hit's body is there whole, lines as in the file
    top = pack["items"][0]
    assert top["view"] == "body" and top["start_line"] == 4 and top["end_line"] == 7
    assert top["text"].startswith("def backoff_delay(attempt") and "random.random()" in top["text"]
    # tokens: each item counted with the model's tokenizer, the total their sum
    counter = token_counter(type("S", (), {"embed_model": "default"})())
    assert [i["tokens"] for i in pack["items"]] == counter.counts([i["text"] for i in pack["items"]])
    assert pack["tokens"] == sum(i["tokens"] for i in pack["items"]) <= 4000


@pytest.mark.parametrize("budget", [64, 100, 150, 300, 1000])
def test_budget_is_never_exceeded(served, budget):
    d, _ = served
    pack = context(d, budget=budget)
    assert pack["items"], "every budget allowed holds at least the best hit"
    assert pack["tokens"] == sum(i["tokens"] for i in pack["items"]) <= budget
    assert keys(pack)[0] == ("app/retry.py", "backoff_delay")


def test_more_budget_more_context(served):
    d, _ = served
    small, big = context(d, budget=100), context(d, budget=4000)
    assert big["tokens"] > small["tokens"] and big["bodies"] > small["bodies"]
    assert len(big["items"]) >= len(small["items"])
    assert small["left_out"] > 0 or small["bodies"] < len(small["items"])


def test_without_the_graph_only_hits(served):
    d, _ = served
    pack = context(d, budget=4000, hits=2, graph=False)
    assert pack["items"] and all(i["why"].startswith("search hit") for i in pack["items"])
    assert ("app/client.py", "fetch") not in keys(pack)


def test_tiny_budget_cuts_the_best_signature(served):
    d, _ = served
    pack = context(d, budget=64, query="configure_transport")
    assert len(pack["items"]) == 1 and 50 < pack["tokens"] <= 64
    first = pack["items"][0]
    assert first["symbol"] == "configure_transport" and first["view"] == "signature"
    assert first["text"].startswith("def configure_transport(option_0_value=None, ")
    assert first["text"].endswith("…") and first["why"].endswith("cut to fit the budget")
    roomy = context(d, budget=1000, query="configure_transport")
    assert roomy["items"][0]["view"] == "body" and "…" not in roomy["items"][0]["text"]


def test_given_files_seed_the_ranking(served):
    d, repo = served
    plain = context(d, budget=4000)
    assert ("app/users.py", "load_user") not in keys(plain)
    seeded = context(d, budget=4000, files=[str(repo.path / "app/cache.py")])
    assert seeded["files"] == [str(repo.path / "app/cache.py")]
    assert ("app/users.py", "load_user") in keys(seeded)
    load = next(i for i in seeded["items"] if i["symbol"] == "load_user")
    # the edge toward the seed: Cache.get in cache.py, or the module's CACHE = Cache() it reads
    assert "cache.py" in load["why"] or "users.py::CACHE" in load["why"], load["why"]
    # a symbol seeds as well
    sym = context(d, budget=4000, files=[f"{repo.path}/app/cache.py::Cache.get"])
    assert ("app/users.py", "load_user") in keys(sym)
    # repo-relative, as impact and owners take a path: the same seeds
    rel = context(d, budget=4000, files=["app/cache.py::Cache.get"])
    assert keys(rel) == keys(sym)


@pytest.mark.parametrize("params, error, text", [
    ({"budget": 10}, InvalidParams, "budget must be an integer in 64..200000"),
    ({"budget": "lots"}, InvalidParams, "budget must be an integer"),
    ({"budget": True}, InvalidParams, "budget must be an integer"),
    ({"query": ""}, InvalidParams, "non-empty string 'query'"),
    ({"query": None}, InvalidParams, "non-empty string 'query'"),
    ({"files": "app/cache.py"}, InvalidParams, "files must be a list"),
    ({"files": [3]}, InvalidParams, "files must be a list"),
    ({"hits": 0}, InvalidParams, "hits must be an integer in 1..50"),
    ({"depth": 9}, InvalidParams, "depth must be an integer in 1..3"),
    ({"mode": "psychic"}, InvalidParams, "mode must be keyword, semantic or hybrid"),
    ({"budgett": 100}, InvalidParams, "unknown context params: budgett"),
    ({"graph": "no"}, InvalidParams, "graph must be true or false"),
    ({"files": ["/nowhere/at/all.py"]}, RealmError, "not inside any realm"),
])
def test_bad_params_get_clear_errors(served, params, error, text):
    d, _ = served
    with pytest.raises(error) as exc:
        context(d, **params)
    assert text in exc.value.message


def test_files_not_indexed_are_refused(served):
    d, repo = served
    with pytest.raises(RealmError, match="app/missing.py is not indexed"):
        context(d, files=[str(repo.path / "app/missing.py")])
    with pytest.raises(RealmError, match="app/cache.py::Nope is not indexed"):
        context(d, files=[f"{repo.path}/app/cache.py::Nope"])
    with pytest.raises(IndexdError):   # nothing was lost: the daemon still answers
        context(d, budget=1)
    assert context(d)["items"]


def test_cli_context_json_and_text(served):
    d, repo = served
    out = subprocess.run([str(BIN / "indexctl"), "context", QUERY, "--budget", "500",
                          "--files", "app/cache.py", "--json"], env=d.env, cwd=repo.path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    pack = json.loads(out.stdout)
    assert pack["budget"] == 500 and pack["tokens"] <= 500 and pack["items"]
    assert pack["files"] == [str(repo.path / "app/cache.py")]   # made absolute by the CLI
    text = run_cli("context", QUERY, "--budget", "500", env=d.env)
    assert text.returncode == 0, text.stderr
    assert "app/retry.py:4-7 backoff_delay" in text.stdout and "search hit 1" in text.stdout
    bad = run_cli("context", QUERY, "--budget", "5", "--json", env=d.env)
    assert bad.returncode == 4 and "budget must be an integer" in bad.stdout


def test_rest_context_endpoint(served):
    d, repo = served
    body = {"query": QUERY, "budget": 300, "files": [str(repo.path / "app/cache.py")]}
    status, _, pack = req(d, "POST", "/context", body)
    assert status == 200, pack
    want = context(d, budget=300, files=body["files"])
    assert keys(pack) == keys(want) and pack["tokens"] == want["tokens"] <= 300
    assert all(FIELDS <= set(i) for i in pack["items"])
    status, _, same = req(d, "POST", "/rpc/context", body)
    assert status == 200 and keys(same) == keys(pack)
    status, _, err = req(d, "POST", "/context", {"query": QUERY, "budget": 5})
    assert status == 400 and "budget must be an integer in 64..200000" in err["error"]["message"]
    status, _, err = req(d, "POST", "/context", {"query": QUERY, "files": "app/cache.py"})
    assert status == 400 and "files must be array of string" in err["error"]["message"]
    status, _, err = req(d, "POST", "/context", {"query": QUERY, "files": ["/elsewhere/x.py"]})
    assert status == 404 and "not inside any realm" in err["error"]["message"]
    status, _, _ = req(d, "POST", "/context", body, token="wrong")
    assert status == 401
    status, _, doc = req(d, "GET", "/openapi.json", token=None)
    op = doc["paths"]["/api/v1/context"]["post"]
    schema = op["requestBody"]["content"]["application/json"]["schema"]
    assert schema["required"] == ["query"] and schema["properties"]["budget"]["minimum"] == 64


def test_cli_context_without_a_daemon(git_repo):
    """The CLI's fallback: keyword search over the store, a graph built for the answer."""
    make_repo(git_repo)
    from testlib import settings_with_realm

    settings_with_realm("work", git_repo.path)
    run_cli("index", "--no-embed", tool="indexd", check=True)
    out = run_cli("context", "backoff_delay", "--budget", "400", "--json", check=True)
    pack = json.loads(out.stdout)
    assert pack["daemon"] is None and pack["mode"] == "keyword" and pack["tokens"] <= 400
    assert keys(pack)[0] == ("app/retry.py", "backoff_delay")
    assert ("app/client.py", "fetch") in keys(pack)


def test_seeds_and_items_grow_with_the_budget(git_repo, daemon):
    """Without ``hits``, a bigger budget asks search for more hits and holds more items:
    a fixed 10 seeds and 40 items left an 8k pack with fewer hits than the hits alone."""
    for i in range(70):
        git_repo.write(f"pkg/step_{i}.py",
                       f"def backoff_step_{i}(attempt):\n"
                       f'    """Backoff step {i}: wait before retrying attempt."""\n'
                       "    return attempt\n")
    git_repo.commit()
    from testlib import settings_with_realm

    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)

    def hits(pack):
        return sum(i["why"].startswith("search hit") for i in pack["items"])

    ask = {"query": "backoff step before retrying", "mode": "keyword"}
    small, big = d.call("context", budget=1000, **ask), d.call("context", budget=8000, **ask)
    assert small["tokens"] <= 1000 and big["tokens"] <= 8000
    assert hits(big) > hits(small) and hits(big) > 10, (hits(small), hits(big))
    assert len(big["items"]) > 40 and big["candidates"] > 40
    assert all(i["why"] for i in big["items"])
    # hits given: that many seeds, whatever the budget
    fixed = d.call("context", budget=8000, hits=5, **ask)
    assert 0 < hits(fixed) <= 5
