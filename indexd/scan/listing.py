"""Which files of one repo root the indexer looks at.

Owns the ignore rules and the listing walk:

* git repos: tracked files (from the index, present in the worktree) plus
  untracked files git does not ignore (.gitignore at any depth,
  .git/info/exclude, core.excludesFile: all via libgit2). Submodules and
  nested repos are separate repos and are left out.
* plain folders: a walk honouring every .gitignore on the way, with git's
  precedence (deeper files win, last matching line wins, nothing inside an
  ignored directory can be re-included).
* both: ``.indexdignore`` at the root, ``settings.exclude`` / ``include``
  (gitignore syntax), default-excluded directories (for untracked files in
  git repos), and the symlink policy (never follow directory links; links
  resolving outside the root are reported, never read).

Reads directories, link targets and git metadata; never file contents.
"""

from __future__ import annotations

import errno
import logging
import os
import posixpath
import stat
from dataclasses import dataclass, field
from pathlib import Path

import pathspec
import pygit2
from pygit2.enums import FileMode, FileStatus, RepositoryOpenFlag

from ..model import SKIP_SYMLINK, SKIP_UNREADABLE, inside

log = logging.getLogger(__name__)

IGNORE_FILE = ".indexdignore"
GITIGNORE = ".gitignore"
# Tool and VCS directories nobody wants indexed even when not gitignored.
DEFAULT_EXCLUDED_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", "__pycache__",
    ".tox", ".mypy_cache", ".pytest_cache",
})
# Excluded only when they are virtual environments (hold pyvenv.cfg): the
# standard library itself has a `venv` package that must be indexed.
ENV_DIRS = frozenset({".venv", "venv", "env"})


@dataclass
class Listing:
    files: list[str] = field(default_factory=list)                  # sorted, repo-relative POSIX
    skipped: list[tuple[str, str, str]] = field(default_factory=list)  # (path, reason, detail)
    is_git: bool = False


def list_files(root: Path, settings=None) -> Listing:
    """All indexable files under ``root`` (see the module docstring for the rules)."""
    return RepoRules(root, settings).list()


def is_ignored(root: Path, relpath: str, settings=None) -> bool:
    """One-off check; long-lived callers (the watcher) should keep a RepoRules."""
    return RepoRules(root, settings).is_ignored(relpath)


