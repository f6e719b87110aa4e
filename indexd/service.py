"""`indexctl service install|uninstall|status`: run indexd as a per-user service.

Linux gets a systemd *user* unit (``$XDG_CONFIG_HOME/systemd/user/indexd.service``),
macOS a launchd LaunchAgent (``~/Library/LaunchAgents/dev.indexd.plist``). The
templates ship as package data in ``indexd/service_units/`` (the top-level
``systemd/`` and ``launchd/`` copies are the same bytes, for people to read);
placeholders are filled here (not on ``#`` comment lines):

    @INDEXD@   absolute path of the ``indexd`` executable
    @BIN_DIR@  its folder (launchd PATH)
    @LOG_DIR@  ``settings.paths.log_dir`` (launchd stdout/stderr)

Writing the file always works; enabling it (``systemctl --user`` or
``launchctl``) is best effort. When the service manager is missing or refuses
(no user session, a container), the result says ``enabled: false`` and the
``note`` gives the exact commands to run by hand. Nothing outside the unit file
and, for launchd, the log folder is touched, and ``dry_run`` touches nothing.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path

from .errors import ConfigError

UNIT_NAME = "indexd.service"
PLIST_LABEL = "dev.indexd"
PLIST_NAME = f"{PLIST_LABEL}.plist"
PLATFORMS = ("systemd", "launchd")
ACTIONS = ("install", "uninstall", "status")
COMMAND_TIMEOUT_S = 30


# -- where and what ----------------------------------------------------------

def detect_platform() -> str:
    if sys.platform.startswith("linux"):
        return "systemd"
    if sys.platform == "darwin":
        return "launchd"
    raise ConfigError(f"indexctl service: unsupported platform {sys.platform!r} "
                      f"(supported: Linux with systemd, macOS with launchd); "
                      f"run `indexd run` under your own supervisor instead")


def default_unit_dir(platform: str) -> Path:
    if platform == "launchd":
        return Path.home() / "Library" / "LaunchAgents"
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".config"
    return base / "systemd" / "user"


def unit_file_name(platform: str) -> str:
    return PLIST_NAME if platform == "launchd" else UNIT_NAME


def template_text(platform: str) -> str:
    """The packaged template, unfilled."""
    ref = resources.files("indexd").joinpath("service_units", unit_file_name(platform))
    try:
        return ref.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"service template {unit_file_name(platform)} missing from the "
                          f"indexd package ({exc}); reinstall indexd") from exc


def indexd_executable() -> Path:
    """The `indexd` next to this interpreter (this install), else the one on PATH."""
    sibling = Path(sys.executable).parent / "indexd"
    if sibling.is_file() and os.access(sibling, os.X_OK):
        return sibling.absolute()
    found = shutil.which("indexd")
    if found:
        return Path(found).absolute()
    raise ConfigError(f"cannot find the `indexd` executable (looked next to {sys.executable} "
                      f"and on PATH); install indexd so that `indexd` is runnable")


def render(platform: str, log_dir: Path, exe: Path | None = None) -> str:
    """The unit/plist text that install would write."""
    exe = exe or indexd_executable()
    quote = _systemd_quote if platform == "systemd" else _xml_escape
    values = {"@INDEXD@": quote(str(exe)), "@BIN_DIR@": quote(str(exe.parent)),
              "@LOG_DIR@": quote(str(log_dir))}
    lines = template_text(platform).splitlines(keepends=True)
    return "".join(line if line.lstrip().startswith("#") else _fill(line, values)
                   for line in lines)


def _fill(line: str, values: dict) -> str:
    for key, value in values.items():
        line = line.replace(key, value)
    return line


def _systemd_quote(path: str) -> str:
    path = path.replace("%", "%%")     # systemd specifier escape
    if any(c.isspace() or c in "\"'\\;$" for c in path):
        return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return path


def _xml_escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# -- service manager commands -----------------------------------------------

def _systemctl(*args: str) -> list[str]:
    return ["systemctl", "--user", *args]


def _launchd_domain() -> str:
    return f"gui/{os.getuid()}"


def enable_commands(platform: str, path: Path, replaced: bool = False) -> list[list[str]]:
    if platform == "launchd":
        return [["launchctl", "bootout", f"{_launchd_domain()}/{PLIST_LABEL}"],
                ["launchctl", "bootstrap", _launchd_domain(), str(path)]]
    cmds = [_systemctl("daemon-reload"), _systemctl("enable", "--now", UNIT_NAME)]
    if replaced:     # a changed unit on a running service takes effect on restart
        cmds.append(_systemctl("try-restart", UNIT_NAME))
    return cmds


def disable_commands(platform: str) -> list[list[str]]:
    if platform == "launchd":
        return [["launchctl", "bootout", f"{_launchd_domain()}/{PLIST_LABEL}"]]
    return [_systemctl("disable", "--now", UNIT_NAME)]


def _tool(platform: str) -> str:
    return "launchctl" if platform == "launchd" else "systemctl"


def run_command(cmd: list[str]) -> dict:
    """Run one command, never raising; rc None means it could not start."""
    line = shlex.join(cmd)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return {"command": line, "rc": None, "output": str(exc)}
    output = (proc.stdout + proc.stderr).strip()
    return {"command": line, "rc": proc.returncode, "output": output}


def _manual_note(what: str, cmds: list[list[str]], why: str) -> str:
    return f"{why}; {what} by hand with: " + " && ".join(shlex.join(c) for c in cmds)


# -- actions -----------------------------------------------------------------

def service_command(settings, action: str, dry_run: bool = False, *,
                    unit_dir: Path | None = None, platform: str | None = None) -> dict:
    """Install, uninstall or report the per-user service; returns a JSON-able dict."""
    if action not in ACTIONS:
        raise ConfigError(f"unknown service action {action!r} (expected one of: "
                          f"{', '.join(ACTIONS)})")
    platform = platform or detect_platform()
    if platform not in PLATFORMS:
        raise ConfigError(f"unknown service platform {platform!r} (expected one of: "
                          f"{', '.join(PLATFORMS)})")
    path = Path(unit_dir or default_unit_dir(platform)) / unit_file_name(platform)
    base = {"action": action, "platform": platform, "path": str(path)}
    handler = {"install": _install, "uninstall": _uninstall, "status": _status}[action]
    return base | handler(settings, platform, path, dry_run)


def _install(settings, platform: str, path: Path, dry_run: bool) -> dict:
    log_dir = settings.paths.log_dir
    content = render(platform, log_dir)
    replaced = path.exists() and _read(path) != content
    cmds = enable_commands(platform, path, replaced)
    if dry_run:
        return {"dry_run": True, "written": False, "enabled": False, "content": content,
                "commands": [shlex.join(c) for c in cmds]}
    _write_unit(path, content)
    if platform == "launchd":       # launchd opens the log files but makes no folders
        log_dir.mkdir(parents=True, exist_ok=True)
    result = {"written": True, "replaced": replaced}
    return result | _run_all(platform, cmds, "enable it", ignore_first=platform == "launchd")


def _uninstall(settings, platform: str, path: Path, dry_run: bool) -> dict:
    exists = path.exists()
    stop = disable_commands(platform)
    reload = [_systemctl("daemon-reload")] if platform == "systemd" else []
    if dry_run:
        return {"dry_run": True, "removed": False, "exists": exists,
                "commands": [shlex.join(c) for c in stop + reload]}
    if not exists:
        return {"removed": False, "commands": [],
                "note": f"nothing to remove: {path} does not exist"}
    stopped = _run_all(platform, stop, "stop it")
    _remove(path)
    result = {"removed": True, "stopped": stopped.pop("enabled")} | stopped
    if reload and result["stopped"]:
        reloaded = _run_all(platform, reload, "reload")
        result["commands"] += reloaded["commands"]
        result["ran"] = result.get("ran", []) + reloaded.get("ran", [])
        if "note" in reloaded:
            result["note"] = reloaded["note"]
    elif reload:
        result["note"] += " && " + shlex.join(reload[0])
    return result


def _status(settings, platform: str, path: Path, dry_run: bool) -> dict:
    exists = path.exists()
    result: dict = {"exists": exists}
    if exists:
        try:
            result["matches"] = _read(path) == render(platform, settings.paths.log_dir)
        except ConfigError as exc:
            result["matches"] = None
            result["note"] = exc.message
        if not result["matches"]:
            result.setdefault("note", "the installed file differs from what install would "
                                      "write; run: indexctl service install")
    if shutil.which(_tool(platform)) is None:
        result["manager"] = None
        return result
    return result | _manager_state(platform)


def _manager_state(platform: str) -> dict:
    if platform == "launchd":
        out = run_command(["launchctl", "print", f"{_launchd_domain()}/{PLIST_LABEL}"])
        return {"manager": "launchctl", "loaded": out["rc"] == 0}
    enabled = run_command(_systemctl("is-enabled", UNIT_NAME))
    active = run_command(_systemctl("is-active", UNIT_NAME))
    return {"manager": "systemctl", "is_enabled": enabled["output"] or None,
            "is_active": active["output"] or None}


def _run_all(platform: str, cmds: list[list[str]], what: str, ignore_first: bool = False) -> dict:
    """Run cmds in order; stop at the first failure (except an ignorable first one)."""
    tool = _tool(platform)
    lines = [shlex.join(c) for c in cmds]
    if shutil.which(tool) is None:
        return {"enabled": False, "commands": lines,
                "note": _manual_note(what, cmds[1:] if ignore_first else cmds,
                                     f"{tool} not found")}
    ran = []
    for i, cmd in enumerate(cmds):
        out = run_command(cmd)
        ran.append(out)
        if out["rc"] != 0 and not (ignore_first and i == 0):
            why = f"`{out['command']}` failed ({out['output'] or 'rc ' + str(out['rc'])})"
            return {"enabled": False, "commands": lines, "ran": ran,
                    "note": _manual_note(what, cmds[i:], why)}
    return {"enabled": True, "commands": lines, "ran": ran}


def _write_unit(path: Path, content: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(content, encoding="utf-8")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise ConfigError(f"cannot remove {path}: {exc.strerror or exc}") from exc


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
