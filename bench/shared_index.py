"""A team's shared index on moto's S3 server: publish cost, and a teammate's cold start with and without it.

    .venv/bin/python bench/shared_index.py --from-home HOME --realm std [--no-local]
        [--queries 30] [--work DIR] [--no-doc]
    .venv/bin/python bench/shared_index.py --sdists bench/data/sdists.txt --smallest 200
        [--model hash]          # the scale corpus: >= 200 repos, >= 2M lines
    ... --to s3://your-bucket/prefix   # real S3 (the AWS environment's credentials), not moto

``--from-home``: an INDEXD_HOME whose realm ``--realm`` is indexed and embedded
with the default model (e.g. the home ``bench/search_quality.py --keep``
leaves); it plays the CI job that published. Its store is copied, never
changed. Steps, in one run, against moto's S3 server on loopback (in this
process; requests counted from its request log):

1. **publish**: ``indexd publish --realm R --to s3://bench/index`` from a copy
   of the home: seconds, requests, objects and bytes in the bucket.
2. **teammate, shared**: a fresh home with the same corpus and
   ``shared = "s3://bench/index"``: ``indexd index`` with the real model,
   seconds until every entry has its vector (time to the first semantic
   query), vectors reused vs computed, requests.
3. **teammate, alone** (unless ``--no-local``): the same without ``shared``:
   the model embeds everything.
4. **queries**: a daemon on the shared home answers ``--queries`` hybrid
   searches and as many ``impact`` calls over its socket: p50/p95 ms, the
   daemon's RSS, and the object-store requests made while answering (queries
   never read the shared index: it only fills the vector cache).

Prints a table and, unless ``--no-doc``, writes it between
``<!-- shared_index:start -->`` and ``<!-- shared_index:end -->`` of
docs/benchmarks.md. The issue's scale corpus (>= 200 repos, >= 2M lines) is
built with ``--sdists bench/data/sdists.txt --smallest 200``: the CI job's
cold index of it is also the "teammate, alone" figure (the same work).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BIN = ROOT / ".venv" / "bin"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

QUERIES = ["parse a date string", "retry a failed connection", "read a config file",
           "escape html entities", "compress data with gzip", "walk a directory tree",
           "format a traceback", "thread safe queue", "temporary directory cleanup",
           "split a shell command line"]


class RequestCounter(logging.Handler):
    """Counts the moto server's requests (werkzeug logs one line per request)."""

    def __init__(self):
        super().__init__()
        self.count = 0
        self._lock = threading.Lock()

    def emit(self, record):
        if "HTTP/1.1" in record.getMessage():
            with self._lock:
                self.count += 1


def start_s3():
    import boto3
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {"AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_ACCESS_KEY_ID": "bench",
           "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}
    client = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name="us-east-1",
                          aws_access_key_id="bench", aws_secret_access_key="bench")
    client.create_bucket(Bucket="bench")
    counter = RequestCounter()
    log = logging.getLogger("werkzeug")
    log.setLevel(logging.INFO)
    for handler in list(log.handlers):   # its own stream handler: one line per request
        log.removeHandler(handler)
    log.addHandler(counter)
    log.propagate = False
    return server, env, client, counter


class _Uncounted:
    """A real object store's requests cannot be seen from here."""
    count = 0


UNCOUNTED = _Uncounted()


def bucket_size(client) -> tuple[int, int]:
    objects, size, token = 0, 0, None
    while True:
        page = client.list_objects_v2(Bucket="bench", **({"ContinuationToken": token} if token else {}))
        for obj in page.get("Contents", []):
            objects, size = objects + 1, size + obj["Size"]
        token = page.get("NextContinuationToken")
        if not token:
            return objects, size


PEAK_MB: dict[str, float] = {}   # what -> the largest RSS of its process tree (sampled)


