"""index_summary and the words in index_impact, through `indexd mcp` (a real
subprocess driven by the official MCP SDK client) against a real daemon."""

from __future__ import annotations

import pytest
from testlib import settings_with_realm

pytest.importorskip("mcp")

from test_mcp_server import call, run  # noqa: E402

BLUEPRINTS = ('"""Route groups for the web app."""\n\n\nclass Blueprint:\n'
              '    """Routes registered together."""\n\n    def register(self, app):\n'
              '        return app\n')
APP = ('"""The web app."""\nfrom blueprints import Blueprint\n\n\ndef make_app():\n'
       '    bp = Blueprint()\n    bp.register(1)\n    return bp\n')


def test_summary_and_impact_in_words(git_repo, daemon, indexd_home):
    git_repo.write("blueprints.py", BLUEPRINTS)
    git_repo.write("app.py", APP)
    git_repo.commit()
    settings_with_realm("work", git_repo.path)
    d = daemon()
    d.call("status", sync=True)

    async def body(s):
        return (await call(s, "index_summary", path="blueprints.py"),
                await call(s, "index_impact", target="blueprints.py"),
                await call(s, "index_summary", path="nowhere.py"))

    (summary, err), (impact, err2), (missing, err3) = run(indexd_home, body, cwd=git_repo.path)
    assert not err and not err2
    assert summary.splitlines()[0] == ("blueprints.py: Route groups for the web app. Defines "
                                       "class Blueprint (Routes registered together).")
    assert ("  app.py — app.py imports Blueprint from blueprints.py and calls Blueprint and "
            "register.") in summary.splitlines()
    assert "app.py imports Blueprint from blueprints.py" in impact
    assert "The web app. Defines function make_app." in impact
    assert err3 and "nowhere.py" in missing
