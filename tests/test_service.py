"""`indexctl service`: the systemd/launchd templates and install/uninstall/status.

Nothing here touches the real service manager: every round trip writes into a
tmp ``unit_dir`` with PATH pointing at an empty folder, so neither `systemctl`
nor `launchctl` can be found.
"""

from __future__ import annotations

import configparser
import json
import os
import plistlib
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from indexd import service
from indexd.config import load_settings
from indexd.errors import ConfigError

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGE_UNITS = REPO_ROOT / "indexd" / "service_units"
FILE_NAMES = {"systemd": "indexd.service", "launchd": "dev.indexd.plist"}
SERVICE_KEYS = {"Type": "simple", "Restart": "on-failure", "RestartSec": "2",
                "MemoryHigh": "1G", "MemoryMax": "2G", "CPUWeight": "50", "IOWeight": "50",
                "Nice": "10", "LimitNOFILE": "65536", "Environment": "PYTHONUNBUFFERED=1",
                "KillSignal": "SIGTERM", "TimeoutStopSec": "30"}


@pytest.fixture
def settings():
    return load_settings()


@pytest.fixture
def no_managers(monkeypatch, tmp_path):
    """PATH with nothing on it: systemctl/launchctl cannot be found or run."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    return empty


def parse_unit(text: str) -> configparser.ConfigParser:
    cp = configparser.ConfigParser(strict=False, interpolation=None,
                                   comment_prefixes=("#", ";"), delimiters=("=",))
    cp.optionxform = str        # systemd keys are case-sensitive
    cp.read_string(text)
    return cp


def assert_unit(cp: configparser.ConfigParser) -> None:
    assert cp["Unit"]["Description"]
    assert cp["Unit"]["Documentation"]
    assert cp["Unit"]["After"] == "default.target"
    for key, value in SERVICE_KEYS.items():
        assert cp["Service"][key] == value, key
    assert cp["Service"]["ExecStart"].endswith(" run")
    assert cp["Install"]["WantedBy"] == "default.target"


def assert_plist(data: dict, exe: str, log_dir: str) -> None:
    assert data["Label"] == "dev.indexd"
    assert data["ProgramArguments"] == [exe, "run"]
    assert data["RunAtLoad"] is True
    assert data["KeepAlive"] == {"SuccessfulExit": False}
    assert data["ProcessType"] == "Background"
    assert data["LowPriorityIO"] is True
    assert data["Nice"] == 10
    assert data["StandardOutPath"] == f"{log_dir}/launchd.out.log"
    assert data["StandardErrorPath"] == f"{log_dir}/launchd.err.log"
    assert "/usr/bin" in data["EnvironmentVariables"]["PATH"]


# -- templates ---------------------------------------------------------------

@pytest.mark.parametrize("top, name", [("systemd", "indexd.service"),
                                       ("launchd", "dev.indexd.plist")])
def test_top_level_templates_are_the_package_copies(top, name):
    assert (REPO_ROOT / top / name).read_bytes() == (PACKAGE_UNITS / name).read_bytes()


def test_packaged_templates_are_what_render_reads():
    for platform, name in FILE_NAMES.items():
        assert service.template_text(platform) == (PACKAGE_UNITS / name).read_text()


def test_pyproject_ships_the_templates():
    import tomllib

    data = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    package_data = data["tool"]["setuptools"]["package-data"]
    assert "service_units/*" in package_data["indexd"]
    assert package_data["indexd.parse"] == ["queries/*.scm"]


def test_systemd_template_parses():
    cp = parse_unit(service.template_text("systemd"))
    assert_unit(cp)
    assert cp["Service"]["ExecStart"] == "@INDEXD@ run"


def test_plist_template_parses():
    data = plistlib.loads(service.template_text("launchd").encode())
    assert_plist(data, "@INDEXD@", "@LOG_DIR@")


def test_rendered_unit_fills_placeholders(settings):
    exe = service.indexd_executable()
    text = service.render("systemd", settings.paths.log_dir)
    cp = parse_unit(text)
    assert_unit(cp)
    assert cp["Service"]["ExecStart"] == f"{exe} run"
    body = [line for line in text.splitlines() if not line.startswith("#")]
    assert not any("@" in line for line in body)


def test_rendered_plist_fills_placeholders(settings):
    exe = service.indexd_executable()
    data = plistlib.loads(service.render("launchd", settings.paths.log_dir).encode())
    assert_plist(data, str(exe), str(settings.paths.log_dir))
    assert data["EnvironmentVariables"]["PATH"].startswith(f"{exe.parent}:")


def test_awkward_paths_are_quoted(tmp_path):
    odd = tmp_path / "a b&c%d"
    exe = odd / "indexd"
    unit = parse_unit(service.render("systemd", odd, exe=exe))
    assert unit["Service"]["ExecStart"] == f'"{str(exe).replace("%", "%%")}" run'
    data = plistlib.loads(service.render("launchd", odd, exe=exe).encode())
    assert data["ProgramArguments"][0] == str(exe)
    assert data["StandardOutPath"] == f"{odd}/launchd.out.log"


def test_executable_is_absolute_and_runnable():
    exe = service.indexd_executable()
    assert exe.is_absolute() and os.access(exe, os.X_OK)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_systemd_analyze_verifies_filled_unit(settings, tmp_path):
    unit = tmp_path / "indexd.service"
    unit.write_text(service.render("systemd", settings.paths.log_dir))
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    env = os.environ | {"XDG_RUNTIME_DIR": str(runtime), "SYSTEMD_LOG_LEVEL": "warning"}
    for mode in ([], ["--user"]):
        proc = subprocess.run(["systemd-analyze", *mode, "verify", str(unit)],
                              capture_output=True, text=True, env=env, timeout=60)
        assert proc.returncode == 0, (mode, proc.stdout + proc.stderr)


# -- install / uninstall / status ----------------------------------------------

@pytest.mark.parametrize("platform", ["systemd", "launchd"])
def test_round_trip(platform, settings, tmp_path, no_managers):
    unit_dir = tmp_path / "units"
    (unit_dir / "other").mkdir(parents=True)
    neighbour = unit_dir / "someone-else.service"
    neighbour.write_text("keep me")
    target = unit_dir / FILE_NAMES[platform]

    def call(action, **kw):
        return service.service_command(settings, action, unit_dir=unit_dir,
                                       platform=platform, **kw)

    before = call("status")
    assert before["exists"] is False and before["path"] == str(target)
    assert before["manager"] is None

    dry = call("install", dry_run=True)
    assert dry["dry_run"] is True and dry["written"] is False
    assert not target.exists()
    assert dry["content"] == service.render(platform, settings.paths.log_dir)

    done = call("install")
    assert done["action"] == "install" and done["platform"] == platform
    assert done["written"] is True and done["enabled"] is False
    assert target.read_text() == dry["content"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    tool = "systemctl" if platform == "systemd" else "launchctl"
    assert f"{tool} not found" in done["note"]
    assert all(c.startswith(tool) for c in done["commands"])
    assert done["commands"][-1] in done["note"]
    if platform == "launchd":
        assert settings.paths.log_dir.is_dir()
        plist = plistlib.loads(target.read_bytes())
        assert_plist(plist, str(service.indexd_executable()), str(settings.paths.log_dir))
    else:
        assert_unit(parse_unit(target.read_text()))

    status = call("status")
    assert status["exists"] is True and status["matches"] is True

    target.write_text(target.read_text() + "\n# edited\n")
    assert call("status")["matches"] is False
    assert call("install")["replaced"] is True
    assert call("status")["matches"] is True

    gone = call("uninstall")
    assert gone["removed"] is True and gone["stopped"] is False
    assert not target.exists()
    assert sorted(p.name for p in unit_dir.iterdir()) == ["other", "someone-else.service"]
    assert neighbour.read_text() == "keep me"

    again = call("uninstall")
    assert again["removed"] is False and "nothing to remove" in again["note"]
    assert call("status")["exists"] is False


def test_uninstall_dry_run_keeps_file(settings, tmp_path, no_managers):
    kw = {"unit_dir": tmp_path, "platform": "systemd"}
    service.service_command(settings, "install", **kw)
    out = service.service_command(settings, "uninstall", dry_run=True, **kw)
    assert out["removed"] is False and out["exists"] is True
    assert (tmp_path / "indexd.service").exists()


def test_failing_manager_still_writes_file(settings, tmp_path, no_managers):
    fake = no_managers / "systemctl"
    fake.write_text("#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n")
    fake.chmod(0o755)
    out = service.service_command(settings, "install", unit_dir=tmp_path, platform="systemd")
    assert out["written"] is True and out["enabled"] is False
    assert out["ran"][0]["rc"] == 1 and "No medium" in out["ran"][0]["output"]
    assert "systemctl --user daemon-reload && systemctl --user enable --now indexd.service" \
        in out["note"]
    status = service.service_command(settings, "status", unit_dir=tmp_path, platform="systemd")
    assert status["manager"] == "systemctl" and "No medium" in status["is_active"]


def test_working_manager_enables(settings, tmp_path, no_managers):
    log = tmp_path / "calls"
    fake = no_managers / "systemctl"
    fake.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\n')
    fake.chmod(0o755)
    out = service.service_command(settings, "install", unit_dir=tmp_path / "u",
                                  platform="systemd")
    assert out["enabled"] is True and "note" not in out
    assert log.read_text().splitlines() == ["--user daemon-reload",
                                            "--user enable --now indexd.service"]
    gone = service.service_command(settings, "uninstall", unit_dir=tmp_path / "u",
                                   platform="systemd")
    assert gone["removed"] is True and gone["stopped"] is True
    assert log.read_text().splitlines()[-2:] == ["--user disable --now indexd.service",
                                                 "--user daemon-reload"]


def test_bad_action_and_platform(settings, tmp_path):
    with pytest.raises(ConfigError, match="unknown service action"):
        service.service_command(settings, "restart", unit_dir=tmp_path, platform="systemd")
    with pytest.raises(ConfigError, match="unknown service platform"):
        service.service_command(settings, "status", unit_dir=tmp_path, platform="upstart")


def test_default_unit_dir_respects_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert service.default_unit_dir("systemd") == tmp_path / "systemd" / "user"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert service.default_unit_dir("systemd") == Path.home() / ".config" / "systemd" / "user"
    assert service.default_unit_dir("launchd") == Path.home() / "Library" / "LaunchAgents"


# -- the command line -----------------------------------------------------------

def test_indexctl_service_install_dry_run_json(tmp_path):
    env = os.environ | {"INDEXD_HOME": str(tmp_path / "home"),
                        "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([str(Path(sys.executable).parent / "indexctl"), "service", "install",
                           "--dry-run", "--json"], capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["action"] == "install" and out["dry_run"] is True and out["written"] is False
    platform = out["platform"]
    assert out["content"] == service.render(platform, tmp_path / "home" / "log")
    assert "run" in out["content"]
    assert not (tmp_path / "xdg").exists()
    assert not Path(out["path"]).exists()
