"""Relative paths given to indexctl mean the *client's* directory, with or without a daemon.

The daemon runs in another directory (here: the test runner's), so a path that
reached it unchanged would be looked up there. Every command that takes a
path is run as a user would, as a subprocess from inside the repo.
"""

from __future__ import annotations

import json
import os
import subprocess

from testlib import BIN, GitRepo, settings_with_realm

X_PY = "def alpha():\n    '''First letter.'''\n    return 1\n\n\nclass Beta:\n    def gamma(self):\n        return 2\n"


def indexctl(*args, cwd, env=None):
    return subprocess.run([str(BIN / "indexctl"), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env=env or os.environ.copy())


def outline_names(proc) -> set[str]:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {r["symbol"] for r in json.loads(proc.stdout)["results"]}


def make_repo(tmp_path) -> GitRepo:
    repo = GitRepo(tmp_path / "proj")
    repo.write("pkg/x.py", X_PY)
    repo.write("pkg/y.py", "from pkg.x import alpha\n\n\ndef uses():\n    return alpha()\n")
    repo.commit()
    return repo


def test_symbols_relative_path_through_the_daemon(tmp_path, daemon):
    repo = make_repo(tmp_path)
    settings_with_realm("work", repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    assert os.getcwd() != str(repo.path)    # the daemon's cwd is the runner's, not the repo
    assert outline_names(indexctl("symbols", "pkg/x.py", "--json", cwd=repo.path)) >= {
        "alpha", "Beta", "Beta.gamma"}
    assert "alpha" in outline_names(indexctl("symbols", "x.py", "--json", cwd=repo.path / "pkg"))
    assert "alpha" in outline_names(indexctl("symbols", "./pkg/../pkg/x.py", "--json", cwd=repo.path))
    human = indexctl("symbols", "pkg/x.py", cwd=repo.path)
    assert human.returncode == 0 and "Beta.gamma" in human.stdout


def test_symbols_relative_path_without_a_daemon(tmp_path):
    repo = make_repo(tmp_path)
    settings_with_realm("work", repo.path)
    subprocess.run([str(BIN / "indexd"), "index", "--json"], check=True, capture_output=True)
    assert outline_names(indexctl("symbols", "pkg/x.py", "--json", cwd=repo.path)) >= {
        "alpha", "Beta.gamma"}
    assert "alpha" in outline_names(indexctl("symbols", "x.py", "--json", cwd=repo.path / "pkg"))


def test_every_path_argument_is_the_clients(tmp_path, daemon):
    """realm add/remove, reindex, search --repo, graph export --scope, annotations."""
    repo = make_repo(tmp_path)
    other = GitRepo(tmp_path / "other")
    other.write("z.py", "def zeta():\n    return 26\n")
    other.commit()
    settings_with_realm("work", repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)

    out = indexctl("realm", "add", "work", "other", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert json.loads(out.stdout)["added"] == [str(other.path.resolve())]
    d.call("status", sync=True, timeout=60)
    found = json.loads(indexctl("search", "zeta", "--json", cwd=tmp_path).stdout)["results"]
    assert [h["symbol"] for h in found][:1] == ["zeta"]

    out = indexctl("search", "alpha", "--repo", ".", "--json", cwd=repo.path)
    assert out.returncode == 0, out.stdout + out.stderr
    hits = json.loads(out.stdout)["results"]
    assert hits and {h["repo"] for h in hits} == {str(repo.path)}

    repo.write("pkg/x.py", X_PY + "\n\ndef delta():\n    return 4\n")
    out = indexctl("reindex", "pkg/x.py", "--wait", "--json", cwd=repo.path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "delta" in outline_names(indexctl("symbols", "pkg/x.py", "--json", cwd=repo.path))

    out = indexctl("graph", "export", "--scope", "y.py", "--json", cwd=repo.path / "pkg")
    assert out.returncode == 0, out.stdout + out.stderr
    edges = json.loads(json.loads(out.stdout)["text"])["edges"]
    assert ("proj/pkg/y.py::uses", "proj/pkg/x.py::alpha") in {(e["from"], e["to"]) for e in edges}

    out = indexctl("annotate", "pkg/x.py::alpha", "the first one", "--json", cwd=repo.path)
    assert out.returncode == 0, out.stdout + out.stderr
    listed = json.loads(indexctl("annotations", "x.py", "--json", cwd=repo.path / "pkg").stdout)
    assert [a["symbol"] for a in listed["annotations"]] == ["alpha"]

    out = indexctl("realm", "remove", "work", "other", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert json.loads(out.stdout)["removed"] == [str(other.path.resolve())]
