"""The relationship stage on a real store and graph, against the stand-in Ollama server.

No Ollama server can run here (no binary, no weights, no network):
tests/fakes/ollama_server.py is a local HTTP server speaking its API. The
stage's clock is injected so the retry after a dead server needs no waiting.
"""

from __future__ import annotations

from dataclasses import replace

from testlib import settings_with_realm

from indexd.enrich.relation_stage import RETRY_S, RelationStage
from indexd.enrich.summarizer import RELATION_PROMPT, OllamaSummarizer
from indexd.pipeline import Indexer
from indexd.relations import Relations

from enrich_fixtures import fake_ollama  # noqa: F401 - fixture

MODEL = "llama3.2"


def chats(fake) -> int:
    return sum(1 for _t, _m, p, b in fake.requests if p == "/api/chat"
               and (b or {}).get("messages", [{}])[0].get("content") == RELATION_PROMPT)


def drain(stage) -> int:
    steps = 0
    while stage.step():
        steps += 1
        assert steps < 100, "the stage never settles"
    return steps


def test_pairs_that_fell_back_are_asked_again_after_the_retry_delay(git_repo, make_store,
                                                                     fake_ollama):
    git_repo.write("blueprints.py", "class Blueprint:\n    def register(self):\n        pass\n")
    git_repo.write("app.py", "from blueprints import Blueprint\n\nBlueprint().register()\n")
    git_repo.commit()
    settings = replace(settings_with_realm("work", git_repo.path), summarize="llm",
                       ollama_model=MODEL)
    store = make_store(settings)
    Indexer(settings, store).index()
    relations = Relations(store, lambda: settings)
    relations.build()
    now = [1000.0]
    summarizer = OllamaSummarizer(fake_ollama.url, MODEL, timeout=1, retries=0, cooldown_s=0.0,
                                  max_per_minute=60_000)
    stage = RelationStage(store, summarizer, MODEL, relations, clock=lambda: now[0])
    app = str(git_repo.path / "app.py")

    fake_ollama.set_mode("down")
    drain(stage)
    assert stage.status()["fallbacks"] == 1 and stage.status()["retrying"] == 1
    assert relations.summary(app)["uses"][0]["describe_source"] == "evidence"

    fake_ollama.set_mode("normal")
    fake_ollama.reply = lambda messages: "app.py registers the Blueprint of blueprints.py."
    assert drain(stage) == 0 and chats(fake_ollama) == 0   # not due yet: nothing asked
    now[0] += RETRY_S
    drain(stage)
    assert chats(fake_ollama) == 1 and stage.status()["retrying"] == 0
    got = relations.summary(app)["uses"][0]
    assert (got["describe"], got["describe_source"]) == (
        "app.py registers the Blueprint of blueprints.py.", "llm")

    # a new graph (a restart rebuilds it): every file looked at again, nothing asked again
    relations.build()
    drain(stage)
    assert chats(fake_ollama) == 1 and stage.status()["reused"] >= 1


def test_a_step_asks_the_model_a_bounded_number_of_times(git_repo, make_store, fake_ollama):
    """Two files with the same text using five modules each: ten pairs (a sentence names
    its files, so copies do not share one), asked over two steps (ASK_PER_STEP), so new
    edits' embeddings never wait behind a whole batch of model calls."""
    from indexd.enrich.relation_stage import ASK_PER_STEP

    for n in range(5):
        git_repo.write(f"mod{n}.py", f"def f{n}():\n    pass\n")
    uses = "".join(f"from mod{n} import f{n}\n" for n in range(5))
    calls = "".join(f"    f{n}()\n" for n in range(5))
    for hub in ("hub_a.py", "hub_b.py"):
        git_repo.write(hub, uses + "\n\ndef run():\n" + calls)
    git_repo.commit()
    settings = replace(settings_with_realm("work", git_repo.path), summarize="llm",
                       ollama_model=MODEL)
    store = make_store(settings)
    Indexer(settings, store).index()
    relations = Relations(store, lambda: settings)
    relations.build()
    summarizer = OllamaSummarizer(fake_ollama.url, MODEL, max_per_minute=60_000)
    stage = RelationStage(store, summarizer, MODEL, relations)
    fake_ollama.reply = lambda messages: " ".join(   # "From: a.py (summary)" -> "a.py"
        ln.split(": ", 1)[1].split(" ")[0] for ln in messages[-1]["content"].splitlines()[:2]) + "."

    assert stage.step() > 0
    assert chats(fake_ollama) == ASK_PER_STEP == 8
    drain(stage)
    assert chats(fake_ollama) == 10 and stage.status()["described"] == 10
    assert stage.status()["queued"] == 0
    for hub in ("hub_a.py", "hub_b.py"):
        said = {u["describe"] for u in relations.summary(str(git_repo.path / hub))["uses"]}
        assert said == {f"{hub} mod{n}.py." for n in range(5)}