class RepoRules:
    """Compiled ignore rules for one root, reusable across many checks.

    Holds the pygit2 Repository (git roots) and the compiled specs; call
    ``reload()`` after any ignore file (or .git itself) changes.
    """

    def __init__(self, root: Path, settings=None):
        self.root = os.path.realpath(root)
        self._exclude = _compile(getattr(settings, "exclude", ()))
        include = getattr(settings, "include", ())
        self._include = _compile(include) if include else None
        self.reload()

    @property
    def is_git(self) -> bool:
        return self.repo is not None

    def reload(self) -> None:
        self.repo = _open_git(self.root)
        self._local = _load_spec(os.path.join(self.root, IGNORE_FILE))
        self._dir_specs: dict[str, pathspec.GitIgnoreSpec | None] = {}
        self._tracked_stamp = None
        self._tracked: frozenset[str] = frozenset()
        self._tracked_dirs: frozenset[str] = frozenset()

    # --- single-path checks (watcher) --------------------------------------

    def is_ignored(self, rel: str, is_dir: bool = False) -> bool:
        """True when ``rel`` would not be listed.

        For a directory: True only when nothing below it could be listed.
        """
        rel = _clean(rel)
        if rel is None:
            return True
        if self._filtered_out(rel, is_dir):
            return True
        if self.is_git:
            return self._git_ignored(rel, is_dir)
        return _has_default_dir(rel, is_dir, self.root) or self._plain_ignored(rel, is_dir)

    def _git_ignored(self, rel: str, is_dir: bool) -> bool:
        files, dirs = self._tracked_paths()
        if (rel in dirs) if is_dir else (rel in files):
            return False  # tracked beats every git ignore rule and our defaults
        if _has_default_dir(rel, is_dir, self.root) or self._in_nested_repo(rel, is_dir):
            return True
        return self.repo.path_is_ignored(rel + "/" if is_dir else rel)

    def _plain_ignored(self, rel: str, is_dir: bool) -> bool:
        parts = rel.split("/")
        for i in range(1, len(parts)):  # an ignored parent hides everything below
            if self._gitignore_verdict("/".join(parts[:i]), True):
                return True
        return self._gitignore_verdict(rel, is_dir)

    # --- listing -----------------------------------------------------------

    def list(self) -> Listing:
        out = Listing(is_git=self.is_git)
        candidates = self._git_candidates() if self.is_git else self._walk(out.skipped)
        for rel in candidates:
            if self._filtered_out(rel, False):
                continue
            verdict = self._classify(rel)
            if verdict is True:
                out.files.append(rel)
            elif verdict:
                out.skipped.append(verdict)
        out.files.sort()
        out.skipped.sort()
        return out

    def _git_candidates(self) -> set[str]:
        files, _ = self._tracked_paths()
        found = set(files)
        # WT_NEW = untracked and not ignored; "dir/" entries are nested repos.
        for path, flags in self.repo.status(untracked_files="all", ignored=False).items():
            if flags & FileStatus.WT_NEW and not path.endswith("/"):
                if not _has_default_dir(path, False, self.root):
                    found.add(path)
        return found

    def _walk(self, skipped: list) -> list[str]:
        """Plain-folder walk; never follows directory symlinks, so it cannot loop."""
        found, stack = [], [""]
        while stack:
            reldir = stack.pop()
            try:
                with os.scandir(os.path.join(self.root, reldir)) as it:
                    entries = list(it)
            except OSError as exc:
                skipped.append((reldir or ".", SKIP_UNREADABLE, _strerror(exc)))
                continue
            for entry in entries:
                rel = f"{reldir}/{entry.name}" if reldir else entry.name
                if _is_real_dir(entry):
                    if not self._prunes_dir(entry.name, rel):
                        stack.append(rel)
                elif not self._gitignore_verdict(rel, False):
                    found.append(rel)
        return found

    def _prunes_dir(self, name: str, rel: str) -> bool:
        return (name in DEFAULT_EXCLUDED_DIRS or _is_virtualenv(self.root, rel, name)
                or self._filtered_out(rel, True)
                or self._gitignore_verdict(rel, True))

    def _classify(self, rel: str):
        """True to list, a skipped tuple to report, None to drop silently."""
        path = os.path.join(self.root, rel)
        try:
            st = os.lstat(path)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                return None  # tracked but deleted from the worktree
            return rel, SKIP_UNREADABLE, _strerror(exc)
        if stat.S_ISLNK(st.st_mode):
            return self._classify_link(rel, path)
        return True if stat.S_ISREG(st.st_mode) else None  # sockets, FIFOs, gitlink dirs

    def _classify_link(self, rel: str, path: str):
        target = os.path.realpath(path)
        if not inside(self.root, target):
            return rel, SKIP_SYMLINK, "symlink target outside the repo"
        try:
            st = os.stat(path)
        except OSError as exc:
            detail = "symlink loop" if exc.errno == errno.ELOOP else "dangling symlink"
            return rel, SKIP_UNREADABLE, detail
        # Directory links are not followed: their files are listed at their real path.
        return True if stat.S_ISREG(st.st_mode) else None

    # --- rule pieces -------------------------------------------------------

    def _filtered_out(self, rel: str, is_dir: bool) -> bool:
        """.indexdignore and settings.exclude/include, which apply to every file."""
        probe = rel + "/" if is_dir else rel
        if self._local is not None and self._local.match_file(probe):
            return True
        if self._exclude is not None and self._exclude.match_file(probe):
            return True
        # include globs name files; a directory cannot be judged by them.
        return not is_dir and self._include is not None and not self._include.match_file(rel)

    def _gitignore_verdict(self, rel: str, is_dir: bool) -> bool:
        """Plain folders: do the .gitignore files above ``rel`` ignore it?

        Only ``rel`` itself is judged; callers handle ignored parents. Deeper
        files take precedence, as in git.
        """
        if self.is_git:
            return False
        parts = rel.split("/")
        for depth in range(len(parts) - 1, -1, -1):
            spec = self._dir_spec("/".join(parts[:depth]))
            if spec is None:
                continue
            sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
            verdict = spec.check_file(sub).include
            if verdict is not None:
                return verdict
        return False

    def _dir_spec(self, reldir: str):
        if reldir not in self._dir_specs:
            self._dir_specs[reldir] = _load_spec(os.path.join(self.root, reldir, GITIGNORE))
        return self._dir_specs[reldir]

    def _tracked_paths(self) -> tuple[frozenset, frozenset]:
        """Tracked files and their parent dirs, re-read only when .git/index changes."""
        index_file = os.path.join(self.repo.path, "index")
        try:
            st = os.stat(index_file)
            stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            stamp = None
        if stamp != self._tracked_stamp or stamp is None:
            index = self.repo.index
            index.read(False)
            # Submodules are gitlink entries: a separate repo, not files.
            files = frozenset(e.path for e in index if e.mode != FileMode.COMMIT)
            self._tracked, self._tracked_dirs = files, _parent_dirs(files)
            self._tracked_stamp = stamp
        return self._tracked, self._tracked_dirs

    def _in_nested_repo(self, rel: str, is_dir: bool) -> bool:
        """Inside a submodule or an untracked nested repo (their own .git)?"""
        parts = rel.split("/")
        upto = len(parts) if is_dir else len(parts) - 1
        return any(os.path.lexists(os.path.join(self.root, *parts[:i], ".git"))
                   for i in range(1, upto + 1))


