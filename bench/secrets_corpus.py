"""Planted-secret corpus: recall per form and false positives of indexd's secret
masking against detect-secrets' default plugins, in the same run.

The corpus is made reproducibly (``--seed``) from real files nobody here wrote:
excerpts of the running Python's stdlib (.py, .txt/.rst, .json, .toml) and of
the installed packages' .yaml/.ini/.cfg files. Into each excerpt one secret is
planted in one of many realistic forms (FORMS below): token formats, AWS key
pairs under odd names, URL credentials, Authorization headers, high-entropy
values under names that say nothing, in code, config, env files, comments and
docstrings.

* indexd caught a planted secret when none of its bytes are left in the text
  the reader would store (the same gate → redact → re-check path as
  indexd/scan/reader.py; a file withheld whole also counts as caught).
* detect-secrets (default plugins and filters, ``scan_file`` on the written
  file) caught it by line when it reports a finding on a planted line, and by
  value when a reported value contains the planted secret (what masking the
  reported values would hide).

False positives are measured on unplanted files: a seeded sample of the stdlib
(both tools, ``--clean-mib``) and the whole stdlib (indexd only; detect-secrets
costs ~6 s CPU per MiB). ``*.pem`` files are left out: they hold real test keys
and indexd withholds them by name. ``--baseline REV`` also runs indexd's
secrets.py as of a git revision (before/after columns).

    .venv/bin/python bench/secrets_corpus.py [--seed 15] [--per-form 24]
        [--clean-mib 6] [--baseline a427b52] [--no-ds] [--json out.json]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import statistics
import string
import subprocess
import sys
import sysconfig
import tempfile
import time
import types
from collections import Counter, defaultdict
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from indexd.scan import secrets as current_secrets  # noqa: E402

STDLIB = Path(sysconfig.get_paths()["stdlib"])
PACKAGES = Path(sysconfig.get_paths()["purelib"])
SKIP_DIRS = {"site-packages", "__pycache__", "lib-dynload"}
EXCERPT_LINES = 60

# --- random values -------------------------------------------------------------

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
UPPER_NUM = string.ascii_uppercase + string.digits
PW_CHARS = ALNUM + "!#%^*_-.~"


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(rng: random.Random) -> str:
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps({"sub": str(rng.randrange(10**9)), "name": rand(rng, string.ascii_lowercase, 8),
                              "iat": 1700000000 + rng.randrange(10**7)}).encode())
    return f"{head}.{body}.{b64url(rng.randbytes(32))}"


def password(rng: random.Random) -> str:
    return rand(rng, PW_CHARS, rng.randint(12, 20))


def key_body(rng: random.Random) -> list[str]:
    raw = base64.b64encode(rng.randbytes(48 * rng.randint(6, 12))).decode()
    return [raw[i:i + 64] for i in range(0, len(raw), 64)]


# --- how a host file spells an assignment, a comment ------------------------------

def assign(kind: str, name: str, value: str, rng: random.Random) -> str:
    """``name`` = ``value`` as a file of ``kind`` writes it."""
    if kind == "py":
        return f'{name} = "{value}"' if rng.random() < 0.8 else f"{name} = '{value}'"
    if kind == "json":
        return f'"{name}": "{value}",'
    if kind == "yaml":
        return f"{name}: {value}" if rng.random() < 0.5 else f'{name}: "{value}"'
    if kind == "toml":
        return f'{name} = "{value}"'
    if kind == "env":
        return f"{name.upper()}={value}" if rng.random() < 0.7 else f"export {name.upper()}={value}"
    return f"    {name}={value}"            # text: a shell line in a README


def comment(kind: str, text: str) -> str:
    return {"py": "# ", "yaml": "# ", "toml": "# ", "env": "# ", "json": "",
            "text": ""}[kind] + text


# --- the forms --------------------------------------------------------------------
# Each form: (host kinds, make(kind, rng) -> (lines to insert, values that must vanish)).

def _aws_sak(kind, rng):
    v = rand(rng, B64, 40)
    name = rng.choice(["AWS_SAK", "aws_sak", "AWS_SK", "awsSak", "AWS_S_A_K", "aws_2"])
    return [assign(kind, name, v, rng)], [v]


def _aws_named(kind, rng):
    v = rand(rng, B64, 40)
    name = rng.choice(["aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "awsSecretKey"])
    return [assign(kind, name, v, rng)], [v]


def _aws_pair(kind, rng):
    kid, sak = "AKIA" + rand(rng, UPPER_NUM, 16), rand(rng, B64, 40)
    lines = rng.choice([
        [f"{kid},{sak}"],                                   # the console's credentials CSV
        [f"Access key ID: {kid}", f"Secret access key: {sak}"],
        [f"aws configure set aws_access_key_id {kid}", f"aws configure set aws_secret_access_key {sak}"],
        [assign(kind, "AWS_KEY_ID", kid, rng), assign(kind, "AWS_SAK", sak, rng)],
    ])
    if kind != "json" and rng.random() < 0.5:
        lines = [comment(kind, ln) for ln in lines]
    return lines, [kid, sak]


def _aws_id(kind, rng):
    kid = rng.choice(["AKIA", "ASIA"]) + rand(rng, UPPER_NUM, 16)
    return [assign(kind, rng.choice(["aws_access_key_id", "AWS_KEY", "aws_id"]), kid, rng)], [kid]


def _token_form(make, names):
    def form(kind, rng):
        v = make(rng)
        return [assign(kind, rng.choice(names), v, rng)], [v]
    return form


def _comment_token(kind, rng):
    v = "ghp_" + rand(rng, ALNUM, 36) if rng.random() < 0.5 else "glpat-" + rand(rng, URLSAFE, 20)
    kind = "py" if kind == "json" else kind
    return [comment(kind, f"TODO remove: deploy with {v} until the bot account exists")], [v]


def _key_block(kind, rng):
    label = rng.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"])
    body = key_body(rng)
    block = [f"-----BEGIN {label}-----", *body, f"-----END {label}-----"]
    if kind == "py":
        return ['DEPLOY_KEY = """' + block[0], *block[1:-1], block[-1] + '"""'], body
    if kind == "json":
        return ['"private_key": "' + "\\n".join(block) + '\\n",'], body
    if kind == "yaml":
        return ["tls_key: |", *("  " + ln for ln in block)], body
    return block, body


def _url_creds(kind, rng):
    pw = password(rng)
    user = rng.choice(["app", "admin", "deploy", "svc_api", "postgres"])
    scheme, port = rng.choice([("postgres", 5432), ("postgresql", 5432), ("mysql", 3306),
                               ("mongodb+srv", None), ("amqp", 5672), ("redis", 6379), ("https", None)])
    host = rng.choice(["db.internal", "10.0.3.7", "prod-db.example.net", "cache.local"])
    pw = quote(pw, safe="!*_-.~")   # as a working URL spells it: a raw "#" would end it
    url = f"{scheme}://{user}:{pw}@{host}" + (f":{port}" if port else "") + "/main"
    name = rng.choice(["DATABASE_URL", "dsn", "BROKER", "upstream", "conn"])
    line = assign(kind, name, url, rng) if rng.random() < 0.7 else comment(kind if kind != "json" else "py",
                                                                          f"connect with {url}")
    return [line], [pw]


def _bearer(kind, rng):
    tok = rand(rng, URLSAFE, rng.randint(32, 48))
    line = rng.choice([
        f'curl -H "Authorization: Bearer {tok}" https://api.internal/v1/jobs',
        f"Authorization: Bearer {tok}",
        f'headers = {{"Authorization": "Bearer {tok}"}}',
        f'req.add_header("Authorization", "Bearer {tok}")',
    ])
    if kind in ("yaml", "toml", "env") and not line.startswith("curl"):
        line = comment(kind, line)
    if kind == "json":
        line = f'"Authorization": "Bearer {tok}",'
    return [line], [tok]


def _basic_auth(kind, rng):
    cred = base64.b64encode(f"{rng.choice(['admin', 'ci', 'deploy'])}:{password(rng)}".encode()).decode()
    line = (f'"Authorization": "Basic {cred}",' if kind == "json"
            else comment(kind if kind != "text" else "text", f"Authorization: Basic {cred}"))
    return [line], [cred]


def _entropy_name(alphabet, lengths):
    names = ["DEPLOY_SIG", "webhook_hmac", "SIGNING", "auth", "cred", "pepper", "session_seed",
             "MAILGUN", "upstream_auth", "x_api"]

    def form(kind, rng):
        v = rand(rng, alphabet, rng.choice(lengths))
        return [assign(kind, rng.choice(names), v, rng)], [v]
    return form


def _sensitive_name(kind, rng):
    v = password(rng)
    name = rng.choice(["password", "db_password", "client_secret", "api_token", "SECRET", "apiKey"])
    return [assign(kind, name, v, rng)], [v]


def _docstring(kind, rng):
    v = rng.choice([lambda: "sk_live_" + rand(rng, ALNUM, 24), lambda: rand(rng, B64, 40),
                    lambda: password(rng)])()
    call = rng.choice([f'Client(api_key="{v}")', f'connect(password="{v}")',
                       f'Session(aws_sak="{v}")'])
    return ['    """Open a session.', "", "    Example::", "", f"        >>> {call}", '    """'], [v]


def _openai(rng):
    return "sk-" + rand(rng, ALNUM, 20) + "T3BlbkFJ" + rand(rng, ALNUM, 20)


ALL = ("py", "json", "yaml", "toml", "env", "text")
CONFIG = ("json", "yaml", "toml", "env")
FORMS = {
    "AWS key id (AKIA…) assigned": (ALL, _aws_id),
    "AWS secret key, odd name (AWS_SAK…)": (ALL, _aws_sak),
    "AWS secret key, aws_secret_access_key": (ALL, _aws_named),
    "AWS key pair: CSV / prose / CLI": (("py", "text", "env", "yaml"), _aws_pair),
    "GitHub token ghp_": (ALL, _token_form(lambda r: "ghp_" + rand(r, ALNUM, 36), ["GH", "bot", "ci_auth"])),
    "GitHub fine-grained github_pat_": (ALL, _token_form(
        lambda r: "github_pat_" + rand(r, ALNUM, 22) + "_" + rand(r, ALNUM, 59), ["GH", "bot"])),
    "GitLab token glpat-": (ALL, _token_form(lambda r: "glpat-" + rand(r, URLSAFE, 20), ["GL", "ci"])),
    "Slack bot token xoxb-": (ALL, _token_form(
        lambda r: f"xoxb-{rand(r, string.digits, 12)}-{rand(r, string.digits, 13)}-{rand(r, ALNUM, 24)}",
        ["slack", "SLACK_BOT"])),
    "Slack webhook URL": (ALL, _token_form(
        lambda r: f"https://hooks.slack.com/services/T{rand(r, UPPER_NUM, 8)}/B{rand(r, UPPER_NUM, 10)}/"
                  f"{rand(r, ALNUM, 24)}", ["hook", "ALERTS"])),
    "Stripe sk_live_ / rk_live_": (ALL, _token_form(
        lambda r: r.choice(["sk", "rk"]) + "_live_" + rand(r, ALNUM, 24), ["stripe", "STRIPE"])),
    "OpenAI-style sk-…T3BlbkFJ…": (ALL, _token_form(_openai, ["openai", "LLM"])),
    "Twilio SK/AC + 32 hex": (ALL, _token_form(lambda r: r.choice(["SK", "AC"]) + rand(r, HEX, 32),
                                                 ["twilio", "sms"])),
    "SendGrid SG.": (ALL, _token_form(lambda r: f"SG.{rand(r, URLSAFE, 22)}.{rand(r, URLSAFE, 43)}",
                                      ["mail", "SENDGRID"])),
    "JWT": (ALL, _token_form(jwt, ["session", "id_jwt", "bearer"])),
    "private key block": (("py", "json", "yaml", "text"), _key_block),
    "password in a URL (scheme://u:p@h)": (ALL, _url_creds),
    "Authorization: Bearer <opaque>": (ALL, _bearer),
    "Authorization: Basic <b64>": (("py", "json", "text", "yaml"), _basic_auth),
    "base64 32-64, non-obvious name": (ALL, _entropy_name(B64, (32, 40, 44, 64))),
    "hex 40/64, non-obvious name": (ALL, _entropy_name(HEX, (40, 64))),
    "password/secret/token name, random value": (CONFIG + ("py",), _sensitive_name),
    "token in a comment": (("py", "yaml", "toml", "env", "text"), _comment_token),
    "in a docstring example": (("py",), _docstring),
}


# --- host files --------------------------------------------------------------------

def _walk(root: Path, exts: tuple[str, ...], skip=SKIP_DIRS):
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip and not d.startswith("config-"))
        for f in sorted(files):
            if f.endswith(exts) and not f.endswith(".pem"):
                yield Path(dirpath) / f


def _text(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192] or len(data) > 1 << 20:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def host_pools() -> dict[str, list[Path]]:
    pools = {
        "py": list(_walk(STDLIB, (".py",))),
        "text": list(_walk(STDLIB, (".txt", ".rst"))),
        "json": list(_walk(STDLIB, (".json",))) + list(_walk(PACKAGES, (".json",), {"__pycache__"})),
        "toml": list(_walk(STDLIB, (".toml",))),
        "yaml": list(_walk(PACKAGES, (".yaml", ".yml"), {"__pycache__"})),
        "env": list(_walk(PACKAGES, (".ini", ".cfg"), {"__pycache__"})) + list(_walk(STDLIB, (".cfg", ".ini"))),
    }
    return {k: [p for p in v if (_text(p) or "").strip()] for k, v in pools.items()}


SUFFIX = {"py": ".py", "text": ".txt", "json": ".json", "toml": ".toml", "yaml": ".yaml", "env": ".env"}


def plant(pools, rng, per_form: int):
    """[(form, kind, relpath, text, planted line numbers, values)], reproducible from rng."""
    out = []
    for form, (kinds, make) in FORMS.items():
        for i in range(per_form):
            kind = kinds[i % len(kinds)]
            host = rng.choice(pools[kind])
            lines = _text(host).splitlines()
            start = rng.randrange(max(1, len(lines) - EXCERPT_LINES))
            window = lines[start:start + EXCERPT_LINES]
            at = rng.randrange(len(window) + 1)
            new, values = make(kind, rng)
            indent = _indent(window[at] if at < len(window) else "") if kind in ("py", "yaml") else ""
            if form == "in a docstring example":
                indent = ""
            new = [indent + ln if ln else ln for ln in new]
            text = "\n".join(window[:at] + new + window[at:]) + "\n"
            planted = tuple(range(at + 1, at + 1 + len(new)))
            name = f"{len(out):04d}_{host.stem[:30]}" + ("-app" if kind == "env" else "") + SUFFIX[kind]
            out.append((form, kind, name, text, planted, values))
    return out


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" "))]


def clean_sample(rng, mib: float) -> list[Path]:
    """A seeded sample of whole stdlib text files, about ``mib`` MiB, plus every json/toml."""
    files = [p for p in _walk(STDLIB, (".py", ".txt", ".rst", ".json", ".toml", ".cfg"))]
    rng.shuffle(files)
    picked, size = [], 0
    for p in files:
        if p.suffix in (".json", ".toml"):
            picked.append(p)
        elif size < mib * 2**20:
            picked.append(p)
            size += p.stat().st_size
    return sorted(picked)


# --- indexd ---------------------------------------------------------------------

def load_baseline(rev: str) -> types.ModuleType:
    src = subprocess.run(["git", "show", f"{rev}:indexd/scan/secrets.py"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    mod = types.ModuleType(f"secrets_{rev}")
    sys.modules[mod.__name__] = mod   # its dataclasses look their module up
    exec(compile(src, f"secrets@{rev}", "exec"), mod.__dict__)
    return mod


def indexd_store_text(mod, relpath: str, text: str) -> str | None:
    """What indexd's reader would store for this text (None: withheld whole)."""
    if mod.secret_name_reason(relpath):
        return None
    if mod.secret_content_reason(text) is None:
        return text
    red = mod.redact_secrets(text)
    if red is None or mod.secret_content_reason(red.text) is not None:
        return None   # the reader fails closed: the file is withheld
    return red.text


