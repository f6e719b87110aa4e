"""indexd.audit on its own: rotation keeps every file 0600, reading spans the
rotated files, masking, --since parsing. (The daemon paths: tests/e2e/test_audit.py.)"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import time
from datetime import datetime, timedelta, timezone

import pytest

from indexd.audit import (MASK, MAX_STRING, AuditLog, Origin, audit_files, mask_value,
                          parse_since, read_audit)
from indexd.config import load_settings
from indexd.errors import InvalidParams

RAND = "ghp_" + "k3Vd8Qx1Zm6Tb4Rn9Lw2" + "Hy7Fs5Pc0Jg3Na8E"   # GitHub-token shaped


def settings(on: bool):
    return load_settings(env={"INDEXD_HOME": os.environ["INDEXD_HOME"],
                              "INDEXD_AUDIT_LOG": "1" if on else "0"})


def write(log: AuditLog, n: int, method: str = "search") -> None:
    origin = Origin("socket", {"uid": os.getuid(), "pid": os.getpid()})
    for i in range(n):
        log.record(origin, method, {"query": f"q{i}", "pad": "x" * 100}, {"total": i}, None,
                   time.monotonic())


def test_env_turns_it_on_and_rotation_keeps_files_private():
    s = settings(True)
    assert s.audit_log is True and settings(False).audit_log is False
    log = AuditLog(lambda: s, max_bytes=2000, backups=3)
    old = os.umask(0)      # the most permissive umask: modes must not depend on it
    try:
        write(log, 200)
    finally:
        os.umask(old)
        log.close()
    files = audit_files(s.paths.audit_file)
    assert [f.name for f in files] == ["audit.jsonl.3", "audit.jsonl.2", "audit.jsonl.1",
                                       "audit.jsonl"]
    assert {stat.S_IMODE(f.stat().st_mode) for f in files} == {0o600}
    assert all(f.stat().st_size <= 2000 for f in files)
    got = read_audit(s.paths.audit_file)
    queries = [r["params"]["query"] for r in got["records"]]
    # Oldest first, across files, a contiguous tail of what was written.
    first = int(queries[0][1:])
    assert queries == [f"q{i}" for i in range(first, 200)] and got["total"] == len(queries)
    assert read_audit(s.paths.audit_file, limit=5)["records"] == got["records"][-5:]


def test_off_writes_nothing_and_reload_closes_the_file():
    current = [settings(False)]
    log = AuditLog(lambda: current[0])
    write(log, 3)
    assert not current[0].paths.audit_file.exists()
    current[0] = settings(True)
    write(log, 2)
    current[0] = settings(False)
    write(log, 4)
    assert len(read_audit(current[0].paths.audit_file)["records"]) == 2
    assert log._handler is None


def test_record_fields_errors_and_cancellation():
    s = settings(True)
    log = AuditLog(lambda: s)
    origin = Origin.http(("127.0.0.1", 40000))
    log.record(origin, "symbols", {"path": "a.py"}, None, InvalidParams("bad"), time.monotonic())
    log.record(origin, "search", {"query": "x"}, None, asyncio.CancelledError(), time.monotonic())
    log.record(origin, "status", {}, None, KeyError("bug"), time.monotonic())
    log.record(origin, "impact", {"target": "a.py"}, {"affected": [1, 2, 3]}, None,
               time.monotonic())
    log.close()
    recs = read_audit(s.paths.audit_file)["records"]
    assert [(r["method"], r["error"], r["count"]) for r in recs] == [
        ("symbols", -32602, None), ("search", "cancelled", None), ("status", -32603, None),
        ("impact", None, 3)]
    assert recs[0]["peer"] == {"addr": "127.0.0.1", "port": 40000}
    assert recs[0]["transport"] == "http"
    when = datetime.fromisoformat(recs[0]["time"])
    assert abs(when - datetime.now(timezone.utc)) < timedelta(minutes=5)


def test_masking():
    long = "y" * (MAX_STRING + 50)
    masked = mask_value({"query": f"find {RAND}", "password": "hunter2", "Authorization": "x",
                         "nested": {"access_token": 5, "list": [RAND, "plain"]},
                         "text": long, "n": 3, "flag": True}, "")
    assert masked["query"] == MASK and masked["password"] == MASK
    assert masked["Authorization"] == MASK and masked["nested"]["access_token"] == MASK
    assert masked["nested"]["list"] == [MASK, "plain"]
    assert masked["text"].startswith("y" * MAX_STRING) and "(+50 chars)" in masked["text"]
    assert masked["n"] == 3 and masked["flag"] is True
    assert RAND not in json.dumps(masked)
    # Secrets past the cut are found too: the whole value is checked.
    assert mask_value("z" * 400 + f" api_key = '{RAND[4:]}'", "query") == MASK
    deep: list = []
    for _ in range(1000):
        deep = [deep]
    assert json.dumps(mask_value(deep, "x"), ensure_ascii=False) == "[" * 6 + "\"…\"" + "]" * 6
    many = mask_value({"paths": [f"p{i}" for i in range(500)]}, "")["paths"]
    assert len(many) == 51 and many[-1] == "… 450 more"


def test_torn_and_foreign_lines_are_skipped():
    s = settings(True)
    path = s.paths.audit_file
    path.parent.mkdir(parents=True, exist_ok=True)
    good = {"time": datetime.now(timezone.utc).isoformat(), "method": "search"}
    path.write_text(json.dumps(good) + "\nnot json\n[1]\n" + '{"time": "x"}\n{"tim')
    got = read_audit(path)
    assert got["records"] == [good] and got["unreadable_lines"] == 4


def test_parse_since():
    now = datetime(2026, 1, 31, 12, 0, tzinfo=timezone.utc)
    assert parse_since("30s", now) == now - timedelta(seconds=30)
    assert parse_since("1h30m", now) == now - timedelta(minutes=90)
    assert parse_since("2d", now) == now - timedelta(days=2)
    assert parse_since("2026-01-31T09:00:00+00:00") == datetime(2026, 1, 31, 9, tzinfo=timezone.utc)
    naive = parse_since("2026-01-31T09:00")
    assert naive.tzinfo is not None and naive == datetime(2026, 1, 31, 9).astimezone()
    for bad in ("yesterday", "10 minutes", "5x", ""):
        with pytest.raises(ValueError, match="duration"):
            parse_since(bad)
