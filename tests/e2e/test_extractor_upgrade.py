"""An upgraded indexd re-parses files whose content did not change.

What a user hit: after an upgrade that taught the parser new reference kinds
(instance types, import-time calls), `impact` kept answering from the old
rows, because only files whose stat or hash changed are ever parsed again;
nothing short of `indexd reset` applied the new rules.
"""

from __future__ import annotations

import json
import os

from testlib import run_cli, settings_with_realm, wait_until

from indexd.config import load_settings
from indexd.store import Store


def _index():
    out = run_cli("index", "--json", tool="indexd", check=True)
    return [json.loads(line) for line in out.stdout.splitlines()][-1]


def _pretend_an_older_indexd_wrote_the_store():
    """Stores written before the extractor was recorded have no such key."""
    store = Store(load_settings().paths.store_dir)
    store.meta.delete("key LIKE 'extractor:%'")
    return store


def _meta_keys(store):
    return [r["key"] for r in store.meta.search().limit(None).to_list()]


def test_one_shot_reparses_every_file_after_an_upgrade(git_repo):
    git_repo.write("a.py", "def alpha():\n    return 1\n")
    git_repo.write("b/c.py", "import a\n\ndef beta():\n    return a.alpha()\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    assert _index()["parsed"] == 2
    assert _index()["parsed"] == 0            # nothing changed, nothing parsed
    _pretend_an_older_indexd_wrote_the_store()
    done = _index()
    assert done["parsed"] == 2, done          # same content, new rules: parsed again
    assert _index()["parsed"] == 0            # and recorded: not again next time
    store = Store(load_settings().paths.store_dir)
    store.set_meta(next(k for k in _meta_keys(store) if k.startswith("extractor:")), "older")
    assert _index()["parsed"] == 2            # any other version: the same


def test_the_daemon_reparses_after_an_upgrade_at_start(git_repo, daemon):
    git_repo.write("a.py", "def alpha():\n    return 1\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    _index()
    store = _pretend_an_older_indexd_wrote_the_store()
    d = daemon()
    wait_until(lambda: d.call("status")["pending"] == 0, timeout=60, what="start reconcile done")
    from indexd.pipeline import EXTRACTOR_VERSION

    wait_until(lambda: {store.get_meta(k) for k in _meta_keys(store) if k.startswith("extractor:")}
               == {EXTRACTOR_VERSION}, timeout=60, what="the new extractor recorded")
    assert "parsed=1" in d.output()