def masked_lines(original: str, stored: str | None) -> int:
    if stored is None:
        return original.count("\n") + 1
    return sum(a != b for a, b in zip(original.splitlines(), stored.splitlines()))


def gate_ms_per_mib(mod, texts: list[str], runs: int = 5) -> tuple[float, float]:
    """Median ms/MiB of the fast check alone, and of the whole store path."""
    mib = sum(len(t.encode()) for t in texts) / 2**20
    gate, full = [], []
    for _ in range(runs):
        t = time.process_time()
        for s in texts:
            mod.secret_content_reason(s)
        gate.append((time.process_time() - t) * 1000 / mib)
        t = time.process_time()
        for s in texts:
            indexd_store_text(mod, "x.py", s)
        full.append((time.process_time() - t) * 1000 / mib)
    return statistics.median(gate), statistics.median(full)


# --- detect-secrets ---------------------------------------------------------------

def ds_scan(paths: list[Path]) -> tuple[dict[Path, list], float]:
    """{path: [(line, type, value)]} from detect-secrets' defaults, and the CPU seconds."""
    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings

    found: dict[Path, list] = {}
    with default_settings():
        started = time.process_time()
        for p in paths:
            found[p] = [(s.line_number, s.type, s.secret_value) for s in scan_file(str(p))]
        return found, time.process_time() - started


