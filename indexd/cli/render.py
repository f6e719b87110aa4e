"""Human output for indexctl: ripgrep-like result lines, status tables.

Plain ANSI (no rich) so the client starts fast; colour only on a terminal.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

_TTY = sys.stdout.isatty()


def _c(code: str, text: str) -> str:
    return f"\033[{code}m{text}\033[0m" if _TTY else text


def dim(text: str) -> str:
    return _c("2", text)


def why_line(why: dict) -> str:
    """``keyword #3 (12.1) · semantic #7 (cos 0.52) · 2nd pass 1.23: rrf +0.41, …``"""
    parts = []
    for leg, label in (("keyword", "score"), ("semantic", "cosine")):
        found = why.get(leg)
        if found:
            value = f"cos {found[label]:.2f}" if label == "cosine" else f"{found[label]:.2f}"
            parts.append(f"{leg} #{found['rank']} ({value})")
        elif leg in why:
            parts.append(f"not in {leg} pool")
    second = why.get("second_pass")
    if second:
        terms = ", ".join(f"{f} {v:+.2f}" for f, v in second["top"])
        parts.append(f"2nd pass {second['score']:.2f}" + (f": {terms}" if terms else ""))
    if why.get("exact"):
        parts.append("exact name (pinned)")
    return " · ".join(parts)


def search(result: dict) -> None:
    for hit in result.get("results", []):
        where = _c("35", hit["path"]) + ":" + _c("32", str(hit["start_line"]))
        name, kind = hit.get("symbol") or "", hit["kind"]
        if hit.get("best"):   # --files: the file, then its best entry (its kind) and the count
            best = hit["best"]
            kind, name = best["kind"], best.get("symbol") or ""
            if hit.get("entries", 1) > 1:
                name += f" (+{hit['entries'] - 1} more entr{'ies' if hit['entries'] > 2 else 'y'})"
        # The repo last: two repos' `pyproject.toml:1` must be told apart, and
        # the path:line head stays what editors and terminals make clickable.
        repo = (hit.get("repo") or "").rstrip("/").rsplit("/", 1)[-1]
        tail = f" {dim('[' + repo + ']')}" if repo else ""
        if hit.get("shared"):
            tail += " " + dim(f"(shared {hit['shared']['commit'][:12]})")
        if hit.get("also_at"):   # the symbol's other definitions in the file (overloads)
            tail += " " + dim("also at lines " + ", ".join(map(str, sorted(hit["also_at"]))))
        print(f"{where} {_c('36', kind)} {_c('1', name)}".rstrip() + tail)
        if hit.get("snippet"):
            print("    " + dim(hit["snippet"]))
        if hit.get("why"):
            print("    " + dim("why: " + why_line(hit["why"])))
        if hit.get("kind") == "file" and hit.get("summary") and hit["summary"] != hit.get("snippet"):
            print("    " + hit["summary"])
        if hit.get("context"):
            for line in hit["context"].splitlines():
                print("    " + line)
    footer = f"{_n(result.get('total', 0), 'result')} in {result.get('took_ms', 0)} ms"
    if result.get("stale"):
        footer += f" (stale: {result.get('pending')} pending)"
    if result.get("daemon", "") is None:
        footer += " (daemon not running: read from the store)"
    if result.get("shared"):
        footer += "; " + shared_answer(result["shared"])
    print(dim(footer), file=sys.stderr)


def shared_answer(shared: dict) -> str:
    """How much of an answer came from a team's shared index (provenance.mark)."""
    commits = ", ".join(f"{r.rstrip('/').rsplit('/', 1)[-1]}@{c[:12]}"
                        for r, c in sorted(shared.get("commits", {}).items()))
    return (f"{shared.get('results', 0)} of {shared.get('of', 0)} from the shared index"
            + (f" ({commits})" if commits else ""))


def symbols(result: dict) -> None:
    for hit in result.get("results", []):
        indent = "  " * max(0, (hit.get("symbol") or "").count("."))
        label = hit.get("symbol") or hit["path"]
        print(f"{hit['start_line']:>5}-{hit['end_line']:<5} {indent}{_c('36', hit['kind'])} {label}")


