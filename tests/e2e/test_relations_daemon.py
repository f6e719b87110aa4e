"""File summaries and relationship descriptions through the real daemon and socket.

No Ollama server can run here (no binary, no model weights, no network):
tests/fakes/ollama_server.py is a local HTTP server speaking Ollama's API with
its real response shapes, and counts every request it sees. That count is
how these tests prove a description is never asked for twice while both
files are unchanged (across an unrelated edit and a daemon restart), and is
asked again when either end changes.
"""

from __future__ import annotations

import json
from pathlib import Path

from fakes.ollama_server import FakeOllama
from testlib import run_cli, settings_with_realm, wait_until

from indexd.enrich.summarizer import RELATION_PROMPT

MODEL = "qwen2.5-coder:1.5b"
AWS = "AKIA" + "QWERTYUIOPASDFGH"   # an AWS access key id's shape, built at runtime
BLUEPRINTS = '''"""Route groups for the web app."""


class Blueprint:
    """Routes registered together."""

    def register(self, app):
        return app
'''
APP = f'''"""The web app: builds it from its blueprints."""
from blueprints import Blueprint

ACCESS_KEY = "{AWS}"


def make_app():
    bp = Blueprint()
    bp.register(1)
    return bp
'''
OTHER = 'def unrelated():\n    """Nothing to do with the app."""\n'


def is_relation(body) -> bool:
    msgs = (body or {}).get("messages") or []
    return bool(msgs) and msgs[0].get("content") == RELATION_PROMPT


def relation_reply(fake: FakeOllama):
    """Names both files and counts the relation prompts so far, so a new answer shows."""
    def reply(messages):
        if messages and messages[0].get("content") == RELATION_PROMPT:
            lines = dict(ln.split(": ", 1) for ln in messages[-1]["content"].splitlines()
                         if ": " in ln)
            n = sum(is_relation(b) for _t, _m, p, b in fake.requests if p == "/api/chat")
            return f"{lines['From'].split(' ')[0]} builds on {lines['To'].split(' ')[0]} (answer {n})."
        return "Summarized for the index."
    return reply


def relation_requests(fake: FakeOllama) -> int:
    return sum(is_relation(b) for _t, _m, p, b in fake.requests if p == "/api/chat")


def rel_status(d) -> dict:
    return d.call("status")["embedding"]["summaries"]["relations"] or {}


def uses(d, path: str) -> list[dict]:
    return d.call("summary", path=path)["uses"]


def start(daemon, repo, fake):
    d = daemon(extra_env={"INDEXD_SUMMARIZE": "llm", "INDEXD_OLLAMA_URL": fake.url,
                          "INDEXD_OLLAMA_MODEL": MODEL})
    d.call("status", sync=True)
    return d


def settled(d, files: int | None = None, after: int = 0):
    """The relation stage has looked at every queued file (and at least ``files``
    files, or more than ``after``)."""
    def done():
        st = rel_status(d)
        enough = st.get("looked", 0) >= files if files is not None else st.get("looked", 0) > after
        return st if enough and st.get("queued") == 0 else None
    return wait_until(done, timeout=90, what="the relation stage to settle")


