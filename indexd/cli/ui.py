"""`indexctl ui`: open the web UI signed in, without putting the token in a URL.

The daemon's REST server (``indexd run --http``) publishes where it listens in
``runtime_dir/http.json``. This asks it, with the bearer token, for a one-time
sign-in code and opens (or prints, ``--url``) ``/ui/login?code=...``: the
browser trades the code for an HttpOnly cookie and lands on a clean URL, and
the code is dead after one use or a minute. Imports no engine (a client).
"""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import ConfigError, DaemonNotRunning, IndexdError

ENDPOINT_FILE = "http.json"      # written by indexd.server.http_api.publish_endpoint
NO_HTTP = ("the daemon serves no web UI: start it with an HTTP address, e.g. "
           "`indexd run --http 127.0.0.1:7777`")


def login_url(settings, timeout: float = 10.0) -> dict:
    """{"url", "expires_in_s"}: a single-use sign-in address of the running daemon."""
    endpoint = _endpoint(Path(settings.paths.runtime_dir) / ENDPOINT_FILE)
    token = _token(Path(endpoint["token_file"]))
    parts = urlsplit(endpoint["url"])
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request("POST", "/api/v1/ui/code", body=b"{}",
                     headers={"Authorization": f"Bearer {token}",
                              "Content-Type": "application/json"})
        resp = conn.getresponse()
        body = json.loads(resp.read() or b"{}")
    except (OSError, http.client.HTTPException) as exc:
        raise DaemonNotRunning(f"the web UI at {endpoint['url']} does not answer ({exc}); "
                               f"is the daemon running? (indexd run --http ...)") from None
    except ValueError:
        raise IndexdError("the web UI answered something that is not JSON") from None
    finally:
        conn.close()
    if resp.status != 200:
        err = body.get("error") or {}
        raise IndexdError(f"the daemon refused a sign-in code: {err.get('message', resp.status)}")
    return {"url": body["url"], "expires_in_s": body["expires_in_s"]}


def _endpoint(path: Path) -> dict:
    try:
        info = json.loads(path.read_text())
    except FileNotFoundError:
        raise DaemonNotRunning(NO_HTTP, {"endpoint_file": str(path)}) from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: unreadable ({exc}); restart the daemon to rewrite it") from None
    if not isinstance(info, dict) or not {"url", "token_file"} <= set(info):
        raise ConfigError(f"{path} lacks url or token_file; restart the daemon to rewrite it")
    return info


def _token(path: Path) -> str:
    try:
        token = path.read_text().strip()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the HTTP token: {exc.strerror}") from None
    if not token:
        raise ConfigError(f"{path} holds no token; delete it and restart the daemon")
    return token


def open_ui(settings, print_only: bool) -> dict:
    """The sign-in address, opened in the default browser unless ``print_only``."""
    result = login_url(settings)
    result["opened"] = False
    if not print_only:
        import webbrowser

        result["opened"] = bool(webbrowser.open(result["url"]))
    return result