def summary(result: dict) -> None:
    print(f"{result['path']}: {result.get('summary') or dim('(no summary yet)')}")
    for name, title in (("uses", "uses"), ("used_by", "used by")):
        if result.get(name):
            print(f"{title}:")
        for r in result.get(name) or []:
            source = dim(f" [{r['describe_source']}]") if r["describe_source"] != "evidence" else ""
            print(f"  {r['path']}  {r['describe']}{source}")


def realm(result: dict) -> None:
    if "realms" in result:
        if not result["realms"]:
            print("no realms; add one with: indexctl realm add NAME DIR...")
        for r in result["realms"]:
            print(_c("1", r["name"]))
            for repo in r["repos"]:
                print(f"  {repo}")
        return
    for key in ("added", "removed"):
        if key in result:
            items = result[key] or ["nothing"]
            print(f"{result['realm']}: {key} " + ", ".join(items))


def generic(result: dict) -> None:
    for key, value in result.items():
        if isinstance(value, (dict, list)):
            value = json.dumps(value)
        print(f"{key}: {value}")


def control(result: dict) -> None:
    """pause, resume, reindex, purge, shutdown: what happened, in words."""
    if result.get("error"):
        print(_c("31", f"failed: {result['error']}"), file=sys.stderr)
    elif "queued" in result:
        what = ("everything" if result["queued"] == "all"
                else f"{result['queued']} path{'s' * (result['queued'] != 1)}")
        done = "done" if result.get("waited") else "--wait returns when done"
        print(f"reindexing {what}: {done} ({result.get('pending')} pending)")
    elif "paused" in result:
        print("indexing paused: changes are still collected; indexctl resume goes on"
              if result["paused"] else "indexing resumed")
    elif "purged" in result:
        dropped = result.get("cache_dropped")
        took = f" in {result['seconds']} s" if "seconds" in result else ""
        print(f"old versions purged{took}"
              + (f", {dropped} unused cached vectors dropped" if dropped else ""))
    elif result.get("shutting_down"):
        print("the daemon is stopping")
    else:
        generic(result)


def _age(ts) -> str:
    if not ts:
        return "never"
    s = time.time() - ts
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{s / size:.0f}{unit} ago"
    return f"{s:.0f}s ago"


def graph_line(graph: dict) -> str:
    """The relationship graph's state in words (impact, deps, tests affected use it)."""
    if graph.get("building"):
        waiting = graph.get("changes_waiting") or 0
        return ("graph: building" + (f", {waiting} files indexed meanwhile wait for it"
                                     if waiting else "") + "; impact answers once it is done")
    if graph.get("ready"):
        how = (f"read from its snapshot ({graph.get('snapshot_changes') or 0} files changed since)"
               if graph.get("source") == "snapshot" else "built")
        return f"graph: {graph.get('edges', 0):,} edges, {how} in {graph.get('build_s') or 0:.1f} s"
    if graph.get("error"):
        return f"graph: not built ({graph['error']})"
    return "graph: not built yet (it starts once the hot indexes are built)" if graph else ""


def first_run(result: dict) -> None:
    """status with no daemon and no index: where things stand, what comes next."""
    print("daemon: not running (start it with: indexd run)")
    if not result["realms"]:
        print("no realms yet: add one with: indexctl realm add NAME DIR")
        return
    for realm in result["realms"]:
        print(_c("1", f"realm {realm['name']}"))
        for repo in realm["repos"]:
            print(f"  {repo['path']}")
    print(f"no index yet at {result['store']}: build it with: indexd index "
          "(or start the daemon: indexd run)")