def test_described_once_while_both_ends_unchanged(git_repo, daemon):
    git_repo.write("blueprints.py", BLUEPRINTS)
    git_repo.write("app.py", APP)
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    with FakeOllama(models=(MODEL,)) as fake:
        fake.reply = relation_reply(fake)
        d = start(daemon, git_repo.path, fake)
        app = str(git_repo.path / "app.py")
        first = wait_until(lambda: (u := uses(d, app)) and u[0]["describe_source"] == "llm" and u,
                           timeout=90, what="a model description of app.py -> blueprints.py")
        assert first[0]["path"] == "blueprints.py"
        assert first[0]["describe"].startswith("app.py builds on blueprints.py (answer ")
        assert first[0]["evidence"] == ("app.py imports Blueprint from blueprints.py and calls "
                                        "Blueprint and register.")
        settled(d, files=2)
        asked = relation_requests(fake)
        assert asked >= 1

        # shown in impact: the file item's summary, the via edge's sentence
        imp = d.call("impact", target=str(git_repo.path / "blueprints.py"))
        item = next(i for i in imp["affected"] if i["path"] == "app.py" and i["symbol"] is None)
        assert item["summary"] and item["summary_source"] == "llm"
        assert item["via"][0]["describe"] == first[0]["describe"]
        assert item["via"][0]["describe_source"] == "llm"

        # and in search: the file hit's summary, its neighbours' sentences
        hits = d.call("search", query="app.py", mode="keyword", kind="file")["results"]
        hit = next(h for h in hits if h["path"] == "app.py")
        assert hit["summary"]
        # each neighbour in blueprints.py (the file, Blueprint, register) gets the pair's sentence
        assert {r["describe"] for r in hit["related"] if r["path"] == "blueprints.py"} == \
            {first[0]["describe"]}

        # secrets never reach the model: masked at scan, and again at the prompt
        sent = [json.dumps(b) for _t, _m, p, b in fake.requests if p == "/api/chat"]
        assert sent and not [s for s in sent if AWS in s]

        # an unrelated edit: looked at, nothing asked again
        looked = rel_status(d)["looked"]
        git_repo.write("other.py", OTHER)
        d.call("status", sync=True)
        settled(d, after=looked)
        assert relation_requests(fake) == asked

        # a restart: the cache answers, nothing asked again
        d.stop()
        d = start(daemon, git_repo.path, fake)
        settled(d, files=3)
        assert relation_requests(fake) == asked
        assert rel_status(d)["reused"] >= 1
        assert uses(d, app)[0]["describe"] == first[0]["describe"]

        # either end changes: asked again, the new sentence shown
        for path, text in (("blueprints.py", BLUEPRINTS + "\n\ndef extra():\n    pass\n"),
                           ("app.py", APP + "\n\ndef more():\n    return Blueprint()\n")):
            before = relation_requests(fake)
            git_repo.write(path, text)
            d.call("status", sync=True)
            now = wait_until(lambda: (u := uses(d, app)) and u[0]["describe_source"] == "llm"
                             and u[0]["describe"] != first[0]["describe"] and u,
                             timeout=90, what=f"a new description after {path} changed")
            assert relation_requests(fake) > before
            first = now


def test_dead_ollama_says_why_and_falls_back_to_the_evidence(git_repo, daemon):
    git_repo.write("blueprints.py", BLUEPRINTS)
    git_repo.write("app.py", APP)
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    with FakeOllama(models=(MODEL,)) as fake:
        url = fake.url
        fake.set_mode("down")
        d = start(daemon, git_repo.path, fake)
        error = wait_until(lambda: d.call("status")["embedding"]["summaries"]["error"],
                           timeout=90, what="a status message about Ollama")
        assert url in error and "docstring" in error
        shown = run_cli("status", env=d.env, check=True).stdout
        assert f"summaries: Ollama at {url}" in shown
        settled(d, files=2)
        got = uses(d, str(git_repo.path / "app.py"))[0]
        assert got["describe_source"] == "evidence" and got["describe"] == got["evidence"]
        # the file summary (tried before the relations: settled) falls back to its docstring
        # and outline, not to a list of names
        mine = d.call("summary", path=str(git_repo.path / "app.py"))
        assert mine["summary_source"] == "docstring"
        assert mine["summary"].startswith("The web app: builds it from its blueprints. Defines ")
        assert rel_status(d)["fallbacks"] >= 1
        assert d.call("impact", target=str(git_repo.path / "blueprints.py"))["affected"]
        assert d.proc.poll() is None


