"""Reading one file for indexing: stat, safety checks, bytes, decoded text.

Owns the per-file skip decisions (symlink outside the repo, not a regular
file, too large, secret, binary, undecodable), the masking of secret values
inside otherwise ordinary text, and the stat key the store uses to notice
changes without reading. A link is judged by its target too (``notes.txt``
pointing at ``.env`` is a secret). Never raises for file-level problems:
every failure becomes a ``Skip`` with a reason from model.py. Everything that
shows file text (indexing, search context) reads through ``read_source``.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..model import (REDACTED, SKIP_BINARY, SKIP_ENCODING, SKIP_SECRET, SKIP_SYMLINK,
                     SKIP_TOO_LARGE, SKIP_UNREADABLE, content_hash)
from .secrets import is_allowed, redact_secrets, secret_content_reason, secret_name_reason

BINARY_SNIFF = 8192  # git's heuristic: a NUL in the first 8 KiB means binary

# Longest BOMs first: the UTF-32-LE BOM starts with the UTF-16-LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
)
# C0 controls that never appear in real cp1252 text; their presence means
# the bytes are some other binary-ish encoding, not Windows-1252.
_BAD_C0 = frozenset(chr(c) for c in range(32)) - {"\t", "\n", "\r", "\f"}


@dataclass(frozen=True)
class Source:
    text: str
    hash: str
    size: int
    mtime_ns: int
    inode: int
    encoding: str
    redacted: str = ""   # "redacted: N secrets (lines ...)" when values were masked in text


@dataclass(frozen=True)
class Skip:
    reason: str
    detail: str
    size: int = 0
    mtime_ns: int = 0
    inode: int = 0


def read_source(root: Path, relpath: str, max_size: int, allow=()) -> Source | Skip:
    """Read ``root/relpath`` as text, or say why it is not indexed."""
    real_root = os.path.realpath(root)
    path = os.path.join(real_root, relpath)
    try:
        lst = os.lstat(path)
    except OSError as exc:
        return _missing(exc)
    # realpath also catches a symlinked directory on the way and "..".
    target = _inside_target(real_root, path)
    if target is None:
        detail = ("symlink target outside the repo" if stat.S_ISLNK(lst.st_mode)
                  else "path leaves the repo")
        return Skip(SKIP_SYMLINK, detail, *_key(lst))
    if stat.S_ISLNK(lst.st_mode) and not os.path.exists(target):
        loop = _is_loop(path)
        return Skip(SKIP_UNREADABLE, "symlink loop" if loop else "dangling symlink", *_key(lst))
    return _read_checked(target, _names(real_root, relpath, target), max_size, allow, lst)


def stat_key(root: Path, relpath: str) -> tuple[int, int, int] | None:
    """(size, mtime_ns, inode) of the file, following a symlink only inside the repo.

    None when the path does not exist. A link pointing outside the repo (or
    nowhere) is keyed by the link itself, so retargeting it still registers.
    """
    return real_stat_key(os.path.realpath(root), relpath)


def real_stat_key(real_root: str, relpath: str) -> tuple[int, int, int] | None:
    """``stat_key`` under a root already resolved (a planner stats thousands of
    files: resolving the root each time cost more lstat calls than the files)."""
    path = os.path.join(real_root, relpath)
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        target = _inside_target(real_root, path)
        if target is not None:
            try:
                st = os.stat(target)
            except OSError:
                pass
    return _key(st)


# --- steps -----------------------------------------------------------------

def _names(real_root: str, relpath: str, target: str) -> tuple[str, ...]:
    """The path as listed, plus the target's repo-relative path when a link leads elsewhere."""
    real_rel = os.path.relpath(target, real_root).replace(os.sep, "/")
    return (relpath,) if real_rel == relpath else (relpath, real_rel)


def _read_checked(path: str, names: tuple[str, ...], max_size: int, allow, st) -> Source | Skip:
    try:
        st = os.stat(path)
    except OSError as exc:
        return _missing(exc, st)
    if not stat.S_ISREG(st.st_mode):
        return Skip(SKIP_UNREADABLE, "not a regular file", *_key(st))
    if st.st_size > max_size:
        return _too_large(st.st_size, max_size, st)
    reason = _name_reason(names, allow)
    if reason:
        return Skip(SKIP_SECRET, reason, *_key(st))
    got = _read_bytes(path, max_size, st)
    if isinstance(got, Skip):
        return got
    data, st = got
    if len(data) > max_size:  # grew between stat and read
        return _too_large(max(st.st_size, len(data)), max_size, st)
    return _decode_checked(data, names, allow, st)


