"""`explain`: each hit says why it ranks where it does (issue 12, "ranking you can explain").

Over the real daemon and socket, and from the command line: each leg's rank
and score, the fused score, the learned second pass's score with its largest
terms, and whether an exact name was pinned. A one-leg mode names only its
leg; without `explain` answers are as before.
"""

from __future__ import annotations

import json

import pytest
from testlib import embedded, run_cli, settings_with_realm, wait_until

from indexd.errors import IndexdError
from indexd.query.rerank import FEATURES


def _repo(git_repo):
    git_repo.write("net/retry.py",
                   "def reconnect_with_backoff(sock, attempts=5):\n"
                   "    '''Reconnect a dropped network connection, waiting longer each time.'''\n"
                   "    return sock\n\n\n"
                   "def parse_header(line):\n    '''Split one header line into a name and a value.'''\n"
                   "    return line.split(':', 1)\n")
    git_repo.write("net/cache.py",
                   "class LRUCache:\n    '''Keep the most recently used values, dropping the oldest.'''\n\n"
                   "    def get(self, key):\n        '''The value of key, marked as just used.'''\n"
                   "        return key\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)


@pytest.fixture
def indexed(git_repo, daemon):
    _repo(git_repo)
    d = daemon()
    # status has no `embed_pending` (search answers do)
    wait_until(lambda: embedded(d.call("status", sync=True)), timeout=120,
               what="indexed and embedded")
    return d


def test_hybrid_hits_say_each_legs_rank_and_the_second_pass_terms(indexed):
    res = indexed.call("search", query="reconnect after the network connection drops",
                       mode="hybrid", limit=5, explain=True)
    assert res["results"], res
    for hit in res["results"]:
        why = hit["why"]
        assert set(why) == {"keyword", "semantic", "fused", "second_pass", "exact"}
        assert why["keyword"] or why["semantic"]          # some leg found it
        for leg, value in (("keyword", "score"), ("semantic", "cosine")):
            if why[leg]:
                assert why[leg]["rank"] >= 1 and isinstance(why[leg][value], float)
        assert why["fused"] == pytest.approx(hit["score"], abs=1e-5)
        assert why["second_pass"]["top"] and all(f in FEATURES for f, _ in why["second_pass"]["top"])
        assert why["exact"] is False
    # the answer's head is the second pass's best
    scores = [h["why"]["second_pass"]["score"] for h in res["results"]]
    assert scores[0] == max(scores)
    assert res["results"][0]["symbol"] == "reconnect_with_backoff"


def test_an_exact_name_says_it_was_pinned_and_one_leg_modes_name_their_leg(indexed):
    top = indexed.call("search", query="LRUCache", mode="hybrid", limit=3, explain=True)["results"][0]
    assert top["symbol"] == "LRUCache" and top["why"]["exact"] is True
    kw = indexed.call("search", query="header", mode="keyword", limit=3, explain=True)["results"]
    assert kw and all(set(h["why"]) == {"keyword", "fused", "second_pass", "exact"} for h in kw)
    assert all(h["why"]["second_pass"] is None for h in kw)
    files = indexed.call("search", query="header", mode="keyword", files=True, explain=True)
    assert files["results"][0]["why"]["keyword"]["rank"] == 1
    plain = indexed.call("search", query="header", mode="keyword", limit=3)["results"]
    assert plain and all("why" not in h for h in plain)


def test_explain_must_be_a_boolean(indexed):
    with pytest.raises(IndexdError) as err:
        indexed.call("search", query="header", explain="yes")
    assert "explain" in str(err.value)


def test_the_command_line_prints_why_and_json_carries_it(indexed):
    human = run_cli("search", "reconnect after the network connection drops", "--explain",
                    "--limit", "2", "--mode", "hybrid", check=True).stdout
    assert "why: keyword #" in human or "why: not in keyword pool" in human
    assert "2nd pass" in human
    out = json.loads(run_cli("search", "LRUCache", "--explain", "--json", check=True).stdout)
    assert out["results"][0]["why"]["exact"] is True
