"""Settings: defaults < config.toml < INDEXD_* environment < CLI flags.

The only module that reads the environment or the config file. Everything
else receives a frozen ``Settings``. ``INDEXD_HOME=DIR`` puts every path
(config, data, cache, logs, socket) under DIR, which is how tests isolate.
Imports nothing heavy: the client uses it.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from .errors import ConfigError

APP = "indexd"
CONFIG_NAME = "config.toml"


@dataclass(frozen=True)
class Paths:
    config_dir: Path
    data_dir: Path
    cache_dir: Path
    log_dir: Path
    runtime_dir: Path

    @property
    def config_file(self) -> Path:
        return self.config_dir / CONFIG_NAME

    @property
    def store_dir(self) -> Path:
        return self.data_dir / "lancedb"

    @property
    def socket(self) -> Path:
        return self.runtime_dir / "indexd.sock"

    @property
    def lock_file(self) -> Path:
        return self.runtime_dir / "indexd.lock"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "indexd.log"

    @property
    def audit_file(self) -> Path:
        return self.log_dir / "audit.jsonl"

    def make_dir(self, directory: Path) -> None:
        """``mkdir -p directory``; under INDEXD_HOME a missing home is made 0700
        first. There the home is also the runtime directory, which the daemon
        refuses unless it is private; ``mkdir -p`` would make it with the umask's
        755, so a first ``indexctl realm add`` left a home ``indexd run`` refused."""
        from .rundir import make_private_dir

        if Path(directory).is_relative_to(self.runtime_dir):
            make_private_dir(self.runtime_dir)
        Path(directory).mkdir(parents=True, exist_ok=True)

    def to_json(self) -> dict:
        return {f.name: str(getattr(self, f.name)) for f in fields(self)} | {
            "config_file": str(self.config_file), "store_dir": str(self.store_dir),
            "socket": str(self.socket), "log_file": str(self.log_file),
            "audit_file": str(self.audit_file)}


@dataclass(frozen=True)
class Settings:
    paths: Paths
    realms: dict = field(default_factory=dict)      # name -> tuple of absolute repo paths
    shared: dict = field(default_factory=dict)      # realm name -> shared index URI (shared_index/)
    include: tuple = ()                              # globs; empty = everything
    exclude: tuple = ()                              # globs, gitignore syntax
    max_file_size: int = 1 << 20
    debounce_ms: int = 250
    max_delay_ms: int = 2000
    save_debounce_ms: int = 50       # a save (<= 8 files pending): quiet period of the whole set
    workers: int = 0                                 # 0 = one per core
    embed_model: str = "default"
    # While embed_model's vectors are not all computed yet, search by meaning with
    # this faster model; embed_model fills in behind it (a child process, after the
    # first model's backlog) and takes over once it has a vector for every entry
    # (enrich/later_model.py). auto = "default" under embed_model = "mpnet", else off.
    embed_first: str = "auto"
    embed_recipe: str = "pooled"                     # pooled | default | name_doc | body (docs/decisions.md)
    embed_runtime: str = "auto"                      # auto | onnx | torch (enrich/embedder.py)
    # auto | fp32 | int8 | bf16: int8 runs a per-channel int8 copy of the ONNX export
    # (onnx runtime only; part of the model id); bf16 runs torch's bfloat16 products
    # (the same id: its vectors agree with fp32's); auto = bf16 for `indexd index` on a
    # CPU with AMX, else fp32. Measured in docs/decisions.md, "Embedding precision".
    embed_precision: str = "auto"
    model_cache: str = ""                            # ONNX exports; "" = default_model_cache()
    embed_batch: int = 16            # measured: as fast as 32 on CPU, half the wait for a query
    # Rows the daemon takes per embed step of its backlog (one scan for rows without
    # a vector, one rewrite of them). A save still waits one model batch, not a step:
    # the step stops between batches. 256 vs 64 measured in docs/decisions.md.
    embed_step: int = 256
    # A backlog of at least this many rows (a cold start, a new repo) is embedded by
    # a second, bulk model where embed_precision = "auto" and the CPU has bf16
    # hardware (torch bf16: ~1.5-2x the rate, ~+700 MB while it runs); dropped when the
    # queue is empty. 0 = never. docs/decisions.md, "bf16 products".
    embed_bulk_rows: int = 2000
    # Word-pieces a text is cut to: min(model's limit, this); part of the model
    # id. 512 = the model's own limit (256 for MiniLM); measured in docs/decisions.md.
    embed_max_tokens: int = 512
    # Model threads: 0 = auto, all cores (<= 4) when the machine is idle as the
    # model loads, else half of them (enrich/embedder.py, docs/decisions.md).
    embed_threads: int = 0
    # The embedding thread's nice value above the daemon's (Linux; enrich/priority.py):
    # a save's parse and write run ahead of the model. Off by default: that thread also
    # commits vectors under the store's write lock (docs/decisions.md).
    embed_nice: int = 0
    # The bulk model's child process (embed_bulk_rows) runs this much nicer than the
    # daemon once loaded (it holds no store lock): a save's parse gets the cores first.
    # Off by default: on a busy machine it starves the bulk run (docs/decisions.md).
    embed_bulk_nice: int = 0
    # A save stops a bulk or later model's child process (SIGSTOP) until its rows
    # are written, at most 1 s (enrich/child_hold.py, docs/decisions.md).
    embed_hold_for_saves: bool = True
    summarize: str = "docstring"                     # off | docstring | llm
    ollama_url: str = "http://127.0.0.1:11434"
    ollama_model: str = ""
    secret_allow: tuple = ()                         # globs exempt from secret checks
    version_retention_s: int = 300                   # keep old store versions for live readers
    git_lock_stale_s: int = 120                      # an older .git/index.lock is a crashed git's
    unwatched_reconcile_s: int = 30                  # a repo that cannot be watched is reconciled this often
    fault_injection: str = ""                        # tests only: "write:N" fails N store writes (ENOSPC)
    message_timeout_s: int = 30                      # a half-sent socket message; 0 = no limit
    audit_log: bool = False                          # JSON lines of every request (indexd/audit.py)

    def realm_repos(self, realm: str | None) -> list[tuple[str, str]]:
        """(realm, repo) pairs for one realm, or all realms when None."""
        if realm is not None and realm not in self.realms:
            from .errors import RealmError

            known = ", ".join(sorted(self.realms)) or "none"
            raise RealmError(f"unknown realm {realm!r} (known: {known}); "
                             f"add it with: indexctl realm add {realm} PATH...")
        names = [realm] if realm else sorted(self.realms)
        return [(name, repo) for name in names for repo in self.realms[name]]


# Scalar settings that the file, env (INDEXD_<NAME>) and flags may set.
_SCALARS = {f.name: f for f in fields(Settings) if f.name not in ("paths", "realms", "shared")}

# Settings with a fixed set of values. Checked here, so a typo stops `indexd run`
# / `indexd index` (and a reload keeps the old config) instead of silently
# meaning the default. The modules using them keep their own copies (no import
# from the engine here); a test keeps the two equal.
CHOICES = {"summarize": ("off", "docstring", "llm"),
           "embed_runtime": ("auto", "onnx", "torch"),
           "embed_precision": ("auto", "fp32", "int8", "bf16"),
           "embed_recipe": ("pooled", "default", "name_doc", "body")}
EMBED_MODEL_FORMS = ("default", "mpnet", "off", "hash", "ollama:MODEL", "/path/to/model-dir")
EMBED_FIRST_FORMS = ("auto", "off", "default", "hash", "/path/to/model-dir")
# Integer settings with bounds: outside them is a mistake, not a value to clamp.
INT_RANGES = {"embed_max_tokens": (32, 512), "embed_step": (16, 4096),
              "embed_bulk_rows": (0, 100_000_000), "embed_threads": (0, 64), "embed_nice": (0, 19),
              "embed_bulk_nice": (0, 19),
              "unwatched_reconcile_s": (1, 86_400)}


def default_paths(env: dict) -> Paths:
    home = env.get("INDEXD_HOME")
    if home:
        root = Path(home).expanduser().absolute()
        return Paths(root / "config", root / "data", root / "cache", root / "log", root)
    import platformdirs

    runtime = env.get("XDG_RUNTIME_DIR")
    # Without XDG_RUNTIME_DIR platformdirs falls back to a shared temp path; a
    # private per-user directory under /tmp keeps the socket ours (0700).
    run_dir = Path(runtime) / APP if runtime else Path("/tmp") / f"{APP}-{os.getuid()}"
    return Paths(
        Path(platformdirs.user_config_dir(APP)), Path(platformdirs.user_data_dir(APP)),
        Path(platformdirs.user_cache_dir(APP)), Path(platformdirs.user_log_dir(APP)),
        run_dir)


def default_model_cache() -> Path:
    """Where ONNX exports of embedding models live: per user, not per INDEXD_HOME.

    An export depends only on the model's weights (its directory name carries
    their hash), so every home of the same user can share it; a second home
    used to spend another torch export (~1 GB, tens of seconds) on the same file.
    """
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP)) / "models"   # honours XDG_CACHE_HOME


def load_settings(env: dict | None = None, flags: dict | None = None,
                  strict: bool = True) -> Settings:
    """``strict`` False (the client): a bad scalar keeps its default instead of
    raising, so `indexctl status` can still reach a daemon and show the error."""
    env = dict(os.environ if env is None else env)
    paths = default_paths(env)
    raw = read_config_file(paths.config_file)
    values: dict = {}

    def put(name, value, where):
        try:
            values[name] = _coerce(name, value, where)
        except ConfigError:
            if strict:
                raise

    for name, value in raw.items():
        if name in _SCALARS:
            put(name, value, f"{paths.config_file}")
    for name in _SCALARS:
        key = f"INDEXD_{name.upper()}"
        if key in env:
            put(name, env[key], key)
    for name, value in (flags or {}).items():
        if value is not None:
            if name not in _SCALARS:
                raise ConfigError(f"unknown setting {name!r}")
            put(name, value, f"--{name.replace('_', '-')}")
    realms = realms_from(raw.get("realms", {}), paths.config_file)
    shared = shared_from(raw.get("realms", {}), paths.config_file)
    return Settings(paths=paths, realms=realms, shared=shared, **values)


def read_config_file(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror}") from exc


def _coerce(name: str, value, where: str):
    default = _SCALARS[name].default
    kind = type(default) if not isinstance(default, tuple) else tuple
    # TOML is typed: `summarize = true` or `max_file_size = true` is a mistake,
    # not "True" or 1 (bool is an int subclass, and anything has a str()).
    wrong_bool = isinstance(value, bool) and kind is not bool
    if wrong_bool or (kind is str and not isinstance(value, str)):
        raise ConfigError(f"{where}: {name} must be {_expected(name, kind)}, got {value!r}",
                          _bad(name, value))
    try:
        if kind is tuple:
            if isinstance(value, str):
                value = [v.strip() for v in value.split(",") if v.strip()]
            return tuple(str(v) for v in value)
        if kind is bool:
            return _bool(value)
        if kind is int:
            return _checked_range(name, int(value), where)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {name} must be {kind.__name__}, got {value!r}",
                          _bad(name, value)) from exc
    return _checked_choice(name, value.strip(), where)


def _checked_range(name: str, value: int, where: str) -> int:
    bounds = INT_RANGES.get(name)
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        raise ConfigError(f"{where}: {name} = {value!r} is out of range; use an integer in "
                          f"{bounds[0]}..{bounds[1]}", _bad(name, value) | {"range": list(bounds)})
    return value


def _checked_choice(name: str, value: str, where: str) -> str:
    allowed = CHOICES.get(name)
    if allowed is not None and value not in allowed:
        raise ConfigError(f"{where}: {name} = {value!r} is not allowed; use one of: "
                          f"{', '.join(allowed)}", _bad(name, value, allowed))
    if name == "embed_model" and not _is_model_spec(value):
        raise ConfigError(f"{where}: embed_model = {value!r} is not allowed; use one of: "
                          f"{', '.join(EMBED_MODEL_FORMS)}", _bad(name, value, EMBED_MODEL_FORMS))
    # The first model answers queries in the daemon: an in-process model, not Ollama.
    if name == "embed_first" and not (value in ("auto", "off", "")
                                      or (_is_model_spec(value) and not value.startswith("ollama:"))):
        raise ConfigError(f"{where}: embed_first = {value!r} is not allowed; use one of: "
                          f"{', '.join(EMBED_FIRST_FORMS)}", _bad(name, value, EMBED_FIRST_FORMS))
    return value


def _is_model_spec(spec: str) -> bool:
    """default | mpnet | off | hash | ollama:MODEL | a directory, written as a path."""
    if spec in ("default", "mpnet", "off", "hash", ""):
        return True
    if spec.startswith("ollama:"):
        return bool(spec[len("ollama:"):].strip())
    return "/" in spec or spec.startswith(("~", "."))


def _expected(name: str, kind: type) -> str:
    allowed = CHOICES.get(name) or {"embed_model": EMBED_MODEL_FORMS,
                                     "embed_first": EMBED_FIRST_FORMS}.get(name)
    if allowed:
        return "one of: " + ", ".join(allowed)
    return {str: "a string", int: "an integer", tuple: "a list of strings",
            bool: "true or false"}[kind]


def _bad(name: str, value, allowed=None) -> dict:
    return {"key": name, "value": repr(value)} | ({"allowed": list(allowed)} if allowed else {})


def _bool(value) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"not a boolean: {value!r}")


def realms_from(raw, where: Path) -> dict:
    """The [realms] table as {name: (repo, ...)}; also what config_edit edits."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: [realms] must be a table of name = [paths]")
    realms = {}
    for name, repos in raw.items():
        if isinstance(repos, dict):
            repos = repos.get("repos", [])
        if not isinstance(repos, list) or not all(isinstance(r, str) for r in repos):
            raise ConfigError(f"{where}: realms.{name} must be a list of paths")
        realms[name] = tuple(str(Path(r).expanduser()) for r in repos)
    return realms


def shared_from(raw, where: Path) -> dict:
    """``[realms.NAME] shared = "s3://…"``: the realms that read a team's shared index."""
    out = {}
    for name, entry in (raw.items() if isinstance(raw, dict) else ()):
        uri = entry.get("shared") if isinstance(entry, dict) else None
        if uri is None:
            continue
        if not isinstance(uri, str) or not uri.strip():
            raise ConfigError(f"{where}: realms.{name}.shared must be a URI "
                              "(s3://bucket/prefix) or a path")
        out[name] = uri.strip()
    return out


def with_realms(settings: Settings, realms: dict) -> Settings:
    return replace(settings, realms=realms)
