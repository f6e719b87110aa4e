"""The web UI shows file summaries and relationships in words (a real headless chromium)."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from conftest import chromium_path  # noqa: F401 - the skip reason lives there


def test_impact_list_says_how_each_file_uses_the_target(page, ui_daemon):
    target = f"{ui_daemon.repo.path}/svc/retry.py"
    page.goto(ui_daemon.origin + "/ui/impact?target=" + quote(target))
    cell = page.locator("td.meta", has_text="main.py imports retry_backoff from retry.py")
    cell.first.wait_for()
    assert "calls retry_backoff" in cell.first.inner_text()


def test_file_page_shows_the_composed_file_summary(page, ui_daemon):
    page.goto(ui_daemon.origin + "/ui/file?" + urlencode(
        {"repo": str(ui_daemon.repo.path), "path": "svc/retry.py"}))
    page.wait_for_function("() => document.getElementById('summary').textContent.length > 0")
    assert page.locator("#summary").inner_text() == (
        "Defines function retry_backoff (Back off and retry after n seconds); class Poller.")
