"""A secret inside an ordinary file is masked, not a reason to drop the file; withheld
files are listed with their reason; context lines and one-shot purges read and
leave only what indexing allows.

Every test uses a real git repo and the real `indexd` / `indexctl` binaries (the
daemon over its socket, or the CLI's offline fallback on the real store).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from test_secrets_purge import files_containing, marker
from testlib import run_cli, settings_with_realm, wait_until

# A real framework's configuration docs show this as an example key.
DJANGO_KEY = "192b9bdd22ab9ed4d12e236c78afcb9a393ec15f71bbf5dc987d54727823bcbf"
SECRET_LINE = 413
MASK = "«redacted»"
HIGH = "Zx8" + "qT4vN1" + "wLp6Ks"   # high-entropy literal, built at runtime


def docs_page() -> str:
    """An 800+ line settings reference; one code sample holds the example key."""
    words = ["aardvark", "bivouac", "cormorant", "dulcimer", "escarpment", "fjordland",
             "gazebo", "hinterland", "isthmus", "jacaranda", "kumquat", "lagoon",
             "marzipan", "nightjar", "oxbow", "pangolin", "quagmire", "rhubarb",
             "sextant", "tamarind", "umbrella", "vellum", "wolfram", "xylograph",
             "yarrow", "zanzibar", "archipelago", "bergamot", "caldera", "dromedary",
             "estuary", "fennel", "gannet", "heliotrope", "ibex", "juniper", "kestrel",
             "lichen", "mistral", "narwhal"]
    lines = ["# Settings reference", ""]
    for i, word in enumerate(words):
        lines += [f"## The {word} setting", "", f"Controls how {word} requests are handled."]
        lines += [f"Line {n} of the {word} section: defaults, caveats, examples." for n in range(17)]
    lines[SECRET_LINE - 1] = f"SECRET_KEY = '{DJANGO_KEY}'"
    return "\n".join(lines) + "\n"


def setup_docs_repo(git_repo):
    git_repo.write("docs/settings.md", docs_page())
    git_repo.write("app.py", "def app_main():\n    return 1\n")
    git_repo.write(".env", "DB_PASSWORD=" + HIGH + "\n")
    git_repo.write("deploy/id_rsa", "-----BEGIN RSA PRIVATE KEY-----\n" + HIGH * 4 + "\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)


def cli_json(*args, env=None) -> dict:
    out = run_cli(*args, "--json", env=env)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def by_path(result: dict) -> dict:
    return {f["path"]: f for realm in result["realms"] for repo in realm["repos"]
            for f in repo["files"]}


def test_docs_page_with_example_key_is_indexed_masked(git_repo, daemon):
    setup_docs_repo(git_repo)
    assert DJANGO_KEY in (git_repo.path / "docs/settings.md").read_text()
    d = daemon()
    d.call("status", sync=True, timeout=60)
    # the other 800 lines are searchable, before and after the secret's line
    for word in ("aardvark", "zanzibar", "narwhal"):
        hits = d.call("search", query=word, limit=5)["results"]
        assert any(h["path"] == "docs/settings.md" for h in hits), (word, hits)
    found = d.call("search", query="SECRET_KEY hinterland", limit=50, context=50)
    assert any(h["path"] == "docs/settings.md" for h in found["results"])
    assert DJANGO_KEY not in json.dumps(found)
    around = [h for h in found["results"] if h["path"] == "docs/settings.md"
              and h.get("context") and f"SECRET_KEY = '{MASK}'" in h["context"]]
    assert around, "context around the key's line is masked, not dropped"
    # the file says it was redacted; key files stay withheld whole
    listed = by_path(cli_json("skipped", env=d.env))
    assert listed["docs/settings.md"] == {"path": "docs/settings.md", "status": "redacted",
                                          "reason": f"redacted: 1 secret (line {SECRET_LINE})"}
    assert listed[".env"]["status"] == "skipped" and listed[".env"]["reason"].startswith("secret")
    assert listed["deploy/id_rsa"]["status"] == "skipped"
    assert "app.py" not in listed
    repo = d.call("status")["realms"][0]["repos"][0]
    assert {w["path"] for w in repo["withheld"]} == {"docs/settings.md", ".env", "deploy/id_rsa"}
    assert repo["withheld_total"] == 3 and repo["redacted"] == 1
    d.stop()
    assert files_containing(d.home / "data", DJANGO_KEY) == []
    assert files_containing(d.home, DJANGO_KEY) == [], "the key leaked into logs or caches"
    assert files_containing(d.home, HIGH) == []
    # offline: the CLI reads the same list from the store
    offline = cli_json("skipped", "--realm", "work", env=d.env)
    assert by_path(offline) == listed and offline["daemon"] is None


def test_skipped_command_bad_realm_and_text_output(git_repo, daemon):
    setup_docs_repo(git_repo)
    assert run_cli("skipped").returncode == 4        # no index yet: a clear store error
    run_cli("index", tool="indexd", check=True)
    text = run_cli("skipped", check=True).stdout
    assert "docs/settings.md" in text and f"redacted: 1 secret (line {SECRET_LINE})" in text
    bad = run_cli("skipped", "--realm", "nope", "--json")
    assert bad.returncode == 4 and "unknown realm" in json.loads(bad.stdout)["error"]["message"]
    assert run_cli("skipped", "--limit", "0").returncode == 4


def test_symlink_named_like_notes_to_env_is_a_secret(git_repo):
    git_repo.write(".env", "DB_PASSWORD=" + HIGH + "\n")
    git_repo.write("readme.md", "# Readme\n")
    (git_repo.path / "notes.txt").symlink_to(".env")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    run_cli("index", tool="indexd", check=True)
    listed = by_path(cli_json("skipped"))
    assert listed["notes.txt"]["status"] == "skipped"
    assert listed["notes.txt"]["reason"] == "secret: symlink target .env: name matches .env*"
    home = os.environ["INDEXD_HOME"]
    assert files_containing(Path(home), HIGH) == []


def _hit_context(word: str, path: str) -> str | None:
    result = cli_json("search", word, "--context", "50", "--limit", "20")
    hits = [h for h in result["results"] if h["path"] == path]
    assert hits, (word, path, result)
    return hits[0].get("context", "")


def test_context_reads_only_what_indexing_would(git_repo, tmp_path, monkeypatch):
    """The tree changes after indexing (no daemon to notice): context must not follow."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "loot.md").write_text("# Loot\n\noutsidemarkzq lives outside the repo\n")
    (outside / "page.md").write_text("# Page\n\noutsidemarkzq in an outside folder\n")
    git_repo.write("guide.md", "# Guide\n\nguideword first\n")
    git_repo.write("notes.md", "# Notes\n\nnotesword first\n")
    git_repo.write("tips.md", "# Tips\n\ntipsword first\n")
    git_repo.write("big.md", "# Big\n\nbigword first\n")
    git_repo.write("sub/page.md", "# Page\n\npageword first\n")
    git_repo.write(".env", "DB_PASSWORD=" + HIGH + "\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    monkeypatch.setenv("INDEXD_MAX_FILE_SIZE", "4096")
    run_cli("index", tool="indexd", check=True)
    assert "guideword" in _hit_context("guideword", "guide.md")     # context works at all

    root = git_repo.path
    (root / "guide.md").unlink()
    (root / "guide.md").symlink_to(outside / "loot.md")             # a link out of the repo
    (root / "notes.md").unlink()
    (root / "notes.md").symlink_to(".env")                          # a link to a secret file
    (root / "tips.md").write_text("# Tips\n\ntipsword first\npassword = '" + HIGH + "'\n")
    (root / "big.md").write_text("# Big\n\nbigword first\n" + "bigmarkzq filler\n" * 1000)
    (root / "sub/page.md").unlink()
    (root / "sub").rmdir()
    (root / "sub").symlink_to(outside, target_is_directory=True)   # a directory link out

    assert "outsidemarkzq" not in _hit_context("guideword", "guide.md")
    assert HIGH not in _hit_context("notesword", "notes.md")
    tips = _hit_context("tipsword", "tips.md")
    assert HIGH not in tips and f"password = '{MASK}'" in tips      # masked like indexing
    assert "bigmarkzq" not in _hit_context("bigword", "big.md")     # over max_file_size
    assert "outsidemarkzq" not in _hit_context("pageword", "sub/page.md")


def test_one_shot_index_leaves_no_deleted_text_on_disk(git_repo):
    # Hundreds of files: deleting one leaves its rows soft-deleted inside a big
    # data file, which compaction alone does not rewrite.
    for i in range(300):
        git_repo.write(f"pkg/mod_{i}.py", f"def helper_{i}():\n    return {i}\n")
    mark = marker("zqoneshot")
    git_repo.write("gone.py", f"def {mark}():\n    return '{mark} body'\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    run_cli("index", tool="indexd", check=True)
    home = Path(os.environ["INDEXD_HOME"])
    assert files_containing(home / "data", mark), "marker not stored as plain bytes: test is void"
    git_repo.rm("gone.py")
    run_cli("index", tool="indexd", check=True)
    assert files_containing(home / "data", mark) == []
    found = cli_json("search", "helper_17")
    assert any(h["path"] == "pkg/mod_17.py" for h in found["results"])   # store still works
    assert not [h for h in cli_json("search", mark)["results"] if h["path"] == "gone.py"]


def test_indexctl_purge_removes_soft_deleted_rows_of_a_big_table(git_repo, daemon):
    for i in range(300):
        git_repo.write(f"pkg/mod_{i}.py", f"def helper_{i}():\n    return {i}\n")
    mark = marker("zqpurgebig")
    git_repo.write("gone.py", f"def {mark}():\n    return '{mark} body'\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    # No model: no enrich stage rewriting entry rows between the two purges.
    d = daemon(extra_env={"INDEXD_EMBED_MODEL": "off"})
    d.call("status", sync=True, timeout=120)
    d.call("purge")           # compacted: one big fragment, as after any upkeep
    assert files_containing(d.home / "data", mark)
    git_repo.rm("gone.py")
    d.call("status", sync=True, timeout=60)
    assert d.call("purge")["purged"] is True
    assert files_containing(d.home / "data", mark) == []
    assert any(h["path"] == "pkg/mod_17.py"
               for h in d.call("search", query="helper_17", sync=True)["results"])


def test_daemon_upkeep_drops_versions_older_than_the_retention(git_repo, daemon):
    """The 300 s default made 2 s. The upkeep's optimize (the one a clean shutdown also
    runs) compacts, which makes a fresh version still holding the deleted rows: the
    next upkeep past the retention drops it."""
    mark = marker("zqretain")
    git_repo.write("notes.py", f"def {mark}(): pass\n")
    git_repo.write("keep.py", "def keeper(): pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    env = {"INDEXD_VERSION_RETENTION_S": "2"}
    d = daemon(extra_env=env)
    d.call("status", sync=True, timeout=60)
    git_repo.rm("notes.py")
    d.call("status", sync=True, timeout=60)
    d.stop()                                    # upkeep 1: compaction
    compacted_at = time.monotonic()
    assert files_containing(d.home / "data", mark), "the first upkeep dropped it: docs are wrong"
    wait_until(lambda: time.monotonic() - compacted_at > 2.5, timeout=10,
               what="the compaction's versions to pass the retention")
    d2 = daemon(extra_env=env)
    assert d2.call("search", query="keeper", sync=True)["results"]
    d2.stop()                                   # upkeep 2: versions older than 2 s dropped
    assert files_containing(d.home / "data", mark) == []


def test_file_dropped_by_an_older_indexd_is_reread_masked(git_repo, make_store):
    """Upgrading: a row 'skipped: secret: content: ...' with the file's current stat
    would otherwise keep the page out of the index until it is next edited."""
    from dataclasses import replace

    from indexd.pipeline import Indexer
    from indexd.store import FileWrite

    setup_docs_repo(git_repo)
    settings = settings_with_realm("work", git_repo.path)
    store = make_store(settings)
    Indexer(settings, store).index()
    rec = store.file_records("work", str(git_repo.path))["docs/settings.md"]
    old = replace(rec, status="skipped", entries=0, hash="",
                  reason=f"secret: content: high-entropy value assigned to a secret-like "
                         f"name at line {SECRET_LINE}")
    store.write([FileWrite(old, [], [])])
    report = Indexer(settings, store).index()
    assert report.parsed == 1
    now = store.file_records("work", str(git_repo.path))["docs/settings.md"]
    assert (now.status, now.reason) == ("indexed", f"redacted: 1 secret (line {SECRET_LINE})")
    assert Indexer(settings, store).index().parsed == 0     # and not re-read every time


def test_clients_cannot_raise_the_context_reading_limits():
    import pytest

    from indexd.errors import InvalidParams
    from indexd.query.search import SearchRequest

    for name, value in (("context_max_size", 1 << 40), ("context_allow", ["*"])):
        with pytest.raises(InvalidParams, match=name):
            SearchRequest.from_params({"query": "x", "context": 5, name: value})


# --- secret forms the planted-secret corpus found stored (bench/secrets_corpus.py) ---

def _rand(rng, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def planted_forms() -> dict[str, tuple[str, str, str]]:
    """{path: (text, secret value, a word on the secret's line)}: one file per form, as a
    user writes it. Values are made at runtime (seeded) so this file trips no scanner."""
    import random
    import string
    rng = random.Random(15)
    b64 = string.ascii_letters + string.digits + "+/"
    urlsafe = string.ascii_letters + string.digits + "-_"
    sak, kid = _rand(rng, b64, 40), "AKIA" + _rand(rng, string.ascii_uppercase + string.digits, 16)
    csv_sak, pw = _rand(rng, b64, 40), _rand(rng, string.ascii_letters + string.digits + "!*.~", 16)
    bearer, sig = _rand(rng, urlsafe, 40), _rand(rng, b64, 44)
    hook = (f"https://hooks.slack.com/services/T{_rand(rng, string.ascii_uppercase, 8)}/"
            f"B{_rand(rng, string.ascii_uppercase, 10)}/{_rand(rng, string.ascii_letters, 24)}")
    return {
        # the case: a random 40-char value under a name that says only "AWS"
        "settings.py": ("import os\n\nREGION = 'eu-west-1'  # kingfisher\n"
                        f'AWS_SAK = "{sak}"  # kingfisher\n', sak, "kingfisher"),
        "deploy/credentials.csv": ("User name,Access key ID,Secret access key\n"
                                   f"ci-bot,{kid},{csv_sak}\n", csv_sak, "bot"),
        "config/database.yaml": ("database:\n  pool: 5\n"
                                 f"  url: postgres://app:{pw}@db.internal:5432/heron\n", pw, "heron"),
        "scripts/jobs.sh": ("#!/bin/sh\n"
                            f'curl -H "Authorization: Bearer {bearer}" https://api.internal/v1/wren\n',
                            bearer, "wren"),
        "docker/app.env": ("LOG_LEVEL=info\n" f"DEPLOY_SIG={sig}\n" "PLOVER_MODE=on\n", sig, "plover"),
        "alerts.json": ('{\n  "channel": "ops-osprey",\n' f'  "hook": "{hook}"\n}}\n', hook, "osprey"),
    }


def test_planted_secret_forms_are_masked_and_files_still_indexed(git_repo, daemon):
    forms = planted_forms()
    for path, (text, _value, _word) in forms.items():
        git_repo.write(path, text)
    git_repo.write("app.py", "def app_main():\n    return 1\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True, timeout=60)
    listed = by_path(cli_json("skipped", env=d.env))
    leaks = []   # every form checked before failing, so a regression names them all
    for path, (text, value, word) in forms.items():
        if listed.get(path, {}).get("status") != "redacted":
            leaks.append((path, "not listed as redacted", listed.get(path)))
        if value in json.dumps(d.call("search", query=value, limit=20, context=5)["results"]):
            leaks.append((path, "search for the value returns it"))
        # still indexed: a word on the secret's own line finds the file, the value masked
        near = d.call("search", query=word, limit=20, context=5)
        if not any(h["path"] == path for h in near["results"]):
            leaks.append((path, f"not found by {word!r}"))
        if value in json.dumps(near["results"]):
            leaks.append((path, "value in the context around its line"))
        if path == "settings.py" and not any(f'AWS_SAK = "{MASK}"' in (h.get("context") or "")
                                             for h in near["results"]):
            leaks.append((path, "context does not show the masked line", near["results"]))
    repo = d.call("status")["realms"][0]["repos"][0]
    d.stop()
    for path, (_text, value, _word) in forms.items():
        if files_containing(d.home, value):
            leaks.append((path, "value in a file under INDEXD_HOME", files_containing(d.home, value)))
    assert leaks == [], "\n".join(map(str, leaks))
    assert repo["redacted"] == len(forms) and "app.py" not in listed
