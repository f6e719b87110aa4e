"""File summaries without a model (docstring + outline), relationship sentences, and
secrets masked in every prompt, against the stand-in Ollama server.

No Ollama server can run here (no binary, no weights, no network):
tests/fakes/ollama_server.py is a local HTTP server speaking its API.
"""

from __future__ import annotations

import json

from indexd.enrich.file_summary import module_doc, outline_summary
from indexd.enrich.summarizer import DocstringSummarizer, OllamaSummarizer

from enrich_fixtures import fake_ollama  # noqa: F401 - fixture

AWS = "AKIA" + "QWERTYUIOPASDFGH"            # the shape of an AWS access key id, built at runtime
PAIR = {"src": "app.py", "dst": "blueprints.py", "src_summary": "The web app.",
        "dst_summary": "Route groups.",
        "evidence": "app.py imports Blueprint from blueprints.py and calls register 3 times."}


def rows(*items):
    return [{"kind": "file"}] + [dict(zip(("kind", "name", "doc", "parent"), it)) for it in items]


def test_code_file_summary_is_module_doc_then_outline():
    text = '#!/usr/bin/env python\n"""Blueprints group routes.\n\nMore detail."""\nimport os\n'
    got = outline_summary("bp.py", rows(("class", "Blueprint", "Routes registered together.", None),
                                        ("method", "register", "", "Blueprint"),
                                        ("function", "helper", "", None)), text, "python")
    assert got == ("Blueprints group routes. Defines class Blueprint (Routes registered "
                   "together); function helper.")


def test_licence_header_is_not_a_lead_and_big_outlines_are_cut():
    assert module_doc("// Copyright 2024 ACME\n// Licensed MIT\npackage x\n", "go") == ""
    assert module_doc("// Package x parses things.\npackage x\n", "go") == "Package x parses things."
    many = rows(*[("function", f"f{i}", "Does a thing.", None) for i in range(9)])
    got = outline_summary("m.py", many, "", "python")
    assert got == "Defines functions f0, f1, f2, f3 and 5 more."


def test_relation_without_model_is_the_evidence():
    assert DocstringSummarizer().describe_relation(PAIR) == (PAIR["evidence"], "evidence")


def test_relation_from_the_model(fake_ollama):
    fake_ollama.reply = lambda messages: "app.py mounts the route groups of blueprints.py."
    s = OllamaSummarizer(fake_ollama.url, "llama3.2", max_per_minute=60_000)
    assert s.describe_relation(PAIR) == ("app.py mounts the route groups of blueprints.py.", "llm")
    prompt = fake_ollama.requests[-1][3]["messages"][-1]["content"]
    assert "From: app.py (The web app.)" in prompt and PAIR["evidence"] in prompt


def test_dead_model_gives_the_evidence_and_says_why(fake_ollama):
    s = OllamaSummarizer(fake_ollama.url, "llama3.2", timeout=1, retries=0, max_per_minute=60_000)
    fake_ollama.set_mode("down")
    assert s.describe_relation(PAIR) == (PAIR["evidence"], "evidence")
    assert s.stats.error and fake_ollama.url in s.stats.error


def test_secrets_are_masked_in_every_prompt(fake_ollama):
    """Stored text is masked at scan time; the prompt boundary masks again whatever a
    prompt carries (a summary, an evidence sentence, a body given by a caller)."""
    s = OllamaSummarizer(fake_ollama.url, "llama3.2", max_per_minute=60_000)
    row = {"kind": "function", "name": "connect", "qualname": "connect", "path": "db.py",
           "lang": "python", "signature": "def connect()", "doc": f"Uses key {AWS}.",
           "body": f"def connect():\n    key = '{AWS}'\n"}
    s.summarize([row])
    s.summarize_file("db.py", [("connect", f"Connects with {AWS}")])
    s.describe_relation(PAIR | {"src_summary": f"Holds {AWS}"})
    sent = [json.dumps(body, ensure_ascii=False) for _t, _m, path, body in fake_ollama.requests if path == "/api/chat"]
    assert len(sent) == 3
    assert not [b for b in sent if AWS in b]
    assert all("«redacted»" in b for b in sent)