# --- the run ----------------------------------------------------------------------

def run(args) -> dict:
    rng = random.Random(args.seed)
    pools = host_pools()
    cases = plant(pools, rng, args.per_form)
    clean = clean_sample(random.Random(args.seed + 1), args.clean_mib)
    mods = {"after": current_secrets}
    if args.baseline:
        mods = {"before": load_baseline(args.baseline), **mods}
    result = {"seed": args.seed, "per_form": args.per_form, "forms": {}, "fp": {}, "cost": {},
              "pools": {k: len(v) for k, v in pools.items()}, "load": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="secrets-corpus-") as tmp:
        paths = []
        for form, kind, name, text, planted, values in cases:
            p = Path(tmp) / name
            p.write_text(text)
            paths.append(p)
        ds, ds_cpu = ds_scan(paths) if args.ds else ({}, 0.0)
        planted_mib = sum(p.stat().st_size for p in paths) / 2**20
        rows = defaultdict(Counter)
        for (form, kind, name, text, planted, values), p in zip(cases, paths):
            row = rows[form]
            row["n"] += 1
            for label, mod in mods.items():
                stored = indexd_store_text(mod, name, text)
                row[label] += stored is None or not any(v in stored for v in values)
            hits = ds.get(p, [])
            row["ds_line"] += any(line in planted for line, _t, _v in hits)
            row["ds_value"] += all(any(v in (hv or "") for _l, _t, hv in hits) for v in values)
        result["forms"] = {f: dict(c) for f, c in rows.items()}
        result["cost"]["ds_s_per_mib_planted"] = ds_cpu / planted_mib if args.ds else None
    clean_texts = {p: _text(p) for p in clean}
    clean_texts = {p: t for p, t in clean_texts.items() if t is not None}
    result["fp"]["sample"] = _fp(clean_texts, mods, args.ds)
    result["cost"]["sample_mib"] = sum(len(t.encode()) for t in clean_texts.values()) / 2**20
    for label, mod in mods.items():
        g, f = gate_ms_per_mib(mod, list(clean_texts.values()))
        result["cost"][f"{label}_gate_ms_per_mib"] = g
        result["cost"][f"{label}_full_ms_per_mib"] = f
    if args.ds:
        result["cost"]["ds_s_per_mib_clean"] = result["fp"]["sample"].pop("ds_cpu") / result["cost"]["sample_mib"]
    every = {p: t for p in _walk(STDLIB, (".py", ".txt", ".rst", ".json", ".toml", ".cfg", ".xml", ".html"))
             if (t := _text(p)) is not None}
    result["fp"]["stdlib"] = _fp(every, mods, False)
    result["fp"]["stdlib"]["mib"] = sum(len(t.encode()) for t in every.values()) / 2**20
    packages = packages_sample(random.Random(args.seed + 2), args.packages_mib)
    result["fp"]["packages"] = _fp(packages, mods, False)
    result["fp"]["packages"]["mib"] = sum(len(t.encode()) for t in packages.values()) / 2**20
    return result


