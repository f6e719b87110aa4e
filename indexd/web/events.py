"""Server-sent events: the daemon's status notifications, for browsers.

The socket's ``subscribe`` pushes ``status`` notifications to subscribed
connections; EventSource cannot speak that protocol, so the REST server
relays the same notifications as ``text/event-stream`` on
``GET /api/v1/events``. Every stream starts with the current status
(``event: status``) and gets one event per notification after that, plus a
comment line every `HEARTBEAT_S` so a dead client is noticed (the write fails)
and proxies keep the line open.
"""

from __future__ import annotations

import asyncio
import json

HEARTBEAT_S = 15.0
QUEUE_MAX = 64        # events kept for a slow client; the oldest is dropped first
MAX_STREAMS = 32


class EventHub:
    """Fan-out of notifications to open streams. Used on the event loop only."""

    def __init__(self):
        self._queues: set[asyncio.Queue] = set()

    @property
    def streams(self) -> int:
        return len(self._queues)

    def publish(self, event: str, params: dict) -> None:
        data = encode(event, params)
        for q in list(self._queues):
            if q.full():
                # A slow reader gets the newest state, not a backlog: each
                # status event stands on its own.
                q.get_nowait()
            q.put_nowait(data)

    def open(self) -> asyncio.Queue | None:
        if len(self._queues) >= MAX_STREAMS:
            return None
        q: asyncio.Queue = asyncio.Queue(QUEUE_MAX)
        self._queues.add(q)
        return q

    def close(self, q: asyncio.Queue) -> None:
        self._queues.discard(q)

    def close_all(self) -> None:
        """Ends every stream (the daemon is stopping) without waiting for a heartbeat."""
        for q in list(self._queues):
            while q.full():
                q.get_nowait()
            q.put_nowait(None)


def encode(event: str, params) -> bytes:
    # json.dumps writes no raw newlines, so the data stays one `data:` line.
    return f"event: {event}\ndata: {json.dumps(params, default=str)}\n\n".encode()
