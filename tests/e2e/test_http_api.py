"""The REST API (`indexd run --http`) against a real daemon on a real git repo.

Port discovery: the daemon is started with ``--http 127.0.0.1:0`` (the OS
picks a free port, no race) and writes ``RUNTIME_DIR/http.json`` ({url, host,
port, pid, token_file}, 0600; removed at shutdown). With INDEXD_HOME the
runtime dir is INDEXD_HOME itself. The same URL is printed on stderr
("indexd: REST API on URL (bearer token in FILE)").

One daemon serves the whole module (starting one costs seconds); the
schemathesis run goes last because its generated requests may leave notes
(annotate) behind.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from testlib import BIN, GitRepo, embedded, wait_until

from indexd.client import Client
from indexd.errors import ConfigError, IndexdError

VOLATILE = {"took_ms", "index_lag_s", "uptime_s", "uptime", "rss_mb", "gc"}


def _env(home: Path) -> dict:
    return os.environ.copy() | {"INDEXD_HOME": str(home), "INDEXD_EMBED_MODEL": "hash",
                                "HF_HUB_OFFLINE": "1"}


class HttpDaemon:
    def __init__(self, home: Path, *args: str):
        self.home = home
        self.log = home / "daemon.out"
        self._out = open(self.log, "ab")
        self.proc = subprocess.Popen([str(BIN / "indexd"), "run", *args], env=_env(home),
                                     stdout=self._out, stderr=subprocess.STDOUT)
        self.socket = home / "indexd.sock"
        self.endpoint = home / "http.json"

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self) -> "HttpDaemon":
        def up():
            if self.proc.poll() is not None:
                raise AssertionError(f"daemon exited rc={self.proc.returncode}:\n{self.output()}")
            if not self.endpoint.exists():
                return False
            try:
                self.call("initialize")
                return True
            except IndexdError:
                return False

        wait_until(up, timeout=60, what="daemon with http")
        info = json.loads(self.endpoint.read_text())
        self.port, self.url = info["port"], info["url"]
        self.token_file = Path(info["token_file"])
        self.token = self.token_file.read_text().strip()
        return self

    def call(self, method: str, **params):
        with Client(self.socket, timeout=60) as c:
            return c.call(method, **params)

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                self.call("shutdown")
                self.proc.wait(timeout=30)
            except Exception:  # noqa: BLE001 - fall back to signals
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        self._out.close()


def req(d: HttpDaemon, method: str, path: str, body=None, token: str | None = "",
         raw: bytes | None = None, headers: dict | None = None):
    """One request on a fresh connection -> (status, headers, parsed JSON). The
    headers are looked up case-insensitively, as HTTP names are."""
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=60)
    try:
        hdrs = dict(headers or {})
        if token == "":
            token = d.token
        if token is not None:
            hdrs["Authorization"] = f"Bearer {token}"
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        if data is not None:
            hdrs.setdefault("Content-Type", "application/json")
        conn.request(method, "/api/v1" + path, body=data, headers=hdrs)
        resp = conn.getresponse()
        payload = resp.read()
        return resp.status, resp.headers, json.loads(payload) if payload else None
    finally:
        conn.close()


def strip(value):
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def _quiet(status: dict) -> bool:
    owners = status["owners"]
    return embedded(status) and owners["queued"] == 0 and not owners["rescan_due"]


@pytest.fixture(scope="module")
def served():
    home = Path(tempfile.mkdtemp(prefix="ixh"))
    repo = GitRepo(home / "repo")
    repo.write("svc/retry.py", "import time\n\n\ndef retry_backoff(n):\n    '''Back off and retry.'''\n"
                               "    time.sleep(n)\n    return n\n\n\nclass Poller:\n"
                               "    def poll(self):\n        return retry_backoff(2)\n")
    repo.write("svc/main.py", "from svc.retry import retry_backoff\n\n\ndef main():\n"
                              "    return retry_backoff(1)\n")
    repo.write("README.md", "# Service\n\n## Retry\n\nRetries with backoff.\n")
    repo.commit()
    from indexd.config import load_settings
    from indexd.realms import add_repos

    add_repos(load_settings(env={"INDEXD_HOME": str(home)}), "work", [str(repo.path)])
    d = HttpDaemon(home, "--http", "127.0.0.1:0").wait_ready()
    d.repo = repo
    d.call("search", query="retry backoff", sync=True)
    wait_until(lambda: d.call("status")["embedding"]["ready"], timeout=60, what="embedder")
    d.call("status", sync=True)
    # The tests compare REST and socket answers whole: the vectors and the owners' blame,
    # made on other threads, must be done first.
    wait_until(lambda: _quiet(d.call("status")), timeout=120, what="vectors and blame done")
    yield d
    d.stop()
    shutil.rmtree(home, ignore_errors=True)


PROTECTED = [("GET", "/status", None), ("POST", "/status", {}),
             ("POST", "/search", {"query": "retry"}),
             ("POST", "/impact", {"target": "svc/retry.py"}),
             ("POST", "/rpc/symbols", {"path": "svc/retry.py"}), ("POST", "/rpc/realm.list", {}),
             ("POST", "/rpc/initialize", {}), ("POST", "/rpc/shutdown", {}),
             ("POST", "/rpc/no.such.method", {})]


def test_endpoint_file_log_line_and_token_file(served):
    d = served
    assert d.url == f"http://127.0.0.1:{d.port}/api/v1"
    assert f"REST API on {d.url} (bearer token in {d.token_file})" in d.output()
    assert d.token_file == d.home / "config" / "http_token"
    assert stat.S_IMODE(d.token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(d.endpoint.stat().st_mode) == 0o600
    assert len(d.token) >= 40


def test_every_protected_endpoint_needs_the_token(served):
    d = served
    for method, path, body in PROTECTED:
        for token, extra in ((None, {}), ("wrong-" + d.token, {}), (d.token[:-1], {}),
                             (None, {"Authorization": f"Basic {d.token}"}),
                             (None, {"Authorization": d.token})):
            status, headers, err = req(d, method, path, body, token=token, headers=extra)
            assert status == 401, (method, path, token, extra, err)
            assert headers.get("WWW-Authenticate", "").startswith("Bearer")
            assert err["error"]["message"].startswith("missing or wrong bearer token")
    # the unauthenticated shutdown did nothing
    assert d.proc.poll() is None and d.call("initialize")["pid"] == d.proc.pid
    assert req(d, "GET", "/health", token=None)[::2] == (200, {"ok": True})
    status, _, doc = req(d, "GET", "/openapi.json", token=None)
    assert status == 200 and doc["openapi"].startswith("3.")


def test_search_answers_like_the_socket(served):
    d = served
    cases = [({"query": "retry backoff", "search_type": "fts"},
              {"query": "retry backoff", "mode": "keyword"}),
             ({"query": "retry", "search_type": "fts", "limit": 1},
              {"query": "retry", "mode": "keyword", "limit": 1}),
             ({"query": "retry", "search_type": "fts",
               "filters": {"realm": "work", "lang": ["python"], "kind": "function", "path": "svc/*"},
               "include_context": True, "context_window": 2},
              {"query": "retry", "mode": "keyword", "realm": "work", "lang": "python",
               "kind": "function", "path": "svc/*", "context": 2}),
             ({"query": "back off and wait", "search_type": "semantic"},
              {"query": "back off and wait", "mode": "semantic"}),
             ({"query": "retry backoff", "search_type": "hybrid"},
              {"query": "retry backoff", "mode": "hybrid"}),
             ({"query": "retry backoff", "search_type": "graph"},
              {"query": "retry backoff", "mode": "hybrid"}),
             ({"query": "retry backoff"}, {"query": "retry backoff"})]
    for body, params in cases:
        status, _, got = req(d, "POST", "/search", body)
        assert status == 200, (body, got)
        want = d.call("search", **params)
        assert strip(got) == strip(want), body
    assert strip(req(d, "POST", "/search", cases[0][0])[2])["results"][0]["symbol"] == "retry_backoff"
    # the generic rpc route takes the method's own params
    status, _, got = req(d, "POST", "/rpc/search", {"query": "retry", "mode": "keyword",
                                                      "context": 1})
    assert status == 200
    assert strip(got) == strip(d.call("search", query="retry", mode="keyword", context=1))


def test_other_methods_answer_like_the_socket(served):
    d = served
    path = str(d.repo.path / "svc/retry.py")
    status, _, got = req(d, "POST", "/rpc/symbols", {"path": path})
    assert status == 200 and strip(got) == strip(d.call("symbols", path=path))
    assert [h["symbol"] for h in got["results"]][:2] == [None, "retry_backoff"]
    status, _, got = req(d, "POST", "/rpc/realm.list", {})
    assert status == 200 and got == d.call("realm.list") == {
        "realms": [{"name": "work", "repos": [str(d.repo.path)]}]}
    status, _, got = req(d, "POST", "/rpc/realm.list")        # no body at all = {}
    assert status == 200 and got == d.call("realm.list")
    status, _, got = req(d, "POST", "/rpc/initialize", {})
    assert status == 200 and strip(got) == strip(d.call("initialize"))
    for method in ("GET", "POST"):
        status, _, got = req(d, method, "/status", None if method == "GET" else {})
        assert status == 200, got
        assert strip(got) == strip(d.call("status")), method
    # impact: 200 with the socket's answer, or 501 while it is not implemented
    status, _, got = req(d, "POST", "/impact", {"target": path, "depth": 2})
    assert status in (200, 501), got
    if status == 200:
        assert strip(got) == strip(d.call("impact", target=path, depth=2))
    else:
        assert got["error"]["data"]["type"] == "NotImplementedYet"


def test_errors_map_to_http_status_with_the_rpc_error(served):
    d = served
    cases = [("/search", {"query": ""}, 400, "InvalidParams"),
             ("/search", {"query": "x", "limit": -1}, 400, "InvalidParams"),
             ("/search", {"query": "x", "search_type": "vibes"}, 400, "InvalidParams"),
             ("/search", {"query": "x", "filters": {"colour": "red"}}, 400, "InvalidParams"),
             ("/search", {"query": "x", "include_context": "yes"}, 400, "InvalidParams"),
             ("/search", {"query": "x", "bogus": 1}, 400, "InvalidParams"),
             ("/search", {"query": "x", "filters": {"realm": "nope"}}, 404, "RealmError"),
             ("/impact", {}, 400, "InvalidParams"),
             ("/impact", {"target": "x", "kinds": 3}, 400, "InvalidParams"),
             ("/rpc/symbols", {"path": "/etc/passwd"}, 404, "RealmError"),
             ("/rpc/symbols", {}, 400, "InvalidParams"),
             ("/rpc/no.such.method", {}, 404, "MethodNotFound"),
             ("/rpc/subscribe", {}, 501, "NotImplementedYet")]
    for path, body, want_status, want_type in cases:
        status, _, got = req(d, "POST", path, body)
        assert status == want_status, (path, body, got)
        assert got["error"]["data"]["type"] == want_type, (path, body, got)
        assert {"code", "message", "data"} <= set(got["error"])
    # the same error object as the socket
    with pytest.raises(IndexdError) as exc:
        d.call("symbols", path="/etc/passwd")
    assert req(d, "POST", "/rpc/symbols", {"path": "/etc/passwd"})[2] == {
        "error": exc.value.to_rpc()}


def test_bad_http_requests(served):
    d = served
    status, _, got = req(d, "POST", "/search", raw=b'{"query": "retry",')
    assert status == 400 and got["error"]["code"] == -32700
    status, _, got = req(d, "POST", "/search", raw=b"\xff\xfe")
    assert status == 400
    status, _, got = req(d, "POST", "/rpc/realm.list", raw=b"[1, 2]")
    assert status == 400 and "object" in got["error"]["message"]
    big = json.dumps({"query": "x" * (1 << 20)}).encode()
    status, _, got = req(d, "POST", "/search", raw=big)
    assert status == 413 and got["error"]["data"]["max_body"] == 1 << 20
    # refused on the header alone, before any body is sent
    reply = _raw(d, b"POST /api/v1/search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                 + d.token.encode() + b"\r\nContent-Length: 99999999\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 413 ")
    assert req(d, "GET", "/nowhere")[0] == 404
    assert req(d, "GET", "/rpc")[0] == 404
    status, headers, _ = req(d, "DELETE", "/status")
    assert status == 405 and headers["Allow"] == "GET, POST"
    assert req(d, "GET", "/search")[0] == 405
    assert _raw(d, b"garbage\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    assert _raw(d, b"GET /api/v1/health HTTP/2.0\r\n\r\n").startswith(b"HTTP/1.1 505 ")
    assert _raw(d, b"POST /api/v1/search HTTP/1.1\r\nAuthorization: Bearer " + d.token.encode()
                + b"\r\nContent-Length: nine\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    # keep-alive: two requests, one connection
    reply = _raw(d, b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n"
                 b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert reply.count(b"HTTP/1.1 200 OK") == 2
    assert d.proc.poll() is None and req(d, "GET", "/health", token=None)[0] == 200


def test_a_refusal_that_leaves_the_body_unread_closes_the_connection(served):
    """A client told 413 on its Content-Length alone (or 505 for a protocol we do
    not speak) used to wait, connection open, for the server to read a body it
    never would: curl and requests hung until their own timeout."""
    d = served
    too_big = (b"POST /api/v1/search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
               + d.token.encode() + b"\r\nContent-Length: 99999999\r\n\r\n")
    for payload, status in ((too_big, b"413"), (b"GET /api/v1/health HTTP/2.0\r\n\r\n", b"505"),
                            (b"POST /api/v1/nowhere HTTP/1.1\r\nHost: x\r\n"
                             b"Content-Length: 5000\r\n\r\n", b"404")):
        reply, closed = _raw_until_closed(d, payload)
        assert reply.startswith(b"HTTP/1.1 " + status + b" "), reply[:80]
        assert b"\r\nconnection: close\r\n" in reply.lower(), reply[:300]
        assert closed, f"the server kept the connection open after {status.decode()}"
    # a refusal after the whole body was read keeps the connection for the next request
    reply, closed = _raw_until_closed(
        d, b"POST /api/v1/search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + d.token.encode()
        + b"\r\nContent-Length: 2\r\n\r\n{["
        b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 400 ") and b"HTTP/1.1 200 OK" in reply and closed, reply[:300]


def test_a_client_that_sends_a_too_big_body_in_full_reads_its_413(served):
    """``requests`` and ``http.client`` send the whole body before reading the answer.
    The server refused on the Content-Length and closed with the body unread, so the
    kernel reset the connection: the client saw BrokenPipeError or ConnectionResetError
    instead of the 413 (test_bad_http_requests failed so on a busy machine; with a
    body larger than the socket buffers it fails every time). Such a body, up to
    ``MAX_DRAIN`` bytes, is now read and dropped before the answer."""
    d = served
    for size in (2 << 20, 6 << 20):
        big = json.dumps({"query": "x" * size}).encode()
        status, headers, got = req(d, "POST", "/search", raw=big)
        assert status == 413 and got["error"]["data"]["max_body"] == 1 << 20
    # a client that asks first (curl's ``Expect: 100-continue``) is answered at once,
    # and never sends the body
    reply, closed = _raw_until_closed(
        d, b"POST /api/v1/search HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
        + d.token.encode() + b"\r\nExpect: 100-continue\r\nContent-Length: 3000000\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 413 ") and closed, reply[:200]
    assert d.proc.poll() is None and req(d, "GET", "/health", token=None)[0] == 200


def _raw_until_closed(d: HttpDaemon, payload: bytes, timeout: float = 60) -> tuple[bytes, bool]:
    """What the server sent, and whether it closed the connection (else the timeout)."""
    s = socket.create_connection(("127.0.0.1", d.port), timeout=timeout)
    try:
        s.sendall(payload)
        chunks = []
        while b := s.recv(65536):
            chunks.append(b)
        return b"".join(chunks), True
    except socket.timeout:
        return b"".join(chunks), False
    finally:
        s.close()


def _raw(d: HttpDaemon, payload: bytes) -> bytes:
    s = socket.create_connection(("127.0.0.1", d.port), timeout=10)
    try:
        s.sendall(payload)
        chunks = []
        while True:
            try:
                b = s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks)
    finally:
        s.close()


def test_openapi_document(served):
    d = served
    status, _, doc = req(d, "GET", "/openapi.json", token=None)
    assert status == 200
    try:
        from schemathesis.specs.openapi.definitions import OPENAPI_30_VALIDATOR
    except ImportError:          # schemathesis moved it: structural checks below still run
        OPENAPI_30_VALIDATOR = None
    if OPENAPI_30_VALIDATOR is not None:
        OPENAPI_30_VALIDATOR.validate(doc)
    assert doc["openapi"] == "3.0.3"
    assert doc["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http", "scheme": "bearer", "description": doc["components"]["securitySchemes"][
            "bearerAuth"]["description"]}
    assert doc["security"] == [{"bearerAuth": []}]
    paths = doc["paths"]
    for name in d.call("initialize")["capabilities"]["methods"]:
        assert "post" in paths[f"/api/v1/rpc/{name}"], name
    for p in ("/api/v1/search", "/api/v1/impact", "/api/v1/status", "/api/v1/health",
              "/api/v1/openapi.json"):
        assert p in paths
    assert set(paths["/api/v1/status"]) == {"get", "post"}
    assert paths["/api/v1/health"]["get"]["security"] == []
    assert paths["/api/v1/openapi.json"]["get"]["security"] == []
    search = paths["/api/v1/search"]["post"]
    assert search["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/SearchRequest"}
    props = doc["components"]["schemas"]["SearchRequest"]["properties"]
    assert props["search_type"]["enum"] == ["fts", "semantic", "graph", "hybrid"]
    assert set(props["filters"]["properties"]) == {"realm", "repo", "kind", "lang", "path"}
    for path, ops in paths.items():
        for op in ops.values():
            assert "200" in op["responses"]
            if op.get("security") != []:
                for code in ("400", "401", "404", "413", "500", "503"):
                    assert op["responses"][code]["content"]["application/json"]["schema"] == {
                        "$ref": "#/components/schemas/Error"}, (path, code)
    # every $ref resolves
    refs = set()

    def walk(v):
        if isinstance(v, dict):
            if "$ref" in v:
                refs.add(v["$ref"])
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(doc)
    for ref in refs:
        assert ref.split("/")[-1] in doc["components"]["schemas"], ref


# Methods the bound probes below never call: they stop the daemon or change
# its realms, whatever the params.
NEVER_PROBED = {"shutdown", "realm.add", "realm.remove", "reindex", "purge", "pause", "resume"}


def _probe_params(d: HttpDaemon, schema: dict) -> dict:
    """The required params of a method, filled with values that pass their checks."""
    filler = {"query": "retry", "target": str(d.repo.path / "svc/retry.py"),
              "path": str(d.repo.path / "svc/retry.py"), "text": "note", "realm": "work"}
    return {name: filler.get(name, "x") for name in schema.get("required", [])}


def _refused_for(d: HttpDaemon, method: str, params: dict, name: str) -> bool:
    """True when the socket method refuses ``params`` with InvalidParams naming ``name``."""
    try:
        d.call(method, **params)
    except IndexdError as exc:
        return exc.code == -32602 and name in exc.message
    return False


def test_openapi_document_agrees_with_the_socket_methods(served):
    """Every socket method is in the document with its own params (not a
    catch-all object), and each numeric bound the document states is the one
    the socket method enforces: max+1 and min-1 refused naming the param, the
    bound itself accepted."""
    d = served
    doc = req(d, "GET", "/openapi.json", token=None)[2]
    wrong = []
    for name in d.call("initialize")["capabilities"]["methods"]:
        op = doc["paths"].get(f"/api/v1/rpc/{name}", {}).get("post")
        if op is None:
            wrong.append((name, "not in the document"))
            continue
        schema = op.get("requestBody", {}).get("content", {}).get(
            "application/json", {}).get("schema", {})
        if "properties" not in schema or op["summary"] == f"The {name} method":
            wrong.append((name, "documented as a catch-all object, not its own params"))
            continue
        if name in NEVER_PROBED:
            continue
        base = _probe_params(d, schema)
        for pname, prop in schema["properties"].items():
            if prop.get("type") not in ("integer", "number"):
                continue
            step = 1 if prop["type"] == "integer" else 0.5
            lo, hi = prop.get("minimum"), prop.get("maximum")
            if lo is None or hi is None:
                wrong.append((name, pname, "no documented bounds"))
                continue
            for bad in (hi + step, lo - step):
                if not _refused_for(d, name, base | {pname: bad}, pname):
                    wrong.append((name, pname, f"{bad} accepted; the document says {lo}..{hi}"))
            if _refused_for(d, name, base | {pname: hi}, pname):
                wrong.append((name, pname, f"{hi} refused; the document says {lo}..{hi}"))
    assert not wrong, "\n".join(map(repr, wrong))


# Operations left out of the fuzz run: they stop the daemon, change the
# realms (a generated path could be "/"), wait minutes (reindex wait=true),
# or are socket-only by design (subscribe: always 501).
FUZZ_EXCLUDE = r"/rpc/(shutdown|realm\.add|realm\.remove|reindex|subscribe)$"


def test_schemathesis_finds_no_server_errors(served, tmp_path):
    d = served
    st = shutil.which("st", path=str(BIN)) or shutil.which("schemathesis", path=str(BIN))
    if st is None:
        pytest.skip("schemathesis is not installed (pip install -e .[test])")
    # 503 is the documented "not ready, retry" answer (status sync=true with
    # timeout=0 times out by design); anything else 5xx is a failure.
    config = tmp_path / "schemathesis.toml"
    config.write_text('[checks.not_a_server_error]\nexpected-statuses = ["2xx", "3xx", "4xx", 503]\n')
    cmd = [st, "--config-file", str(config), "--no-color", "run", f"{d.url}/openapi.json",
           "--checks", "not_a_server_error",
           "--max-examples", "30", "--seed", "1234", "--exclude-path-regex", FUZZ_EXCLUDE,
           "--header", f"Authorization: Bearer {d.token}", "--request-timeout", "30",
           "--phases", "examples,coverage,fuzzing", "--workers", "1"]
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path,
                          env=os.environ.copy() | {"NO_COLOR": "1"})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"schemathesis failed ({time.monotonic() - started:.0f}s):\n{out[-8000:]}"
    assert "Tested: 17" in out or "Tested:" in out, out[-3000:]
    print(out[-1500:])
    assert d.proc.poll() is None and req(d, "GET", "/health", token=None)[0] == 200


# ------------------------------------------------------- refusals (no daemon)

def test_non_loopback_bind_is_refused_without_the_flag(indexd_home):
    proc = subprocess.run([str(BIN / "indexd"), "run", "--http", "0.0.0.0:0"],
                          env=_env(indexd_home), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert "not a loopback address" in proc.stderr and "--http-allow-remote" in proc.stderr
    assert not (indexd_home / "http.json").exists()
    bad = subprocess.run([str(BIN / "indexd"), "run", "--http", "nonsense"],
                         env=_env(indexd_home), capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "HOST:PORT" in bad.stderr


def test_binding_rules_and_token_file_rules(indexd_home):
    from indexd.config import load_settings
    from indexd.server.http_api import is_loopback, load_or_create_token, parse_http_address
    from indexd.server.rest_app import RestApi as HttpApi

    for host in ("127.0.0.1", "127.0.0.2", "::1", "localhost"):
        assert is_loopback(host)
        HttpApi(None, host, 0, "t" * 20)
    for host in ("0.0.0.0", "::", "192.168.1.4", "example.com", ""):
        assert not is_loopback(host)
        with pytest.raises(ConfigError, match="--http-allow-remote"):
            HttpApi(None, host, 0, "t" * 20)
    HttpApi(None, "0.0.0.0", 0, "t" * 20, allow_remote=True)      # allowed when asked
    assert parse_http_address("127.0.0.1:8080") == ("127.0.0.1", 8080)
    assert parse_http_address("[::1]:0") == ("::1", 0)
    assert parse_http_address(":7") == ("127.0.0.1", 7)
    for bad in ("127.0.0.1", "x:y", "h:70000", ""):
        with pytest.raises(ConfigError):
            parse_http_address(bad)

    settings = load_settings()
    token = load_or_create_token(settings)
    path = settings.paths.config_dir / "http_token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_token(settings) == token          # stable across restarts
    os.chmod(path, 0o644)
    with pytest.raises(ConfigError, match=f"chmod 600 {path}"):
        load_or_create_token(settings)
    os.chmod(path, 0o600)
    assert load_or_create_token(settings) == token
    path.write_text("")
    with pytest.raises(ConfigError, match="delete it"):
        load_or_create_token(settings)


def test_bad_token_file_stops_the_daemon_with_the_fix(indexd_home):
    cfg = indexd_home / "config"
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "http_token").write_text("x" * 43 + "\n")
    os.chmod(cfg / "http_token", 0o640)
    proc = subprocess.run([str(BIN / "indexd"), "run", "--http", "127.0.0.1:0"],
                          env=_env(indexd_home), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert f"chmod 600 {cfg / 'http_token'}" in proc.stderr


def test_owners_over_rest_answers_like_the_socket(served):
    d = served
    path = str(d.repo.path / "svc/retry.py")
    status, _, got = req(d, "POST", "/rpc/owners", {"target": f"{path}::Poller.poll"})
    assert status == 200 and strip(got) == strip(d.call("owners", target=f"{path}::Poller.poll"))
    assert [(o["name"], o["lines"]) for o in got["owners"]] == [("Test", 2)]
    status, _, got = req(d, "POST", "/rpc/owners", {"target": path, "limit": 0})
    assert status == 400 and got["error"]["data"]["type"] == "InvalidParams"
    status, _, got = req(d, "POST", "/rpc/owners", {"target": "svc/none.py"})
    assert status == 404 and "no file matches" in got["error"]["message"]
