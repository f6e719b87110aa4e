"""indexctl and indexd as a user runs them: exit codes, JSON, speed of the client path."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from testlib import BIN, run_cli


def test_client_path_imports_no_engine():
    code = ("import sys, indexd.cli.indexctl, indexd.client;"
            "bad=[m for m in ('lancedb','torch','sentence_transformers','pyarrow','tree_sitter')"
            " if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


HEAVY = ("lancedb", "torch", "sentence_transformers", "pyarrow", "tree_sitter", "onnxruntime")


def heavy_modules_after(*args: str) -> list[str]:
    """The heavy modules loaded once ``indexctl ARGS`` has run (printed at exit)."""
    code = ("import atexit, sys\n"
            f"atexit.register(lambda: print(sorted(m for m in {HEAVY!r} if m in sys.modules),"
            " file=sys.stderr))\n"
            f"sys.argv = ['indexctl', *{list(args)!r}]\n"
            "from indexd.cli.indexctl import main\n"
            "sys.exit(main())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    return json.loads(out.stderr.strip().splitlines()[-1].replace("'", '"'))


def test_help_and_status_start_fast():
    # What keeps them fast, checked directly: neither loads the engine's heavy modules
    # (lancedb alone is ~50x an interpreter start, pyarrow ~5x).
    assert heavy_modules_after("--help") == []
    assert heavy_modules_after("status", "--oneline") == []

    def least_wall_s(run):
        times = []
        for _ in range(5):
            t = time.perf_counter()
            run()
            times.append(time.perf_counter() - t)
        return min(times)

    # And the cost as a multiple of a bare interpreter start on this same machine (~3x
    # measured), not in seconds: a busy machine slows both alike. The bench has figures.
    bare = least_wall_s(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
    assert least_wall_s(lambda: run_cli("--help")) < 10 * bare
    assert least_wall_s(lambda: run_cli("status", "--oneline")) < 10 * bare


def test_exit_codes_without_daemon(git_repo):
    assert run_cli("nonsense").returncode == 2
    out = run_cli("status", "--oneline")
    assert out.returncode == 0 and out.stdout.strip() == "indexd ✗ down"
    out = run_cli("shutdown", "--json")
    assert out.returncode == 3
    assert json.loads(out.stdout)["error"]["data"]["type"] == "DaemonNotRunning"
    out = run_cli("search", "x", "--sync")
    assert out.returncode == 3 and "indexd run" in out.stderr
    out = run_cli("search", "anything")
    assert out.returncode == 4 and "indexd index" in out.stderr  # no index yet: says how to build it


def test_status_on_a_first_run_says_what_to_do_next(git_repo):
    """`indexctl status` on a new machine was an error (exit 4, "no index yet"): the
    first command a person tries should say where things stand and what comes next."""
    out = run_cli("status")
    assert out.returncode == 0, out.stderr
    assert "not running" in out.stdout and "indexd run" in out.stdout
    assert "no realms" in out.stdout and "indexctl realm add" in out.stdout
    assert run_cli("realm", "add", "work", git_repo.path).returncode == 0
    out = run_cli("status")
    assert out.returncode == 0, out.stderr
    assert "realm work" in out.stdout and str(git_repo.path) in out.stdout
    assert "no index yet" in out.stdout and "indexd index" in out.stdout
    js = json.loads(run_cli("status", "--json").stdout)
    assert js["daemon"] is None and js["indexed"] is False
    assert js["realms"] == [{"name": "work", "repos": [{"path": str(git_repo.path)}]}]


def test_realm_index_search_symbols_from_the_command_line(git_repo):
    git_repo.write("lib/http.py", "class HTTPResponse:\n    def _read_chunked(self, amt):\n        '''Read chunks.'''\n")
    git_repo.commit()
    assert run_cli("realm", "add", "work", git_repo.path).returncode == 0
    listed = json.loads(run_cli("realm", "list", "--json").stdout)
    assert listed["realms"][0]["name"] == "work"
    out = run_cli("index", "--json", tool="indexd", check=True)
    events = [json.loads(line) for line in out.stdout.splitlines()]
    assert events[0]["event"] == "plan" and events[-1]["event"] == "done"
    assert events[-1]["parsed"] == 1
    again = run_cli("index", tool="indexd", check=True)
    assert "nothing changed" in again.stdout
    res = json.loads(run_cli("search", "read chunked http response", "--json").stdout)
    top = res["results"][0]
    assert (top["path"], top["symbol"], top["kind"], top["start_line"]) == \
        ("lib/http.py", "HTTPResponse._read_chunked", "method", 2)
    assert set(res) >= {"query", "took_ms", "total", "results"}
    assert set(top) >= {"realm", "repo", "path", "symbol", "kind", "start_line", "end_line",
                        "score", "match", "snippet", "summary"}
    human = run_cli("search", "read chunked", "--kind", "method")
    assert human.returncode == 0 and "lib/http.py:2 method HTTPResponse._read_chunked" in human.stdout
    # unquoted words are one query, as `indexctl search read chunked` is typed; a folder
    # name is a path filter (it answered "unrecognized arguments" and "0 results")
    words = run_cli("search", "read", "chunked", "--kind", "method", "--path", "lib")
    assert words.returncode == 0, words.stderr
    assert "lib/http.py:2 method HTTPResponse._read_chunked" in words.stdout
    # a folder as the shell sees it: absolute, or relative to where the command runs
    # (an editor passes the open file's folder; `--path .` from inside it)
    for where, path in ((git_repo.path, str(git_repo.path / "lib")), (git_repo.path / "lib", "."),
                        (git_repo.path / "lib", "http.py")):
        scoped = subprocess.run([str(BIN / "indexctl"), "search", "read chunked", "--path", path],
                                cwd=where, capture_output=True, text=True, timeout=120)
        assert scoped.returncode == 0, (path, scoped.stderr)
        assert "lib/http.py:2 method HTTPResponse._read_chunked" in scoped.stdout, path
    sym = json.loads(run_cli("symbols", git_repo.path / "lib/http.py", "--json").stdout)
    assert [h["symbol"] for h in sym["results"]] == [None, "HTTPResponse", "HTTPResponse._read_chunked"]
    # repo-relative and repo_name/path, from a folder that has no lib/http.py, as impact,
    # summary and owners take them (symbols made it absolute here and found no realm)
    assert not Path("lib/http.py").exists()
    for rel in ("lib/http.py", f"{git_repo.path.name}/lib/http.py"):
        by_rel = run_cli("symbols", rel, "--json")
        assert by_rel.returncode == 0, by_rel.stdout + by_rel.stderr
        assert json.loads(by_rel.stdout)["results"] == sym["results"]
    assert run_cli("search", "zzqqxxnothing").returncode == 1
    # --limit 0 was dropped as if not given (0 == False) and answered 20 results
    zero = run_cli("search", "read", "--limit", "0")
    assert zero.returncode == 4 and "limit must be an integer in 1..500" in zero.stderr, zero.stdout
    status = json.loads(run_cli("status", "--json").stdout)
    assert status["daemon"] is None and status["realms"][0]["repos"][0]["files"] == 1


def test_a_purge_that_failed_says_so_and_exits_4(monkeypatch, capsys):
    """The daemon answers a failed store upkeep with {"error": ...} (engine._maybe_upkeep);
    the client printed `error: ...` and exited 0. A real failure needs a store the
    daemon cannot write, which root (these machines) always can: the answer is given."""
    from indexd.cli import indexctl

    monkeypatch.setattr(indexctl, "call", lambda *a, **k: {"error": "No space left on device"})
    assert indexctl.main(["purge"]) == indexctl.EXIT_ERROR
    assert "failed: No space left on device" in capsys.readouterr().err