def packages_sample(rng, mib: float) -> dict[Path, str]:
    """A seeded sample of the installed packages' text (JS bundles, JSON, model configs...)."""
    exts = (".py", ".js", ".json", ".yaml", ".yml", ".toml", ".cfg", ".txt", ".md", ".html", ".ts")
    files = list(_walk(PACKAGES, exts, {"__pycache__"}))
    rng.shuffle(files)
    out, size = {}, 0
    for p in files:
        if size >= mib * 2**20:
            break
        if (t := _text(p)) is not None:
            out[p] = t
            size += len(t.encode())
    return out


def _fp(texts: dict[Path, str], mods, with_ds: bool) -> dict:
    out = {"files": len(texts)}
    for label, mod in mods.items():
        flagged = {}
        for p, t in texts.items():
            n = masked_lines(t, indexd_store_text(mod, p.name, t))
            if n:
                base = STDLIB if p.is_relative_to(STDLIB) else PACKAGES
                flagged[str(p.relative_to(base))] = n
        out[label] = {"files": len(flagged), "lines": sum(flagged.values()), "which": flagged}
    if with_ds:
        found, cpu = ds_scan(list(texts))
        by_type = Counter(t for hits in found.values() for _l, t, _v in hits)
        lines = sum(len({ln for ln, _t, _v in hits}) for hits in found.values())
        out["ds"] = {"files": sum(1 for h in found.values() if h), "lines": lines, "by_type": dict(by_type)}
        out["ds_cpu"] = cpu
    return out


