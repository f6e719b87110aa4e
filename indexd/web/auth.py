"""Sign-in for the web UI: one-time codes exchanged for an HttpOnly cookie.

The bearer token never goes into a URL. ``indexctl ui`` asks the REST API
(with the token) for a code; the browser opens ``/ui/login?code=CODE``; the
server trades the code for a session cookie (HttpOnly, SameSite=Strict) and
redirects to a clean ``/ui/``. So the only secret a URL carries is a code that
is already spent, or dead within `CODE_TTL_S`. Codes and sessions live in
memory only: a daemon restart signs every browser out, which is the point
of not writing them down.
"""

from __future__ import annotations

import hmac
import secrets
import time
from http.cookies import CookieError, SimpleCookie

CODE_TTL_S = 60.0
SESSION_TTL_S = 12 * 3600.0
MAX_CODES = 32          # unredeemed codes kept; the oldest goes first
MAX_SESSIONS = 64


class UiAuth:
    def __init__(self, port: int, clock=time.monotonic):
        self._clock = clock
        self._codes: dict[str, float] = {}       # code -> expiry
        self._sessions: dict[str, float] = {}    # session id -> expiry
        self.port = port

    @property
    def cookie_name(self) -> str:
        # Cookies are shared across the ports of one host: two daemons (two
        # INDEXD_HOMEs) on 127.0.0.1 must not overwrite each other's session.
        return f"indexd_session_{self.port}"

    def new_code(self) -> str:
        self._expire()
        while len(self._codes) >= MAX_CODES:
            self._codes.pop(next(iter(self._codes)))
        code = secrets.token_urlsafe(24)
        self._codes[code] = self._clock() + CODE_TTL_S
        return code

    def redeem(self, code: str) -> str | None:
        """A new session id for a live code, which is spent by this call; None otherwise."""
        self._expire()
        found = next((c for c in self._codes if hmac.compare_digest(c, code)), None)
        if found is None:
            return None
        del self._codes[found]
        while len(self._sessions) >= MAX_SESSIONS:
            self._sessions.pop(next(iter(self._sessions)))
        session = secrets.token_urlsafe(32)
        self._sessions[session] = self._clock() + SESSION_TTL_S
        return session

    def set_cookie(self, session: str) -> str:
        return (f"{self.cookie_name}={session}; HttpOnly; SameSite=Strict; Path=/; "
                f"Max-Age={int(SESSION_TTL_S)}")

    def session_ok(self, cookie_header: str) -> bool:
        given = _cookie(cookie_header, self.cookie_name)
        if not given:
            return False
        self._expire()
        return any(hmac.compare_digest(s, given) for s in self._sessions)

    def _expire(self) -> None:
        now = self._clock()
        for table in (self._codes, self._sessions):
            for key in [k for k, until in table.items() if until <= now]:
                del table[key]


def _cookie(header: str, name: str) -> str:
    if not header:
        return ""
    jar = SimpleCookie()
    try:
        jar.load(header)
    except CookieError:
        return ""
    morsel = jar.get(name)
    return morsel.value if morsel is not None else ""


def same_origin(headers: dict, host: str, port: int) -> bool:
    """A cookie-authenticated request must come from our own pages.

    SameSite=Strict already keeps the cookie off cross-site requests; this
    refuses what a browser marks cross-site anyway, and a Host other than the
    one we listen on (DNS rebinding: evil.example resolving to 127.0.0.1).
    """
    if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return False
    ours = {f"{h}:{port}" for h in (host, "localhost", "127.0.0.1", "[::1]")}
    if host.count(":") > 1:
        ours.add(f"[{host}]:{port}")
    if headers.get("host", "") not in ours:
        return False
    origin = headers.get("origin")
    return origin is None or origin in {f"http://{h}" for h in ours}
