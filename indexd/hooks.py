"""`indexctl hooks install|uninstall|status`: git hooks that poke the daemon.

The watcher already sees most git operations, but not all of them (a repo
whose git dir lives elsewhere, a watch lost to the inotify limit, an
unwatched network folder). post-commit, post-checkout and post-merge hooks
close that gap: each runs ``indexctl reindex "$PWD" --json`` (git runs hooks
in the top of the working tree) in the background, detached, under a short
timeout, output to /dev/null. When the daemon's socket is absent the hook
does nothing: a shell ``[ -S ... ]`` test, no Python start, well under 50 ms.

Existing hooks keep working: a hook file that is not ours is renamed to
``<hook>.indexd-chained`` (same bytes, same mode) and our hook ``exec``s it
afterwards with the same arguments and stdin, so its exit code is the hook's
exit code. ``uninstall`` removes exactly what install added and renames the
chained original back. Our part of a hook file sits between the
``# >>> indexd hook >>>`` and ``# <<< indexd hook <<<`` lines; reinstalling
replaces that block in place and keeps any lines someone added around it.

The hooks folder is ``core.hooksPath`` when set (read through pygit2, so
global and system config count; relative paths are relative to the working
tree, as git does), else ``<common git dir>/hooks``.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from pathlib import Path

from .errors import ConfigError

HOOKS = ("post-commit", "post-checkout", "post-merge")
CHAIN_SUFFIX = ".indexd-chained"
BEGIN = "# >>> indexd hook >>>"
END = "# <<< indexd hook <<<"
SHEBANG = "#!/bin/sh\n"
TIMEOUT_S = 10


# -- where -------------------------------------------------------------------

def _open_repo(repo: Path):
    import pygit2

    start = Path(repo).expanduser().absolute()
    found = pygit2.discover_repository(str(start))
    if found is None:
        raise ConfigError(f"{start} is not inside a git repository",
                          {"path": str(start)})
    return pygit2.Repository(found)


def _common_dir(git_dir: Path) -> Path:
    """A linked worktree's git dir names the shared one in ``commondir``."""
    marker = git_dir / "commondir"
    try:
        text = marker.read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir
    common = Path(text)
    return (common if common.is_absolute() else git_dir / common).resolve()


def hooks_dir(repo: Path) -> tuple[Path, Path | None, str]:
    """(hooks folder, working tree or None when bare, where it came from)."""
    r = _open_repo(repo)
    workdir = Path(r.workdir).resolve() if r.workdir else None
    git_dir = Path(r.path).resolve()
    try:
        configured = r.config["core.hooksPath"]
    except KeyError:
        configured = None
    if configured:
        p = Path(os.path.expanduser(str(configured)))
        if not p.is_absolute():
            p = (workdir or git_dir) / p
        return Path(os.path.abspath(p)), workdir, "core.hooksPath"
    return _common_dir(git_dir) / "hooks", workdir, "git dir"


# -- what --------------------------------------------------------------------

def default_indexctl() -> str:
    """The `indexctl` next to this interpreter, else the one on PATH."""
    sibling = Path(sys.executable).parent / "indexctl"
    if sibling.is_file() and os.access(sibling, os.X_OK):
        return str(sibling.absolute())
    import shutil

    found = shutil.which("indexctl")
    if found:
        return str(Path(found).absolute())
    raise ConfigError(f"cannot find the `indexctl` executable (looked next to {sys.executable} "
                      f"and on PATH); pass its path explicitly")


def _settings():
    from .config import load_settings

    return load_settings()


def render_block(indexctl: str, socket: str, home: str | None = None) -> str:
    """Our block: poke the daemon when its socket exists, then chain."""
    q = shlex.quote
    env = f"INDEXD_HOME={q(home)} " if home else ""
    return (
        f"{BEGIN}\n"
        "# Installed by `indexctl hooks install`; removed by `indexctl hooks uninstall`.\n"
        "# Asks a running indexd to reconcile this repository; without the daemon's\n"
        "# socket it does nothing. Do not edit between these markers.\n"
        f"indexd_sock={q(socket)}\n"
        f"indexd_ctl={q(indexctl)}\n"
        'if [ -S "$indexd_sock" ] && [ -x "$indexd_ctl" ]; then\n'
        f"    indexd_t=; command -v timeout >/dev/null 2>&1 && indexd_t='timeout {TIMEOUT_S}'\n"
        f'    ( {env}$indexd_t "$indexd_ctl" reindex "$PWD" --json & ) '
        "</dev/null >/dev/null 2>&1\n"
        "fi\n"
        f'if [ -x "$0{CHAIN_SUFFIX}" ]; then\n'
        f'    exec "$0{CHAIN_SUFFIX}" "$@"\n'
        "fi\n"
        "exit 0\n"
        f"{END}\n")


def _has_block(text: str) -> bool:
    return BEGIN in text and END in text


