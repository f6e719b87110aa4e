"""Summaries: docstring summaries, and Ollama via the fake server, which must never raise."""

from __future__ import annotations

import logging

import pytest

from indexd.enrich.summarizer import (
    DocstringSummarizer,
    OffSummarizer,
    OllamaSummarizer,
    TokenBucket,
    docstring_summary,
    make_summarizer,
)
from indexd.errors import ConfigError

from enrich_fixtures import fake_ollama, settings  # noqa: F401 - fixtures
from testlib import wait_until

ROW = {"kind": "function", "name": "parse_header", "qualname": "parse_header",
       "signature": "def parse_header(line)", "path": "http/headers.py", "lang": "python",
       "doc": "Parse one header line into (name, value).\n\nRaises ValueError on junk.",
       "body": "def parse_header(line):\n    name, _, value = line.partition(':')\n"
               "    return name.strip(), value.strip()\n"}
NO_DOC = dict(ROW, doc="")
FALLBACK = ("Parse one header line into (name, value).", "docstring")


def fast(server, **kw) -> OllamaSummarizer:
    """A summarizer with test-sized timeouts and no meaningful rate limit."""
    opts = {"timeout": 2, "max_per_minute": 60_000, "retries": 2, "backoff_s": 0.01} | kw
    return OllamaSummarizer(server.url, "llama3.2", **opts)


# ------------------------------------------------------------------ docstring

def test_docstring_summary_first_paragraph():
    assert docstring_summary(ROW) == "Parse one header line into (name, value)."


def test_docstring_summary_is_short():
    long_doc = "First sentence is short. " + "Then a very long second sentence " * 20
    assert docstring_summary(dict(ROW, doc=long_doc)) == "First sentence is short."
    one_long = "word " * 200
    s = docstring_summary(dict(ROW, doc=one_long))
    assert len(s) <= 200 and s.endswith("…")


def test_docstring_summary_from_signature_and_body():
    assert docstring_summary(NO_DOC) == "function parse_header(line)"
    cls = {"kind": "class", "qualname": "Foo", "signature": "class Foo(Base)", "doc": ""}
    assert docstring_summary(cls) == "class Foo(Base)"
    assert docstring_summary({"kind": "constant", "qualname": "MAX", "signature": ""}) \
        == "constant MAX"
    section = {"kind": "section", "qualname": "Install", "doc": "",
               "body": "## Install\n\nRun `make install` first.\n\nThen more."}
    assert docstring_summary(section) == "Run `make install` first."


def test_docstring_and_off_summarizers():
    assert DocstringSummarizer().summarize([ROW, NO_DOC]) == [
        FALLBACK, ("function parse_header(line)", "docstring")]
    assert OffSummarizer().summarize([ROW]) == [("", "")]
    text, source = DocstringSummarizer().summarize_file("a.py", [("f", "does f"), ("g", "")])
    assert source == "docstring" and "f" in text and "g" in text


# ------------------------------------------------------------------ make_summarizer

def test_make_summarizer_modes(settings):
    assert isinstance(make_summarizer(settings(summarize="off")), OffSummarizer)
    assert isinstance(make_summarizer(settings(summarize="docstring")), DocstringSummarizer)
    s = make_summarizer(settings(summarize="llm", ollama_model="llama3.2",
                                 ollama_url="http://127.0.0.1:9"))
    assert isinstance(s, OllamaSummarizer) and s.model == "llama3.2"
    with pytest.raises(ConfigError, match="ollama_model"):
        make_summarizer(settings(summarize="llm", ollama_model=""))
    with pytest.raises(ConfigError, match="summarize must be one of"):
        make_summarizer(settings(summarize="always"))


# ------------------------------------------------------------------ Ollama

def test_llm_normal(fake_ollama):
    s = fast(fake_ollama)
    out = s.summarize([ROW, NO_DOC])
    assert out == [("Summarizes parse_header for the index. It is deterministic.", "llm")] * 2
    assert fake_ollama.counts["/api/chat"] == 2 and s.stats.llm == 2
    body = fake_ollama.requests[0][3]
    assert body["stream"] is False and body["options"] == {"temperature": 0}
    prompt = body["messages"][-1]["content"]
    assert "def parse_header(line)" in prompt and "line.partition" in prompt
    assert "Parse one header line" in prompt


def test_llm_reply_is_cleaned(fake_ollama):
    fake_ollama.reply = lambda m: "<think>hmm, a header</think>\n```\nSummary: Parses  a header.\n```"
    assert fast(fake_ollama).summarize([ROW]) == [("Parses a header.", "llm")]


def test_llm_file_summary(fake_ollama):
    s = fast(fake_ollama)
    text, source = s.summarize_file("http/headers.py", [("parse_header", "Parses a header.")])
    assert source == "llm" and "http/headers.py" in text
    prompt = fake_ollama.requests[-1][3]["messages"][-1]["content"]
    assert "- parse_header: Parses a header." in prompt
    fake_ollama.set_mode("down")
    text, source = fast(fake_ollama, retries=0).summarize_file("x.py", ["f", "g"])
    assert source == "docstring" and "f; g" in text