def _name_reason(names: tuple[str, ...], allow) -> str | None:
    reason = secret_name_reason(names[0], allow)
    if reason or len(names) == 1:
        return reason
    # Each name needs its own allowance: allowing the link does not allow its target.
    reason = secret_name_reason(names[1], allow)
    return f"symlink target {names[1]}: {reason}" if reason else None


def _read_bytes(path: str, max_size: int, st):
    """(bytes, fstat) of at most max_size+1 bytes, or a Skip keyed by ``st``."""
    # O_NONBLOCK: if the path was swapped for a FIFO after stat, open must
    # not hang; it has no effect on regular files.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:  # permission denied, or gone since stat
        return Skip(SKIP_UNREADABLE, exc.strerror or str(exc), *_key(st))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return Skip(SKIP_UNREADABLE, "not a regular file", *_key(st))
        chunks, left = [], max_size + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks), st
    except OSError as exc:
        return Skip(SKIP_UNREADABLE, exc.strerror or str(exc), *_key(st))
    finally:
        os.close(fd)


def _decode_checked(data: bytes, names: tuple[str, ...], allow, st) -> Source | Skip:
    decoded = decode_text(data)
    if isinstance(decoded, Skip):
        return Skip(decoded.reason, decoded.detail, *_key(st))
    text, encoding = decoded
    note = ""
    if not all(is_allowed(name, allow) for name in names):
        masked = _redacted(text)
        if isinstance(masked, str):
            return Skip(SKIP_SECRET, masked, *_key(st))
        if masked is not None:
            text, note = masked
    # The hash is of the bytes on disk, so an unchanged file is still recognised.
    return Source(text, content_hash(data), st.st_size, st.st_mtime_ns, st.st_ino, encoding, note)


def _redacted(text: str):
    """None (clean), (masked text, note), or a skip detail when masking left a finding."""
    if secret_content_reason(text) is None:   # the fast check: most files stop here
        return None
    red = redact_secrets(text)
    left = secret_content_reason(red.text) if red is not None else "content: unmasked"
    if left is not None:   # fail closed: never store text the detector still flags
        return "unredactable " + left
    where = ", ".join(map(str, red.lines[:10])) + (", ..." if len(red.lines) > 10 else "")
    return red.text, (f"{REDACTED}: {red.count} secret{'s' if red.count > 1 else ''} "
                      f"(line{'s' if len(red.lines) > 1 else ''} {where})")


def decode_text(data: bytes) -> tuple[str, str] | Skip:
    """(text, encoding) for text bytes, or a Skip (binary / encoding)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding), encoding
            except UnicodeDecodeError as exc:
                return Skip(SKIP_ENCODING, f"not valid {encoding} at byte {exc.start}")
    # Checked after the BOMs: UTF-16 text is full of NULs.
    if b"\x00" in data[:BINARY_SNIFF]:
        return Skip(SKIP_BINARY, "NUL byte in the first 8 KiB")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError as exc:
        utf8_error = exc.start
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        text = None
    if text is not None and not any(c in _BAD_C0 for c in text):
        return text, "cp1252"
    return Skip(SKIP_ENCODING, f"not valid UTF-8 at byte {utf8_error}")


# --- helpers ---------------------------------------------------------------

def _inside_target(real_root: str, path: str) -> str | None:
    """Resolved target of a link when it lies inside the repo, else None."""
    target = os.path.realpath(path)
    if target == real_root or target.startswith(real_root.rstrip(os.sep) + os.sep):
        return target
    return None


def _is_loop(path: str) -> bool:
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _missing(exc: OSError, st=None) -> Skip:
    key = _key(st) if st is not None else ()
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return Skip(SKIP_UNREADABLE, "vanished", *key)
    if exc.errno == errno.ELOOP:
        return Skip(SKIP_UNREADABLE, "symlink loop", *key)
    return Skip(SKIP_UNREADABLE, exc.strerror or str(exc), *key)


def _too_large(size: int, limit: int, st) -> Skip:
    return Skip(SKIP_TOO_LARGE, f"{size} bytes > limit {limit}", *_key(st))


def _key(st) -> tuple[int, int, int]:
    return st.st_size, st.st_mtime_ns, st.st_ino
