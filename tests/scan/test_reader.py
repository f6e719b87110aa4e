"""read_source / stat_key: every skip reason, decoding, and never raising."""

from __future__ import annotations

import codecs
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexd.model import (SKIP_BINARY, SKIP_ENCODING, SKIP_SECRET, SKIP_SYMLINK,
                          SKIP_TOO_LARGE, SKIP_UNREADABLE, content_hash)
from indexd.scan import reader
from indexd.scan.reader import Skip, Source, read_source, stat_key

MAX = 1 << 20
HIGH = "Zx8" + "qT4vN1" + "wLp6Ks"   # high-entropy literal, built at runtime


def write(root: Path, rel: str, data: bytes | str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def forbid_open(monkeypatch):
    """Make any attempt to open a file fail the test."""
    def boom(*a, **k):
        raise AssertionError("file was opened")
    monkeypatch.setattr(reader.os, "open", boom)


# --- text and decoding -------------------------------------------------------

def test_reads_utf8_with_matching_stat(tmp_path):
    raw = "def f():\n    return 'héllo'\n".encode()
    path = write(tmp_path, "src/a.py", raw)
    got = read_source(tmp_path, "src/a.py", MAX)
    st = os.stat(path)
    assert got == Source(raw.decode(), content_hash(raw), len(raw), st.st_mtime_ns,
                         st.st_ino, "utf-8")


def test_utf8_bom_is_stripped_but_hashed(tmp_path):
    raw = codecs.BOM_UTF8 + b"x = 1\n"
    write(tmp_path, "a.py", raw)
    got = read_source(tmp_path, "a.py", MAX)
    assert (got.text, got.encoding, got.hash) == ("x = 1\n", "utf-8-sig", content_hash(raw))


@pytest.mark.parametrize("codec,bom", [("utf-16-le", codecs.BOM_UTF16_LE),
                                       ("utf-16-be", codecs.BOM_UTF16_BE)])
def test_utf16_with_bom(tmp_path, codec, bom):
    write(tmp_path, "w.txt", bom + "naïve text\r\n".encode(codec))
    got = read_source(tmp_path, "w.txt", MAX)
    assert isinstance(got, Source)
    assert (got.text, got.encoding) == ("naïve text\r\n", "utf-16")


def test_cp1252_fallback(tmp_path):
    write(tmp_path, "legacy.txt", b"caf\xe9 na\xefve \x80 5\r\n")
    got = read_source(tmp_path, "legacy.txt", MAX)
    assert (got.text, got.encoding) == ("café naïve € 5\r\n", "cp1252")


@pytest.mark.parametrize("data,byte", [
    (b"abc\x81def", 3),            # 0x81 is undefined in cp1252
    (b"ok\n\xe9\x07bell", 3),      # decodes as cp1252 but has a C0 control
])
def test_undecodable_is_encoding_skip(tmp_path, data, byte):
    write(tmp_path, "x.txt", data)
    got = read_source(tmp_path, "x.txt", MAX)
    assert got.reason == SKIP_ENCODING
    assert got.detail == f"not valid UTF-8 at byte {byte}"
    assert got.size == len(data)


def test_binary_nul_in_first_8k(tmp_path):
    write(tmp_path, "img.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    got = read_source(tmp_path, "img.png", MAX)
    assert isinstance(got, Skip) and got.reason == SKIP_BINARY


def test_nul_after_8k_is_still_text(tmp_path):
    write(tmp_path, "log.txt", b"a" * 9000 + b"\x00tail")
    assert isinstance(read_source(tmp_path, "log.txt", MAX), Source)


# --- size ------------------------------------------------------------------------

def test_too_large_is_never_opened(tmp_path, monkeypatch):
    write(tmp_path, "big.txt", b"x" * 101)
    forbid_open(monkeypatch)
    got = read_source(tmp_path, "big.txt", 100)
    assert got.reason == SKIP_TOO_LARGE
    assert "101" in got.detail and "100" in got.detail
    assert got.size == 101


def test_exactly_max_size_is_read(tmp_path):
    write(tmp_path, "edge.txt", b"x" * 100)
    assert isinstance(read_source(tmp_path, "edge.txt", 100), Source)


def test_file_grown_after_stat_is_too_large(tmp_path, monkeypatch):
    path = write(tmp_path, "grow.log", b"x" * 50)
    real_stat = os.stat

    def stat_then_grow(p, *a, **k):
        st = real_stat(p, *a, **k)
        if str(p) == str(path):
            with open(path, "ab") as fh:
                fh.write(b"y" * 100)
        return st
    monkeypatch.setattr(reader.os, "stat", stat_then_grow)
    got = read_source(tmp_path, "grow.log", 100)
    assert got.reason == SKIP_TOO_LARGE and got.size == 150


# --- secrets -----------------------------------------------------------------------

def test_secret_by_name_is_never_opened(tmp_path, monkeypatch):
    write(tmp_path, ".env", "PASSWORD=" + HIGH + "\n")
    forbid_open(monkeypatch)
    got = read_source(tmp_path, ".env", MAX)
    assert (got.reason, got.detail) == (SKIP_SECRET, "name matches .env*")
    assert got.size > 0


def test_secret_by_content_is_masked(tmp_path):
    write(tmp_path, "settings.py", "DEBUG = True\nAWS_KEY = 'AKIA" + "Q7ZLM2N4P6R8T0VX'\n")
    got = read_source(tmp_path, "settings.py", MAX)
    assert got.text == "DEBUG = True\nAWS_KEY = '«redacted»'\n"
    assert got.redacted == "redacted: 1 secret (line 2)"


def test_allow_globs_exempt_both_checks(tmp_path):
    write(tmp_path, "fixtures/.env", "PASSWORD=" + HIGH + "\n")
    write(tmp_path, "fixtures/keys.py", "K = 'AKIA" + "Q7ZLM2N4P6R8T0VX'\n")
    for rel in ("fixtures/.env", "fixtures/keys.py"):
        assert isinstance(read_source(tmp_path, rel, MAX, allow=("fixtures/",)), Source)


# --- filesystem conditions ---------------------------------------------------------------

def test_vanished(tmp_path):
    assert read_source(tmp_path, "gone.py", MAX) == Skip(SKIP_UNREADABLE, "vanished")


def test_vanished_between_stat_and_open(tmp_path, monkeypatch):
    path = write(tmp_path, "racy.py", "x = 1\n")
    real_stat = os.stat

    def stat_then_delete(p, *a, **k):
        st = real_stat(p, *a, **k)
        if str(p) == str(path):
            os.unlink(path)
        return st
    monkeypatch.setattr(reader.os, "stat", stat_then_delete)
    got = read_source(tmp_path, "racy.py", MAX)
    assert (got.reason, got.detail) == (SKIP_UNREADABLE, os.strerror(2))


def test_symlink_outside_root_is_never_read(tmp_path, monkeypatch):
    outside = write(tmp_path, "outside/secret.txt", "hello\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "link.txt").symlink_to(outside)
    forbid_open(monkeypatch)
    assert read_source(repo, "link.txt", MAX).reason == SKIP_SYMLINK


def test_path_through_directory_symlink_outside_root(tmp_path):
    write(tmp_path, "outside/a.py", "x = 1\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "ext").symlink_to(tmp_path / "outside", target_is_directory=True)
    assert read_source(repo, "ext/a.py", MAX).reason == SKIP_SYMLINK
    assert read_source(repo, "../outside/a.py", MAX).reason == SKIP_SYMLINK


def test_symlink_inside_root_is_followed(tmp_path):
    write(tmp_path, "real.py", "x = 1\n")
    (tmp_path / "alias.py").symlink_to("real.py")
    got = read_source(tmp_path, "alias.py", MAX)
    assert got.text == "x = 1\n"
    assert got.inode == os.stat(tmp_path / "real.py").st_ino


def test_dangling_symlink_and_loop(tmp_path):
    (tmp_path / "dangling.py").symlink_to("missing.py")
    (tmp_path / "loop.py").symlink_to("loop.py")
    assert read_source(tmp_path, "dangling.py", MAX).detail == "dangling symlink"
    got = read_source(tmp_path, "loop.py", MAX)
    assert (got.reason, got.detail) == (SKIP_UNREADABLE, "symlink loop")


def test_fifo_and_directory_are_not_regular(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "dir").mkdir()
    for rel in ("pipe", "dir"):  # must not block on the FIFO
        assert read_source(tmp_path, rel, MAX) == Skip(
            SKIP_UNREADABLE, "not a regular file", *stat_key(tmp_path, rel))


# Root ignores file modes, so a real "permission denied" needs another user:
# the check runs in a forked child that drops to nobody.
@pytest.fixture
def shared_tmp():
    path = Path(tempfile.mkdtemp(prefix="indexd-reader-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    for p in [path, *path.rglob("*")]:
        if not p.is_symlink():
            p.chmod(0o755)
    shutil.rmtree(path)


def run_unprivileged(fn):
    if os.geteuid() != 0:
        return fn()
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        try:
            os.close(rfd)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            out = {"ok": fn()}
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            out = {"error": repr(exc)}
        with os.fdopen(wfd, "w") as fh:
            fh.write(json.dumps(out))
        os._exit(0)
    os.close(wfd)
    with os.fdopen(rfd) as fh:
        out = json.loads(fh.read() or '{"error": "no output"}')
    os.waitpid(pid, 0)
    assert "error" not in out, out.get("error")
    return out["ok"]


def test_permission_denied_file(shared_tmp):
    write(shared_tmp, "locked.py", "x = 1\n").chmod(0)
    got = run_unprivileged(lambda: list(vars(read_source(shared_tmp, "locked.py", MAX)).values()))
    assert got[:2] == [SKIP_UNREADABLE, os.strerror(13)]
    assert got[2] == 6  # stat still recorded for the status page


def test_open_error_is_reported_with_strerror(tmp_path, monkeypatch):
    write(tmp_path, "a.py", "x = 1\n")

    def denied(*a, **k):
        raise PermissionError(13, os.strerror(13))
    monkeypatch.setattr(reader.os, "open", denied)
    got = read_source(tmp_path, "a.py", MAX)
    assert (got.reason, got.detail) == (SKIP_UNREADABLE, os.strerror(13))


# --- stat_key -----------------------------------------------------------------------

def test_stat_key(tmp_path):
    path = write(tmp_path, "a.py", "x = 1\n")
    st = os.stat(path)
    assert stat_key(tmp_path, "a.py") == (6, st.st_mtime_ns, st.st_ino)
    assert stat_key(tmp_path, "missing.py") is None
    path.write_text("x = 22\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert stat_key(tmp_path, "a.py") != (6, st.st_mtime_ns, st.st_ino)


def test_stat_key_follows_links_only_inside(tmp_path):
    write(tmp_path, "outside.txt", "secret-ish\n")
    repo = tmp_path / "repo"
    target = write(repo, "real.py", "x = 1\n")
    (repo / "in.py").symlink_to("real.py")
    (repo / "out.txt").symlink_to(tmp_path / "outside.txt")
    (repo / "dangling").symlink_to("nope")
    assert stat_key(repo, "in.py")[2] == os.stat(target).st_ino
    assert stat_key(repo, "out.txt")[2] == os.lstat(repo / "out.txt").st_ino
    assert stat_key(repo, "dangling")[2] == os.lstat(repo / "dangling").st_ino


def test_stat_key_matches_source(tmp_path):
    write(tmp_path, "a.py", "x = 1\n")
    got = read_source(tmp_path, "a.py", MAX)
    assert stat_key(tmp_path, "a.py") == (got.size, got.mtime_ns, got.inode)


# --- robustness ----------------------------------------------------------------------

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=4096) | st.text(max_size=1024).map(str.encode),
       limit=st.integers(min_value=0, max_value=5000))
def test_random_bytes_never_raise(tmp_path, data, limit):
    path = tmp_path / "fuzz.bin"
    path.write_bytes(data)
    got = read_source(tmp_path, "fuzz.bin", limit)
    assert isinstance(got, (Source, Skip))
    if isinstance(got, Source):
        assert got.hash == content_hash(data) and got.size == len(data) <= limit
    else:
        assert got.reason in (SKIP_BINARY, SKIP_ENCODING, SKIP_SECRET, SKIP_TOO_LARGE)


# --- redaction and links judged by their target -------------------------------------

def test_secret_in_ordinary_file_is_redacted_not_skipped(tmp_path):
    key = "192b9bdd22ab9ed4d12e236c78afcb9a393ec15f71bbf5dc987d54727823bcbf"
    lines = [f"line {i} about caching" for i in range(800)]
    lines[411] = f"SECRET_KEY = '{key}'"
    write(tmp_path, "docs/settings.md", "\n".join(lines) + "\n")
    got = read_source(tmp_path, "docs/settings.md", MAX)
    assert isinstance(got, Source), got
    assert key not in got.text and len(got.text.splitlines()) == 800
    assert got.text.splitlines()[411].startswith("SECRET_KEY = '")
    assert got.text.splitlines()[799] == "line 799 about caching"
    assert got.redacted == "redacted: 1 secret (line 412)"
    assert got.hash == content_hash((tmp_path / "docs/settings.md").read_bytes())


def test_key_files_by_name_still_skipped_whole(tmp_path):
    write(tmp_path, "deploy/id_rsa", "-----BEGIN RSA PRIVATE KEY-----\n" + HIGH * 4 + "\n")
    write(tmp_path, "certs/tls.pem", "anything\n")
    for rel in ("deploy/id_rsa", "certs/tls.pem"):
        assert read_source(tmp_path, rel, MAX).reason == SKIP_SECRET


def test_symlink_is_judged_by_its_target_name(tmp_path, monkeypatch):
    write(tmp_path, ".env", "PASSWORD=" + HIGH + "\n")
    (tmp_path / "notes.txt").symlink_to(".env")
    write(tmp_path, "keys/server.pem", "x\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/readme.txt").symlink_to("../keys/server.pem")
    forbid_open(monkeypatch)
    got = read_source(tmp_path, "notes.txt", MAX)
    assert (got.reason, got.detail) == (SKIP_SECRET, "symlink target .env: name matches .env*")
    assert read_source(tmp_path, "docs/readme.txt", MAX).reason == SKIP_SECRET


def test_allowed_link_to_a_secret_name_is_still_skipped(tmp_path):
    write(tmp_path, ".env", "PASSWORD=" + HIGH + "\n")
    (tmp_path / "notes.txt").symlink_to(".env")
    assert read_source(tmp_path, "notes.txt", MAX, allow=("notes.txt",)).reason == SKIP_SECRET
    assert isinstance(read_source(tmp_path, "notes.txt", MAX, allow=(".env", "notes.txt")), Source)