def test_without_a_model_summaries_and_evidence_everywhere(git_repo, daemon):
    """The default (summarize = docstring): no Ollama at all, still both shown."""
    git_repo.write("blueprints.py", BLUEPRINTS)
    git_repo.write("app.py", APP)
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True)
    got = d.call("summary", path=str(git_repo.path / "blueprints.py"))
    assert got["summary"] == ("Route groups for the web app. Defines class Blueprint "
                              "(Routes registered together).")
    assert got["summary_source"] == "docstring"
    assert got["used_by"][0]["path"] == "app.py"
    assert got["used_by"][0]["describe"] == ("app.py imports Blueprint from blueprints.py and "
                                             "calls Blueprint and register.")
    assert got["used_by"][0]["describe_source"] == "evidence"
    hits = d.call("search", query="blueprints", mode="keyword", kind="file")["results"]
    assert next(h for h in hits if h["path"] == "blueprints.py")["summary"] == got["summary"]
    affected = d.call("impact", target=str(git_repo.path / "blueprints.py"))["affected"]
    via = affected[0]["via"][0]
    assert via["describe_source"] == "evidence" and via["describe"].startswith("app.py imports")
    # the file item's summary, read from the daemon's hot text index by entry id
    item = next(i for i in affected if i["path"] == "app.py" and i["symbol"] is None)
    assert item["summary"].startswith("The web app: builds it from its blueprints. Defines ")
    assert item["summary_source"] == "docstring"

    cli = run_cli("summary", git_repo.path / "app.py", "--json", env=d.env, check=True)
    out = json.loads(cli.stdout)
    assert out["uses"][0]["path"] == "blueprints.py"
    text = run_cli("summary", git_repo.path / "app.py", env=d.env, check=True).stdout
    assert "The web app" in text and "app.py imports Blueprint" in text
    # repo-relative, from a folder where no app.py is (as impact and owners take it):
    # the client made it absolute against its own folder, which no realm holds
    assert not Path("app.py").exists()
    rel = run_cli("summary", "app.py", "--json", env=d.env)
    assert rel.returncode == 0, rel.stderr
    assert json.loads(rel.stdout)["uses"] == out["uses"]
    text = run_cli("impact", git_repo.path / "blueprints.py", env=d.env, check=True).stdout
    assert "      app.py imports Blueprint from blueprints.py" in text
    # said once per answer, not under each of app.py's items (the file, make_app)
    assert text.count("app.py imports Blueprint from blueprints.py") == 1, text
    assert "      The web app: builds it from its blueprints." in text
    text = run_cli("search", "blueprints", "--kind", "file", env=d.env, check=True).stdout
    assert "    Route groups for the web app. Defines class Blueprint" in text


def test_rest_and_the_offline_cli_answer_summary(git_repo, daemon):
    """POST /api/v1/rpc/summary over the loopback REST API; then, daemon stopped,
    `indexctl summary --json` reads the store itself."""
    import urllib.error
    import urllib.request

    git_repo.write("blueprints.py", BLUEPRINTS)
    git_repo.write("app.py", APP)
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon(args=("--http", "127.0.0.1:0"))
    d.call("status", sync=True)
    info = json.loads(wait_until(lambda: (d.home / "http.json").exists() and
                                 (d.home / "http.json").read_text(), what="http.json"))
    token = Path(info["token_file"]).read_text().strip()

    def post(body):
        req = urllib.request.Request(f"http://127.0.0.1:{info['port']}/api/v1/rpc/summary",
                                     data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    status, got = post({"path": str(git_repo.path / "app.py"), "top": 1})
    assert status == 200 and got["uses"][0]["path"] == "blueprints.py"
    assert got["uses"][0]["describe_source"] == "evidence"
    status, err = post({"path": str(git_repo.path / "app.py"), "top": 0})
    assert status == 400 and "top" in err["error"]["message"]
    status, err = post({"path": str(git_repo.path)})
    assert status == 400 and "one file" in err["error"]["message"]

    d.stop()
    out = run_cli("summary", git_repo.path / "blueprints.py", "--json", env=d.env, check=True)
    offline = json.loads(out.stdout)
    assert offline["used_by"][0]["describe"].startswith("app.py imports Blueprint")
    assert offline["summary"].startswith("Route groups for the web app.")
