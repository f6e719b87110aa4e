"""Owners through the real daemon over its socket, and `indexctl owners --json`:
a real two-author pygit2 repo, a new commit by the other author, uncommitted edits."""

from __future__ import annotations

import json

import pygit2

from owners_fixtures import ALICE, BOB, MODULE_V2, people, two_authors
from testlib import run_cli, settings_with_realm, wait_until

APP = "from text import parse, render\n\n\ndef main(s):\n    return render(parse(s))\n"


def owners_status(d) -> dict:
    return d.call("status")["owners"]


def warmed(d, repo, head) -> dict | None:
    """The owners thread has looked at every file indexed so far at ``head`` and blamed
    what it queued."""
    st = owners_status(d)
    done = st["heads"].get(str(repo)) == head and st["queued"] == 0 and not st["rescan_due"]
    return st if done else None


def test_owners_of_files_and_symbols_over_the_socket(git_repo, daemon, tmp_path):
    two_authors(git_repo)
    git_repo.write("app.py", APP)
    head = git_repo.commit("an app", author=ALICE)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.md").write_text("# todo\n")
    settings_with_realm("work", git_repo.path, notes)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    text = str(git_repo.path / "text.py")

    whole = d.call("owners", target=text)
    assert people(whole) == {"Alice Able": 5, "Bob Baker": 3} and whole["lines"] == 8
    render = d.call("owners", target=f"{text}::render")
    assert (render["start_line"], render["end_line"]) == (6, 8)
    assert people(render) == {"Bob Baker": 3} and render["owners"][0]["share"] == 1.0
    assert people(d.call("owners", target=f"{text}::parse")) == {"Alice Able": 3}
    # a symbol's name alone, as impact takes it: the same answer
    by_name = d.call("owners", target="render")
    assert (by_name["path"], by_name["symbol"], people(by_name)) == \
        ("text.py", "render", {"Bob Baker": 3})

    outline = d.call("symbols", path=text)
    assert people(outline["owners"]) == {"Alice Able": 5, "Bob Baker": 3}
    by_symbol = {h["symbol"]: [o["name"] for o in h["owners"]] for h in outline["results"]}
    assert by_symbol["render"] == ["Bob Baker"] and by_symbol["parse"] == ["Alice Able"]

    # The background thread blames every indexed file of the repo once.
    assert wait_until(lambda: warmed(d, git_repo.path, head), timeout=60, what="owners warmed")
    impact = d.call("impact", target=f"{text}::render")
    assert [o["name"] for o in impact["owners"]["target"]["owners"]] == ["Bob Baker"]
    assert "app.py" in {a["path"] for a in impact["affected"]}
    assert impact["owners"]["pending"] == 0 and impact["owners"]["complete"]
    assert {p["name"] for p in impact["owners"]["reviewers"]} == {"Alice Able", "Bob Baker"}
    app = d.call("symbols", path=str(git_repo.path / "app.py"))   # blamed by the thread alone
    assert people(app["owners"]) == {"Alice Able": 5}
    assert [o["name"] for o in app["results"][-1]["owners"]] == ["Alice Able"]

    plain = d.call("owners", target=str(notes / "todo.md"))
    assert not plain["available"] and "not in a git repository" in plain["reason"]


def test_a_new_commit_reblames_only_the_changed_file(git_repo, daemon):
    two_authors(git_repo)
    git_repo.write("app.py", APP)
    head = git_repo.commit("an app", author=ALICE)
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    before = wait_until(lambda: warmed(d, git_repo.path, head), timeout=60, what="owners warmed")

    # Alice rewrites Bob's render: text.py's blob changes, app.py's does not.
    git_repo.write("text.py", MODULE_V2.replace("    out = sep.join(words)\n",
                                                "    out = sep.join(w.lower() for w in words)\n"))
    later = pygit2.Signature(ALICE.name, ALICE.email, BOB.time + 86_400, 0)
    head2 = git_repo.commit("lower-case render", author=later)
    after = wait_until(lambda: (st := warmed(d, git_repo.path, head2))
                       and st["blamed"] > before["blamed"] and st, timeout=60,
                       what="the new HEAD blamed")
    assert after["blamed"] == before["blamed"] + 1, (before, after)
    render = d.call("owners", target=f"{git_repo.path}/text.py::render")
    assert people(render) == {"Bob Baker": 2, "Alice Able": 1}
    assert render["recent_commits"][0]["summary"] == "lower-case render"
    assert owners_status(d)["blamed"] == after["blamed"]   # the answer came from the cache


def test_uncommitted_edits_and_the_cli_json(git_repo, daemon):
    two_authors(git_repo)
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    git_repo.write("text.py", MODULE_V2.replace("    return out.strip()\n",
                                                "    return out.strip() or sep\n"))
    d.call("status", sync=True, timeout=60)
    target = f"{git_repo.path}/text.py::render"
    render = d.call("owners", target=target)
    assert people(render) == {"Bob Baker": 2} and render["uncommitted_lines"] == 1
    assert all(o["name"] != "uncommitted" for o in render["owners"])
    changes = d.call("changes", repo=str(git_repo.path))
    assert [(c["symbol"], c["change"]) for c in changes["changed"]] == [("render", "modified")]
    assert [p["name"] for p in changes["owners"]["changed"]] == ["Bob Baker"]
    assert changes["owners"]["complete"]
    human = run_cli("changes", git_repo.path)
    assert "owners of the changed code: Bob Baker <bob@example.com> (2 lines)" in human.stdout

    out = run_cli("owners", target, "--json")
    assert out.returncode == 0, out.stderr
    cli = json.loads(out.stdout)
    assert cli["owners"] == render["owners"] and cli["uncommitted_lines"] == 1
    human = run_cli("owners", target)
    assert "Bob Baker <bob@example.com> 67%" in human.stdout and "uncommitted" in human.stdout
    missing = run_cli("owners", f"{git_repo.path}/text.py::nothing", "--json")
    assert missing.returncode == 4
    assert "'nothing' is not defined" in json.loads(missing.stdout)["error"]["message"]
    assert BOB.email in {o["email"] for o in render["owners"]}


def test_owners_without_a_daemon_read_the_store_and_blame_on_demand(git_repo):
    two_authors(git_repo)
    settings_with_realm("work", git_repo.path)
    run_cli("index", "--json", tool="indexd", check=True)
    out = run_cli("owners", f"{git_repo.path}/text.py::render", "--json")
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["daemon"] is None and people(res) == {"Bob Baker": 3}
    outline = json.loads(run_cli("symbols", git_repo.path / "text.py", "--json").stdout)
    assert people(outline["owners"]) == {"Alice Able": 5, "Bob Baker": 3}
