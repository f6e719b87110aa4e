"""A team's shared index on object storage (issue 16): publish from one home, read from another.

The object store is moto's S3 server, started here on loopback (the stand-in
for S3 that the issue names); LanceDB reaches it through the standard AWS
environment, as it would reach real S3. Every step runs the real `indexd`
binary on real git repos; the "CI" home and the "laptop" home never share a
directory, only the bucket.
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from pathlib import Path

import pytest

from testlib import BIN, GitRepo, run_cli, wait_until

ORIGIN = "git@github.com:team/app.git"
A_PY = ("def alpha(x):\n    '''Add one to x.'''\n    return x + 1\n\n\n"
        "class Beta:\n    def gamma(self):\n        return alpha(2)\n")
B_PY = "from pkg.a import alpha\n\n\ndef delta(y):\n    '''Twice alpha.'''\n    return 2 * alpha(y)\n"
# The texts the model embeds for A_PY and B_PY: 6 entries, and alpha and delta have a
# docstring, whose first sentence is a second text each (enrich/texts.py, "pooled").
TEXTS = 8
SECRET = "AKIA" + "QYLPMN5HHHFPZAM2"   # an AWS access key id's shape, built at run time


@pytest.fixture
def s3():
    """A bucket on moto's S3 server (loopback), and the AWS environment that reaches it."""
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
           "AWS_ALLOW_HTTP": "true"}
    client = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    # moto keeps its buckets in this process across servers: start from none.
    urllib.request.urlopen(urllib.request.Request(f"{env['AWS_ENDPOINT_URL']}/moto-api/reset",
                                                  method="POST"), timeout=30).close()
    client.create_bucket(Bucket="team")
    yield {"env": env, "uri": "s3://team/index", "client": client}
    server.stop()


def make_repo(path: Path, files: dict[str, str]) -> GitRepo:
    repo = GitRepo(path)
    for rel, text in files.items():
        repo.write(rel, text)
    repo.commit()
    repo.repo.remotes.create("origin", ORIGIN)   # the same repo on every machine
    return repo


def home_env(home: Path, s3: dict, **extra) -> dict:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    return (os.environ | s3["env"] | {"INDEXD_HOME": str(home), "INDEXD_EMBED_MODEL": "hash"}
            | extra)


