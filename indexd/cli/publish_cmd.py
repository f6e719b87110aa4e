"""`indexd publish --realm R --to URI`: the realm's local index, as committed, to a shared index.

Reads the local store only (a daemon may keep running). Meant for a CI job
after `indexd index` on the main branch (docs/shared-index.md).
"""

from __future__ import annotations

import json
import os
import sys

from ..config import load_settings
from ..errors import ConfigError

EXIT_OK = 0


def cmd_publish(args) -> int:
    from ..shared_index.publish import publish_realm
    from .local import _open_store

    settings = load_settings()
    settings.realm_repos(args.realm)   # an unknown realm: its own clear error
    repos = None
    if args.repo:
        known = set(settings.realms[args.realm])
        repos = [os.path.abspath(os.path.expanduser(r)) for r in args.repo]
        unknown = [r for r in repos if r not in known]
        if unknown:
            raise ConfigError(f"not a repo of realm {args.realm!r}: {', '.join(unknown)}; its "
                              f"repos: {', '.join(sorted(known))}")
    if args.purge:
        return _purge(settings, args)
    store = _open_store(settings)
    if not store.get_meta("embed_model"):
        print("indexd: warning: this index has no vectors yet (run `indexd index` first); "
              "publishing structure only", file=sys.stderr)
    progress = (lambda e: print(json.dumps(e), flush=True)) if args.json else None
    reports = publish_realm(settings, store, args.realm, args.to, force=args.force,
                            repos=repos, on_progress=progress)
    if args.json:
        print(json.dumps({"event": "done", "uri": args.to, "realm": args.realm,
                          "repos": [r.to_json() for r in reports]}), flush=True)
        return EXIT_OK
    for r in reports:
        left = f"; left out {r.left_out} not as committed" if r.left_out else ""
        print(f"{r.repo} -> {r.shard}: {r.status}, commit {r.commit[:12] or '(no git)'}, "
              f"{r.files} files, {r.entries} entries ({r.vectors} with vectors), "
              f"{r.links} links{left} ({r.seconds:.1f}s)")
    return EXIT_OK


def _purge(settings, args) -> int:
    from ..realms import locate
    from ..shared_index.location import connect
    from ..shared_index.publish import purge_path

    db = connect(args.to)
    results = []
    for path in args.purge:
        realm, repo, rel = locate(settings, path)
        if realm != args.realm:
            raise ConfigError(f"{path} is in realm {realm!r}, not {args.realm!r}")
        if rel in ("", "."):
            raise ConfigError(f"{path} is a whole repo: name a file or folder inside it")
        results.append(purge_path(db, repo, rel) | {"repo": repo})
    if args.json:
        print(json.dumps({"event": "done", "uri": args.to, "purged": results}), flush=True)
        return EXIT_OK
    for r in results:
        counts = ", ".join(f"{v} {k}" for k, v in r["removed"].items())
        print(f"{r['repo']} -> {r['shard']}: removed {r['path']} ({counts}); older versions deleted")
    return EXIT_OK
