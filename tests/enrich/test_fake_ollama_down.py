"""The stand-in Ollama's "down" mode must look like a dead server to a client
that already holds a keep-alive connection (the official client does): CI saw
a daemon keep getting LLM summaries after ``set_mode("down")``."""

from __future__ import annotations

import httpx
import pytest
from fakes.ollama_server import FakeOllama


def test_down_refuses_a_client_that_kept_its_connection_open():
    with FakeOllama(models=("m:latest",)) as fake, httpx.Client(base_url=fake.url, timeout=5) as client:
        assert client.get("/api/tags").status_code == 200    # opens a keep-alive connection
        fake.set_mode("down")
        with pytest.raises(httpx.TransportError):
            client.post("/api/chat", json={"model": "m", "messages": [], "stream": False})
        fake.set_mode("normal")
        assert client.get("/api/tags").status_code == 200    # back on the same port
