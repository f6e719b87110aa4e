"""Settings precedence, paths and realm edits."""

from __future__ import annotations

import pytest

from indexd.config import load_settings
from indexd.errors import ConfigError, RealmError
from indexd.realms import add_repos, list_realms, locate, remove_repos


def test_indexd_home_puts_every_path_under_it(indexd_home):
    s = load_settings()
    for p in (s.paths.config_dir, s.paths.data_dir, s.paths.cache_dir, s.paths.log_dir,
              s.paths.socket, s.paths.store_dir):
        assert str(p).startswith(str(indexd_home))
    assert s.paths.socket == indexd_home / "indexd.sock"


def test_precedence_defaults_file_env_flags(indexd_home, monkeypatch):
    assert load_settings().max_file_size == 1 << 20
    s = load_settings()
    s.paths.config_dir.mkdir(parents=True)
    s.paths.config_file.write_text("max_file_size = 100\ndebounce_ms = 50\n")
    assert load_settings().max_file_size == 100
    monkeypatch.setenv("INDEXD_MAX_FILE_SIZE", "200")
    assert load_settings().max_file_size == 200 and load_settings().debounce_ms == 50
    assert load_settings(flags={"max_file_size": 300}).max_file_size == 300


def test_bad_values_are_clear_errors(indexd_home, monkeypatch):
    s = load_settings()
    s.paths.config_dir.mkdir(parents=True)
    s.paths.config_file.write_text("max_file_size = [\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_settings()
    s.paths.config_file.write_text("")
    monkeypatch.setenv("INDEXD_DEBOUNCE_MS", "soon")
    with pytest.raises(ConfigError, match="INDEXD_DEBOUNCE_MS"):
        load_settings()


def test_realm_add_remove_list_and_locate(indexd_home, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b c"
    a.mkdir()
    b.mkdir()
    s = load_settings()
    s.paths.config_dir.mkdir(parents=True)
    s.paths.config_file.write_text("# my settings\nmax_file_size = 4096\n")
    add_repos(s, "work", [str(a), str(b)])
    s = load_settings()
    assert s.realms == {"work": (str(a.resolve()), str(b.resolve()))}
    assert s.max_file_size == 4096 and "# my settings" in s.paths.config_file.read_text()
    assert list_realms(s) == {"realms": [{"name": "work", "repos": [str(a.resolve()), str(b.resolve())]}]}
    (a / "x.py").write_text("")
    assert locate(s, str(a / "x.py")) == ("work", str(a.resolve()), "x.py")
    with pytest.raises(RealmError, match="not inside any realm"):
        locate(s, str(tmp_path / "elsewhere.py"))
    with pytest.raises(RealmError, match="not inside any realm"):
        locate(s, str(a / ".." / ".." / "x.py"))
    with pytest.raises(RealmError, match="no such directory"):
        add_repos(s, "work", [str(tmp_path / "missing")])
    with pytest.raises(ConfigError, match="bad realm name"):
        add_repos(s, "no spaces", [str(a)])
    remove_repos(s, "work", [str(b)])
    assert load_settings().realms == {"work": (str(a.resolve()),)}
    remove_repos(load_settings(), "work", None)
    assert load_settings().realms == {}


def test_a_folder_inside_or_around_a_realms_root_is_refused(indexd_home, tmp_path):
    """`realm add srcs ~/src/a` with ~/src in srcs indexed a.py twice (as a.py and
    a/a.py: every search hit doubled) and its watch read as "0 of 19 directories
    watched (inotify limit)"."""
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    (src / "b").mkdir()
    s = load_settings()
    add_repos(s, "srcs", [str(src)])
    with pytest.raises(RealmError, match=r"inside .*src, already in realm 'srcs'"):
        add_repos(load_settings(), "srcs", [str(src / "a")])
    assert load_settings().realms == {"srcs": (str(src.resolve()),)}
    remove_repos(load_settings(), "srcs", None)
    add_repos(load_settings(), "srcs", [str(src / "a")])
    with pytest.raises(RealmError, match=r"holds .*a, already in realm 'srcs'"):
        add_repos(load_settings(), "srcs", [str(src)])
    with pytest.raises(RealmError, match="inside"):   # two at once, one inside the other
        add_repos(load_settings(), "two", [str(src / "b"), str(src)])
    add_repos(load_settings(), "srcs", [str(src / "b")])   # siblings are fine
    add_repos(load_settings(), "other", [str(src)])   # another realm may hold the parent
    assert load_settings().realms["srcs"] == (str((src / "a").resolve()), str((src / "b").resolve()))