def status(result: dict) -> None:
    d = result.get("daemon")
    if d:
        print(f"daemon pid {d.get('pid')} up {d.get('uptime_s', 0):.0f}s rss {d.get('rss_mb', 0):.0f} MB"
              f"  lag {result.get('index_lag_s', 0):.1f}s  pending {result.get('pending', 0)}")
        for stage, depth in (result.get("queues") or {}).items():
            print(f"  queue {stage}: {depth}")
        line = embedding_line(result.get("embedding") or {})
        if line:
            print(f"  {line}")
        line = graph_line(result.get("graph") or {})
        if line:
            print(f"  {line}")
        timing = (result.get("last_batch") or {}).get("timing")
        if timing:
            print(dim(f"  last batch {batch_timing(timing)}"))
    else:
        print("daemon: not running (start it with: indexd run); figures read from the store")
    if result.get("config_error"):
        print(_c("31", f"config: {result['config_error']}"))
    llm_error = ((result.get("embedding") or {}).get("summaries") or {}).get("error")
    if llm_error:
        print(_c("33", f"summaries: {llm_error}"))
    shared = (result.get("embedding") or {}).get("shared") or {}
    if not result.get("realms"):
        print("no realms yet: add one with: indexctl realm add NAME DIR")
    for realm in result.get("realms", []):
        print(_c("1", f"realm {realm['name']}"))
        if realm["name"] in shared:
            print(shared_line(shared[realm["name"]]))
        for repo in realm["repos"]:
            skipped = ", ".join(f"{k} {v}" for k, v in sorted(repo.get("skipped", {}).items())) or "none"
            if repo.get("redacted"):
                skipped += f"; {repo['redacted']} indexed with secrets masked"
            watch = f" watcher {repo['watcher']}" if repo.get("watcher") else ""
            print(f"  {repo['repo']}: {_n(repo['files'], 'file')}, {repo['entries']} entries, "
                  f"{repo['failed']} parse failures, skipped: {skipped}, pending {repo.get('pending', 0)}, "
                  f"indexed {_age(repo.get('last_indexed'))}{watch}")
            for f in repo.get("parse_failures", [])[:5]:
                print(dim(f"    {f['path']}: {f['error']}"))
    store = result.get("store")
    if store:
        versions = ", ".join(f"{k} {v}" for k, v in (store.get("versions") or {}).items())
        print(dim(f"store {store['path']} {store['bytes'] / 1e6:.1f} MB, versions {versions or 'none'}"))


def embedding_line(emb: dict) -> str:
    """The model embedding now, e.g. a cold backlog's bulk bf16 beside the steady onnx."""
    if not emb.get("enabled"):
        return ""
    if not emb.get("ready"):
        return f"embedding: {emb.get('error') or 'model loading'}"
    how = " ".join(str(emb[k]) for k in ("runtime", "precision") if emb.get(k))
    threads = f"{emb['threads']} threads, " if emb.get("threads") else ""
    line = f"embedding: {emb.get('model')} {how}, {threads}{emb.get('embedded', 0)} embedded"
    bulk = (emb.get("bulk") or {}).get("active")
    if bulk:
        line += (f"; backlog on the bulk model {bulk['runtime']} {bulk['precision']} "
                 f"({bulk['threads']} threads, {bulk['texts']} texts so far)")
    return line + later_text(emb.get("later"))


def later_text(later: dict | None) -> str:
    """embed_model filling in behind the first model (enrich/later_model.py), or done."""
    if not later:
        return ""
    if "from" in later:
        return f"; took over from {later['from']} {_age(later.get('at'))}"
    if later.get("state") == "failed":
        return f"; {later['model']} not taking over: {later.get('error')}"
    if later.get("state") == "embedding":
        return (f"; {later['model']} embedding behind it: {later['checked']}/{later['total']} "
                f"entries checked, {later['embedded']} embedded")
    return f"; {later['model']} {later.get('state')} behind it"


def shared_line(state: dict) -> str:
    """What a realm's team shared index gave (enrich ``shared``), in one line."""
    if state.get("error"):
        return _c("33", f"  shared index {state['uri']}: not used ({state['error']})")
    repos = (state.get("repos") or {}).values()
    used = [r for r in repos if r.get("status") == "used"]
    vectors = sum(r.get("vectors", 0) for r in used)
    summaries = sum(r.get("summaries", 0) for r in used)
    commits = ", ".join(sorted({r["commit"][:12] for r in used if r.get("commit")})) or "-"
    other = ", ".join(sorted({r["status"].replace("_", " ") for r in repos if r not in used}))
    taken = f"{vectors} vectors" + (f", {summaries} summaries" if summaries else "")
    return dim(f"  shared index {state['uri']}: {taken} for {len(used)} repos "
               f"(commit {commits})" + (f"; {other}" if other else ""))


def batch_timing(timing: dict) -> str:
    """One line of where the last batch's time went (engine ``last_batch.timing``)."""
    ms, stages = timing.get("ms") or {}, timing.get("stages_ms") or {}
    parts = [f"{name.replace('_', ' ')} {stages[name]:.0f}" for name in
             ("plan", "read_parse", "store", "hot_index", "fts", "graph") if name in stages]
    line = f"searchable {ms.get('searchable', ms.get('done', 0)):.0f} ms after its first event"
    line += f" (debounce {ms.get('due', 0):.0f}" + "".join(f", {p}" for p in parts) + " ms)"
    if "embedded" in ms:
        line += f", embedded at {ms['embedded']:.0f} ms"
    return line


