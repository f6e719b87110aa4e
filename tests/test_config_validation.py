"""Enumerated settings: a bad value is a ConfigError naming key, value and choices.

At `indexd index` / `indexd run` start (the process refuses to start) and at a
config reload of a running daemon (the old config is kept, status and log say
why). And `summarize = "off"` really writes no summaries.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from indexd.config import default_paths, load_settings
from indexd.errors import ConfigError
from testlib import BIN, settings_with_realm, wait_until


def paths():
    return default_paths(dict(os.environ))    # load_settings would refuse a bad file


def write_config(text: str) -> None:
    paths().config_dir.mkdir(parents=True, exist_ok=True)
    paths().config_file.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("line, key, value, allowed", [
    ('summarize = "lol"', "summarize", "lol", "off, docstring, llm"),
    ("summarize = 3", "summarize", "3", "off, docstring, llm"),
    ("summarize = true", "summarize", "True", "off, docstring, llm"),
    ('embed_runtime = "gpu"', "embed_runtime", "gpu", "auto, onnx, torch"),
    ('embed_recipe = "everything"', "embed_recipe", "everything", "pooled, default, name_doc, body"),
    ('embed_model = "minilm"', "embed_model", "minilm", "ollama:MODEL"),
    ('embed_model = "ollama:"', "embed_model", "ollama:", "ollama:MODEL"),
    ("embed_model = 5", "embed_model", "5", "hash"),
    ('embed_first = "minilm"', "embed_first", "minilm", "auto, off, default"),
    ('embed_first = "ollama:nomic-embed-text"', "embed_first", "ollama:nomic-embed-text", "auto, off"),
])
def test_bad_enumerated_value_in_the_file(indexd_home, line, key, value, allowed):
    write_config(line + "\n")
    with pytest.raises(ConfigError) as err:
        load_settings()
    msg = err.value.message
    assert key in msg and repr(value).strip("'") in msg and allowed in msg
    assert "config.toml" in msg
    assert err.value.data["key"] == key


def test_bad_value_from_env_names_the_variable(indexd_home, monkeypatch):
    monkeypatch.setenv("INDEXD_SUMMARIZE", "lol")
    with pytest.raises(ConfigError, match=r"INDEXD_SUMMARIZE.*'lol'.*off, docstring, llm"):
        load_settings()


def test_wrong_type_for_numbers_and_lists(indexd_home):
    write_config("max_file_size = true\n")
    with pytest.raises(ConfigError, match="max_file_size"):
        load_settings()
    write_config("exclude = 5\n")
    with pytest.raises(ConfigError, match="exclude"):
        load_settings()


def test_good_values_still_load(indexd_home, tmp_path, monkeypatch):
    monkeypatch.delenv("INDEXD_EMBED_MODEL")   # the config file's value is the point here
    write_config('summarize = "off"\nembed_runtime = "torch"\nembed_recipe = "name_doc"\n'
                 f'embed_model = "{tmp_path}/model"\n')
    s = load_settings()
    assert (s.summarize, s.embed_runtime, s.embed_recipe) == ("off", "torch", "name_doc")
    for spec in ("default", "mpnet", "off", "hash", "ollama:nomic-embed-text", "~/models/x", "./m"):
        write_config(f'embed_model = "{spec}"\n')
        assert load_settings().embed_model == spec
    for spec in ("auto", "off", "default", "hash", "~/models/x"):
        write_config(f'embed_first = "{spec}"\n')
        assert load_settings().embed_first == spec


def test_choices_agree_with_the_modules_that_use_them():
    from indexd.config import CHOICES
    from indexd.enrich.embedder import PRECISIONS, RUNTIMES
    from indexd.enrich.summarizer import MODES
    from indexd.enrich.texts import RECIPES

    assert CHOICES == {"summarize": MODES, "embed_runtime": RUNTIMES, "embed_recipe": RECIPES,
                       "embed_precision": PRECISIONS}


def test_indexd_index_and_run_refuse_a_bad_value(indexd_home, git_repo):
    git_repo.write("a.py", "def f():\n    pass\n")
    settings_with_realm("work", git_repo.path)
    text = load_settings().paths.config_file.read_text()
    write_config('summarize = "lol"\n' + text)
    for args in (["index"], ["index", "--json"], ["run"]):
        proc = subprocess.run([str(BIN / "indexd"), *args], capture_output=True, text=True,
                              timeout=60, env=os.environ.copy())
        assert proc.returncode == 4, (args, proc.stdout, proc.stderr)
        out = proc.stdout + proc.stderr
        assert "summarize" in out and "'lol'" in out and "off, docstring, llm" in out
    err = json.loads(subprocess.run([str(BIN / "indexd"), "index", "--json"], capture_output=True,
                                    text=True, timeout=60).stdout)["error"]
    assert err["data"]["type"] == "ConfigError" and err["data"]["allowed"] == ["off", "docstring", "llm"]
    assert not paths().store_dir.exists()    # refused before touching the store


def test_bad_reload_keeps_the_old_config_and_says_so(tmp_path, git_repo, daemon):
    git_repo.write("a.py", "def alpha():\n    pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    config = load_settings().paths.config_file
    good = config.read_text()
    d = daemon()
    d.call("status", sync=True, timeout=60)
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.py").write_text("def beta():\n    pass\n")
    # A bad value and a new repo in the same edit: neither is applied.
    config.write_text('summarize = "lol"\n' + good.replace(
        f'"{git_repo.path}"', f'"{git_repo.path}", "{other}"'))
    status = wait_until(lambda: (s := d.call("status")) and s.get("config_error") and s,
                        timeout=30, what="the reload error in status")
    assert "summarize" in status["config_error"] and "'lol'" in status["config_error"]
    assert [r["repo"] for r in status["realms"][0]["repos"]] == [str(git_repo.path)]
    assert status["embedding"]["summaries"]["mode"] == "docstring"
    assert "config reload failed, keeping the previous one" in d.output()
    human = subprocess.run([str(BIN / "indexctl"), "status"], capture_output=True, text=True,
                           timeout=60, env=d.env)
    assert "config:" in human.stdout and "'lol'" in human.stdout
    # Still says so after a batch (a batch clears a transient error, not this one).
    git_repo.write("a.py", "def alpha():\n    return 1\n")
    status = d.call("status", sync=True, timeout=30)
    assert status["config_error"] and status["last_batch"]
    # Fixed: the error goes and the edit is applied.
    config.write_text(good.replace(f'"{git_repo.path}"', f'"{git_repo.path}", "{other}"'))
    wait_until(lambda: d.call("status").get("config_error") is None
               and len(d.call("status")["realms"][0]["repos"]) == 2, timeout=30,
               what="the fixed config applied")


def test_summarize_off_writes_no_summaries(indexd_home, git_repo, daemon):
    git_repo.write("pay.py", 'def refund(order):\n    """Give the money back."""\n    return -order\n')
    git_repo.write("README.md", "# Pay\n\nHow payments work.\n\n## Refunds\n\nThey take a day.\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    write_config('summarize = "off"\n' + load_settings().paths.config_file.read_text())
    subprocess.run([str(BIN / "indexd"), "index", "--json"], check=True, capture_output=True)

    from indexd.store import Store

    store = Store(load_settings().paths.store_dir)
    rows = store.entries_where(None, ["qualname", "summary", "summary_source"])
    assert {r["qualname"] for r in rows} >= {"refund", "Pay > Refunds"}
    assert [r for r in rows if r["summary"] or r["summary_source"]] == []

    d = daemon()
    git_repo.write("more.py", 'def audit(books):\n    """Check every entry twice."""\n')
    status = d.call("status", sync=True, timeout=60)
    assert status["embedding"]["summaries"]["mode"] == "off"
    assert status["embedding"]["summaries"]["enabled"] is False
    rows = d.call("symbols", path=str(git_repo.path / "more.py"))["results"]
    assert [r["summary_source"] for r in rows if r["symbol"] == "audit"] == [""]
    store = Store(load_settings().paths.store_dir)
    assert [r for r in store.entries_where(None, ["summary", "summary_source"])
            if r["summary"] or r["summary_source"]] == []


@pytest.mark.parametrize("line", ["embed_step = 15", "embed_step = 4097", 'embed_step = "big"'])
def test_embed_step_outside_its_range_is_refused(indexd_home, line):
    write_config(line + "\n")
    with pytest.raises(ConfigError, match=r"embed_step.*config.toml|config.toml.*embed_step"):
        load_settings()


def test_embed_step_defaults_to_256_rows_and_env_sets_it(indexd_home, monkeypatch):
    assert load_settings().embed_step == 256
    monkeypatch.setenv("INDEXD_EMBED_STEP", "64")
    assert load_settings().embed_step == 64


@pytest.mark.parametrize("line", ["embed_max_tokens = 31", "embed_max_tokens = 513",
                                  'embed_max_tokens = "lots"', "embed_max_tokens = true"])
def test_embed_max_tokens_outside_its_range_is_refused(indexd_home, line):
    write_config(line + "\n")
    with pytest.raises(ConfigError, match=r"embed_max_tokens.*config.toml|config.toml.*embed_max_tokens"):
        load_settings()


def test_embed_max_tokens_from_file_and_env(indexd_home, monkeypatch):
    assert load_settings().embed_max_tokens == 512     # "the model's own limit" (256 for MiniLM)
    write_config("embed_max_tokens = 128\n")
    assert load_settings().embed_max_tokens == 128
    monkeypatch.setenv("INDEXD_EMBED_MAX_TOKENS", "64")
    assert load_settings().embed_max_tokens == 64
    monkeypatch.setenv("INDEXD_EMBED_MAX_TOKENS", "1000")
    with pytest.raises(ConfigError, match=r"INDEXD_EMBED_MAX_TOKENS.*1000.*32\.\.512"):
        load_settings()


@pytest.mark.parametrize("line", ["unwatched_reconcile_s = 0", 'unwatched_reconcile_s = "often"'])
def test_unwatched_reconcile_s_outside_its_range_is_refused(indexd_home, line):
    write_config(line + "\n")
    with pytest.raises(ConfigError, match=r"unwatched_reconcile_s.*config.toml|config.toml.*unwatched_reconcile_s"):
        load_settings()


def test_unwatched_reconcile_s_defaults_to_30_and_env_sets_it(indexd_home, monkeypatch):
    assert load_settings().unwatched_reconcile_s == 30
    monkeypatch.setenv("INDEXD_UNWATCHED_RECONCILE_S", "3")
    assert load_settings().unwatched_reconcile_s == 3
