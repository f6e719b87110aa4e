"""Short load run: 20 clients (half ndjson, half LSP) for ~15 s during a 300-file burst.

The long variant (50 clients, 10,000 requests, 1,000-file burst) is bench/load.py.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from testlib import settings_with_realm

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import load  # noqa: E402  (bench/load.py)


def test_20_clients_during_a_burst(tmp_path, daemon, capsys):
    files = load.seed_repo(tmp_path / "repo", n=40)
    settings_with_realm("load", tmp_path / "repo")
    d = daemon()
    d.call("status", sync=True, timeout=120)
    burst = threading.Thread(target=load.write_burst, args=(tmp_path / "repo", 300))
    burst.start()
    res = load.run_load(d.socket, [str(p) for p in files], 20, seconds=15)
    burst.join()
    with capsys.disabled():
        print(f"\nload: {res}")
    assert res["errors"] == 0, res["error_samples"]
    assert res["requests"] > 100
    st = d.call("status", sync=True, timeout=120)
    assert st["realms"][0]["repos"][0]["files"] == 40 + 1 + 300


def test_rss_stable_over_2000_requests(tmp_path, daemon, capsys):
    files = load.seed_repo(tmp_path / "repo", n=40)
    settings_with_realm("load", tmp_path / "repo")
    d = daemon()
    d.call("status", sync=True, timeout=120)
    load.hammer(d.socket, 200)                  # warm caches and thread pools first
    before = load.rss_mb(d.proc.pid)
    errors = load.hammer(d.socket, 2000)
    after = load.rss_mb(d.proc.pid)
    with capsys.disabled():
        print(f"\nrss: before {before:.1f} MB, after 2,000 requests {after:.1f} MB")
    assert errors == 0
    assert after - before <= 50, f"RSS grew {after - before:.1f} MB over 2,000 requests"
    assert files
