"""Embedding texts per entry, the paragraph chunker and the cache key."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings, strategies as st

from indexd.enrich.texts import (
    MAX_CHARS,
    PART_SEP,
    RECIPES,
    chunk_spans,
    chunk_text,
    embed_hash,
    embed_parts,
    embed_text,
    estimate_tokens,
)
from indexd.model import content_hash

ROW = {
    "kind": "method", "name": "_read_chunked", "qualname": "HTTPResponse._read_chunked",
    "signature": "def _read_chunked(self, amt=None)",
    "doc": "Read a chunked response body.\n\nReturns the bytes read.",
    "body": ('def _read_chunked(self, amt=None):\n'
             '        """Read a chunked response body.\n\n        Returns the bytes read.\n'
             '        """\n        assert self.chunked != _UNKNOWN\n'
             '        value = []\n        try:\n            while True:\n'
             '                chunk_left = self._get_chunk_left()\n'),
    "path": "Lib/http/client.py", "lang": "python", "summary": "", "summary_source": "",
}


def test_default_recipe_has_every_part_once():
    text = embed_text(ROW, "default")
    assert "http response read chunked" in text          # split name words
    assert "HTTPResponse._read_chunked" in text and "method" in text
    assert "def _read_chunked(self, amt=None)" in text
    assert "Read a chunked response body." in text
    assert "path: Lib/http/client.py" in text
    assert "chunk_left = self._get_chunk_left()" in text
    # The docstring and def line from the body are not repeated.
    assert text.count("Read a chunked response body.") == 1
    assert text.count("def _read_chunked") == 1
    assert "        " not in text                           # indentation collapsed


def test_name_doc_and_body_recipes():
    name_doc = embed_text(ROW, "name_doc")
    assert "read chunked" in name_doc and "Read a chunked" in name_doc
    assert "chunk_left" not in name_doc and "path:" not in name_doc
    body = embed_text(ROW, "body")
    assert "read chunked" in body and "chunk_left" in body and "Returns the bytes" not in body
    assert set(RECIPES) >= {"pooled", "default", "name_doc", "body"}
    with pytest.raises(ValueError, match="recipe"):
        embed_text(ROW, "nope")


@pytest.mark.parametrize("recipe", RECIPES)
def test_recipes_are_capped(recipe):
    big = dict(ROW, doc="word " * 2000, body="x = 1\n" * 2000, signature="def f(" + "a, " * 300)
    parts = embed_parts(big, recipe)
    assert all(len(part) <= MAX_CHARS for part in parts)
    assert parts[0].startswith("method HTTPResponse._read_chunked (http response read chunked)")


def test_pooled_recipe_adds_the_name_and_first_sentence_of_a_docstring():
    main, doc = embed_parts(ROW)                           # pooled is the default
    assert main == embed_text(ROW, "default")              # the same first text: cached vectors reused
    assert doc == "http response read chunked: Read a chunked response body."
    assert embed_text(ROW) == main + PART_SEP + doc        # the row's key hashes both
    long_first = dict(ROW, doc="Return the value.  Raise KeyError if it is missing.\nMore.")
    assert embed_parts(long_first)[1] == "http response read chunked: Return the value."
    wrapped = dict(ROW, doc="Return the value of a key\n    across two lines.\n\nDetails.")
    assert embed_parts(wrapped)[1].endswith(": Return the value of a key across two lines.")


@pytest.mark.parametrize("row", [
    dict(ROW, doc=""),                                                   # no docstring
    dict(ROW, kind="section", lang="markdown", doc="Intro."),            # not code
    dict(ROW, kind="file", doc="Module docstring."),                     # a file's text is its own
])
def test_pooled_recipe_keeps_one_text_where_there_is_no_code_docstring(row):
    assert embed_parts(row) == [embed_text(row, "default")]
    assert embed_text(row) == embed_text(row, "default")                 # the same cache key


def test_summary_used_when_no_doc_and_llm_summary_added():
    row = dict(ROW, doc="", summary="Reads chunks.", summary_source="docstring")
    assert "Reads chunks." in embed_text(row, "name_doc")
    row = dict(ROW, summary="Decodes HTTP chunked transfer encoding.", summary_source="llm")
    text = embed_text(row, "name_doc")
    assert "Read a chunked" in text and "Decodes HTTP chunked" in text


def test_section_rows_keep_their_body():
    row = {"kind": "section", "qualname": "Install > From source", "name": "From source",
           "signature": "", "doc": "", "body": "## From source\n\nRun `make install`.",
           "path": "README.md"}
    text = embed_text(row)
    assert "install from source" in text and "make install" in text


def test_embed_hash_is_the_content_hash_of_model_and_text():
    assert embed_hash("abc", "m/1") == content_hash("m/1\x1fabc")
    assert embed_hash("abc", "m/1") != embed_hash("abc", "m/2")
    assert embed_hash("abc", "m/1") != embed_hash("abd", "m/1")


# ------------------------------------------------------------------ chunking

