"""Edits of config.toml by `indexctl realm add/rm` and the daemon's realm methods.

A user's file is theirs: comments, key order and keys indexd does not know
survive an edit (tomlkit round-trips the document). Every edit is a
read-modify-write of the file's current content under an exclusive lock, so
two writers at once (the offline CLI and the daemon, two shells) cannot lose
each other's change, and the new content replaces the old atomically (unique
temp file, fsync, rename), so a crash leaves the old file or the new one.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import tomlkit
import tomlkit.exceptions

from .config import Paths, realms_from
from .errors import ConfigError


def edit_realms(paths: Paths, mutate: Callable[[dict[str, list[str]]], dict]) -> dict:
    """Apply ``mutate`` to the file's current realms ({name: [repo, ...]}, edited
    in place) and write the result; ``mutate``'s return value is passed back.
    An exception from ``mutate`` writes nothing."""
    path = paths.config_file
    paths.make_dir(path.parent)
    with _locked(path):
        doc = _read(path)
        table = doc.get("realms")
        current = {k: list(v) for k, v in realms_from(_plain(table), path).items()}
        result = mutate(current)
        _put_realms(doc, current)
        _write_atomic(path, tomlkit.dumps(doc))
    return result


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    # A sidecar lock file: the config file itself is replaced by rename, and a
    # lock on a replaced inode would not exclude the next writer.
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)   # closing releases the lock


def _read(path: Path) -> tomlkit.TOMLDocument:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return tomlkit.document()
    try:
        return tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigError(f"{path}: invalid TOML, not rewritten: {exc}") from None


def _plain(table):
    return {} if table is None else table.unwrap() if hasattr(table, "unwrap") else table


def _put_realms(doc: tomlkit.TOMLDocument, realms: dict[str, list[str]]) -> None:
    if "realms" not in doc:
        if doc.body:
            doc.add(tomlkit.nl())
        doc["realms"] = tomlkit.table()
    table = doc["realms"]
    for name in [n for n in table if n not in realms]:
        del table[name]
    for name in sorted(realms):
        repos = tomlkit.array()
        repos.extend(realms[name])
        old = table.get(name)
        if isinstance(old, dict):        # [realms.NAME] with repos = [...] and more keys
            old["repos"] = repos
        else:
            table[name] = repos


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)   # keep the user's mode (e.g. 0600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)   # the rename itself survives a power cut
    finally:
        os.close(dir_fd)