def skipped(result: dict) -> None:
    if not result.get("total"):
        print("nothing withheld: every listed file is indexed as it is")
    for realm in result.get("realms", []):
        for repo in realm["repos"]:
            if not repo["total"]:
                continue
            print(_c("1", f"{realm['name']} {repo['repo']}") + dim(f"  {repo['total']} withheld"))
            width = max(len(f["path"]) for f in repo["files"])
            for f in repo["files"]:
                print(f"  {_c('35', f['path'].ljust(width))}  {f['reason']}")
            if repo["total"] > len(repo["files"]):
                print(dim(f"  ... {repo['total'] - len(repo['files'])} more (--limit)"))


def oneline(result: dict) -> str:
    if not result.get("daemon"):
        return "indexd ✗ down"
    pending = result.get("pending", 0)
    lag = result.get("index_lag_s") or 0.0
    if result.get("state") == "error":
        return f"indexd ! {result.get('error') or 'error'}"
    if result.get("state") == "paused":
        return f"indexd ⏸ {pending} pending"
    if pending:
        return f"indexd ⟳ {pending} pending {lag:.1f}s"
    return f"indexd ✓ {lag:.1f}s"


def oneline_json(result: dict) -> dict:
    """`status --oneline --json`: the status-bar line and the figures behind it."""
    up = bool(result.get("daemon"))
    return {"text": oneline(result), "daemon": up,
            "state": (result.get("state") or "fresh") if up else "down",
            "pending": result.get("pending", 0) if up else None,
            "index_lag_s": result.get("index_lag_s") if up else None,
            "error": result.get("error")}


def waybar(result: dict) -> dict:
    text = oneline(result)
    cls = "down" if not result.get("daemon") else ("indexing" if result.get("pending") else "fresh")
    return {"text": text, "class": cls, "tooltip": f"pending {result.get('pending', 0)}, "
            f"lag {result.get('index_lag_s') or 0:.1f}s", "alt": cls}


def watch_status(fetch) -> int:
    try:
        while True:
            try:
                result = fetch()
                line = oneline(result)
            except Exception as exc:  # noqa: BLE001 - keep the live view alive
                line = f"indexd ✗ {exc}"
            print("\r\033[K" + line, end="", flush=True)
            time.sleep(1.0)
    except KeyboardInterrupt:
        print()
        return 0


def _where(item: dict) -> str:
    name = item.get("symbol")
    return f"{item['path']}" + (f"::{name}" if name else "")


def _via(via: list) -> str:
    return " <- ".join(f"{v['kind']}({v['how']}) {v['from']}:{v.get('line') or ''}".rstrip(":")
                       for v in via)


def _more(result: dict, name: str, shown: int, distance=None, indent: str = "  ") -> None:
    """'… and N more' when the answer holds fewer than exist (the daemon's limit)."""
    total = (result.get(f"{name}_by_distance", {}).get(str(distance), shown)
             if distance is not None else result.get(f"{name}_total", shown))
    if total > shown:
        at = f" at distance {distance}" if distance is not None else ""
        least = "at least " if result.get(f"{name}_total_exact") is False else ""
        print(dim(f"{indent}… and {least}{total - shown} more{at}; --limit N for more "
                  "(up to 10000)"))


def _counted(result: dict, name: str, shown: int) -> str:
    total = result.get(f"{name}_total", shown)
    return f"{shown}" if total == shown else f"{shown} of {total}"


def _distances(result: dict, name: str, items: list) -> list[int]:
    return sorted({i["distance"] for i in items}
                  | {int(d) for d in result.get(f"{name}_by_distance", {})})