def test_short_text_is_one_chunk():
    assert chunk_text("one para\n\ntwo para") == ["one para\n\ntwo para"]
    assert chunk_text("   \n\n  ") == []


def test_chunks_overlap_with_previous_tail():
    paras = [" ".join(f"p{i}w{j}" for j in range(20)) for i in range(12)]
    chunks = chunk_text("\n\n".join(paras), max_tokens=120, overlap=20)
    assert len(chunks) > 2
    for prev, nxt in zip(chunks, chunks[1:]):
        head = nxt.split("\n\n", 1)[0]
        assert prev.endswith(head)                       # tail of previous, repeated
        assert 0 < estimate_tokens(head) <= 20
        assert estimate_tokens(nxt) <= 120


def test_long_paragraph_split_at_sentences():
    para = " ".join(f"Sentence number {i} says something." for i in range(100))
    chunks = chunk_text(para, max_tokens=60, overlap=0)
    assert len(chunks) > 5
    assert all(estimate_tokens(c) <= 60 for c in chunks)
    assert all(c.endswith(".") for c in chunks)          # cut at sentence ends


def test_unsplittable_token_stands_alone():
    token = "x" * 400                                    # 100 estimated tokens
    chunks = chunk_text(f"short words here\n\n{token}\n\nmore words", max_tokens=20, overlap=5)
    assert token in chunks[1] or any(c == token for c in chunks)
    assert all(estimate_tokens(c) <= 20 for c in chunks if token not in c)


_WORD = st.text(alphabet="abcdefghij.", min_size=1, max_size=12)
_PARA = st.lists(_WORD, min_size=1, max_size=40).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(paras=st.lists(_PARA, min_size=1, max_size=15),
       max_tokens=st.integers(8, 120), overlap=st.integers(0, 30))
def test_chunk_properties(paras, max_tokens, overlap):
    text = "\n\n".join(paras)
    chunks = chunk_text(text, max_tokens=max_tokens, overlap=overlap)
    # No chunk above the limit unless it is a single unsplittable token.
    for c in chunks:
        assert estimate_tokens(c) <= max_tokens or len(c.split()) == 1
    # Every paragraph that fits appears verbatim in some chunk.
    for p in paras:
        if estimate_tokens(p) <= max_tokens:
            assert any(p in c for c in chunks)
    # Every word of the text appears, in order, across the chunks.
    assert _is_subsequence(text.split(), [w for c in chunks for w in c.split()])


@settings(max_examples=100, deadline=None)
@given(paras=st.lists(st.lists(st.sampled_from(["alpha", "beta", "gamma"]), min_size=1,
                               max_size=8).map(" ".join), min_size=2, max_size=30),
       overlap=st.integers(2, 10))
def test_chunk_overlap_property(paras, overlap):
    max_tokens = 40
    chunks = chunk_text("\n\n".join(paras), max_tokens=max_tokens, overlap=overlap)
    assume(len(chunks) > 1)
    for prev, nxt in zip(chunks, chunks[1:]):
        head = nxt.split("\n\n", 1)[0].split()
        assert head and prev.split()[-len(head):] == head
        assert estimate_tokens(" ".join(head)) <= overlap


def test_chunk_spans_point_at_each_chunks_own_text():
    # After the first chunk, each starts with the previous one's tail (the overlap)
    # and a blank line; its offset is where its own text starts in the source.
    paras = [" ".join(f"p{i}w{j}" for j in range(20)) for i in range(12)]
    text = "\n\n".join(paras)
    spans = chunk_spans(text, max_tokens=120, overlap=20)
    assert [c for c, _ in spans] == chunk_text(text, max_tokens=120, overlap=20)
    for n, (chunk, at) in enumerate(spans):
        own = chunk.split("\n\n", 1)[1] if n else chunk
        assert text[at:].startswith(own.split()[0])
    assert spans[0][1] == 0


def test_chunk_spans_of_a_long_line_point_mid_line():
    text = "  " + " ".join(f"w{i}" for i in range(600))          # one sentence, one line
    spans = chunk_spans(text, max_tokens=60, overlap=0)
    assert len(spans) > 5
    for chunk, at in spans:
        first = chunk.split()[0]
        assert text[at:at + len(first)] == first and text[at - 1] == " "


@settings(max_examples=150, deadline=None)
@given(paras=st.lists(_PARA, min_size=1, max_size=15),
       max_tokens=st.integers(8, 120), overlap=st.integers(0, 30))
def test_chunk_span_offsets_property(paras, max_tokens, overlap):
    text = "\n\n".join(paras)
    for chunk, at in chunk_spans(text, max_tokens=max_tokens, overlap=overlap):
        heads = {chunk.split()[0], chunk.split("\n\n", 1)[-1].split()[0]}
        assert text[at:].split()[0] in heads
        assert at == 0 or text[at - 1].isspace()


def _is_subsequence(needle: list[str], hay: list[str]) -> bool:
    it = iter(hay)
    return all(any(w == h for h in it) for w in needle)
