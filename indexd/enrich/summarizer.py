"""Summaries of entries: from docstrings, or from a local Ollama model.

Owns ``docstring_summary`` (free, always available), ``OllamaSummarizer``
(rate-limited, retried, and falling back to the docstring summary on any
failure: it never raises to the caller) and ``make_summarizer`` for the
``summarize = off | docstring | llm`` setting.

Must not import the store, lancedb, torch or the daemon; ``ollama`` is
imported lazily. Row contents are sent to the configured Ollama URL only and
are never logged: the caller guarantees secret files never reach here.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Protocol

from ..errors import ConfigError

log = logging.getLogger(__name__)

SUMMARY_CHARS = 200          # docstring summaries
LLM_MAX_CHARS = 800          # longer than this is not "1-2 sentences": garbage
BODY_PROMPT_LINES = 60
MODES = ("off", "docstring", "llm")
DOC_KINDS = ("section", "file", "key")
# Leading words of a signature that say what the kind already says.
_SIG_KEYWORDS = {"def", "async", "fn", "func", "function", "class", "struct", "enum",
                 "interface", "trait", "pub", "export", "default", "static", "public",
                 "private", "protected", "type", "impl", "module", "macro_rules!"}
_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.S | re.I)
_FENCE = re.compile(r"^```[\w-]*\n?|\n?```$")
_BOILERPLATE = re.compile(r"^(summary|answer)\s*:\s*", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s")

SYSTEM_PROMPT = (
    "You write summaries for a code search index. Reply with one or two plain "
    "sentences saying what the given symbol does and why one would use it. "
    "No preamble, no markdown, no code.")
FILE_PROMPT = (
    "You write summaries for a code search index. Given the symbols a file "
    "defines, reply with one or two plain sentences saying what the file is for. "
    "No preamble, no markdown.")
RELATION_PROMPT = (
    "You describe relationships between files for a code search index. Given two "
    "files, what each is for and the evidence of how the first uses the second, reply "
    "with one plain sentence saying what the first file uses the second for. "
    "No preamble, no markdown.")


class Summarizer(Protocol):
    name: str

    def summarize(self, rows: list[dict]) -> list[tuple[str, str]]: ...

    def summarize_file(self, path: str, symbol_summaries) -> tuple[str, str]: ...

    def describe_relation(self, pair: dict) -> tuple[str, str]: ...

    def available(self) -> tuple[bool, str]: ...


# ------------------------------------------------------------ docstring summary

def docstring_summary(row: dict) -> str:
    """First paragraph (or sentence) of the doc, else one built from the signature."""
    text = _first_paragraph(row.get("doc") or "")
    if not text and row.get("kind") in DOC_KINDS:
        text = _first_paragraph(_strip_headings(row.get("body") or ""))
    if text:
        return _shorten(text, SUMMARY_CHARS)
    return _from_signature(row)


def _first_paragraph(text: str) -> str:
    for para in re.split(r"\n\s*\n", text.strip()):
        joined = " ".join(para.split())
        if joined:
            return joined
    return ""


def _strip_headings(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    first = _SENTENCE.split(text, 1)[0]
    if len(first) <= limit:
        return first
    cut = text[:limit - 1]
    return cut[:cut.rfind(" ")] + "…" if " " in cut else cut + "…"


def _from_signature(row: dict) -> str:
    kind = row.get("kind") or "symbol"
    sig = " ".join((row.get("signature") or "").split())
    words = sig.split(" ")
    while words and words[0] in _SIG_KEYWORDS:
        words.pop(0)
    what = " ".join(words) or row.get("qualname") or row.get("name") or ""
    return _shorten(f"{kind} {what}".strip(), SUMMARY_CHARS)


def _fallback_file(path: str, symbol_summaries) -> str:
    names = [s[0] if isinstance(s, tuple) else s for s in symbol_summaries]
    if not names:
        return f"file {path}"
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    return _shorten(f"file {path}: {'; '.join(names[:5])}{more}", SUMMARY_CHARS)


class OffSummarizer:
    """``summarize = "off"``: empty summary, empty source (the row defaults)."""

    name = "off"

    def summarize(self, rows: list[dict]) -> list[tuple[str, str]]:
        return [("", "") for _ in rows]

    def summarize_file(self, path: str, symbol_summaries) -> tuple[str, str]:
        return "", ""

    def describe_relation(self, pair: dict) -> tuple[str, str]:
        return pair["evidence"], "evidence"

    def available(self) -> tuple[bool, str]:
        return True, "summaries are off"


class DocstringSummarizer:
    """``summarize = "docstring"``: no model, no network."""

    name = "docstring"

    def summarize(self, rows: list[dict]) -> list[tuple[str, str]]:
        return [(docstring_summary(r), "docstring") for r in rows]

    def summarize_file(self, path: str, symbol_summaries) -> tuple[str, str]:
        return _fallback_file(path, symbol_summaries), "docstring"

    def describe_relation(self, pair: dict) -> tuple[str, str]:
        return pair["evidence"], "evidence"

    def available(self) -> tuple[bool, str]:
        return True, "docstring summaries need no model"


# ------------------------------------------------------------ rate limiting

class TokenBucket:
    """``rate_per_minute`` tokens a minute, at most ``burst`` saved up.

    With burst 1 (the default) calls are simply spaced 60/rate seconds apart,
    which is what a local server being shared with an editor wants.
    """

    def __init__(self, rate_per_minute: float, burst: int = 1,
                 clock=time.monotonic, sleep=time.sleep):
        self.rate = max(rate_per_minute, 1e-6) / 60.0
        self.burst = max(1, burst)
        self.tokens = float(self.burst)
        self.clock, self.sleep = clock, sleep
        self.updated = clock()
        self._lock = threading.Lock()

    def take(self) -> float:
        """Block until a token is available; returns the seconds waited."""
        with self._lock:
            now = self.clock()
            self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
            self.updated = now
            wait = 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate
            self.tokens -= 1   # may go negative: the debt is the wait below
        if wait > 0:
            self.sleep(wait)
        return wait


# ------------------------------------------------------------ Ollama

class _Retryable(Exception):
    """A transient failure (timeout, 5xx, connection): retry with backoff."""


class _Fatal(Exception):
    """Retrying will not help for a while (model not pulled, 4xx): open the breaker."""


class _Garbage(Exception):
    """The server answered but not with a usable summary: fall back for this row."""


@dataclass
class SummaryStats:
    requests: int = 0       # HTTP requests sent (retries included)
    retries: int = 0
    llm: int = 0            # rows summarised by the model
    fallbacks: int = 0      # rows given the docstring summary instead
    waited_s: float = 0.0   # time spent in the rate limiter
    reasons: dict = field(default_factory=dict)   # breaker_open|fatal|unreachable|garbage -> n
    error: str | None = None   # why the model is not being used right now (status shows it)


class OllamaSummarizer:
    """1-2 sentence summaries from an Ollama chat model, never raising.

    Every request takes a token from the rate limiter. Timeouts, 5xx and
    connection errors are retried ``retries`` times with exponential backoff;
    after that (or on a 4xx such as a model that is not pulled) the breaker
    opens for ``cooldown_s`` so a dead server costs one timeout, not one per
    row, and rows get ``docstring_summary`` with source "docstring".
    """

    name = "llm"

    def __init__(self, url: str, model: str, timeout: float = 30, max_per_minute: float = 120,
                 retries: int = 3, backoff_s: float = 0.5, cooldown_s: float = 60.0,
                 burst: int = 1):
        self.url, self.model, self.timeout = url, model, timeout
        self.retries, self.backoff_s, self.cooldown_s = max(0, retries), backoff_s, cooldown_s
        self.bucket = TokenBucket(max_per_minute, burst)
        self.stats = SummaryStats()
        self._client = None
        self._open_until = 0.0
        self._logged: set[str] = set()
        self._lock = threading.Lock()

    # -- public

    def summarize(self, rows: list[dict]) -> list[tuple[str, str]]:
        return [self._one(_symbol_messages(r), lambda r=r: docstring_summary(r)) for r in rows]

    def summarize_file(self, path: str, symbol_summaries) -> tuple[str, str]:
        items = [s if isinstance(s, tuple) else (s, "") for s in symbol_summaries]
        if not items:
            return _fallback_file(path, items), "docstring"
        return self._one(_file_messages(path, items), lambda: _fallback_file(path, items))

    def describe_relation(self, pair: dict) -> tuple[str, str]:
        """One sentence for a file pair: ``pair`` has src, dst (paths), evidence (the
        sentence built from the edges) and src_summary, dst_summary; falls back to
        the evidence (source "evidence")."""
        text, source = self._one(_relation_messages(pair), lambda: pair["evidence"])
        return (text, "llm") if source == "llm" else (pair["evidence"], "evidence")

    def available(self) -> tuple[bool, str]:
        """Server reachable and model pulled (``/api/tags``), for ``doctor``."""
        try:
            listed = self._get_client().list()
            names = {m.model for m in listed.models if m.model}
        except Exception as exc:  # noqa: BLE001 - any failure means "not available"
            from .embedder import describe_ollama_error

            return False, (f"Ollama at {self.url} is not reachable ({describe_ollama_error(exc)}); "
                           "start it with `ollama serve` or set ollama_url")
        if self.model in names or f"{self.model}:latest" in names:
            return True, f"Ollama at {self.url} has model {self.model}"
        return False, (f"Ollama at {self.url} does not have model {self.model!r} "
                       f"(has: {', '.join(sorted(names)) or 'none'}); run `ollama pull {self.model}`")

    # -- one request, with breaker, retries and fallback

    def _one(self, messages: list[dict], fallback) -> tuple[str, str]:
        if time.monotonic() < self._open_until:
            return self._fallback(fallback, "breaker_open")
        try:
            text = self._with_retries(masked(messages))
        except _Fatal as exc:
            self._trip(str(exc))
            return self._fallback(fallback, "fatal")
        except _Retryable as exc:
            self._trip(f"no answer after {self.retries} retries ({exc})")
            return self._fallback(fallback, "unreachable")
        except _Garbage as exc:
            self._log_once("garbage", f"unusable reply ({exc}), using the docstring summary")
            return self._fallback(fallback, "garbage")
        with self._lock:
            self.stats.llm += 1
            self.stats.error = None
        return text, "llm"

    def _with_retries(self, messages: list[dict]) -> str:
        for attempt in range(self.retries + 1):
            try:
                return self._request(messages)
            except _Retryable:
                if attempt == self.retries:
                    raise
                with self._lock:
                    self.stats.retries += 1
                time.sleep(self.backoff_s * (2 ** attempt))
        raise AssertionError("unreachable")

    def _request(self, messages: list[dict]) -> str:
        waited = self.bucket.take()
        with self._lock:
            self.stats.requests += 1
            self.stats.waited_s += waited
        try:
            resp = self._get_client().chat(model=self.model, messages=messages,
                                           options={"temperature": 0}, stream=False)
        except Exception as exc:  # noqa: BLE001 - sorted into the three kinds
            raise _classify(exc, self.url, self.model) from exc
        return clean_summary(getattr(getattr(resp, "message", None), "content", None))

    def _trip(self, reason: str) -> None:
        self._open_until = time.monotonic() + self.cooldown_s
        self.stats.error = (f"Ollama at {self.url} (model {self.model}): {reason}; using "
                            f"docstring summaries and evidence sentences, retrying in "
                            f"{self.cooldown_s:.0f}s")
        self._log_once(reason, f"LLM summaries off for {self.cooldown_s:.0f}s, using "
                               f"docstring summaries: {reason}")

    def _fallback(self, fallback, reason: str) -> tuple[str, str]:
        # Logged where the reason arises (_trip, _log_once), never per row.
        with self._lock:
            self.stats.fallbacks += 1
            self.stats.reasons[reason] = self.stats.reasons.get(reason, 0) + 1
        return fallback(), "docstring"

    def _log_once(self, key: str, message: str) -> None:
        if key not in self._logged:
            self._logged.add(key)
            log.warning("ollama %s model %s: %s", self.url, self.model, message)

    def _get_client(self):
        if self._client is None:
            import ollama

            self._client = ollama.Client(host=self.url, timeout=self.timeout)
        return self._client


def _classify(exc: Exception, url: str, model: str) -> Exception:
    import httpx
    import ollama

    if isinstance(exc, ollama.ResponseError):
        if exc.status_code >= 500 or exc.status_code in (408, 429):
            return _Retryable(f"HTTP {exc.status_code}")
        if exc.status_code == 404:
            return _Fatal(f"model {model!r} not found at {url}; run `ollama pull {model}`")
        return _Fatal(f"HTTP {exc.status_code}: {str(exc.error)[:200]}")
    if isinstance(exc, (httpx.TimeoutException, ConnectionError, httpx.TransportError)):
        return _Retryable(type(exc).__name__)
    if isinstance(exc, (ValueError, TypeError, AttributeError)):  # bad JSON, wrong shape
        return _Garbage(type(exc).__name__)
    return _Garbage(f"{type(exc).__name__}")


def clean_summary(content) -> str:
    """The model's reply as one line, or ``_Garbage`` when it is not a summary."""
    if not isinstance(content, str):
        raise _Garbage("no text content")
    text = _THINK.sub("", content).strip()
    text = _FENCE.sub("", text).strip()
    text = _BOILERPLATE.sub("", text)
    text = " ".join(text.split())
    if not text:
        raise _Garbage("empty reply")
    if len(text) > LLM_MAX_CHARS:
        raise _Garbage(f"reply of {len(text)} chars")
    if text.startswith("{") and '"error"' in text:
        raise _Garbage("error object as reply")
    return text