def impact(result: dict) -> None:
    resolved = f" ({result['resolved']})" if result.get("resolved") else ""
    print(_c("1", f"impact of {result['target']}{resolved}")
          + dim(f"  ({result.get('took_ms', 0)} ms)"))
    if not result.get("complete", True):
        print(_c("33", f"incomplete: {result.get('incomplete_reason')}"))
    said_before: set[str] = set()   # a file pair's description: under its first item only
    if not any(result.get(b) or result.get(f"{b}_total") for b in ("affected", "tests", "docs")):
        print(dim("nothing in the index depends on it (no import, call, reference, test or "
                  "link reaches it)"))
    for bucket in ("affected", "tests", "docs"):
        items = result.get(bucket) or []
        if not items and not result.get(f"{bucket}_total"):
            continue
        print(_c("1", f"{bucket} ({_counted(result, bucket, len(items))})"))
        for distance in _distances(result, bucket, items):
            print(dim(f"  distance {distance}"))
            group = [x for x in items if x["distance"] == distance]
            for i in group:
                score = f"score {i['score']:.3f} conf {i['confidence']:.2f}"
                if i.get("shared"):
                    score += f" (shared {i['shared']['commit'][:12]})"
                print(f"    {_c('35', _where(i))} {dim(score)}")
                if i.get("via"):
                    print("      " + dim(_via(i["via"])))
                said = next((v["describe"] for v in i.get("via") or [] if v.get("describe")), "")
                if said in said_before:
                    said = ""
                said_before.add(said)
                # what it is, how it uses the target, why it is listed (import-time runs)
                for words in (i.get("summary"), said, i.get("why")):
                    if words:
                        print("      " + words)
            _more(result, bucket, len(group), distance, indent="    ")
    walk = result.get("walk") or {}
    if walk.get("exhaustive") is False:
        print(dim(f"walk stopped at its budget ({walk.get('edges_examined')} edges, best paths "
                  "first): counts are lower bounds; a larger --limit walks further"))
    tests_walk = result.get("tests_walk") or {}
    if tests_walk.get("exhaustive") is False:
        print(dim(f"tests walk (trusted edges, any depth) stopped at its budget "
                  f"({tests_walk.get('edges_examined')} edges): more tests may reach it; "
                  "a larger --limit walks further"))
    if tests_walk.get("guesses_exhaustive") is False:
        print(dim("tests one name match away were looked for up to an edge budget: more "
                  "weakly linked tests may reach it"))
    unresolved = result.get("unresolved") or []
    if unresolved:
        count = result.get("unresolved_total", len(unresolved))
        print(dim(f"{count} unresolved references may also reach it (see --json)"))
    if result.get("shared"):
        print(dim(shared_answer(result["shared"])))
    reviewers(result)


def deps(result: dict) -> None:
    print(_c("1", f"dependencies of {result['target']}"))
    items = result.get("deps", [])
    for distance in _distances(result, "deps", items):
        group = [d for d in items if d["distance"] == distance]
        for d in group:
            print(f"  {d['distance']} {_c('35', _where(d))} {dim(d.get('kind', ''))}")
        _more(result, "deps", len(group), distance)
    for e in result.get("external", []):
        print(dim(f"  external: {e.get('name')} (line {e.get('line')})"))


def refs(result: dict) -> None:
    print(_c("1", f"references to {result['target']}"))
    for r in result.get("refs", []):
        where = r.get("symbol") or dim("(module)")   # where the reference sits, then what it does
        print(f"  {r['path']}:{r['line']} {where} {_c('36', r['kind'])} {dim(r['how'])}")
    _more(result, "refs", len(result.get("refs", [])))


def _person(o: dict) -> str:
    share = f" {o['share'] * 100:.0f}%" if "share" in o else ""
    when = time.strftime("%Y-%m-%d", time.localtime(o["last_time"])) if o.get("last_time") else ""
    return f"{o['name']} <{o['email']}>{share}" + (f" {dim('last ' + when)}" if when else "")


def owners(result: dict) -> None:
    where = result["path"] + (f"::{result['symbol']}" if result.get("symbol") else "")
    lines = f" lines {result['start_line']}-{result['end_line']}" if result.get("symbol") else ""
    print(_c("1", f"owners of {where}") + dim(lines))
    if not result.get("available"):
        print(_c("33", f"no owners: {result.get('reason')}"))
        return
    for o in result["owners"]:
        print(f"  {o['lines']:>5} lines  {_person(o)}")
    for label, key in (("uncommitted", "uncommitted_lines"), ("older than the history cut",
                                                              "older_lines")):
        if result.get(key):
            print(dim(f"  {result[key]:>5} lines  {label}"))
    if result.get("partial"):
        print(_c("33", result["partial_reason"]))
    for c in result.get("recent_commits") or []:
        day = time.strftime("%Y-%m-%d", time.localtime(c["time"]))
        print(dim(f"  {c['id'][:10]} {day} {c['author']}: {c['summary']}"))