def _tree_rss_mb(pid: int) -> float:
    """RSS of ``pid`` and its descendants (the parse workers), from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(d.name))
            rss[int(d.name)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo += children.get(p, [])
    return total / 1e6


def run(args, env, what: str) -> tuple[float, list[dict]]:
    started = time.perf_counter()
    proc = subprocess.Popen([str(BIN / "indexd"), *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    peak, done = [0.0], threading.Event()

    def sample():
        while not done.wait(1.0):
            peak[0] = max(peak[0], _tree_rss_mb(proc.pid))
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    done.set()
    sampler.join()
    seconds = time.perf_counter() - started
    PEAK_MB[what] = peak[0]
    if proc.returncode != 0:
        raise SystemExit(f"{what} failed rc={proc.returncode}\n{out[-2000:]}\n{err[-2000:]}")
    return seconds, [json.loads(x) for x in out.splitlines() if x.startswith("{")]


def home(work: Path, name: str, realm: str, corpus: list[str], shared: str | None) -> Path:
    path = work / name
    (path / "config").mkdir(parents=True)
    path.chmod(0o700)
    lines = [f"[realms.{realm}]", f"repos = {json.dumps(corpus)}"]
    if shared:
        lines.append(f"shared = {json.dumps(shared)}")
    (path / "config" / "config.toml").write_text("\n".join(lines) + "\n")
    return path


def teammate(work, name, realm, corpus, shared, base_env, counter) -> dict:
    h = home(work, name, realm, corpus, shared)
    env = base_env | {"INDEXD_HOME": str(h)}
    before = counter.count if counter else 0
    seconds, events = run(["index", "--realm", realm, "--json"], env, name)
    done = next(e for e in events if e.get("event") == "done")
    embed = done.get("embed") or {}
    return {"home": h, "env": env, "seconds": seconds,
            "requests": counter.count - before if counter else 0,
            "index_s": done.get("seconds", 0.0), "entries": done.get("entries", 0),
            "parsed": done.get("parsed", 0), "copied": done.get("shared", 0),
            "peak_rss_mb": PEAK_MB.get(name, 0.0),
            "total": embed.get("total", 0), "reused": embed.get("reused", 0),
            "embedded": embed.get("embedded", 0), "embed_s": embed.get("seconds", 0.0),
            "shared": embed.get("shared")}


def query_figures(env, counter, n: int, realm: str, corpus: list[str]) -> dict:
    from indexd.client import Client

    sock = Path(env["INDEXD_HOME"]) / "indexd.sock"
    out = open(Path(env["INDEXD_HOME"]) / "daemon.out", "ab")
    proc = subprocess.Popen([str(BIN / "indexd"), "run"], env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 1800
        while True:
            try:
                with Client(sock, timeout=120) as c:
                    st = c.call("status", sync=True)
                if st["embedding"]["ready"] and st["queues"]["embed"] == 0:
                    break
            except Exception:  # noqa: BLE001 - not up yet
                pass
            if time.monotonic() > deadline:
                raise SystemExit("daemon did not settle in 1800 s")
            time.sleep(0.5)
        every = sorted(p for repo in corpus for p in Path(repo).rglob("*.py") if ".git" not in p.parts)
        files = every[:: max(1, len(every) // n)][:n]   # evenly spaced over the realm
        before = counter.count
        search_ms, impact_ms, hits, shared_hits = [], [], 0, 0
        with Client(sock, timeout=120) as c:
            for i in range(n):
                t = time.perf_counter()
                found = c.call("search", query=QUERIES[i % len(QUERIES)]
                               + ("" if i < len(QUERIES) else f" {i}"), realm=realm, limit=10)
                search_ms.append((time.perf_counter() - t) * 1000)
                hits += len(found["results"])
                shared_hits += sum(1 for h in found["results"] if h.get("shared"))
            for f in files:
                t = time.perf_counter()
                c.call("impact", target=str(f), depth=3)
                impact_ms.append((time.perf_counter() - t) * 1000)
            rss = c.call("status")["daemon"]["rss_mb"]
            c.call("shutdown")
        proc.wait(timeout=60)
        return {"requests": counter.count - before, "queries": len(search_ms) + len(impact_ms),
                "search_p50": statistics.median(search_ms),
                "search_p95": statistics.quantiles(search_ms, n=20)[-1],
                "impact_p50": statistics.median(impact_ms),
                "impact_p95": statistics.quantiles(impact_ms, n=20)[-1], "rss_mb": rss,
                "hits": hits, "shared_hits": shared_hits}
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        out.close()


def _fetch_sdist(name: str, cache: Path) -> Path | None:
    """The latest release's sdist of ``name`` from PyPI's JSON API, once."""
    import urllib.request

    if any(_is_of(p, name) for p in cache.iterdir()):
        return None
    try:
        from urllib.parse import urljoin

        api = f"https://pypi.org/pypi/{name}/json"
        with urllib.request.urlopen(api, timeout=60) as r:
            meta = json.load(r)
        url = next(u for u in meta["urls"] if u["packagetype"] == "sdist")
        target = cache / url["filename"]
        with urllib.request.urlopen(urljoin(api, url["url"]), timeout=300) as r:   # mirrors: relative
            target.with_suffix(".part").write_bytes(r.read())
        target.with_suffix(".part").rename(target)
        return target
    except Exception as exc:  # noqa: BLE001 - a project without an sdist is skipped, counted
        print(f"  {name}: no sdist ({type(exc).__name__}: {exc})", flush=True)
        return None


def _is_of(path: Path, name: str) -> bool:
    import re

    stem = path.name.lower().replace("_", "-").replace(".", "-")
    want = re.escape(name.lower().replace("_", "-").replace(".", "-"))
    return re.match(rf"{want}-\d", stem) is not None and not path.name.endswith(".part")


def build_sdist_corpus(names_file: Path, root: Path, cache: Path,
                       smallest: int | None = None) -> tuple[list[str], int, int]:
    """Each listed project's sdist (PyPI's JSON API, cached), unpacked as a git repo
    with its PyPI page as origin: (repo paths, lines of text, projects skipped)."""
    import tarfile
    import zipfile

    import pygit2

    names = [n.strip() for n in names_file.read_text().splitlines()
             if n.strip() and not n.startswith("#")]
    cache.mkdir(parents=True, exist_ok=True)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as pool:   # network-bound: PyPI's JSON API, no builds
        list(pool.map(lambda n: _fetch_sdist(n, cache), dict.fromkeys(names)))
    root.mkdir(parents=True, exist_ok=True)
    repos, skipped = [], 0
    sig = pygit2.Signature("bench", "bench@example.invalid")
    for name in dict.fromkeys(names):
        archive = next((p for p in sorted(cache.iterdir()) if _is_of(p, name)), None)
        if archive is None:
            skipped += 1
            continue
        dest = root / name
        if not dest.exists():
            tmp = root / f".{name}.unpack"
            shutil.rmtree(tmp, ignore_errors=True)
            if archive.suffix == ".zip":
                zipfile.ZipFile(archive).extractall(tmp)
            else:
                with tarfile.open(archive) as tar:
                    tar.extractall(tmp, filter="data")
            inner = next(tmp.iterdir())
            inner.rename(dest)
            shutil.rmtree(tmp)
            try:
                git = pygit2.init_repository(str(dest))
                git.index.add_all()
                git.index.write()
                git.create_commit("HEAD", sig, sig, "sdist", git.index.write_tree(), [])
                git.remotes.create("origin", f"https://pypi.org/project/{name}")
            except pygit2.GitError as exc:   # e.g. a nested repository in the sdist
                print(f"  {name}: not made a repo ({exc})", flush=True)
                shutil.rmtree(dest)
                skipped += 1
                continue
        repos.append((repo_lines(dest), str(dest)))
    if smallest:   # the N repos with the fewest lines: >= 200 repos for the least work
        repos = sorted(repos)[:smallest]
    return [r for _, r in repos], sum(n for n, _ in repos), skipped


def repo_lines(dest: Path) -> int:
    lines = 0
    for f in dest.rglob("*"):
        if f.is_file() and ".git" not in f.parts and f.suffix in (".py", ".md", ".rst", ".txt",
                                                                  ".c", ".h", ".pyx", ".toml", ".cfg"):
            try:
                if f.stat().st_size <= 1 << 20:   # max_file_size: bigger ones are not indexed
                    lines += f.read_bytes().count(b"\n")
            except OSError:
                pass
    return lines


def table(pub: dict, mine: dict, alone: dict | None, q: dict | None, alone_is_ci: bool = False) -> str:
    """Markdown: the steps, then the settled daemon's answers. ``seconds``: the whole
    ``indexd index`` (every entry has its vector: the first semantic query);
    ``index s``: its structural part (the first keyword query)."""
    rows = ["| step | seconds (semantic search ready) | index s (keyword ready) | files parsed / "
            "copied | entries | vectors reused | vectors computed | S3 requests | peak RSS MB | note |",
            "|---|---|---|---|---|---|---|---|---|---|",
            f"| publish (CI) | {pub['seconds']:.1f} | | | {pub['entries']:,} | | | {pub['requests']:,} | "
            f"{PEAK_MB.get('publish', 0):.0f} | {pub['objects']} objects, {pub['bytes'] / 1e6:.1f} MB |",
            f"| teammate, shared | {mine['seconds']:.1f} | {mine['index_s']:.1f} | "
            f"{mine['parsed']:,} / {mine['copied']:,} | {mine['total']:,} | "
            f"{mine['reused']:,} | {mine['embedded']:,} | {mine['requests']:,} | "
            f"{mine['peak_rss_mb']:.0f} | embed stage {mine['embed_s']:.1f} s |"]
    if alone:
        ratio = alone["seconds"] / mine["seconds"] if mine["seconds"] else 0
        label = "teammate, alone (the CI job's cold index)" if alone_is_ci else "teammate, alone"
        rows.append(f"| {label} | {alone['seconds']:.1f} | {alone['index_s']:.1f} | "
                    f"{alone['parsed']:,} / {alone['copied']:,} | {alone['total']:,} | "
                    f"{alone['reused']:,} | {alone['embedded']:,} | 0 | {alone['peak_rss_mb']:.0f} | "
                    f"embed stage {alone['embed_s']:.1f} s; shared is **{ratio:.1f}x** sooner |")
    text = "\n".join(rows)
    if q:
        per_query = q["requests"] / q["queries"] if q["queries"] else 0
        text += (f"\n\nWith the shared home's daemon settled: {q['queries']} queries over the socket "
                 f"(hybrid search p50 {q['search_p50']:.1f} / p95 {q['search_p95']:.1f} ms; "
                 f"impact depth 3 p50 {q['impact_p50']:.1f} / p95 {q['impact_p95']:.1f} ms), "
                 f"**{q['requests']} object-store requests** while answering them "
                 f"({per_query:.2f} per query), daemon RSS {q['rss_mb']:.0f} MB; "
                 f"{q.get('shared_hits', 0)} of {q.get('hits', 0)} search results said they came "
                 f"from the shared index.")
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--from-home", type=Path, help="an embedded home to publish from")
    ap.add_argument("--sdists", type=Path, help="instead: a list of PyPI projects (bench/data/sdists.txt), "
                    "each downloaded, unpacked as a git repo, indexed by a CI home")
    ap.add_argument("--smallest", type=int, help="with --sdists: only the N repos with the fewest lines")
    ap.add_argument("--sdist-cache", type=Path, default=Path(tempfile.gettempdir()) / "indexd-sdists")
    ap.add_argument("--model", help="INDEXD_EMBED_MODEL for every home (default: the default model)")
    ap.add_argument("--realm", default="std")
    ap.add_argument("--to", help="a real object store URI (s3://bucket/prefix) instead of moto; "
                    "credentials from the standard AWS environment; requests are not counted")
    ap.add_argument("--no-local", action="store_true", help="skip the teammate-alone run (minutes)")
    ap.add_argument("--queries", type=int, default=30)
    ap.add_argument("--work", type=Path)
    ap.add_argument("--no-doc", action="store_true")
    args = ap.parse_args(argv)
    from indexd.config import load_settings

    work = args.work or Path(tempfile.mkdtemp(prefix="shb"))
    base = {k: v for k, v in os.environ.items() if k != "INDEXD_EMBED_MODEL"}
    if args.model:
        base["INDEXD_EMBED_MODEL"] = args.model
    scale = ""
    if args.sdists:
        corpus, lines, skipped = build_sdist_corpus(args.sdists, work / "corpus", args.sdist_cache,
                                                    args.smallest)
        scale = (f"{len(corpus)} repos from PyPI sdists ({skipped} not downloadable"
                 + (f"; the {args.smallest} with the fewest lines" if args.smallest else "")
                 + f"), {lines:,} lines")
        print(scale, flush=True)
        # The CI job's cold index is a teammate's cold index without a shared one: the
        # same corpus, command and machine. It stands as "teammate, alone" (hours, once).
        ci_run = teammate(work, "ci", args.realm, corpus, None, base, None)
        ci = ci_run["home"]
        print(f"the CI job's index (= a teammate alone): "
              f"{ {k: v for k, v in ci_run.items() if k not in ('home', 'env')} }", flush=True)
    else:
        src_settings = load_settings(os.environ | {"INDEXD_HOME": str(args.from_home)})
        corpus = list(src_settings.realms[args.realm])
        ci = work / "ci"
        shutil.copytree(args.from_home, ci, ignore=shutil.ignore_patterns("*.lock", "*.sock"))
    if args.to:   # a real object store: the AWS environment as the user has it, nothing counted
        server, s3env, client, counter, uri = None, {}, None, UNCOUNTED, args.to
    else:
        server, s3env, client, counter = start_s3()
        uri = "s3://bench/index"
    try:
        base = base | s3env
        ci_env = base | {"INDEXD_HOME": str(ci)}
        before = counter.count
        seconds, events = run(["publish", "--realm", args.realm, "--to", uri, "--json"], ci_env, "publish")
        done = events[-1]
        objects, size = bucket_size(client) if client else (0, 0)
        pub = {"seconds": seconds, "requests": counter.count - before, "objects": objects,
               "bytes": size, "entries": sum(r["entries"] for r in done["repos"])}
        print(f"publish: {pub}", flush=True)
        mine = teammate(work, "shared", args.realm, corpus, uri, base, counter)
        print(f"teammate with the shared index: { {k: v for k, v in mine.items() if k not in ('home', 'env')} }",
              flush=True)
        if args.sdists:
            alone = ci_run
        else:
            alone = None if args.no_local else teammate(work, "alone", args.realm, corpus, None, base,
                                                        counter)
        if alone:
            print(f"teammate alone: { {k: v for k, v in alone.items() if k not in ('home', 'env')} }", flush=True)
        q = query_figures(mine["env"], counter, args.queries, args.realm, corpus) if args.queries else None
        text = table(pub, mine, alone, q, alone_is_ci=bool(args.sdists))
        print(text)
        if not args.no_doc:
            from agreement import replace_region

            load = os.getloadavg()[0]
            what = (f"--sdists {args.sdists.name}" + (f" --smallest {args.smallest}" if args.smallest else "")
                    + (f" --model {args.model}" if args.model else "")
                    if args.sdists else f"--from-home HOME --realm {args.realm}")
            where = f"`{uri}` (requests not counted)" if args.to else "moto's S3 server on loopback"
            intro = (f"`bench/shared_index.py {what}`{' (' + scale + ')' if scale else ''}, "
                     f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, load {load:.1f}, "
                     f"{os.cpu_count()} cores, {where}, "
                     f"model {args.model or 'default'}:")
            region = "shared_scale" if args.sdists else "shared_index"
            replace_region(ROOT / "docs" / "benchmarks.md", region, f"{intro}\n\n{text}", "")
    finally:
        if server is not None:
            server.stop()
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
