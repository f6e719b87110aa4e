"""Agent annotations through the real daemon: searchable, kept, then stale."""

from __future__ import annotations

from testlib import run_cli, settings_with_realm


def test_annotation_searchable_kept_and_stale(git_repo, daemon):
    git_repo.write("pay.py", "def settle(ledger):\n    return sum(ledger)\n\n\ndef other():\n    pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True)
    target = f"{git_repo.path / 'pay.py'}::settle"
    res = d.call("annotate", target=target, text="Reconciles the quarterly invoices.", author="claude")
    assert res["annotated"] == "symbol" and res["stale"] is False

    hits = d.call("search", query="quarterly invoices", mode="keyword")["results"]
    assert hits[0]["symbol"] == "settle"
    assert hits[0]["summary"] == "Reconciles the quarterly invoices." and hits[0]["summary_source"] == "agent"

    # an edit elsewhere in the file reindexes it: the unchanged symbol keeps its note
    git_repo.write("pay.py", "def settle(ledger):\n    return sum(ledger)\n\n\ndef other():\n    return 1\n")
    hits = d.call("search", query="quarterly invoices", mode="keyword", sync=True)["results"]
    assert hits and hits[0]["symbol"] == "settle" and hits[0]["summary_source"] == "agent"
    listed = d.call("annotations", path=str(git_repo.path / "pay.py"))["annotations"]
    assert [(a["symbol"], a["author"], a["stale"]) for a in listed] == [("settle", "claude", False)]

    # the symbol itself changes: the note goes stale and stops being applied
    git_repo.write("pay.py", "def settle(ledger):\n    return max(ledger)\n\n\ndef other():\n    return 1\n")
    hits = d.call("search", query="quarterly invoices", mode="keyword", sync=True)["results"]
    assert not any(h["symbol"] == "settle" and h["summary_source"] == "agent" for h in hits)
    listed = d.call("annotations")["annotations"]
    assert listed[0]["stale"] is True

    edge = d.call("annotate", target=f"{git_repo.path / 'pay.py'} -> {git_repo.path / 'pay.py'}::other",
                  text="settle() will call other() soon")
    assert edge["annotated"] == "edge"

    # the command line says what it noted, in a line (it printed the answer's fields,
    # `other: None`, `stale: False`, one per line)
    out = run_cli("annotate", f"{git_repo.path / 'pay.py'}::other", "Returns one for now.",
                  env=d.env, check=True).stdout
    assert out.strip() == (f"annotated symbol {git_repo.path.name}/pay.py::other "
                           "(searchable and shown as its summary)"), out
