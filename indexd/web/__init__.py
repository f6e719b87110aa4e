"""The web UI: pages, their sign-in and their live status feed.

Served by the REST server (`indexd.server.rest_app`) next to ``/api/v1``;
the pages are static files under ``static/`` that call the REST API from the
browser, so every answer still comes from ``Methods.call``. This package owns
the parts that are not JSON: static files with their security headers
(`assets`), one-time sign-in codes and session cookies (`auth`), and the
server-sent event stream of status notifications (`events`).

Must not import the engine, the store or the server modules: the HTTP server
imports this package, not the other way round.
"""