def indexd(*args, env, check=True) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(BIN / "indexd"), *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=300)
    if check and proc.returncode != 0:
        raise AssertionError(f"indexd {args} rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def write_config(env: dict, repo: Path, shared: str | None = None, extra: str = "") -> None:
    config = Path(env["INDEXD_HOME"]) / "config" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    lines = [extra, "[realms.work]", f"repos = [{json.dumps(str(repo))}]"]
    if shared:
        lines.append(f"shared = {json.dumps(shared)}")
    config.write_text("\n".join(lines) + "\n")


def events(proc) -> list[dict]:
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def publish(env, uri, *more, check=True):
    proc = indexd("publish", "--realm", "work", "--to", uri, "--json", *more, env=env, check=check)
    return proc, (events(proc)[-1] if proc.returncode == 0 else None)


def ci_publish(tmp_path, s3, files=None, name="ci"):
    """What a CI job on the main branch does: index the checkout, publish it."""
    repo = make_repo(tmp_path / name / "app", files or {"pkg/a.py": A_PY, "pkg/b.py": B_PY})
    env = home_env(tmp_path / f"{name}-home", s3)
    write_config(env, repo.path)
    indexd("index", env=env)
    return repo, env, publish(env, s3["uri"])[1]


def laptop_index(tmp_path, s3, files=None, extra=""):
    repo = make_repo(tmp_path / "laptop" / "work-copy", files or {"pkg/a.py": A_PY, "pkg/b.py": B_PY})
    env = home_env(tmp_path / "laptop-home", s3)
    write_config(env, repo.path, shared=s3["uri"], extra=extra)
    return repo, env


def embed_result(proc) -> dict:
    return next(e for e in events(proc) if e.get("event") == "done")["embed"]


def test_publish_then_a_teammate_embeds_only_what_differs(tmp_path, s3):
    _, ci_env, done = ci_publish(tmp_path, s3)
    [shard] = done["repos"]
    assert shard["status"] == "published" and shard["identity"] == "github.com/team/app"
    assert shard["files"] == 2 and shard["vectors"] == shard["entries"] > 0
    assert len(shard["commit"]) == 40
    # The laptop's copy lives elsewhere and has one file edited (a dirty overlay).
    repo, env = laptop_index(tmp_path, s3)
    repo.write("pkg/b.py", B_PY.replace("Twice alpha.", "Three times alpha.").replace("2 *", "3 *"))
    proc = indexd("index", "--json", env=env)
    shared = next(e for e in events(proc) if e.get("event") == "shared")
    [used] = shared["shards"]
    assert used["status"] == "used" and used["commit"] == shard["commit"], used
    assert used["files_matched"] == 1 and used["files_local"] == 2 and used["rejected"] == 0
    embed = embed_result(proc)
    # a.py's entries (its file entry, alpha, Beta, gamma) came from the shared index;
    # only the edited b.py's were computed here.
    assert embed["reused"] == used["vectors"] == 4, embed
    assert embed["embedded"] == 3, embed   # b.py's file entry, delta's two texts
    # The result is the index the laptop would have built alone: same vectors.
    alone_env = home_env(tmp_path / "alone-home", s3)
    write_config(alone_env, repo.path)
    indexd("index", env=alone_env)
    assert _vectors(env) == _vectors(alone_env)
    # And `indexd publish` from the laptop leaves its edit out: only the commit is shared.
    _, mine = publish(env, s3["uri"])
    assert mine["repos"][0]["left_out"] == 1 and mine["repos"][0]["files"] == 1


def _vectors(env) -> dict:
    from indexd.store import Store

    store = Store(Path(env["INDEXD_HOME"]) / "data" / "lancedb")
    rows = store.entries_where(None, ["path", "qualname", "kind", "vector"])
    return {(r["path"], r["kind"], r["qualname"]): [round(x, 6) for x in r["vector"]] for r in rows}


def test_publishing_while_entries_still_lack_vectors_publishes_the_rest(tmp_path, s3):
    """`indexd publish` run while the daemon is still embedding (or after a model
    that failed on some entries): the entries without a vector are published
    without one, not refused by LanceDB with "variable length vectors" (CI hit
    it when a summary's re-embed was in flight); a teammate embeds those here."""
    from indexd.config import load_settings
    from indexd.store import Store

    repo = make_repo(tmp_path / "ci" / "app", {"pkg/a.py": A_PY, "pkg/b.py": B_PY})
    env = home_env(tmp_path / "ci-home", s3)
    write_config(env, repo.path)
    indexd("index", env=env)
    store = Store(load_settings(env={"INDEXD_HOME": env["INDEXD_HOME"]}).paths.store_dir)
    store.entries.update(where="path = 'pkg/b.py'", values={"vector": None, "embed_hash": None})
    missing = store.count_missing_vectors()
    assert missing > 0
    _, done = publish(env, s3["uri"])
    [shard] = done["repos"]
    assert shard["status"] == "published"
    assert shard["vectors"] == shard["entries"] - missing, shard
    _, laptop = laptop_index(tmp_path, s3)
    embed = embed_result(indexd("index", "--json", env=laptop))
    # b.py's entries: its file entry, delta and delta's docstring sentence
    assert embed["reused"] == shard["vectors"] and embed["embedded"] == missing + 1, embed


def test_publishing_an_unchanged_commit_writes_nothing(tmp_path, s3):
    _, env, first = ci_publish(tmp_path, s3)
    count = s3["client"].list_objects_v2(Bucket="team")["KeyCount"]
    _, again = publish(env, s3["uri"])
    assert again["repos"][0]["status"] == "unchanged" and again["repos"][0]["tables_written"] == []
    assert s3["client"].list_objects_v2(Bucket="team")["KeyCount"] == count
    _, forced = publish(env, s3["uri"], "--force")
    assert forced["repos"][0]["tables_written"] == ["entries", "links", "files", "manifest"]


def test_an_interrupted_publish_resumes_where_it_stopped(tmp_path, s3):
    repo = make_repo(tmp_path / "ci" / "app", {"pkg/a.py": A_PY, "pkg/b.py": B_PY})
    env = home_env(tmp_path / "ci-home", s3)
    write_config(env, repo.path)
    indexd("index", env=env)
    broken, _ = publish(env | {"INDEXD_FAULT_INJECTION": "publish:files"}, s3["uri"], check=False)
    assert broken.returncode != 0 and "interrupted before the files table" in broken.stdout
    # No manifest yet: a reader sees no shard, never a half-written one.
    _, lap_env = laptop_index(tmp_path, s3)
    shared = next(e for e in events(indexd("index", "--json", env=lap_env)) if e.get("event") == "shared")
    assert shared["shards"][0]["status"] == "not_published"
    _, done = publish(env, s3["uri"])
    [shard] = done["repos"]
    assert shard["status"] == "resumed" and shard["tables_written"] == ["files", "manifest"]


def test_two_repos_published_at_once_by_two_jobs(tmp_path, s3):
    jobs = []
    for name, origin in (("one", "https://github.com/team/one.git"),
                         ("two", "https://github.com/team/two.git")):
        repo = GitRepo(tmp_path / name / name)
        repo.write(f"{name}.py", f"def {name}_main():\n    '''The {name} entry point.'''\n    return 1\n")
        repo.commit()
        repo.repo.remotes.create("origin", origin)
        env = home_env(tmp_path / f"{name}-home", s3)
        write_config(env, repo.path)
        indexd("index", env=env)
        jobs.append(env)
    procs = [subprocess.Popen([str(BIN / "indexd"), "publish", "--realm", "work", "--to",
                               s3["uri"], "--json"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for env in jobs]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    import lancedb

    os.environ.update(s3["env"])
    try:
        names = set(lancedb.connect(s3["uri"]).list_tables().tables)
    finally:
        for key in s3["env"]:
            os.environ.pop(key, None)
    shards = {n.split("__")[0] for n in names if n.endswith("__manifest")}
    assert {s.rsplit("_", 1)[0] for s in shards} == {"github_com_team_one", "github_com_team_two"}


def test_a_shard_of_another_recipe_is_not_read(tmp_path, s3):
    """Vectors of another model or recipe never mix: the laptop embeds everything itself."""
    ci_publish(tmp_path, s3)
    _, env = laptop_index(tmp_path, s3, extra='embed_recipe = "name_doc"')
    proc = indexd("index", "--json", env=env)
    shared = next(e for e in events(proc) if e.get("event") == "shared")
    assert shared["shards"][0]["status"] == "model_mismatch", shared
    assert "embedding locally" in shared["shards"][0]["reason"]
    embed = embed_result(proc)
    assert embed["reused"] == 0 and embed["embedded"] == embed["total"] > 0   # one text each


def test_a_shard_of_another_model_is_not_read(tmp_path, s3):
    """Published with the hash embedder, read by a home on the real default model."""
    ci_publish(tmp_path, s3)
    _, env = laptop_index(tmp_path, s3)
    env = env | {"INDEXD_EMBED_MODEL": "default"}
    proc = indexd("index", "--json", env=env)
    [shard] = next(e for e in events(proc) if e.get("event") == "shared")["shards"]
    assert shard["status"] == "model_mismatch" and "hash-embedder/64" in shard["reason"], shard
    embed = embed_result(proc)
    assert embed["model"].startswith("all-MiniLM-L6-v2") and embed["reused"] == 0
    assert embed["embedded"] == TEXTS and embed["total"] == 6


def test_a_published_index_holds_no_secret_and_a_tampered_row_is_not_trusted(tmp_path, s3):
    files = {"pkg/a.py": A_PY, "pkg/settings.py": f"def settings():\n    return {{'key': '{SECRET}'}}\n"}
    ci_publish(tmp_path, s3, files=files)
    client = s3["client"]
    stored = b"".join(client.get_object(Bucket="team", Key=o["Key"])["Body"].read()
                      for o in client.list_objects_v2(Bucket="team")["Contents"])
    assert b"def settings():" in stored and SECRET.encode() not in stored
    import lancedb

    os.environ.update(s3["env"])
    try:
        db = lancedb.connect(s3["uri"])
        values = [json.dumps(db.open_table(n).to_arrow().drop_columns(
            [c for c in ("vector",) if c in db.open_table(n).schema.names]).to_pylist())
            for n in db.list_tables().tables]
        assert any("def settings():" in v for v in values)
        assert not any(SECRET in v for v in values)
        # Someone rewrites alpha's published text but keeps its cache key.
        name = next(n for n in db.list_tables().tables if n.endswith("__entries"))
        table = db.open_table(name)
        table.update(where="name = 'alpha'", values={"doc": "Delete every file."})
    finally:
        for key in s3["env"]:
            os.environ.pop(key, None)
    _, env = laptop_index(tmp_path, s3, files=files)
    proc = indexd("index", "--json", env=env)
    [used] = next(e for e in events(proc) if e.get("event") == "shared")["shards"]
    assert used["status"] == "used" and used["rejected"] == 1, used
    embed = embed_result(proc)
    # alpha's two texts (its own and its docstring's) computed here, the rest taken
    assert embed["embedded"] == 2 and embed["reused"] == embed["total"] - 1, embed
    # alpha's vector was computed here, so answers never say a.py came from the shard.
    assert used["files_matched"] == 2 and used["files_origin"] == 1, used
    found = json.loads(run_cli("search", "settings alpha", "--realm", "work", "--json",
                               env=env, check=True).stdout)
    assert {h["path"] for h in found["results"]} >= {"pkg/a.py", "pkg/settings.py"}
    for hit in found["results"]:
        assert ("shared" in hit) == (hit["path"] == "pkg/settings.py"), hit


def test_answers_say_which_results_came_from_the_shared_index_and_of_which_commit(tmp_path, s3):
    _, _, done = ci_publish(tmp_path, s3)
    commit = done["repos"][0]["commit"]
    repo, env = laptop_index(tmp_path, s3)
    repo.write("pkg/b.py", B_PY.replace("2 *", "3 *"))   # a dirty overlay on the shared commit
    indexd("index", env=env)
    # search (no daemon: the store answers), as a script reads it
    found = json.loads(run_cli("search", "alpha", "--realm", "work", "--json", env=env,
                               check=True).stdout)
    by_path = {}
    for hit in found["results"]:
        by_path.setdefault(hit["path"], []).append(hit)
    assert set(by_path) == {"pkg/a.py", "pkg/b.py"}, by_path
    assert all(h["shared"] == {"commit": commit, "uri": s3["uri"]} for h in by_path["pkg/a.py"])
    assert not any("shared" in h for h in by_path["pkg/b.py"])   # edited here: local
    assert found["shared"] == {"results": len(by_path["pkg/a.py"]), "of": len(found["results"]),
                               "uris": [s3["uri"]], "commits": {str(repo.path): commit}}
    # as a person reads it
    human = run_cli("search", "alpha", "--realm", "work", env=env, check=True)
    line = next(x for x in human.stdout.splitlines() if x.startswith("pkg/a.py:1 "))
    assert f"(shared {commit[:12]})" in line, human.stdout
    assert not any("(shared" in x for x in human.stdout.splitlines() if x.startswith("pkg/b.py"))
    assert (f"{len(by_path['pkg/a.py'])} of {len(found['results'])} from the shared index "
            f"(work-copy@{commit[:12]})") in human.stderr, human.stderr
    # impact: the edited caller is local, and the answer says so
    hit = json.loads(run_cli("impact", f"{repo.path}/pkg/a.py::alpha", "--json", env=env,
                             check=True).stdout)
    callers = [i for i in hit["affected"] if i["path"] == "pkg/b.py"]
    assert callers and not any("shared" in i for i in callers), hit["affected"]
    assert hit["shared"]["commits"] == {} or "pkg/b.py" not in json.dumps(hit["shared"])


def test_an_unreachable_shared_index_is_said_and_local_embedding_follows(tmp_path, s3):
    repo, env = laptop_index(tmp_path, s3)
    env = env | {"AWS_ENDPOINT_URL": "http://127.0.0.1:9"}   # nothing listens there
    proc = indexd("index", "--json", env=env)
    shared = next(e for e in events(proc) if e.get("event") == "shared")
    assert shared["error"] and shared["vectors"] == 0
    embed = embed_result(proc)
    assert embed["embedded"] == TEXTS and embed["total"] == 6


def test_publish_errors_are_clear(tmp_path, s3):
    repo = make_repo(tmp_path / "ci" / "app", {"pkg/a.py": A_PY})
    env = home_env(tmp_path / "ci-home", s3)
    write_config(env, repo.path)
    no_index = indexd("publish", "--realm", "work", "--to", s3["uri"], env=env, check=False)
    assert no_index.returncode != 0 and "indexd index" in no_index.stderr
    indexd("index", env=env)
    wrong = indexd("publish", "--realm", "nope", "--to", s3["uri"], env=env, check=False)
    assert wrong.returncode != 0 and "nope" in wrong.stderr
    other = indexd("publish", "--realm", "work", "--to", s3["uri"], "--repo", str(tmp_path),
                   env=env, check=False)
    assert other.returncode != 0 and "not a repo of realm" in other.stderr


def test_the_daemon_takes_a_teammates_vectors_and_says_so(tmp_path, s3, daemon, indexd_home):
    _, _, done = ci_publish(tmp_path, s3)
    repo = make_repo(tmp_path / "laptop" / "work-copy", {"pkg/a.py": A_PY, "pkg/b.py": B_PY})
    repo.write("pkg/b.py", B_PY.replace("2 *", "3 *"))   # edited, not committed
    write_config({"INDEXD_HOME": str(indexd_home)}, repo.path, shared=s3["uri"])
    d = daemon(extra_env=s3["env"])

    def settled():
        st = d.call("status", sync=True, timeout=60)
        emb = st["embedding"]
        return st if emb["ready"] and st["queues"]["embed"] == 0 and emb["shared"] else None

    st = wait_until(settled, timeout=120, what="the daemon to embed with the shared index")
    used = st["embedding"]["shared"]["work"]["repos"][str(repo.path)]
    assert used["status"] == "used" and used["commit"] == done["repos"][0]["commit"]
    assert used["files_matched"] == 1 and used["vectors"] == 4, used
    # Only the edited file's entries went through the model here.
    assert st["embedding"]["reused"] >= 4
    edited = st["embedding"]["embedded"]
    assert edited == 3, st["embedding"]   # b.py: its file entry, delta's two texts
    out = run_cli("status", env=d.env).stdout
    assert f"shared index {s3['uri']}: 4 vectors for 1 repos (commit {used['commit'][:12]})" in out
    # A later rescan finds nothing missing: status still says what the shared index gave
    # (it said `nothing_missing`, forgetting it, whenever a reconcile ran again)
    d.call("reindex", wait=True, timeout=120)

    def checked():
        # the reconcile queues the check; the enrich thread makes it after `reindex` returns
        repos = d.call("status", sync=True, timeout=60)["embedding"]["shared"]["work"]["repos"]
        return repos if "checked_at" in repos[str(repo.path)] else None
    again = wait_until(checked, timeout=60, what="the shared index to be checked again")
    assert again[str(repo.path)]["status"] == "used", again
    assert again[str(repo.path)]["vectors"] == 4, again

    def sources():
        found = d.call("search", query="alpha", realm="work", mode="keyword", sync=True, timeout=60)
        return {h["path"]: "shared" in h for h in found["results"]}
    assert sources() == {"pkg/a.py": True, "pkg/b.py": False}
    # A save makes a.py the laptop's own: the next answers stop naming the shard for it.
    repo.write("pkg/a.py", A_PY.replace("Add one", "Add one (edited)"))
    wait_until(lambda: sources() == {"pkg/a.py": False, "pkg/b.py": False}, timeout=60,
               what="the saved file's answers to stop naming the shared index")


def _bucket_bytes(s3) -> bytes:
    client = s3["client"]
    return b"".join(client.get_object(Bucket="team", Key=o["Key"])["Body"].read()
                    for o in client.list_objects_v2(Bucket="team").get("Contents", []))


def test_purge_removes_a_file_from_the_published_index_history_included(tmp_path, s3):
    leak = "def internal_only():\n    '''Kestrel-marzipan-9431: not for the index.'''\n    return 7\n"
    files = {"pkg/a.py": A_PY, "pkg/notes/leak.py": leak}
    repo, env, _ = ci_publish(tmp_path, s3, files=files)
    repo.write("pkg/a.py", A_PY + "\n\ndef epsilon():\n    return 5\n")   # a second published version
    repo.commit()
    indexd("index", env=env)
    publish(env, s3["uri"])
    assert b"Kestrel-marzipan-9431" in _bucket_bytes(s3)
    proc = indexd("publish", "--realm", "work", "--to", s3["uri"], "--purge",
                  repo.path / "pkg" / "notes", "--json", env=env)
    [purged] = events(proc)[-1]["purged"]
    assert purged["removed"]["files"] == 1 and purged["removed"]["entries"] >= 2, purged
    assert b"Kestrel-marzipan-9431" not in _bucket_bytes(s3)
    # What is left still serves a teammate.
    _, lap_env = laptop_index(tmp_path, s3, files={"pkg/a.py": A_PY + "\n\ndef epsilon():\n    return 5\n"})
    [used] = next(e for e in events(indexd("index", "--json", env=lap_env))
                  if e.get("event") == "shared")["shards"]
    assert used["status"] == "used" and used["files_matched"] == 1
    # The next publish of a commit that still holds the file writes it again: purging is not ignoring.
    _, again = publish(env, s3["uri"])
    assert again["repos"][0]["status"] == "published"


def test_a_restarted_daemon_does_not_read_the_shared_index_again(tmp_path, s3, daemon, indexd_home):
    ci_publish(tmp_path, s3)
    repo = make_repo(tmp_path / "laptop" / "work-copy", {"pkg/a.py": A_PY, "pkg/b.py": B_PY})
    write_config({"INDEXD_HOME": str(indexd_home)}, repo.path, shared=s3["uri"])

    def settled(d):
        def check():
            st = d.call("status", sync=True, timeout=60)
            shared = (st["embedding"]["shared"].get("work") or {}).get("repos") or {}
            return st if st["queues"]["embed"] == 0 and str(repo.path) in shared else None
        return wait_until(check, timeout=120, what="the shared index to be read")

    first = daemon(extra_env=s3["env"])
    used = settled(first)["embedding"]["shared"]["work"]["repos"][str(repo.path)]
    assert used["status"] == "used" and used["vectors"] == 6   # both files, all committed
    first.stop()
    again = settled(daemon(extra_env=s3["env"]))["embedding"]["shared"]["work"]["repos"][str(repo.path)]
    assert again["status"] == "nothing_missing" and again["vectors"] == 0


def test_naming_a_shared_index_in_a_running_daemons_config_reads_it(tmp_path, s3, daemon, indexd_home):
    ci_publish(tmp_path, s3)
    repo = make_repo(tmp_path / "laptop" / "work-copy", {"pkg/a.py": A_PY, "pkg/b.py": B_PY})
    write_config({"INDEXD_HOME": str(indexd_home)}, repo.path)
    d = daemon(extra_env=s3["env"])
    st = d.call("status", sync=True, timeout=60)
    assert st["embedding"]["shared"] == {}
    write_config({"INDEXD_HOME": str(indexd_home)}, repo.path, shared=s3["uri"])   # the user's edit

    def read():
        shared = d.call("status")["embedding"]["shared"].get("work") or {}
        return shared.get("repos", {}).get(str(repo.path))

    found = wait_until(read, timeout=60, what="the config reload to read the shared index")
    # Everything was embedded here already, so nothing was fetched: the read is recorded.
    assert found["status"] in ("nothing_missing", "used"), found


MODEL = "qwen2.5-coder:1.5b"


def _all_summarized(env) -> bool:
    """Read from the store (the daemon made it, and has indexed: sync before)."""
    from indexd.config import load_settings
    from indexd.store import Store

    store = Store(load_settings(env={"INDEXD_HOME": env["INDEXD_HOME"]}).paths.store_dir)
    return (store.count("entries") > 0
            and store.count("entries", "summary_source IN ('', 'docstring')") == 0)


def _summary_asks(fake) -> list[str]:
    """The symbol and file summaries the model was asked for (not relation sentences)."""
    from indexd.enrich.summarizer import RELATION_PROMPT

    asks = []
    for _t, _m, path, body in fake.requests:
        msgs = (body or {}).get("messages") or []
        if path == "/api/chat" and msgs and msgs[0].get("content") != RELATION_PROMPT:
            asks.append(msgs[-1].get("content", ""))
    return asks


def _summarized_daemon(home_env_, extra):
    from testlib import Daemon

    d = Daemon(Path(home_env_["INDEXD_HOME"]), extra_env=extra).start()
    try:
        d.call("status", sync=True, timeout=60)

        def settled():
            # Summaries first, then the queue: a summary drops its entry's vector
            # (to embed it again), so a queue counted before the last summary
            # landed can be 0 while that entry has no vector yet.
            if not _all_summarized(home_env_):
                return None
            st = d.call("status", sync=True, timeout=60)
            return st if st["queues"]["embed"] == 0 else None
        # a model summary is embedded again with the entry's text (test_llm_summary_vectors.py)
        return wait_until(settled, timeout=120, what="model summaries, then their vectors")
    finally:
        d.stop()


def test_a_teammates_llm_summaries_are_taken_not_asked_for_again(tmp_path, s3):
    from fakes.ollama_server import FakeOllama

    with FakeOllama(models=(MODEL,)) as fake:
        llm = {"INDEXD_SUMMARIZE": "llm", "INDEXD_OLLAMA_URL": fake.url, "INDEXD_OLLAMA_MODEL": MODEL}
        # The publishing home runs the daemon with the model (a team's indexing host).
        fake.reply = lambda messages: "Summarized on the CI host."
        ci_repo = make_repo(tmp_path / "ci" / "app", {"pkg/a.py": A_PY, "pkg/b.py": B_PY})
        ci_env = home_env(tmp_path / "ci-home", s3, **llm)
        write_config(ci_env, ci_repo.path)
        _summarized_daemon(ci_env, s3["env"] | llm)
        _, done = publish(ci_env, s3["uri"])
        assert done["repos"][0]["status"] == "published"
        assert done["repos"][0]["vectors"] == done["repos"][0]["entries"] == 6, done
        # A teammate with the same model and a dirty b.py.
        fake.reply = lambda messages: "Summarized on the laptop."
        before = len(_summary_asks(fake))
        repo, env = laptop_index(tmp_path, s3)
        env |= llm
        repo.write("pkg/b.py", B_PY.replace("2 *", "3 *"))
        st = _summarized_daemon(env, s3["env"] | llm)
        [used] = st["embedding"]["shared"]["work"]["repos"].values()
        assert used["status"] == "used" and used["summaries"] == 4, used   # a.py: file, alpha, Beta, gamma
        assert used["vectors"] == 4 and used["rejected"] == 0, used   # of the text with its summary
        # a.py's rows took the summaries before embedding, so their vectors were found, not
        # computed (without that: 3 more). Here: b.py's file entry once (a code file's summary
        # is not in its embedded text), delta's docstring sentence once, and delta's own text
        # once or twice: before and after its summary, or once when the summary lands first
        # (a busy machine's order; seen in CI).
        assert st["embedding"]["embedded"] in (3, 4), st["embedding"]
        asked = _summary_asks(fake)[before:]
        # Only the edited file went to the model: its function and the file itself.
        assert len(asked) == 2 and all("pkg/b.py" in a or "delta" in a for a in asked), asked
        found = json.loads(run_cli("search", "alpha", "--realm", "work", "--json", env=env,
                                   check=True).stdout)
        summaries = {(h["path"], h["symbol"]): h["summary"] for h in found["results"]}
        assert summaries[("pkg/a.py", "alpha")] == "Summarized on the CI host."
        assert summaries[("pkg/b.py", "delta")] == "Summarized on the laptop."


def test_another_summary_model_s_summaries_are_not_taken(tmp_path, s3):
    from fakes.ollama_server import FakeOllama

    with FakeOllama(models=(MODEL, "llama3.2:latest")) as fake:
        ci_llm = {"INDEXD_SUMMARIZE": "llm", "INDEXD_OLLAMA_URL": fake.url,
                  "INDEXD_OLLAMA_MODEL": "llama3.2:latest"}
        ci_repo = make_repo(tmp_path / "ci" / "app", {"pkg/a.py": A_PY})
        ci_env = home_env(tmp_path / "ci-home", s3, **ci_llm)
        write_config(ci_env, ci_repo.path)
        _summarized_daemon(ci_env, s3["env"] | ci_llm)
        publish(ci_env, s3["uri"])
        llm = ci_llm | {"INDEXD_OLLAMA_MODEL": MODEL}
        before = len(_summary_asks(fake))
        _, env = laptop_index(tmp_path, s3, files={"pkg/a.py": A_PY})
        env |= llm
        st = _summarized_daemon(env, s3["env"] | llm)
        [used] = st["embedding"]["shared"]["work"]["repos"].values()
        assert used["status"] == "used" and used["vectors"] == 4 and used["summaries"] == 0, used
        assert len(_summary_asks(fake)) - before == 4   # every entry asked of the local model


# -- rows: a teammate's structure stands in for the parse of files you have ------

def _many_files() -> dict[str, str]:
    """More files than a save's batch (the copy is for cold starts, branch
    switches), with what numbering entries needs care for: a name defined
    twice in one file, a class with methods, a doc, a config file."""
    files = {"pkg/a.py": A_PY, "pkg/b.py": B_PY, "README.md": "# App\n\nSee [a](pkg/a.py).\n",
             "conf/app.toml": "[server]\nport = 8080\n"}
    for i in range(70):
        files[f"pkg/mod{i:02d}.py"] = (
            f"from pkg.a import alpha\n\n\ndef handler_{i}(x):\n    '''Handle case {i}.'''\n"
            f"    return alpha(x) + {i}\n\n\nif {i} % 2:\n    def twice(x):\n        return x\n"
            f"else:\n    def twice(x):\n        return 2 * x\n\n\nclass Box{i}:\n"
            f"    def get(self):\n        return handler_{i}(1)\n")
    return files


def _store_rows(env) -> dict:
    """Every row of entries, links and files, minus what differs by when it ran."""
    from indexd.store import Store

    store = Store(Path(env["INDEXD_HOME"]) / "data" / "lancedb")
    out = {}
    for name, drop in (("entries", {"vector", "embed_hash"}), ("links", set()),
                       ("files", {"indexed_at", "mtime_ns", "inode"})):
        table = getattr(store, name)
        cols = [c for c in table.schema.names if c not in drop]
        rows = table.search().select(cols).limit(None).to_list()
        out[name] = sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)
    return out


def test_a_teammates_rows_stand_in_for_the_parse_of_the_files_you_have(tmp_path, s3):
    files = _many_files()
    ci_publish(tmp_path, s3, files=files)
    repo, env = laptop_index(tmp_path, s3, files=files)
    repo.write("pkg/mod07.py", files["pkg/mod07.py"].replace("Handle case 7.", "Handle case seven."))
    proc = indexd("index", "--json", env=env)
    done = next(e for e in events(proc) if e.get("event") == "done")
    # Every file but the edited one came from the shard; only that one was parsed.
    assert done["shared"] == len(files) - 1 and done["parsed"] == 1, done
    assert done["shared_notes"] == []
    # The store is the one a parse of the same checkout builds, row for row
    # (ids, summaries, links and file records included).
    alone = home_env(tmp_path / "alone-home", s3)
    write_config(alone, repo.path)
    indexd("index", "--no-embed", env=alone)
    assert _store_rows(env) == _store_rows(alone)
    # Its answers are the laptop's: the edited docstring is found, and so is a copied symbol.
    hits = json.loads(run_cli("search", "handle case seven", "--mode", "keyword", "--json",
                              env=env, check=True).stdout)
    assert hits["results"][0]["path"] == "pkg/mod07.py"
    hits = json.loads(run_cli("search", "Box42.get", "--mode", "keyword", "--json", env=env,
                              check=True).stdout)
    assert hits["results"][0]["path"] == "pkg/mod42.py"


def test_rows_of_another_extractor_are_not_copied_and_the_user_is_told(tmp_path, s3):
    import lancedb

    files = _many_files()
    ci_publish(tmp_path, s3, files=files)
    with pytest.MonkeyPatch.context() as mp:
        for key, value in s3["env"].items():
            mp.setenv(key, value)
        db = lancedb.connect(s3["uri"])
        from indexd.shared_index.location import table_names

        [name] = [n for n in table_names(db) if n.endswith("__manifest")]
        manifest = db.open_table(name).to_arrow().to_pylist()
        manifest[0]["extractor_version"] = "an-older-parser"
        db.create_table(name, manifest, mode="overwrite")
    _, env = laptop_index(tmp_path, s3, files=files)
    proc = indexd("index", env=env)
    assert "shared rows not used" in proc.stdout and "another extractor version" in proc.stdout
    assert f"{len(files)} parsed" in proc.stdout, proc.stdout


def test_the_daemons_first_start_copies_a_teammates_rows_too(tmp_path, s3, daemon, indexd_home):
    files = _many_files()
    ci_publish(tmp_path, s3, files=files)
    repo = make_repo(tmp_path / "laptop" / "work-copy", files)
    repo.write("pkg/mod07.py", files["pkg/mod07.py"].replace("Handle case 7.", "Handle case seven."))
    write_config({"INDEXD_HOME": str(indexd_home)}, repo.path, shared=s3["uri"])
    d = daemon(extra_env=s3["env"])

    def settled():
        st = d.call("status", sync=True, timeout=60)
        emb = st["embedding"]
        done = emb["ready"] and st["queues"]["embed"] == 0 and emb["shared"]
        return st if done and st["last_batch"].get("shared") else None

    st = wait_until(settled, timeout=180, what="the daemon's first batch to settle")
    assert st["last_batch"]["shared"] == len(files) - 1 and st["last_batch"]["parsed"] == 1
    alone = home_env(tmp_path / "alone-home", s3)
    write_config(alone, repo.path)
    indexd("index", "--no-embed", env=alone)
    assert _store_rows({"INDEXD_HOME": str(indexd_home)}) == _store_rows(alone)
    found = d.call("search", query="Box42.get", realm="work", mode="keyword", sync=True, timeout=60)
    assert found["results"][0]["path"] == "pkg/mod42.py"


def test_an_unreachable_shared_index_leaves_a_cold_index_to_the_parse(tmp_path, s3):
    files = _many_files()
    _, env = laptop_index(tmp_path, s3, files=files)
    env = env | {"AWS_ENDPOINT_URL": "http://127.0.0.1:9"}   # nothing listens there
    proc = indexd("index", "--no-embed", "--json", env=env)
    done = next(e for e in events(proc) if e.get("event") == "done")
    assert done["parsed"] == len(files) and done["shared"] == 0, done
    [note] = done["shared_notes"]
    assert note["repo"].endswith("work-copy") and note["reason"], note