def _n(count: int, noun: str) -> str:
    """``1 file``, ``3 files``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def reviewers(result: dict) -> None:
    """impact's "who should review": the target's owners, then the affected files'."""
    own = result.get("owners") or {}
    target = own.get("target") or {}
    if target.get("owners"):
        print(_c("1", "owners of the target: ") + ", ".join(_person(o) for o in target["owners"]))
    if own.get("changed"):   # `changes`: who wrote the code around the edits
        print(_c("1", "owners of the changed code: ") + ", ".join(
            f"{p['name']} <{p['email']}> ({_n(p['lines'], 'line')})" for p in own["changed"]))
    if own.get("reviewers"):
        print(_c("1", "who should review: ") + ", ".join(
            f"{p['name']} <{p['email']}> ({_n(p['files'], 'file')})" for p in own["reviewers"]))
    if own.get("pending"):
        print(dim(f"{own['pending']} affected files not blamed yet (computing in the background)"))


def changes(result: dict) -> None:
    changed = result.get("changed", [])
    since = f"since {result['since']}" if result.get("since") else "uncommitted"
    if not changed:
        print(dim(f"nothing changed ({since}) in {result['repo']}"))
        return
    print(_c("1", f"{_n(len(changed), 'changed symbol')} in {result['repo']}"))
    for ch in changed:
        renamed = f" -> {ch['renamed_to']}" if ch.get("renamed_to") else ""
        print(f"  {ch['change']:8} {_where(ch)}{renamed}")
    impact({"target": "the change", **result})


def annotate(result: dict) -> None:
    print(annotation_line(result, Path(result["repo"]).name))


def annotation_line(result: dict, repo_label: str) -> str:
    """What ``annotate`` noted, in a line (the MCP tool says it the same way)."""
    where = f"{repo_label}/{result['path']}"
    if result.get("symbol"):
        where += f"::{result['symbol']}"
    if result.get("other"):
        where += f" -> {result['other']}"
    note = ("searchable and shown as its summary" if result["annotated"] != "edge"
            else "kept with the relationship")
    return f"annotated {result['annotated']} {where} ({note})"


def annotations(result: dict) -> None:
    for a in result.get("annotations", []):
        where = a["path"] + (f"::{a['symbol']}" if a.get("symbol") else "")
        if a.get("other"):
            where += f" -> {a['other']}"
        flag = _c("33", " (stale)") if a.get("stale") else ""
        print(f"{_c('35', where)}{flag} {dim(a['author'])}\n    {a['text']}")


def audit(result: dict) -> None:
    for rec in result.get("records", []):
        print(audit_line(rec))
    if not result.get("exists"):
        hint = "" if result.get("enabled") else " (audit_log is off: set audit_log = true)"
        print(dim(f"no audit log at {result['file']}{hint}"), file=sys.stderr)
    elif result.get("total", 0) > len(result.get("records", [])):
        print(dim(f"{len(result['records'])} of {result['total']} records (--limit)"),
              file=sys.stderr)


def audit_line(rec: dict) -> str:
    peer = rec.get("peer") or {}
    who = (f"{peer.get('addr')}:{peer.get('port')}" if "addr" in peer
           else f"uid {peer.get('uid')} pid {peer.get('pid')}")
    outcome = (f"error {rec['error']}" if rec.get("error") is not None
               else f"{rec['count']} results" if rec.get("count") is not None else "ok")
    params = json.dumps(rec.get("params") or {}, ensure_ascii=False, separators=(",", ":"))
    method = f"{rec.get('method', '?'):14}"
    return (f"{_local_time(rec.get('time'))}  {rec.get('transport', '?'):6}  {_c('1', method)}  "
            f"{outcome:14}  {rec.get('took_ms', 0):>7} ms  {dim(who)}  {params}")


def _local_time(iso) -> str:
    from datetime import datetime

    try:
        return datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except (TypeError, ValueError):
        return str(iso)


