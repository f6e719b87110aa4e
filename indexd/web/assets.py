"""Static files of the web UI, with the headers that keep them safe.

Pages are plain HTML files that load their own scripts (``script-src 'self'``:
no inline script anywhere, so an injected ``<script>`` in a result never runs).
A request names a file by a path that is looked up in the list of files that
exist under ``static/`` when the daemon starts, never joined onto the file
system, so ``..``, encoded slashes and symlinks lead nowhere.
"""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"
PREFIX = "/ui"
PAGES = {"/ui": "search.html", "/ui/file": "file.html", "/ui/impact": "impact.html",
         "/ui/status": "status.html"}
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".png": "image/png",
         ".txt": "text/plain; charset=utf-8", ".json": "application/json"}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")
SECURITY_HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                    "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
                    "Cross-Origin-Opener-Policy": "same-origin",
                    "Cross-Origin-Resource-Policy": "same-origin"}


def static_files(root: Path = STATIC) -> dict[str, Path]:
    """URL path -> file, for every regular file under ``root`` (symlinks left out)."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.suffix in TYPES:
            found[f"{PREFIX}/static/{path.relative_to(root).as_posix()}"] = path
    return found


class Assets:
    def __init__(self, root: Path = STATIC):
        self._files = static_files(root)
        self._root = root

    def owns(self, path: str) -> bool:
        return path == "/" or path == PREFIX or path.startswith(PREFIX + "/")

    def find(self, path: str) -> Path | None:
        """The file for a page or a static URL path; None when there is none."""
        if path in PAGES:
            return self._root / PAGES[path]
        return self._files.get(path)

    def answer(self, path: str) -> tuple[int, bytes, dict]:
        if path == "/":
            return redirect(PREFIX + "/")
        found = self.find(path)
        if found is None:
            return page_error(404, "No such page.")
        try:
            data = found.read_bytes()
        except OSError:
            return page_error(404, "No such page.")
        cache = "no-store" if found.suffix == ".html" else "private, max-age=300"
        return 200, data, {"Content-Type": TYPES[found.suffix], "Cache-Control": cache,
                           **SECURITY_HEADERS}


def redirect(location: str, extra: dict | None = None) -> tuple[int, bytes, dict]:
    return 303, b"", {"Location": location, "Content-Type": "text/plain; charset=utf-8",
                      "Cache-Control": "no-store", **SECURITY_HEADERS, **(extra or {})}


def page_error(status: int, message: str) -> tuple[int, bytes, dict]:
    """A plain-text answer (no markup to escape, nothing to run)."""
    return status, (message + "\n").encode(), {"Content-Type": "text/plain; charset=utf-8",
                                               "Cache-Control": "no-store", **SECURITY_HEADERS}
