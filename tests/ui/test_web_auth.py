"""Sign-in codes, sessions and the event fan-out, on their own (no daemon, no browser)."""

from __future__ import annotations

import asyncio

from indexd.web.auth import CODE_TTL_S, MAX_CODES, SESSION_TTL_S, UiAuth, same_origin
from indexd.web.events import QUEUE_MAX, EventHub


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_code_dies_after_its_minute_and_a_session_after_its_hours():
    clock = Clock()
    auth = UiAuth(7777, clock=clock)
    late = auth.new_code()
    clock.now += CODE_TTL_S + 1
    assert auth.redeem(late) is None
    session = auth.redeem(auth.new_code())
    cookie = f"other=1; {auth.cookie_name}={session}"
    assert session and auth.session_ok(cookie)
    clock.now += SESSION_TTL_S + 1
    assert not auth.session_ok(cookie)


def test_unredeemed_codes_are_bounded_oldest_first():
    auth = UiAuth(7777, clock=Clock())
    codes = [auth.new_code() for _ in range(MAX_CODES + 5)]
    assert auth.redeem(codes[0]) is None              # pushed out by the newer ones
    assert auth.redeem(codes[-1]) is not None


def test_the_cookie_names_its_port_and_is_httponly_and_strict():
    auth = UiAuth(41234)
    header = auth.set_cookie("abc")
    assert header.startswith("indexd_session_41234=abc;")
    assert "HttpOnly" in header and "SameSite=Strict" in header and "Path=/" in header
    assert not auth.session_ok("indexd_session_41234=abc")        # never handed out
    assert not auth.session_ok('indexd_session_41234="; junk')    # malformed: no, not a crash


def test_same_origin_accepts_our_addresses_only():
    ok = {"host": "127.0.0.1:8000", "origin": "http://127.0.0.1:8000",
          "sec-fetch-site": "same-origin"}
    assert same_origin(ok, "127.0.0.1", 8000)
    assert same_origin({"host": "localhost:8000"}, "127.0.0.1", 8000)
    assert not same_origin(ok | {"host": "127.0.0.1:8001"}, "127.0.0.1", 8000)
    assert not same_origin(ok | {"origin": "null"}, "127.0.0.1", 8000)
    assert not same_origin(ok | {"sec-fetch-site": "same-site"}, "127.0.0.1", 8000)
    assert not same_origin({}, "127.0.0.1", 8000)                 # no Host at all


def test_a_slow_stream_keeps_the_newest_events():
    async def run():
        hub = EventHub()
        q = hub.open()
        for n in range(QUEUE_MAX + 10):
            hub.publish("status", {"generation": n})
        first = await q.get()
        hub.close_all()
        rest = []
        while (item := await q.get()) is not None:
            rest.append(item)
        return first, rest

    first, rest = asyncio.run(run())
    assert b'"generation": 10}' in first          # the 10 oldest were dropped
    assert b'"generation": %d}' % (QUEUE_MAX + 9) in rest[-1]
