"""The web UI's HTTP side without a browser: headers, static paths, cookie
rules, the event stream and `indexctl ui`. Runs where chromium is missing too."""

from __future__ import annotations

import http.client
import json
import re
import socket
import subprocess
from pathlib import Path

import pytest
from testlib import BIN, wait_until

from indexd.web.assets import PAGES, STATIC


def get(d, path: str, headers: dict | None = None, method: str = "GET", body: bytes | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def session_cookie(d) -> str:
    code = d.login_url().rsplit("code=", 1)[1]
    status, headers, _ = get(d, f"/ui/login?code={code}")
    assert status == 303 and headers["location"] == "/ui/"
    return headers["set-cookie"].split(";", 1)[0]


def test_pages_and_files_have_their_types_and_a_strict_csp(ui_daemon):
    for path, ctype in (("/ui/", "text/html"), ("/ui/status", "text/html"),
                        ("/ui/static/app.css", "text/css"),
                        ("/ui/static/vendor/cytoscape.min.js", "text/javascript")):
        status, headers, body = get(ui_daemon, path)
        assert status == 200 and headers["content-type"].startswith(ctype), (path, headers)
        csp = headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe" not in csp
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"
    status, headers, _ = get(ui_daemon, "/")
    assert status == 303 and headers["location"] == "/ui/"


def test_no_page_has_inline_script_or_style():
    for name in PAGES.values():
        html = (STATIC / name).read_text()
        scripts = re.findall(r"<script\b[^>]*>", html)
        assert scripts and all('src="/ui/static/' in tag for tag in scripts), name
        assert re.search(r"<script\b[^>]*>\s*[^<\s]", html) is None, name    # nothing inline
        assert "<style" not in html and " style=" not in html and "onclick" not in html, name


@pytest.mark.parametrize("path", [
    "/ui/static/../../server/http_api.py", "/ui/static/%2e%2e/%2e%2e/server/http_api.py",
    "/ui/static/..%2f..%2fserver%2fhttp_api.py", "/ui/static//etc/passwd",
    "/ui/static/vendor/../../__init__.py", "/ui/static/../assets.py", "/ui/static/",
    "/ui/static/app.css/..", "/ui/..%2f..%2fpyproject.toml", "/ui/static/%00app.css"])
def test_static_paths_cannot_leave_the_folder(ui_daemon, path):
    status, headers, body = get(ui_daemon, path)
    assert status in (400, 404), (path, status)
    assert b"import" not in body and b"root:" not in body


def test_a_page_is_get_only(ui_daemon):
    status, headers, _ = get(ui_daemon, "/ui/", method="POST", body=b"{}")
    assert status == 405 and headers["allow"] == "GET"


def test_a_sign_in_code_is_single_use_and_a_bad_one_gets_no_cookie(ui_daemon):
    code = ui_daemon.login_url().rsplit("code=", 1)[1]
    assert get(ui_daemon, f"/ui/login?code={code}")[0] == 303
    for bad in (code, "x" * 32, ""):
        status, headers, body = get(ui_daemon, f"/ui/login?code={bad}")
        assert status == 401 and "set-cookie" not in headers
        assert b"indexctl ui" in body


def test_the_cookie_is_good_only_from_our_own_pages(ui_daemon):
    cookie = session_cookie(ui_daemon)
    ours = {"Cookie": cookie}
    assert get(ui_daemon, "/api/v1/status", ours)[0] == 200
    assert get(ui_daemon, "/api/v1/search", ours, "POST", b'{"query": "retry"}')[0] == 200
    host = f"127.0.0.1:{ui_daemon.port}"
    for extra in ({"Origin": "http://evil.example"}, {"Host": f"evil.example:{ui_daemon.port}"},
                  {"Sec-Fetch-Site": "cross-site"}, {"Origin": f"http://{host}.evil.example"}):
        status, _, _ = get(ui_daemon, "/api/v1/search", ours | extra, "POST", b'{"query": "x"}')
        assert status == 401, extra
    # A page cannot mint sign-in codes: that takes the bearer token.
    assert get(ui_daemon, "/api/v1/ui/code", ours, "POST", b"{}")[0] == 401
    assert get(ui_daemon, "/api/v1/status", {"Cookie": cookie + "x"})[0] == 401


def read_event(sock_file) -> dict:
    event, data = None, None
    while True:
        line = sock_file.readline().decode()
        assert line, "stream closed"
        line = line.rstrip("\n")
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            data = json.loads(line[6:])
        elif line == "" and event:
            return {"event": event, "data": data}


def test_the_event_stream_starts_with_status_and_follows_an_edit(ui_daemon):
    with socket.create_connection(("127.0.0.1", ui_daemon.port), timeout=30) as s:
        s.sendall(f"GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  f"Authorization: Bearer {ui_daemon.token}\r\n\r\n".encode())
        f = s.makefile("rb")
        head = b""
        while not head.endswith(b"\r\n\r\n"):
            head += f.readline()
        assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head
        first = read_event(f)
        assert first["event"] == "status" and first["data"]["realms"][0]["name"] == "work"
        generation = first["data"]["generation"]
        ui_daemon.repo.write("svc/streamed.py", "def streamed():\n    return 2\n")
        wait_until(lambda: read_event(f)["data"].get("generation", 0) > generation, timeout=30,
                   what="a status event for the edit")


def test_indexctl_ui_says_how_to_serve_the_ui_when_the_daemon_has_no_http(daemon):
    daemon()
    out = subprocess.run([str(BIN / "indexctl"), "ui", "--url", "--json"], text=True,
                         capture_output=True, timeout=60)
    assert out.returncode == 3
    assert "--http" in json.loads(out.stdout)["error"]["message"]


def test_an_open_event_stream_ends_when_the_daemon_stops(daemon):
    d = daemon(args=("--http", "127.0.0.1:0"))
    info = wait_until(lambda: (d.home / "http.json").exists()
                      and json.loads((d.home / "http.json").read_text()), what="http.json")
    token = Path(info["token_file"]).read_text().strip()
    with socket.create_connection(("127.0.0.1", info["port"]), timeout=30) as s:
        s.sendall(f"GET /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  f"Authorization: Bearer {token}\r\n\r\n".encode())
        f = s.makefile("rb")
        while f.readline() not in (b"\r\n", b""):
            pass
        assert read_event(f)["event"] == "status"
        d.call("shutdown")
        assert d.proc.wait(timeout=30) == 0       # the stream held nothing open
        # and the client saw it end: a last status event may still come, then the
        # chunked end of the message, then EOF
        rest = f.read()
        assert rest == b"" or rest.endswith(b"\r\n0\r\n\r\n"), rest


def test_indexctl_ui_opens_the_browser_with_a_working_sign_in_link(ui_daemon, tmp_path):
    seen = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {seen}\n')
    browser.chmod(0o755)
    out = subprocess.run([str(BIN / "indexctl"), "ui"], env=ui_daemon.env | {"BROWSER": str(browser)},
                         text=True, capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "opened the web UI" in out.stderr and out.stdout == ""
    url = seen.read_text()
    assert url.startswith(ui_daemon.origin + "/ui/login?code=") and ui_daemon.token not in url
    assert get(ui_daemon, url[len(ui_daemon.origin):])[0] == 303