def _split(text: str) -> tuple[str, str, str]:
    """(before, block, after) around our markers (text must contain them)."""
    start = text.index(BEGIN)
    end = text.index(END, start) + len(END)
    if text[end:end + 1] == "\n":
        end += 1
    return text[:start], text[start:end], text[end:]


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _is_ours(path: Path) -> bool:
    if path.is_symlink() or not path.is_file():
        return False
    text = _read_text(path)
    return text is not None and _has_block(text)


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.indexd-tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.chmod(tmp, 0o755)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise ConfigError(f"cannot write hook {path}: {exc.strerror or exc}",
                          {"path": str(path)}) from exc


# -- actions -----------------------------------------------------------------

def install_hooks(repo: Path, indexctl: str | None = None) -> dict:
    """Install (or update in place) our hooks; returns a JSON-able report."""
    where, workdir, source = hooks_dir(repo)
    if workdir is None:
        raise ConfigError(f"{repo} is a bare repository: there is no working tree to index")
    settings = _settings()
    ctl = str(Path(indexctl).absolute()) if indexctl else default_indexctl()
    home = os.environ.get("INDEXD_HOME") or None
    block = render_block(ctl, str(settings.paths.socket), home)
    where.mkdir(parents=True, exist_ok=True)
    out = []
    for name in HOOKS:
        path = where / name
        chained = path.with_name(name + CHAIN_SUFFIX)
        item = {"name": name, "path": str(path), "chained": None}
        if _is_ours(path):
            before, old, after = _split(path.read_text(encoding="utf-8"))
            if old == block and os.access(path, os.X_OK):
                item["action"] = "unchanged"
            else:
                _write(path, before + block + after)
                item["action"] = "updated"
        else:
            if os.path.lexists(path):
                if os.path.lexists(chained):
                    raise ConfigError(
                        f"cannot install {path}: it is not an indexd hook and {chained} "
                        f"already exists; move one of them away and run again",
                        {"path": str(path), "chained": str(chained)})
                os.rename(path, chained)       # same bytes, same mode, same inode
                item["action"] = "installed, chained the existing hook"
            else:
                item["action"] = "installed"
            _write(path, SHEBANG + block)
        if os.path.lexists(chained):
            item["chained"] = str(chained)
        out.append(item)
    return {"repo": str(workdir), "hooks_dir": str(where), "hooks_dir_from": source,
            "indexctl": ctl, "socket": str(settings.paths.socket), "hooks": out}


def uninstall_hooks(repo: Path) -> dict:
    """Remove our hooks and put chained originals back; returns a report."""
    where, workdir, source = hooks_dir(repo)
    out = []
    for name in HOOKS:
        path = where / name
        chained = path.with_name(name + CHAIN_SUFFIX)
        item = {"name": name, "path": str(path)}
        if not _is_ours(path):
            item["action"] = "absent" if not os.path.lexists(path) else "not ours, left alone"
            if os.path.lexists(chained):
                item["note"] = (f"{chained} is left in place: {path} is not an indexd hook; "
                                f"restore it by hand if you want it back")
            out.append(item)
            continue
        before, _, after = _split(path.read_text(encoding="utf-8"))
        rest = before + after
        if rest.strip() and rest.strip() != SHEBANG.strip():
            # Someone added lines around our block: keep them, drop ours.
            _write(path, rest)
            item["action"] = "removed the indexd block, kept the other lines"
            if os.path.lexists(chained):
                item["note"] = f"{chained} is left in place: {path} still has other lines"
            out.append(item)
            continue
        path.unlink()
        if os.path.lexists(chained):
            os.rename(chained, path)
            item["action"] = "removed, restored the chained hook"
        else:
            item["action"] = "removed"
        out.append(item)
    return {"repo": str(workdir) if workdir else None, "hooks_dir": str(where),
            "hooks_dir_from": source, "hooks": out}


def hooks_status(repo: Path) -> dict:
    """Which of our hooks are installed and whether they are current."""
    where, workdir, source = hooks_dir(repo)
    try:
        expected = render_block(default_indexctl(), str(_settings().paths.socket),
                                os.environ.get("INDEXD_HOME") or None)
    except ConfigError:
        expected = None
    out = []
    for name in HOOKS:
        path = where / name
        chained = path.with_name(name + CHAIN_SUFFIX)
        ours = _is_ours(path)
        item = {"name": name, "path": str(path), "installed": ours,
                "executable": ours and bool(os.stat(path).st_mode & stat.S_IXUSR),
                "chained": str(chained) if os.path.lexists(chained) else None,
                "other_hook": (not ours) and os.path.lexists(path)}
        if ours:
            block = _split(path.read_text(encoding="utf-8"))[1]
            item["current"] = expected is not None and block == expected
        out.append(item)
    installed = all(h["installed"] for h in out)
    result = {"repo": str(workdir) if workdir else None, "hooks_dir": str(where),
              "hooks_dir_from": source, "installed": installed, "hooks": out}
    if not installed:
        result["note"] = "install with: indexctl hooks install " + shlex.quote(str(workdir or repo))
    elif not all(h.get("current") for h in out):
        result["note"] = ("hooks point at another indexctl or socket; update with: "
                          "indexctl hooks install " + shlex.quote(str(workdir or repo)))
    return result
