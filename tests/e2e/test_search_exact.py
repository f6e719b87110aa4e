"""An exact identifier comes first at any limit, even where its words are everywhere.

Issue 12: in a realm of two real web projects, `url_for` with `--limit 10`
was missing (with `--limit 20` it ranked first): the exact-name boost ran
after the BM25 pool had been cut to max(50, 5 x limit). MCP's default limit
is 10, so agents hit it.
"""

from __future__ import annotations

import json
import re

from testlib import embedded, run_cli, settings_with_realm, wait_until


def _noisy_repo(git_repo):
    """80 short helpers stuffed with the words 'url' and 'for', one long url_for."""
    for i in range(8):
        body = "\n".join(f"def url_url_for_for_{i}_{j}():\n    '''url for url for url.'''\n"
                         f"    return 'url for {j}'\n" for j in range(10))
        git_repo.write(f"noise/mod{i}.py", body)
    doc = " ".join(["Build the address of a route from its endpoint name and arguments."] * 12)
    git_repo.write("web/helpers.py", f"def url_for(endpoint, **values):\n    '''{doc}'''\n"
                   "    return endpoint\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)


def test_exact_identifier_first_at_every_limit_over_the_socket(git_repo, daemon):
    _noisy_repo(git_repo)
    d = daemon()
    wait_until(lambda: embedded(d.call("status")), timeout=120, what="indexed and embedded")
    for mode in ("keyword", "hybrid"):
        for limit in range(1, 11):
            res = d.call("search", query="url_for", mode=mode, limit=limit)
            top = res["results"][0]
            assert (top["path"], top["symbol"]) == ("web/helpers.py", "url_for"), (mode, limit, top)


def test_exact_identifier_first_from_the_command_line_with_its_repo(git_repo, daemon):
    _noisy_repo(git_repo)
    d = daemon()
    wait_until(lambda: d.call("status")["pending"] == 0, timeout=60, what="indexed")
    out = json.loads(run_cli("search", "url_for", "--limit", "3", "--json", check=True).stdout)
    assert out["results"][0]["symbol"] == "url_for"
    human = run_cli("search", "url_for", "--limit", "1", check=True).stdout
    # Two repos may both hold web/helpers.py: the human line names the repo too.
    assert "web/helpers.py:1" in human and git_repo.path.name in human


def test_module_qualified_and_dotted_names_are_exact(git_repo, daemon):
    git_repo.write("pkg/client.py", "class Response:\n    def read_chunked(self):\n        pass\n"
                   "\n\ndef run():\n    pass\n")
    git_repo.write("pkg/server.py", "def run():\n    pass\n\n\nclass Other:\n"
                   "    def read_chunked(self):\n        pass\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    wait_until(lambda: d.call("status")["pending"] == 0, timeout=60, what="indexed")
    for query, want in (("pkg.server.run", ("pkg/server.py", "run")),
                        ("server.run", ("pkg/server.py", "run")),
                        ("Response.read_chunked", ("pkg/client.py", "Response.read_chunked")),
                        ("Other.read_chunked", ("pkg/server.py", "Other.read_chunked"))):
        top = d.call("search", query=query, limit=1)["results"][0]
        assert (top["path"], top["symbol"]) == want, (query, top)


def test_files_mode_ranks_each_file_once_by_its_best_entry(git_repo, daemon):
    git_repo.write("a/retry.py", "def retry_request():\n    pass\n\n\ndef retry_later():\n    pass\n"
                   "\n\ndef retry_forever():\n    pass\n")
    git_repo.write("b/net.py", "def send_request():\n    '''Retry once.'''\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    wait_until(lambda: d.call("status")["pending"] == 0, timeout=60, what="indexed")
    res = d.call("search", query="retry", mode="keyword", files=True, limit=5)
    paths = [h["path"] for h in res["results"]]
    assert paths[0] == "a/retry.py" and len(paths) == len(set(paths)) and "b/net.py" in paths
    top = res["results"][0]
    assert top["entries"] >= 3 and top["best"]["symbol"].startswith("retry_")
    human = run_cli("search", "retry", "--files", "--mode", "keyword", check=True).stdout
    assert human.splitlines()[0].startswith("a/retry.py:")
    # the best entry's own kind (it said `file retry_request`, as if a file had that name)
    assert re.match(r"a/retry\.py:\d+ function retry_\w+ \(\+\d+ more entries\)",
                    human.splitlines()[0]), human
    bad = d.client(timeout=10)
    with bad as c:
        try:
            c.call("search", query="retry", files="yes")
            raise AssertionError("files='yes' accepted")
        except Exception as exc:  # noqa: BLE001 - the error type is the point
            assert "files must be true or false" in str(exc)


def test_related_neighbours_for_the_top_results_only(git_repo, daemon):
    """Graph neighbours are worth it for what a person reads first; for ten hits
    they cost as much as the search itself."""
    git_repo.write("lib.py", "def quokka_core():\n    return 1\n")
    for i in range(5):
        git_repo.write(f"use{i}.py", f"from lib import quokka_core\n\n\ndef quokka_user_{i}():\n"
                       "    return quokka_core()\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    def search():
        return d.call("search", query="quokka", mode="keyword", limit=10)["results"]
    # The graph takes the batch's edges just after the rows are searchable.
    wait_until(lambda: any(h["related"] for h in search()[:3]), timeout=60,
               what="graph neighbours on the top hits")
    hits = search()
    assert len(hits) > 3 and all(h["related"] == [] for h in hits[3:])


def test_the_least_nested_exact_name_and_a_package_name_come_first(git_repo, daemon):
    """Read on the stdlib: `make_archive` ranked the method `Command.make_archive`
    over the functions `shutil.make_archive`; `asyncio.run` ranked the method
    `REPLThread.run` over `asyncio/runners.py`'s `run`, which the package exports."""
    words = " ".join(["Make an archive: run the archive maker over the files."] * 8)
    git_repo.write("tools/cmd.py", "class Command:\n    def make_archive(self, base, fmt):\n"
                   f"        '''{words}'''\n        return make(base, fmt)\n")
    git_repo.write("archive.py", "def make_archive(base, fmt):\n    return base\n")
    git_repo.write("loop/__main__.py", "class REPLThread:\n    def run(self):\n"
                   f"        '''loop run: {words}'''\n        return self\n")
    git_repo.write("loop/runners.py", "def run(main):\n    return main\n")
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    wait_until(lambda: embedded(d.call("status")), timeout=120, what="indexed and embedded")
    for query, want in (("make_archive", ("archive.py", "make_archive")),
                        ("loop.run", ("loop/runners.py", "run"))):
        for mode in ("keyword", "hybrid"):
            top = d.call("search", query=query, mode=mode, limit=1)["results"][0]
            assert (top["path"], top["symbol"]) == want, (query, mode, top)


TYPED = '''from typing import overload


@overload
def convert(value: int) -> int: ...


@overload
def convert(value: str) -> str: ...


def convert(value):
    """Convert a value to its canonical form."""
    return value


def convert_all(values):
    """Convert every value to its canonical form."""
    return [convert(v) for v in values]
'''


def test_a_symbol_defined_more_than_once_in_a_file_is_one_hit(git_repo, daemon):
    """typing overloads (click's Context.invoke, Group.command): three hits of one
    function filled the first places of `search Context.invoke --limit 3`; now one
    hit, at its best rank, with the other definitions' lines in `also_at`."""
    git_repo.write("pkg/convert.py", TYPED)
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    wait_until(lambda: embedded(d.call("status")), timeout=120, what="indexed and embedded")
    for mode in ("keyword", "semantic", "hybrid"):
        res = d.call("search", query="convert", mode=mode, limit=2)
        hits = [(h["path"], h["symbol"]) for h in res["results"]]
        assert hits.count(("pkg/convert.py", "convert")) == 1, (mode, hits)
        assert ("pkg/convert.py", "convert_all") in hits, (mode, hits)
        one = next(h for h in res["results"] if h["symbol"] == "convert")
        lines = sorted([one["start_line"], *one["also_at"]])
        assert lines == [5, 9, 12], (mode, one)   # each def line, not its decorator
    human = run_cli("search", "convert", "--limit", "2", env=d.env, check=True).stdout
    assert "also at lines" in human