# --- helpers ---------------------------------------------------------------

def _open_git(root: str):
    """The worktree repo at ``root``, or None (plain folder) with a warning if unusable."""
    if not os.path.lexists(os.path.join(root, ".git")):
        return None
    try:
        repo = pygit2.Repository(root, RepositoryOpenFlag.NO_SEARCH)
    except (pygit2.GitError, KeyError, ValueError, OSError) as exc:
        log.warning("%s: cannot open git repository (%s); scanning as a plain folder", root, exc)
        return None
    if repo.is_bare or not repo.workdir or os.path.realpath(repo.workdir) != root:
        log.warning("%s: bare or foreign git repository; scanning as a plain folder", root)
        return None
    return repo


def _compile(globs) -> pathspec.GitIgnoreSpec | None:
    globs = [g for g in (globs or ()) if g and g.strip()]
    return pathspec.GitIgnoreSpec.from_lines(globs) if globs else None


def _load_spec(path: str) -> pathspec.GitIgnoreSpec | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:  # absent or unreadable: no rules from it
        return None
    return _compile(lines)


def _has_default_dir(rel: str, is_dir: bool, root: str = "") -> bool:
    parts = rel.split("/")
    dirs = parts if is_dir else parts[:-1]
    return any(p in DEFAULT_EXCLUDED_DIRS or _is_virtualenv(root, "/".join(parts[:i + 1]), p)
               for i, p in enumerate(dirs))


def _is_virtualenv(root: str, rel: str, name: str) -> bool:
    return name in ENV_DIRS and os.path.isfile(os.path.join(root, rel, "pyvenv.cfg"))


def _parent_dirs(files) -> frozenset[str]:
    dirs = set()
    for f in files:
        d = posixpath.dirname(f)
        while d and d not in dirs:
            dirs.add(d)
            d = posixpath.dirname(d)
    return frozenset(dirs)


def _clean(rel: str) -> str | None:
    """Normalised repo-relative POSIX path, or None if it leaves the root."""
    rel = rel.replace(os.sep, "/") if os.sep != "/" else rel
    if not rel or rel.startswith("/"):
        return None
    rel = posixpath.normpath(rel)
    if rel == "." or rel == ".." or rel.startswith("../"):
        return None
    return rel


def _is_real_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _strerror(exc: OSError) -> str:
    return exc.strerror or str(exc)