@pytest.mark.parametrize("kind", ["invalid_json", "wrong_shape", "empty_content",
                                  "huge_content", "error_body"])
def test_llm_garbage_falls_back(fake_ollama, kind):
    fake_ollama.set_mode("garbage", garbage_kind=kind)
    s = fast(fake_ollama)
    assert s.summarize([ROW, NO_DOC]) == [FALLBACK, ("function parse_header(line)", "docstring")]
    # Garbage is not retried (temperature 0: the same prompt gives the same junk)
    # and does not open the breaker: each row is tried once.
    assert fake_ollama.counts["/api/chat"] == 2 and s.stats.retries == 0
    assert s.stats.reasons == {"garbage": 2}


def test_llm_500_is_retried_then_falls_back(fake_ollama):
    fake_ollama.set_mode("error500")
    s = fast(fake_ollama, retries=2)
    assert s.summarize([ROW, ROW, ROW]) == [FALLBACK] * 3
    # One row: 1 try + 2 retries; then the breaker keeps the next rows off the server.
    assert fake_ollama.counts["/api/chat"] == 3
    assert s.stats.retries == 2 and s.stats.requests == 3
    assert s.stats.reasons == {"unreachable": 1, "breaker_open": 2}


def test_llm_slow_beyond_timeout(fake_ollama):
    fake_ollama.set_mode("slow", slow_s=1.0)
    s = fast(fake_ollama, timeout=0.25, retries=1)
    assert s.summarize([ROW]) == [FALLBACK]
    assert s.stats.requests == 2 and s.stats.retries == 1


def test_llm_down_falls_back_and_logs_once(fake_ollama, caplog):
    fake_ollama.set_mode("down")
    s = fast(fake_ollama, retries=1)
    with caplog.at_level(logging.WARNING, logger="indexd.enrich.summarizer"):
        out = s.summarize([ROW] * 5)
    assert out == [FALLBACK] * 5
    assert s.stats.retries == 1 and s.stats.fallbacks == 5
    warnings = [r for r in caplog.records if r.name == "indexd.enrich.summarizer"]
    assert len(warnings) == 1 and fake_ollama.url in warnings[0].getMessage()
    assert "header" not in warnings[0].getMessage()       # never row contents


def test_llm_breaker_closes_after_cooldown(fake_ollama):
    fake_ollama.set_mode("error500")
    # 2 s, not 0.2: the second call must come inside the cooldown on a busy machine too
    s = fast(fake_ollama, retries=0, cooldown_s=2.0)
    assert s.summarize([ROW]) == [FALLBACK]
    fake_ollama.set_mode("normal")
    assert s.summarize([ROW]) == [FALLBACK]                # breaker still open
    assert wait_until(lambda: s.summarize([ROW])[0][1] == "llm", timeout=30, interval=0.1,
                      what="the breaker to close after its cooldown")


def test_llm_unknown_model_404(fake_ollama):
    s = OllamaSummarizer(fake_ollama.url, "nope", timeout=2, retries=3, backoff_s=0.01,
                         max_per_minute=60_000)
    assert s.summarize([ROW, ROW]) == [FALLBACK] * 2
    assert fake_ollama.counts["/api/chat"] == 1 and s.stats.retries == 0   # 4xx: no retry
    assert s.stats.reasons == {"fatal": 1, "breaker_open": 1}


def test_llm_rate_limit_spaces_calls(fake_ollama):
    s = fast(fake_ollama, max_per_minute=600)               # one call per 0.1 s
    # The summarizer's bucket as configured, on a clock that only its waits move: the
    # spacing is checked exactly, not measured against a busy machine's wall clock.
    now, slept = [0.0], []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    s.bucket = TokenBucket(s.bucket.rate * 60, s.bucket.burst, clock=lambda: now[0],
                           sleep=sleep)
    s.summarize([ROW] * 4)
    assert slept == pytest.approx([0.1, 0.1, 0.1])           # one wait before each later call
    assert fake_ollama.counts["/api/chat"] == 4
    assert s.stats.waited_s == pytest.approx(0.3)


def test_token_bucket_with_fake_clock():
    now = [0.0]
    slept: list[float] = []

    def sleep(s):
        slept.append(s)
        now[0] += s

    bucket = TokenBucket(60, burst=2, clock=lambda: now[0], sleep=sleep)
    assert [bucket.take() for _ in range(4)] == [0.0, 0.0, 1.0, 1.0]
    now[0] += 10                                          # idle: refills to burst only
    assert [bucket.take() for _ in range(3)] == [0.0, 0.0, 1.0]


def test_available(fake_ollama):
    ok, msg = fast(fake_ollama).available()
    assert ok and "llama3.2" in msg
    ok, msg = OllamaSummarizer(fake_ollama.url, "qwen3").available()
    assert not ok and "ollama pull qwen3" in msg
    assert fake_ollama.counts["/api/tags"] == 2
    url = fake_ollama.url
    fake_ollama.set_mode("down")
    ok, msg = OllamaSummarizer(url, "llama3.2", timeout=2).available()
    assert not ok and url in msg and "not reachable" in msg