def print_table(r: dict) -> None:
    labels = [k for k in ("before", "after") if k in next(iter(r["forms"].values()))]
    head = ["form", "n"] + [f"indexd {k}" for k in labels] + ["d-s by line", "d-s by value"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    total = Counter()
    for form, c in r["forms"].items():
        total.update(c)
        print(f"| {form} | {c['n']} | " + " | ".join(str(c[k]) for k in labels)
              + f" | {c['ds_line']} | {c['ds_value']} |")
    print(f"| **all** | {total['n']} | " + " | ".join(f"**{total[k]}** ({100 * total[k] / total['n']:.0f} %)"
                                                     for k in labels)
          + f" | {total['ds_line']} ({100 * total['ds_line'] / total['n']:.0f} %)"
          + f" | {total['ds_value']} ({100 * total['ds_value'] / total['n']:.0f} %) |")
    print()
    for where in ("sample", "stdlib", "packages"):
        fp = r["fp"][where]
        parts = [f"{k}: {fp[k]['files']} files / {fp[k]['lines']} lines" for k in labels]
        if "ds" in fp:
            parts.append(f"detect-secrets: {fp['ds']['files']} files / {fp['ds']['lines']} lines")
        mib = fp.get("mib", r["cost"]["sample_mib"] if where == "sample" else 0.0)
        print(f"false positives, {where} ({fp['files']} files, {mib:.1f} MiB): " + "; ".join(parts))
        for k in labels:
            for path, n in sorted(fp[k]["which"].items()):
                print(f"    {k}: {path} ({n} lines)")
        if "ds" in fp:
            print("    detect-secrets by plugin:", fp["ds"]["by_type"])
    print()
    print("cost:", {k: (round(v, 3) if isinstance(v, float) else v) for k, v in r["cost"].items()},
          "load", tuple(round(x, 2) for x in r["load"]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--per-form", type=int, default=24)
    ap.add_argument("--clean-mib", type=float, default=6.0)
    ap.add_argument("--packages-mib", type=float, default=40.0,
                    help="size of the installed-packages sample (indexd false positives only)")
    ap.add_argument("--baseline", help="git revision whose indexd/scan/secrets.py is the 'before' column")
    ap.add_argument("--no-ds", dest="ds", action="store_false", help="skip detect-secrets")
    ap.add_argument("--json", help="write the full result here")
    args = ap.parse_args(argv)
    r = run(args)
    print_table(r)
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
