"""Three ways to get tree-sitter grammars from PyPI, measured side by side.

Creates three throwaway virtual environments (``python3 -m venv``) under
``--venvs DIR`` (default: a fresh temporary folder, removed afterwards unless
``--keep``) and pip-installs into each from the registry:

* ``a``  ``tree-sitter-languages==1.10.2`` alone (pip pulls the newest core),
  then, in the same venv, ``a'`` with ``tree-sitter==0.21.3`` pinned;
* ``b``  ``tree-sitter-language-pack==0.13.0`` (+ the core it pulls), then, in
  the same venv, ``b'`` upgraded to the newest ``tree-sitter-language-pack``
  (1.x);
* ``c``  the per-language wheels indexd uses (``tree-sitter`` +
  ``tree-sitter-{python,javascript,typescript,go,rust,java,c,cpp,ruby,bash}``).

Every measurement runs INSIDE the venv (a subprocess running a small script
written next to it) with the network made unavailable (``HTTP(S)_PROXY`` set
to a closed port on 127.0.0.1) and an empty HOME / XDG cache, so a package
that fetches grammars at run time shows it. For each variant it reports:

* works: a Python parser was obtained and a def/class query ran (else the error);
* langs: grammars usable offline (``tree-sitter-languages``: the ``tree_sitter_*``
  entry points in its ``languages.so`` that load; the pack: its language list;
  wheels: ``language*()`` functions of the installed ``tree_sitter_*`` modules);
* grammar MB / core MB: bytes of the files each distribution installed (its
  RECORD), grammar distributions vs the ``tree-sitter`` core;
* import+load: ``import`` of core + grammar package to a ready Python parser,
  median of 3 fresh interpreters, in CPU ms (wall in the notes);
* parse+query: parse every ``*.py`` of the stdlib (``site-packages`` skipped;
  files read beforehand) and run a def/class query on each, median of 3, in
  CPU seconds of the measuring process (wall time, which other load on the
  machine inflates, is printed in the notes);
* symbols: ``function_definition`` + ``class_definition`` names captured;
* core: ``tree-sitter`` version in the venv, and the release date of the
  grammar package and the core (upload time of the exact wheel that
  ``pip download --no-deps`` fetched, from the index's JSON simple API; the
  wheel's newest zip-entry timestamp when that is unavailable); "latest"
  comes from ``pip index versions``.

    python3 bench/grammar_packages.py [--venvs /tmp/gp] [--keep] [--json out.json]

Needs network access to PyPI for the installs; takes a few minutes.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

LANG_WHEELS = ["tree-sitter-python", "tree-sitter-javascript", "tree-sitter-typescript",
               "tree-sitter-go", "tree-sitter-rust", "tree-sitter-java", "tree-sitter-c",
               "tree-sitter-cpp", "tree-sitter-ruby", "tree-sitter-bash"]

# key: (venv, label, pip specs installed on top of the venv's current state, mode)
VARIANTS = {
    "a": ("a", "tree-sitter-languages 1.10.2 (unpinned core)",
          ["tree-sitter-languages==1.10.2"], "languages"),
    "a'": ("a", "tree-sitter-languages 1.10.2 + tree-sitter 0.21.3",
           ["tree-sitter-languages==1.10.2", "tree-sitter==0.21.3"], "languages"),
    "b": ("b", "tree-sitter-language-pack 0.13.0",
          ["tree-sitter-language-pack==0.13.0"], "pack"),
    "b'": ("b", "tree-sitter-language-pack newest (1.x)",
           ["--upgrade", "tree-sitter-language-pack"], "pack"),
    "c": ("c", "per-language wheels (indexd)",
          ["tree-sitter", *LANG_WHEELS], "wheels"),
}
PHASES = [["a", "b", "c"], ["a'", "b'"]]  # installs of one phase run in parallel

OFFLINE_PROXY = "http://127.0.0.1:9"

MEASURE = r'''
import json, sys, time
T0, C0 = time.perf_counter(), time.process_time()
mode, what = sys.argv[1], sys.argv[2]
out = {"works": False}


def fail(stage, exc):
    out["error"] = f"{type(exc).__name__}: {exc}"
    out["stage"] = stage
    out["failed_after_s"] = time.perf_counter() - T0
    pack = sys.modules.get("tree_sitter_language_pack")
    if pack is not None and hasattr(pack, "cache_dir"):  # 1.x: where it looked, what it has
        try:
            out["cache_dir"] = pack.cache_dir()
            out["langs"] = pack.language_count()
            out["langs_note"] = f"language_count() = {out['langs']} with an empty cache"
        except Exception:
            pass
    print(json.dumps(out))
    sys.exit(0)


try:
    import tree_sitter
    if mode == "languages":
        import tree_sitter_languages as pkg
        lang = pkg.get_language("python")
        parser = pkg.get_parser("python")
    elif mode == "pack":
        import tree_sitter_language_pack as pkg
        lang = pkg.get_language("python")
        parser = pkg.get_parser("python")
    else:
        import tree_sitter_python as pkg
        lang = tree_sitter.Language(pkg.language())
        try:
            parser = tree_sitter.Parser(lang)
        except TypeError:
            parser = tree_sitter.Parser()
            parser.set_language(lang)
except Exception as exc:  # noqa: BLE001 - reported, not handled
    fail("load", exc)
out["load_s"] = time.perf_counter() - T0
out["load_cpu_s"] = time.process_time() - C0
if what == "load":
    out["works"] = True
    print(json.dumps(out))
    sys.exit(0)

import importlib, importlib.metadata as md, pkgutil, re, statistics, sysconfig
from pathlib import Path

out["core"] = md.version("tree-sitter")


def count_languages():
    if mode == "languages":
        so = Path(pkg.__file__).with_name("languages.so").read_bytes()
        names = {m.decode() for m in re.findall(rb"\x00tree_sitter_([a-z0-9_]+)\x00", so)}
        names = sorted(n for n in names if "_external_scanner" not in n)
        ok = []
        for n in names:
            try:
                pkg.get_language(n)
                ok.append(n)
            except Exception:
                pass
        return len(ok), f"{len(ok)} of {len(names)} in languages.so load"
    if mode == "pack":
        if hasattr(pkg, "language_count"):  # 1.x: grammars are downloaded, not shipped
            from tree_sitter_language_pack._supported_languages import SupportedLanguage
            import typing
            declared = len(typing.get_args(SupportedLanguage))
            return pkg.language_count(), f"{pkg.language_count()} available offline, {declared} declared"
        import typing
        names = typing.get_args(pkg.SupportedLanguage)
        ok = 0
        for n in names:
            try:
                pkg.get_language(n)
                ok += 1
            except Exception:
                pass
        return ok, f"{ok} of {len(names)} declared load"
    n = 0
    mods = []
    for m in pkgutil.iter_modules():
        if m.name.startswith("tree_sitter_"):
            mod = importlib.import_module(m.name)
            fns = [f for f in dir(mod) if f.startswith("language") and callable(getattr(mod, f))]
            for f in fns:
                tree_sitter.Language(getattr(mod, f)())
            n += len(fns)
            mods.append(m.name)
    return n, f"{n} from {len(mods)} wheels"


try:
    out["langs"], out["langs_note"] = count_languages()
except Exception as exc:  # noqa: BLE001
    out["langs"], out["langs_note"] = None, f"count failed: {type(exc).__name__}: {exc}"

QUERY = """
(function_definition name: (identifier) @name)
(class_definition name: (identifier) @name)
"""
try:
    if hasattr(tree_sitter, "QueryCursor"):       # 0.25+
        query = tree_sitter.Query(lang, QUERY)
        def captures(node):
            return len(tree_sitter.QueryCursor(query).captures(node).get("name", ()))
    else:
        query = lang.query(QUERY)
        def captures(node):
            got = query.captures(node)
            if isinstance(got, dict):                # 0.23 / 0.24
                return len(got.get("name", ()))
            return sum(1 for _, name in got if name == "name")   # <= 0.22
except Exception as exc:  # noqa: BLE001
    fail("query", exc)

root = Path(sysconfig.get_paths()["stdlib"])
files = sorted(p for p in root.rglob("*.py")
               if "site-packages" not in p.relative_to(root).parts
               and "__pycache__" not in p.relative_to(root).parts and p.is_file())
sources = [p.read_bytes() for p in files]
out["files"] = len(sources)
out["mb"] = sum(map(len, sources)) / 1e6

times, walls = [], []
for _ in range(3):
    t, w = time.process_time(), time.perf_counter()
    symbols = 0
    for src in sources:
        symbols += captures(parser.parse(src).root_node)
    times.append(time.process_time() - t)
    walls.append(time.perf_counter() - w)
out["parse_s"] = statistics.median(times)     # CPU seconds: robust to a busy machine
out["parse_runs"] = times
out["parse_wall_runs"] = walls
out["symbols"] = symbols
out["works"] = True
print(json.dumps(out))
'''


# --- helpers ----------------------------------------------------------------
def sh(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def offline_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
    for k in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY"):
        env[k] = OFFLINE_PROXY
    home.mkdir(parents=True, exist_ok=True)
    env["HOME"] = str(home)
    env["XDG_CACHE_HOME"] = str(home / ".cache")
    env.pop("PYTHONPATH", None)
    return env


def py(venv: Path) -> str:
    return str(venv / "bin" / "python")


def make_venv(venv: Path) -> None:
    if venv.exists():
        shutil.rmtree(venv)
    r = sh(["python3", "-m", "venv", str(venv)])
    if r.returncode:
        raise RuntimeError(f"venv {venv}: {r.stderr}")


def pip_install(venv: Path, specs: list[str], log: Path) -> tuple[bool, str]:
    r = sh([py(venv), "-m", "pip", "install", "--disable-pip-version-check", *specs])
    log.write_text(r.stdout + r.stderr)
    if r.returncode:
        return False, (r.stderr.strip().splitlines() or ["pip failed"])[-1]
    return True, ""


def measure(venv: Path, mode: str, scratch: Path) -> dict:
    script = venv / "_measure_grammars.py"
    script.write_text(MEASURE)
    loads = []
    for i in range(3):  # import+load in fresh interpreters, each with an empty cache/home
        r = sh([py(venv), str(script), mode, "load"], env=offline_env(scratch / f"load{i}"),
               timeout=300)
        res = _last_json(r)
        if not res.get("works"):
            return res
        loads.append((res["load_cpu_s"], res["load_s"]))
    r = sh([py(venv), str(script), mode, "full"], env=offline_env(scratch / "full"), timeout=1800)
    res = _last_json(r)
    res["load_cpu_s"] = statistics.median(c for c, _ in loads)
    res["load_s"] = statistics.median(w for _, w in loads)
    res["load_runs"] = loads
    return res


def _last_json(r: subprocess.CompletedProcess) -> dict:
    for line in reversed(r.stdout.strip().splitlines()):
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            continue
    tail = (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]
    return {"works": False, "error": f"no result ({tail})"}


def installed(venv: Path) -> dict[str, tuple[str, int]]:
    """{normalized dist name: (version, bytes of the files its RECORD lists)}"""
    code = (
        "import importlib.metadata as md, json, os\n"
        "out = {}\n"
        "for d in md.distributions():\n"
        "    n = d.metadata['Name'].lower().replace('_', '-')\n"
        "    size = 0\n"
        "    for f in d.files or ():\n"
        "        p = f.locate()\n"
        "        if os.path.isfile(p): size += os.path.getsize(p)\n"
        "    out[n] = (d.version, size)\n"
        "print(json.dumps(out))\n"
    )
    r = sh([py(venv), "-c", code])
    return {k: tuple(v) for k, v in json.loads(r.stdout).items()}


def grammar_dists(mode: str, dists: dict, venv: Path) -> list[str]:
    """The distributions that carry grammars for a variant (not the core)."""
    if mode == "pack":  # the pack plus the grammar wheels it depends on (0.x)
        return ["tree-sitter-language-pack"] + [d for d in pack_requires(venv)
                                              if d != "tree-sitter" and d in dists]
    if mode == "languages":
        return ["tree-sitter-languages"]
    return [d for d in LANG_WHEELS if d in dists]


def pack_requires(venv: Path) -> list[str]:
    r = sh([py(venv), "-c", "import importlib.metadata as md, json;"
            "print(json.dumps(md.requires('tree-sitter-language-pack') or []))"])
    try:
        return [re.split(r"[<>=!~ ;\[]", x, maxsplit=1)[0].lower() for x in json.loads(r.stdout)]
    except json.JSONDecodeError:
        return []


# --- release dates ----------------------------------------------------------
_INDEX_CACHE: dict[str, dict] = {}


def latest_version(name: str) -> str | None:
    r = sh([sys.executable, "-m", "pip", "index", "versions", name, "--disable-pip-version-check"])
    m = re.search(rf"^{re.escape(name)} \(([^)]+)\)", r.stdout, re.M | re.I)
    return m.group(1) if m else None


def release_date(name: str, version: str, dl: Path) -> str:
    """Upload date of the wheel pip picks for name==version (zip time as fallback)."""
    dest = dl / f"{name}-{version}"
    dest.mkdir(parents=True, exist_ok=True)
    r = sh([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--disable-pip-version-check", "-q", "-d", str(dest), f"{name}=={version}"])
    wheels = list(dest.glob("*.whl"))
    if r.returncode or not wheels:
        return "?"
    wheel = wheels[0]
    try:  # the index's JSON simple API (PEP 691/700): upload-time of that exact file
        from pip._vendor import requests
        if name not in _INDEX_CACHE:
            resp = requests.get(f"https://pypi.org/simple/{name}/", timeout=30,
                                headers={"Accept": "application/vnd.pypi.simple.v1+json"})
            resp.raise_for_status()
            _INDEX_CACHE[name] = {f["filename"]: f.get("upload-time") for f in resp.json()["files"]}
        up = _INDEX_CACHE[name].get(wheel.name)
        if up:
            return up[:10]
    except Exception:  # noqa: BLE001 - fall back to the wheel's own timestamps
        pass
    stamps = [i.date_time for i in zipfile.ZipFile(wheel).infolist() if i.date_time[0] > 1980]
    if stamps:
        y, m, d = max(stamps)[:3]
        return f"{y:04d}-{m:02d}-{d:02d}~"
    return "?"


# --- main ---------------------------------------------------------------------
def run(base: Path) -> list[dict]:
    base.mkdir(parents=True, exist_ok=True)
    logs = base / "logs"
    logs.mkdir(exist_ok=True)
    results: dict[str, dict] = {}
    for phase in PHASES:
        def setup(key: str) -> tuple[str, bool, str]:
            venv_name, _, specs, _ = VARIANTS[key]
            venv = base / venv_name
            if not venv.exists():
                make_venv(venv)
            ok, err = pip_install(venv, specs, logs / f"pip-{key.replace(chr(39), 'p')}.log")
            return key, ok, err

        with cf.ThreadPoolExecutor(len(phase)) as ex:
            installs = list(ex.map(setup, phase))
        for key, ok, err in installs:  # measure one at a time, for fair timings
            venv_name, label, specs, mode = VARIANTS[key]
            venv = base / venv_name
            print(f"[{key}] {label}: installed={ok}", file=sys.stderr, flush=True)
            if not ok:
                results[key] = {"key": key, "label": label, "works": False,
                                "error": f"pip install failed: {err}"}
                continue
            res = measure(venv, mode, base / "scratch" / key.replace("'", "p"))
            dists = installed(venv)
            gd = grammar_dists(mode, dists, venv)
            res.update(key=key, label=label, spec=" ".join(specs), mode=mode,
                       grammar_dists={d: dists[d][0] for d in gd if d in dists},
                       grammar_mb=sum(dists[d][1] for d in gd if d in dists) / 1e6,
                       core_version=dists.get("tree-sitter", ("-", 0))[0],
                       core_mb=dists.get("tree-sitter", ("-", 0))[1] / 1e6)
            cache = base / "scratch" / key.replace("'", "p")
            res["cache_files"] = sum(1 for p in cache.rglob("*") if p.is_file())
            print(f"[{key}] {json.dumps({k: res.get(k) for k in ('works', 'error', 'langs', 'parse_s', 'symbols')})}",
                  file=sys.stderr, flush=True)
            results[key] = res

    dl = base / "downloads"
    for res in results.values():
        main = next(iter(res.get("grammar_dists", {}).items()), None)
        if main:
            name, ver = main
            res["pkg"] = f"{name} {ver}"
            res["pkg_date"] = release_date(name, ver, dl)
            res["pkg_latest"] = latest_version(name)
        if res.get("core_version", "-") != "-":
            res["core_date"] = release_date("tree-sitter", res["core_version"], dl)
    return [results[k] for k in VARIANTS if k in results]


def table(rows: list[dict]) -> str:
    head = ["variant", "works", "langs", "grammar MB", "core MB", "import+load CPU ms",
            "parse+query CPU s", "symbols", "core", "grammar pkg released"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        err = r.get("error", "?")
        works = "yes" if r.get("works") else f"no: {err if len(err) <= 70 else err[:67] + '...'}"
        pkg = r.get("pkg", "-")
        date = r.get("pkg_date", "?")
        latest = r.get("pkg_latest")
        rel = f"{pkg}: {date}" + ("" if not latest else
                                  " (latest)" if pkg.endswith(" " + latest) else f" (latest {latest})")
        core = r.get("core_version", "-")
        if r.get("core_date"):
            core += f" ({r['core_date']})"
        cells = [f"{r['key']} {r['label']}", works,
                 str(r["langs"]) if r.get("langs") is not None else "-",
                 f"{r['grammar_mb']:.1f}" if "grammar_mb" in r else "-",
                 f"{r['core_mb']:.1f}" if "core_mb" in r else "-",
                 f"{r['load_cpu_s'] * 1000:.0f}" if r.get("works") and "load_cpu_s" in r else "-",
                 f"{r['parse_s']:.2f}" if "parse_s" in r else "-",
                 str(r.get("symbols", "-")), core, rel]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--venvs", type=Path, help="folder for the throwaway venvs (default: temp)")
    ap.add_argument("--keep", action="store_true", help="keep a temporary --venvs folder")
    ap.add_argument("--json", type=Path, help="also write the raw results here")
    args = ap.parse_args(argv)
    tmp = None
    base = args.venvs
    if base is None:
        tmp = Path(tempfile.mkdtemp(prefix="grammar-packages-"))
        base = tmp
    base = base.resolve()
    try:
        rows = run(base)
    finally:
        if tmp and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print(table(rows))
    print()
    for r in rows:
        note = r.get("langs_note")
        extra = []
        if note:
            extra.append(f"langs: {note}")
        if r.get("files"):
            extra.append(f"corpus {r['files']} files / {r['mb']:.1f} MB")
        if r.get("load_runs"):
            extra.append("import+load CPU/wall ms " + ", ".join(
                f"{c * 1000:.0f}/{w * 1000:.0f}" for c, w in r["load_runs"]))
        if r.get("parse_runs"):
            extra.append("parse+query CPU s " + ", ".join(f"{t:.2f}" for t in r["parse_runs"])
                         + " (wall " + ", ".join(f"{t:.2f}" for t in r.get("parse_wall_runs", ())) + ")")
        if r.get("grammar_dists"):
            extra.append("grammar dists " + ", ".join(f"{k} {v}" for k, v in r["grammar_dists"].items()))
        if not r.get("works"):
            extra.append(f"failed at {r.get('stage', 'install')} after "
                         f"{r.get('failed_after_s', 0):.2f} s: {r.get('error')}")
        if r.get("cache_dir"):
            extra.append(f"cache dir {r['cache_dir']}, {r.get('cache_files', 0)} files left in the empty HOME")
        print(f"- {r['key']}: " + "; ".join(extra))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
