"""The web UI in a real browser: sign-in, search, file page, impact graph, live status."""

from __future__ import annotations

import re
from urllib.parse import quote, urlencode


def test_sign_in_code_works_once_and_leaves_a_clean_url(browser, ui_daemon):
    url = ui_daemon.login_url()
    code = url.rsplit("code=", 1)[1]
    first = browser.new_context()
    pg = first.new_page()
    pg.goto(url)
    assert pg.url == ui_daemon.origin + "/ui/"          # redirected: no code, no token
    assert ui_daemon.token not in pg.url
    cookies = first.cookies()
    assert [(c["httpOnly"], c["sameSite"]) for c in cookies] == [(True, "Strict")]
    assert pg.evaluate("document.cookie") == ""          # scripts cannot read it
    first.close()

    second = browser.new_context()
    pg = second.new_page()
    resp = pg.goto(url)                                   # the same link again
    assert resp.status == 401 and "used already or has expired" in pg.content()
    assert second.cookies() == []
    second.close()
    # Neither the code nor the token is in any log: stderr, the log file, the audit log.
    logs = sorted((ui_daemon.home / "log").glob("*"))
    assert any(p.name == "audit.jsonl" for p in logs)
    logged = ui_daemon.output() + "".join(p.read_text(errors="replace") for p in logs)
    assert code not in logged and ui_daemon.token not in logged


def test_search_page_shows_results_for_the_query_in_the_url(page, ui_daemon, shot):
    page.goto(ui_daemon.origin + "/ui/?" + urlencode({"q": "retry backoff", "kind": "function"}))
    page.locator(".hit").first.wait_for()
    hit = page.locator(".hit").filter(has=page.get_by_role("link", name="retry_backoff",
                                                           exact=True))
    assert "Back off and retry" in hit.locator(".summary").inner_text()
    highlighted = hit.locator("pre.code .ln.hl").all_inner_texts()
    assert highlighted and "def retry_backoff(n):" in highlighted[0]
    assert page.input_value("#q") == "retry backoff"     # the form shows the linked search
    kinds = page.locator(".hit .tag").all_inner_texts()
    assert set(kinds) <= {"function", "method"}          # the filter from the URL applied
    shot(page, "search")


def test_file_page_shows_outline_callers_and_tests(page, ui_daemon, shot):
    repo = str(ui_daemon.repo.path)
    page.goto(ui_daemon.origin + "/ui/file?" + urlencode(
        {"repo": repo, "path": "svc/retry.py", "symbol": "retry_backoff"}))
    page.locator("#calls .ref").first.wait_for()
    assert page.locator("#outline tr.here td").first.inner_text() == "retry_backoff"
    assert "Back off and retry" in page.inner_text("#summary")
    callers = page.locator("#calls .ref a").all_inner_texts()
    assert {"main", "Poller.poll"} <= set(callers)
    assert any("test_retry" in t for t in page.locator("#tests .ref").all_inner_texts())
    page.goto(ui_daemon.origin + "/ui/file?" + urlencode({"repo": repo, "path": "svc/retry.py"}))
    page.locator("#cochange .ref").first.wait_for()
    assert "svc/main.py" in page.locator("#cochange .ref").all_inner_texts()[0]
    shot(page, "file")


def test_impact_view_draws_the_graph(page, ui_daemon, shot):
    target = f"{ui_daemon.repo.path}/svc/retry.py::retry_backoff"
    page.goto(ui_daemon.origin + "/ui/impact?target=" + quote(target))
    # Arrow functions: a bare expression would be eval'd, which the page's CSP refuses.
    page.wait_for_function("() => window.indexdGraph && window.indexdGraph.nodes().length > 1")
    labels = page.evaluate("window.indexdGraph.nodes().map(n => n.data('label'))")
    # the target, its two callers, the importing module and the test
    assert {"retry.py::retry_backoff", "main.py::main", "retry.py::Poller.poll"} <= set(labels)
    assert page.evaluate("window.indexdGraph.nodes('.test').length") >= 1
    assert page.evaluate("window.indexdGraph.edges().length") >= 3
    shot(page, "impact")


def test_status_page_follows_an_edit_live(page, ui_daemon, shot):
    page.goto(ui_daemon.origin + "/ui/status")
    files = page.locator("[data-stat='files indexed'] .v")
    page.wait_for_function("() => document.getElementById('live').textContent === '● live'")
    before = int(re.sub(r"\D", "", files.inner_text() or "0") or 0)
    assert before >= 4
    ui_daemon.repo.write("svc/extra.py", "def extra():\n    return 1\n")
    ui_daemon.repo.write(".env", "API_TOKEN=abc\n")   # withheld by name: a skipped row
    # No reload and no polling in the page: only the event stream can bring these.
    page.wait_for_function(
        f"() => Number(document.querySelector(\"[data-stat='files indexed'] .v\").textContent) "
        f"> {before}", timeout=30_000)
    page.locator("#skipped td.mono", has_text=".env").wait_for(timeout=30_000)
    assert int(page.inner_text("[data-stat='live events'] .v")) >= 2
    shot(page, "status")


def test_markup_in_an_indexed_file_shows_as_text(page, ui_daemon):
    ui_daemon.repo.write("svc/hostile.py", "def hostile_markup():\n"
                         "    '''<img src=x onerror=\"window.pwned=1\"><script>window.pwned=2"
                         "</script> b</b>'''\n    return 0\n")
    ui_daemon.call("status", sync=True)
    page.goto(ui_daemon.origin + "/ui/?q=hostile_markup")
    hit = page.locator(".hit").filter(has=page.get_by_role("link", name="hostile_markup",
                                                           exact=True))
    hit.wait_for()
    assert "<img src=x" in hit.locator(".summary").inner_text()
    assert "<script>" in hit.locator("pre.code").inner_text()
    assert page.evaluate("() => [window.pwned, document.querySelectorAll('main img, main script, "
                         "main b').length]") == [None, 0]
