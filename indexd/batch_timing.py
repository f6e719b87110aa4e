"""Where one batch's save -> searchable time went, for status and the log.

Milestones are wall-clock times (``time.time``, the debouncer's clock) shown
as ms after the batch's first watch event: ``due`` (the debouncer let it
go), ``start`` (the worker took it), ``planned``, ``searchable`` (the hot
keyword index committed the new rows: keyword search finds them from here),
``written`` (the pipeline's run returned: file rows, deletions, FTS upkeep),
``embed_queued`` (the changed files jumped the embedding queue), ``graph``
and ``done``; ``embedded`` (semantic search finds the batch's entries) is
marked at the write when every row had its vector then (cached, or a save's
few texts embedded with it), else added later by ``with_embedded`` once a
prioritized embed step stored them. ``stages_ms`` are
durations from the pipeline's own stage clocks.
"""

from __future__ import annotations

import time

ORDER = ("due", "start", "planned", "searchable", "written", "embed_queued", "graph", "done")
SHOWN = ORDER + ("embedded",)


class BatchTiming:
    def __init__(self, first_event: float | None, due: float | None):
        now = time.time()
        self.due = due or now
        self.event = min(first_event or self.due, self.due)
        self.marks: dict[str, float] = {"due": self.due}

    def mark(self, name: str, at: float | None = None) -> None:
        self.marks[name] = time.time() if at is None else at

    def to_json(self, stages: dict | None = None, hot_s: float = 0.0) -> dict:
        ms = {name: round((self.marks[name] - self.event) * 1000, 1)
              for name in SHOWN if name in self.marks}
        out = {"event_at": self.event, "ms": ms}
        if stages is not None:
            out["stages_ms"] = _stage_ms(stages, hot_s, self.marks)
        return out


def _stage_ms(stages: dict, hot_s: float, marks: dict) -> dict:
    """The pipeline's stage wall times (pipeline.Stages.to_json) as ms; the hot
    index refresh is part of the store stage there, shown apart here."""
    def wall(name):
        return (stages.get(name) or {}).get("wall_s") or 0.0

    out = {"plan": (marks.get("planned", 0) - marks.get("start", 0)) if "planned" in marks else 0.0,
           "read_parse": wall("workers"), "store": max(0.0, wall("store") - hot_s),
           "hot_index": hot_s, "fts": wall("fts"),
           "graph": (marks["graph"] - marks["embed_queued"]) if "graph" in marks
           and "embed_queued" in marks else 0.0}
    return {k: round(v * 1000, 1) for k, v in out.items()}


def with_embedded(timing: dict | None, embedded_at: float | None) -> dict | None:
    """The batch's timing plus ``embedded`` when a prioritized embedding step
    finished after the batch queued its files."""
    if not timing or not embedded_at or "embedded" in timing["ms"]:
        return timing
    queued = timing["ms"].get("embed_queued")
    if queued is None or embedded_at < timing["event_at"] + queued / 1000:
        return timing
    ms = dict(timing["ms"], embedded=round((embedded_at - timing["event_at"]) * 1000, 1))
    return dict(timing, ms=ms)
