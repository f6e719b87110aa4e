"""The runtime directory (lock, socket, http.json): checked first, never via a link.

Without XDG_RUNTIME_DIR it is /tmp/indexd-$UID, a name anyone can take
first; a planted ``indexd.lock -> ~/.bashrc`` was once truncated and
overwritten with the daemon's pid. So, before anything is opened in it:

- ``secure_dir``: the directory is created 0700 when missing; an existing one
  must be a real directory (lstat: not a link), ours, and shut to others,
  which is what makes planting impossible. The daemon also wants it unreadable
  by others (its socket lives there): ``private=True``, mode exactly 0700.
- ``open_file``: files in it are opened with O_NOFOLLOW, and must be plain
  files of ours with one link: a planted link or hard link is refused.

Refusals are ``UnsafePath`` with the fix in the message. Stdlib and
``indexd.errors`` only: the socket server and the one-shot commands use it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .errors import UnsafePath


def make_private_dir(directory: Path) -> None:
    """Create ``directory`` 0700 (its parents as usual) unless it exists."""
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(directory, 0o700)
        os.chmod(directory, 0o700)   # mkdir's mode passes through the umask
    except FileExistsError:
        pass


def secure_dir(directory: Path, private: bool = False) -> None:
    """Create ``directory`` 0700, or refuse an existing one that others could use."""
    directory = Path(directory)
    make_private_dir(directory)
    st = os.lstat(directory)
    where = {"path": str(directory)}
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePath(f"runtime directory {directory} is a symbolic link (to "
                         f"{os.readlink(directory)}); refusing to use it. Remove the link, or "
                         "point INDEXD_HOME / XDG_RUNTIME_DIR at a real directory",
                         where | {"reason": "symlink"})
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePath(f"runtime directory {directory} is not a directory; refusing to use it",
                         where | {"reason": "not_a_directory"})
    if st.st_uid != os.geteuid():
        raise UnsafePath(f"runtime directory {directory} is owned by uid {st.st_uid}, not by "
                         f"this user ({os.geteuid()}); refusing to use it. Someone else may have "
                         "made it: remove it, or set XDG_RUNTIME_DIR",
                         where | {"reason": "owner", "owner": st.st_uid})
    closed = 0o077 if private else 0o022     # 0o022: nobody else can plant files
    if st.st_mode & closed:
        mode = stat.S_IMODE(st.st_mode)
        raise UnsafePath(f"runtime directory {directory} has mode {mode:o}; other users could "
                         f"plant files in it or reach the socket. Run `chmod 700 {directory}`",
                         where | {"reason": "mode", "mode": oct(mode)})


def open_file(path: Path, flags: int, mode: int = 0o600) -> int:
    """``os.open`` for a file in a checked runtime directory, never through a link."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, mode)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):     # EMLINK: FreeBSD's O_NOFOLLOW
            raise UnsafePath(f"{path} is a symbolic link (to {_target(path)}); refusing to "
                             "open it. Nothing of indexd's is a link: remove it and start again",
                             {"path": str(path), "reason": "symlink"}) from None
        raise
    st = os.fstat(fd)
    problem = ("not a regular file" if not stat.S_ISREG(st.st_mode) else
               f"owned by uid {st.st_uid}" if st.st_uid != os.geteuid() else
               f"a file with {st.st_nlink} hard links" if st.st_nlink != 1 else None)
    if problem:
        os.close(fd)
        raise UnsafePath(f"{path} is {problem}; refusing to use it. Remove it and start again",
                         {"path": str(path), "reason": problem})
    os.set_blocking(fd, True)   # O_NONBLOCK only kept a planted FIFO from hanging the open
    return fd


def _target(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"
