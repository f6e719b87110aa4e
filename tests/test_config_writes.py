"""Editing config.toml: what a user wrote survives, odd paths round-trip, and two
writers at once (the offline CLI and the daemon, or two shells) lose nothing."""

from __future__ import annotations

import concurrent.futures
import os

from indexd.config import load_settings
from indexd.realms import add_repos, remove_repos
from testlib import run_cli

USER_CONFIG = """\
# my indexd settings (kept by hand)
debounce_ms = 300   # a bit slower than the default

[realms]
# the work realm: the two services
work = ["{a}"]

[realms.oss]
repos = ["{b}"]
note = "kept: a key indexd does not know"
"""


def test_realm_add_keeps_comments_and_unknown_keys(tmp_path):
    a, b, c = (tmp_path / n for n in ("a", "b", "c"))
    for d in (a, b, c):
        d.mkdir()
    settings = load_settings()
    path = settings.paths.config_file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(USER_CONFIG.format(a=a, b=b), encoding="utf-8")

    add_repos(load_settings(), "work", [str(c)])
    text = path.read_text(encoding="utf-8")
    for kept in ("# my indexd settings (kept by hand)", "# a bit slower than the default",
                 "# the work realm: the two services", 'note = "kept: a key indexd does not know"'):
        assert kept in text, text
    loaded = load_settings()
    assert loaded.realms["work"] == (str(a), str(c)) and loaded.realms["oss"] == (str(b),)
    assert loaded.debounce_ms == 300

    remove_repos(load_settings(), "oss", [str(b)])
    text = path.read_text(encoding="utf-8")
    assert 'note = "kept: a key indexd does not know"' in text and "# my indexd settings" in text
    assert load_settings().realms["oss"] == ()


def test_paths_with_quotes_backslashes_and_newlines_round_trip(tmp_path):
    odd = tmp_path / 'we"ird \\ na\tme\nwith a newline'
    odd.mkdir()
    add_repos(load_settings(), "odd", [str(odd)])
    assert load_settings().realms["odd"] == (str(odd),)


def _add(realm_dir: str) -> int:
    return run_cli("realm", "add", "many", realm_dir, "--json", timeout=120).returncode


def test_concurrent_realm_adds_lose_nothing(tmp_path):
    """Eight `indexctl realm add` at once, no daemon: every one of them lands."""
    dirs = []
    for i in range(8):
        d = tmp_path / f"repo{i}"
        d.mkdir()
        dirs.append(str(d))
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(_add, dirs))
    assert codes == [0] * 8
    assert sorted(load_settings().realms["many"]) == sorted(dirs)
    leftovers = [p for p in os.listdir(load_settings().paths.config_file.parent)
                 if p not in ("config.toml", "config.toml.lock")]
    assert leftovers == []


def test_a_realms_shared_index_is_read_and_kept_by_realm_add(tmp_path):
    import pytest

    from indexd.errors import ConfigError

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    settings = load_settings()
    settings.paths.make_dir(settings.paths.config_dir)
    settings.paths.config_file.write_text(
        f'[realms.work]\nrepos = ["{a}"]\nshared = "s3://team/index"\n')
    assert load_settings().shared == {"work": "s3://team/index"}
    add_repos(load_settings(), "work", [str(b)])
    again = load_settings()
    assert again.shared == {"work": "s3://team/index"} and again.realms["work"] == (str(a), str(b))
    settings.paths.config_file.write_text(f'[realms.work]\nrepos = ["{a}"]\nshared = 3\n')
    with pytest.raises(ConfigError, match="realms.work.shared must be a URI"):
        load_settings()