def _symbol_messages(row: dict) -> list[dict]:
    body = "\n".join((row.get("body") or "").splitlines()[:BODY_PROMPT_LINES])
    lines = [f"Symbol: {row.get('qualname') or row.get('name')} ({row.get('kind')}, "
             f"{row.get('lang') or 'unknown language'}, in {row.get('path')})"]
    if row.get("signature"):
        lines.append(f"Signature: {row['signature']}")
    if row.get("doc"):
        lines.append(f"Docstring: {row['doc'][:1000]}")
    if body:
        lines.append(f"Code (first {BODY_PROMPT_LINES} lines):\n{body}")
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": "\n".join(lines)}]


def masked(messages: list[dict]) -> list[dict]:
    """The messages with every secret value the content check finds masked: stored
    text is masked at scan time already, this also covers what a prompt adds (paths,
    names, summaries) so nothing secret-looking leaves for the model."""
    from ..scan.secrets import redact_secrets

    out = []
    for m in messages:
        red = redact_secrets(m.get("content") or "")
        out.append(m | {"content": red.text} if red is not None else m)
    return out


def _relation_messages(pair: dict) -> list[dict]:
    lines = [f"From: {pair['src']}" + (f" ({pair['src_summary']})" if pair.get("src_summary") else ""),
             f"To: {pair['dst']}" + (f" ({pair['dst_summary']})" if pair.get("dst_summary") else ""),
             f"Evidence: {pair['evidence']}"]
    return [{"role": "system", "content": RELATION_PROMPT},
            {"role": "user", "content": "\n".join(lines)}]


def _file_messages(path: str, items: list[tuple[str, str]]) -> list[dict]:
    listed = "\n".join(f"- {name}: {summary}" if summary else f"- {name}"
                       for name, summary in items[:60])
    return [{"role": "system", "content": FILE_PROMPT},
            {"role": "user", "content": f"File: {path}\nSymbols:\n{listed}"}]


# ------------------------------------------------------------ settings

def make_summarizer(settings) -> Summarizer:
    mode = (settings.summarize or "").strip().lower()
    if mode == "off":
        return OffSummarizer()
    if mode == "docstring":
        return DocstringSummarizer()
    if mode == "llm":
        if not settings.ollama_model:
            raise ConfigError(
                f'summarize = "llm" needs ollama_model: set ollama_model in '
                f"{settings.paths.config_file} or INDEXD_OLLAMA_MODEL (e.g. llama3.2), "
                'or set summarize = "docstring"')
        return OllamaSummarizer(settings.ollama_url, settings.ollama_model)
    raise ConfigError(f"summarize must be one of {', '.join(MODES)}, got {settings.summarize!r} "
                      f"(set summarize in {settings.paths.config_file} or INDEXD_SUMMARIZE)")
