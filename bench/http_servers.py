"""Requests/s and p50/p95 latency of the REST API on /api/v1/status and /api/v1/search.

    .venv/bin/python bench/http_servers.py [--requests 300] [--label NAME]

Starts a real daemon (``indexd run --http 127.0.0.1:0``, hash embedder) on a
small generated git repo, waits until it is indexed, then sends REQUESTS
sequential requests per endpoint on one keep-alive connection and prints one
JSON line: medians of what a client sees, with the load average. Whatever
``indexd run`` serves is measured; docs/decisions.md quotes the old stdlib
server against the uvicorn one, measured in one run.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def _repo(root: Path) -> Path:
    repo = root / "repo"
    (repo / "svc").mkdir(parents=True)
    for i in range(40):
        (repo / "svc" / f"mod{i}.py").write_text(
            f"def retry_backoff_{i}(n):\n    '''Back off and retry {i}.'''\n    return n * {i}\n")
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=b", "-c", "user.email=b@x", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def _wait(pred, timeout=120.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if pred():
                return
        except (OSError, ValueError, http.client.HTTPException):
            pass
        time.sleep(0.2)
    raise SystemExit("daemon did not come up")


def _indexd(source: str | None) -> list[str]:
    if not source:
        return [str(BIN / "indexd")]
    # The editable install's finder answers `import indexd` before sys.path does: drop it.
    boot = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in "
            f"repr(f)]; sys.path.insert(0, {source!r}); from indexd.cli.indexd_main import main; "
            "sys.argv[0] = 'indexd'; sys.exit(main())")
    return [sys.executable, "-c", boot]


def _measure(conn, token: str, method: str, path: str, body, n: int) -> dict:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    data = None if body is None else json.dumps(body).encode()
    took = []
    for _ in range(n):
        t0 = time.perf_counter()
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        resp.read()
        took.append(time.perf_counter() - t0)
        assert resp.status == 200, resp.status
    took.sort()
    return {"rps": round(n / sum(took), 1), "p50_ms": round(statistics.median(took) * 1e3, 2),
            "p95_ms": round(took[int(0.95 * (n - 1))] * 1e3, 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--label", default="")
    ap.add_argument("--source", help="run indexd from this source tree (e.g. an older commit's "
                                     "`git archive REV indexd | tar -x -C DIR`) instead")
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="ixbench"))
    repo = _repo(home)
    env = os.environ | {"INDEXD_HOME": str(home), "INDEXD_EMBED_MODEL": "hash",
                        "HF_HUB_OFFLINE": "1"}
    subprocess.run([str(BIN / "indexctl"), "realm", "add", "bench", str(repo), "--json"],
                   env=env, check=True, capture_output=True)
    proc = subprocess.Popen([*_indexd(args.source), "run", "--http", "127.0.0.1:0"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        endpoint = home / "http.json"
        _wait(endpoint.exists)
        info = json.loads(endpoint.read_text())
        token = Path(info["token_file"]).read_text().strip()
        conn = http.client.HTTPConnection("127.0.0.1", info["port"], timeout=60)
        _wait(lambda: _measure(conn, token, "POST", "/api/v1/status", {"sync": True}, 1))
        out = {"label": args.label, "requests": args.requests,
               "status": _measure(conn, token, "GET", "/api/v1/status", None, args.requests),
               "search": _measure(conn, token, "POST", "/api/v1/search",
                                  {"query": "retry backoff", "search_type": "fts"},
                                  args.requests),
               "loadavg_1m": round(os.getloadavg()[0], 2)}
        print(json.dumps(out))
    finally:
        proc.terminate()
        proc.wait(timeout=60)


if __name__ == "__main__":
    main()