def tests_ingest(result: dict) -> None:
    print(f"{result['edges']} coverage edges from {result['tests']} tests over "
          f"{result['files']} files ({result.get('format', 'coverage.py')}: "
          f"{result['data_file']})")
    for s in result.get("skipped", []):
        print(dim(f"  skipped {s['path']}: {s['reason']}"))
    if result.get("skipped_contexts_total"):
        what = "test names" if result.get("format") == "lcov" else "contexts"
        print(dim(f"  {result['skipped_contexts_total']} {what} not mapped to a test "
                  f"(see --json)"))
        if result.get("format") == "lcov":     # free-text names: say which and why
            for s in result.get("skipped_contexts", [])[:5]:
                print(dim(f"    {s['context'] or '(no TN)'}: {s['reason']}"))
    if result.get("stale"):
        print(_c("33", f"{result['stale']} stored coverage edges are stale: re-run the tests "
                       f"with coverage and ingest again"))


def pytest_args(result: dict) -> list[str]:
    """The selected test files, relative to the current folder, for pytest's command line."""
    import os

    return [os.path.relpath(os.path.join(t["repo"], t["path"])) for t in result.get("tests", [])]


def tests_affected(result: dict) -> None:
    if not result.get("changed") and not result.get("targets") and not result.get("tests"):
        since = f"since {result['since']}" if result.get("since") else (
            "staged" if result.get("staged") else "uncommitted")
        print(dim(f"nothing changed ({since}) in {result.get('repo')}: no tests to run"))
        return
    for t in result.get("tests", []):
        mark = "fallback" if t["fallback"] else "trusted" if t["trusted"] else "weak"
        why = [mark] + (["named after the change"] if t.get("named_after") else [])
        if t.get("distance") is not None:
            why.append(f"{t['distance']} hop{'s' * (t['distance'] != 1)}")
        if t.get("node_ids"):
            n = len(t["node_ids"])
            why.append(f"{n} test{'s' * (n != 1)}")
        print(f"{t['rank']:>3}. {t['path']}  {t['score']:.2f}  [{', '.join(why)}]")
        for ev in t["evidence"][:3]:
            why = f": {ev['why']}" if ev.get("why") else ""
            print(dim(f"       {ev['changed']} <- {ev['test']} ({' > '.join(ev['how']) or '-'})"
                      + why))
    if not result.get("tests"):
        print(dim("no test file reaches the change"))
    if result.get("tests_truncated"):
        print(dim(f"  ... {result['tests_total']} test files in all (raise --limit)"))
    if result.get("untested"):
        print(dim("no tests at all: " + ", ".join(result["untested"])))
    if result.get("ruled_out"):
        out = result["ruled_out"]
        shown = ", ".join(out[:5]) + (f" and {len(out) - 5} more" if len(out) > 5 else "")
        print(dim(f"ruled out by coverage ({len(out)} reached by the graph, recorded on "
                  f"unchanged code, never ran the change): {shown}"))
    if result.get("safe"):
        print(_c("32", "safe: every changed symbol has a resolved or covered path to a test"
                       + (" or has none" if result.get("untested") else "")))
    else:
        print(_c("33", f"not safe: {result['fallback']['reason']}"))
    if result.get("incomplete_reason"):
        print(_c("33", f"incomplete: {result['incomplete_reason']}"))


def context(result: dict) -> None:
    """A context pack: per item ``path:start-end symbol [view, tokens]``, its why, its text."""
    for it in result.get("items", []):
        where = _c("35", it["path"]) + ":" + _c("32", f"{it['start_line']}-{it['end_line']}")
        name = it.get("symbol") or it.get("kind") or ""
        print(f"{where} {_c('1', name)} {dim('[' + it['view'] + ', ' + str(it['tokens']) + ' tokens]')}")
        print("    " + dim(it["why"]))
        for line in it["text"].splitlines():
            print("    " + line)
        print()
    footer = (f"{result.get('tokens', 0)} of {result.get('budget')} tokens "
              f"({result.get('tokenizer')}), {len(result.get('items', []))} items, "
              f"{result.get('bodies', 0)} bodies, {result.get('left_out', 0)} left out")
    if result.get("stale"):
        footer += f" (stale: {result.get('pending')} pending)"
    if result.get("daemon", "") is None:
        footer += " (daemon not running: read from the store)"
    print(dim(footer), file=sys.stderr)
