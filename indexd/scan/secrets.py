"""Secret detection: decide whether a file must never be indexed.

Owns two checks, both pure: one on the repo-relative path (run before the
file is read at all) and one on decoded text, plus the redaction that masks
every value the content check would find (``redact_secrets``), so a page with
one example key is indexed without it instead of dropped. Reasons name the
rule and the line, never the matched value, because reasons are stored and
shown in status output. Every regex is compiled once at import.
"""

from __future__ import annotations

import base64
import binascii
import math
import posixpath
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

import pathspec

# --- names -----------------------------------------------------------------

# Basename globs (fnmatch-style, case-sensitive like the filesystem). Order
# matters only for the reason text.
_NAME_RULES = (
    (re.compile(r"\.env(\..*)?"), ".env*"),
    (re.compile(r".*\.pem"), "*.pem"),
    (re.compile(r".*\.key"), "*.key"),
    (re.compile(r".*\.p12"), "*.p12"),
    (re.compile(r".*\.pfx"), "*.pfx"),
    (re.compile(r".*\.keystore"), "*.keystore"),
    (re.compile(r".*\.jks"), "*.jks"),
    (re.compile(r"id_(rsa|dsa|ecdsa|ed25519).*"), "id_<keytype>*"),
    (re.compile(r"\.netrc|_netrc"), ".netrc"),
    (re.compile(r"\.pgpass"), ".pgpass"),
    (re.compile(r"credentials\.json"), "credentials.json"),
)
# Committed templates of .env files hold placeholders by convention.
_ENV_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template",
                            ".env.dist", ".env.defaults"})


def secret_name_reason(relpath: str, allow=()) -> str | None:
    """Why ``relpath`` looks like a secret by its name alone, or None."""
    if is_allowed(relpath, allow):
        return None
    name = posixpath.basename(relpath)
    if name in _ENV_TEMPLATES:
        return None
    # Public halves of ssh key pairs are fine to index.
    if name.startswith("id_") and name.endswith(".pub"):
        return None
    if relpath == ".aws/credentials" or relpath.endswith("/.aws/credentials"):
        return "name matches .aws/credentials"
    for rx, label in _NAME_RULES:
        if rx.fullmatch(name):
            return f"name matches {label}"
    return None


def is_allowed(relpath: str, allow) -> bool:
    """True when ``relpath`` matches one of the secret_allow globs (gitignore syntax)."""
    if not allow:
        return False
    return _allow_spec(tuple(allow)).match_file(relpath)


@lru_cache(maxsize=32)
def _allow_spec(allow: tuple) -> pathspec.GitIgnoreSpec:
    return pathspec.GitIgnoreSpec.from_lines(allow)


# --- content ---------------------------------------------------------------

# Token formats with a distinctive prefix. Each rule: (regex, label,
# min_entropy). A non-zero floor marks a weak prefix (``sk-``) whose value
# must also look random (digits, high entropy), so long kebab-case
# identifiers such as CSS class names are not taken for keys.
# No leading \b: a pattern that starts with a literal lets re skip ahead
# fast (~0.4 ms/MiB instead of ~14); the word boundary before the match is
# checked by hand instead.
_TOKEN_RULES = (
    (re.compile(r"A[KS]IA[0-9A-Z]{16}\b"), "AWS access key id", 0.0),
    (re.compile(r"gh[pousr]_[A-Za-z0-9]{36}\b"), "GitHub token", 0.0),
    (re.compile(r"github_pat_[A-Za-z0-9_]{50,}"), "GitHub token", 0.0),
    (re.compile(r"glpat-[A-Za-z0-9_-]{20,}"), "GitLab token", 0.0),
    (re.compile(r"xox[baprs]-[A-Za-z0-9-]{10,}"), "Slack token", 0.0),
    (re.compile(r"sk_live_[A-Za-z0-9]{20,}"), "Stripe live key", 0.0),
    (re.compile(r"rk_live_[A-Za-z0-9]{20,}"), "Stripe live key", 0.0),
    (re.compile(r"AIza[0-9A-Za-z_-]{35}"), "Google API key", 0.0),
    (re.compile(r"npm_[A-Za-z0-9]{36}\b"), "npm token", 0.0),
    (re.compile(r"pypi-AgE[A-Za-z0-9_-]{50,}"), "PyPI token", 0.0),
    (re.compile(r"sk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{32,}"), "API key (sk-)", 3.5),
    (re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"), "JWT", 0.0),
    # The three below are detect-secrets' formats that the corpus bench found missing.
    (re.compile(r"hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]{8,}"),
     "Slack webhook", 0.0),
    (re.compile(r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}"), "SendGrid key", 0.0),
    (re.compile(r"SK[0-9a-f]{32}\b"), "Twilio key", 3.0),
    (re.compile(r"AC[0-9a-f]{32}\b"), "Twilio key", 3.0),
)

# A key header alone shows up in PEM-parsing code and docs; a real block has
# base64 body lines right after it (maybe after Proc-Type/DEK-Info headers,
# maybe inside a string literal with escaped newlines).
_KEY_HEADER = re.compile(
    r"-----BEGIN (?:(?:RSA|EC|DSA|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY(?: BLOCK)?-----")
_KEY_BODY = re.compile(r"[A-Za-z0-9+/=]{40,}")
_KEY_BODY_WINDOW = 400

# Assignments: a name containing a sensitive word, then = or :, then a
# quoted or bare literal. A case-insensitive regex over the whole text costs
# ~40 ms/MiB, so the words are found with str.find on lowered text and this
# tail is matched from each hit. Bounded repeats keep each match cheap.
_ASSIGN_WORDS = ("passw", "secret", "token", "key")
_KEY_QUALIFIER = re.compile(r"(?:api|private|access)[_-]?\Z")  # api_key, privateKey...
_ASSIGN_TAIL = re.compile(
    r"[A-Za-z0-9_.-]{0,40}[\"']?[ \t]{0,8}(?::|=|:=|=>)[ \t]{0,8}"
    r"(?:\"(?P<dq>[^\"\n]{1,300})\"|'(?P<sq>[^'\n]{1,300})'"
    r"|(?P<bare>[^\s\"'`,;#()\[\]{}=<>][^\s\"'`,;()\[\]{}<>]{0,300}))")
_ASSIGN_SLOW = re.compile(  # only for text whose lower() changes length
    r"(?i)(?:passw|secret|token|(?:api|private|access)[_-]?key)" + _ASSIGN_TAIL.pattern)
_ASSIGN_MIN_LEN = 12
_ASSIGN_MIN_ENTROPY = 3.5

_PLACEHOLDER_WORDS = (
    "changeme", "change_me", "change-me", "example", "dummy", "test", "sample",
    "placeholder", "your_", "your-", "yourtoken", "redacted", "fake", "xxxx",
    "****", "....", "os.environ", "getenv", "process.env", "env(", "env[",
    "secrets.", "config.", "settings.", "<", "${", "{{", "%(", "{",
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOTTED_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_WORD_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def secret_content_reason(text: str) -> str | None:
    """Why ``text`` looks like it contains a secret, or None.

    Reports the first finding by line among the rule families checked
    (key blocks, token formats, assignments), with its line number.
    """
    found = []
    # On the same line the more specific family wins (a token format over
    # the generic assignment rule), hence the rank in the sort key.
    hits = (_find_key_block(text), _find_token(text), _find_assignment(text),
            _first_context_hit(text))
    for rank, hit in enumerate(hits):
        if hit:
            pos, label = hit
            found.append((text.count("\n", 0, pos) + 1, rank, label))
    if not found:
        return None
    line, _, label = min(found)
    return f"content: {label} at line {line}"


def _find_key_block(text: str) -> tuple[int, str] | None:
    if "PRIVATE KEY" not in text:  # cheap gate: the header regex is rarely needed
        return None
    for m in _KEY_HEADER.finditer(text):
        window = text[m.end():m.end() + _KEY_BODY_WINDOW]
        if _KEY_BODY.search(window):
            return m.start(), "private key block"
    return None


def _find_token(text: str) -> tuple[int, str] | None:
    best = None
    for rx, label, min_entropy in _TOKEN_RULES:
        for m in rx.finditer(text):
            value = m.group()
            if m.start() and _is_word_char(text[m.start() - 1]):
                continue  # inside a longer word: not this token format
            if _is_placeholder(value):
                continue
            if min_entropy and not _looks_random(value, min_entropy):
                continue
            if best is None or m.start() < best[0]:
                best = (m.start(), label)
            break  # the first real hit of a rule is enough
    return best


def _is_word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _find_assignment(text: str) -> tuple[int, str] | None:
    for start, m in _assignment_matches(text):
        value = m.group("dq") or m.group("sq")
        bare = value is None
        if bare:
            value = m.group("bare")
            # `token = tokenize(x)`, `secret = self.secret_key`: code, not data.
            if text[m.end():m.end() + 1] in ("(", "["):
                continue
        if _looks_like_secret_literal(value, bare):
            return start, "high-entropy value assigned to a secret-like name"
    return None


def _assignment_matches(text: str):
    """(start, tail match) for each sensitive word followed by an assignment, in order."""
    low = _lowered(text)
    if len(low) != len(text):  # rare non-ASCII case changes: offsets would drift
        yield from ((m.start(), m) for m in _ASSIGN_SLOW.finditer(text))
        return
    for start, end in sorted(_word_hits(low)):
        m = _ASSIGN_TAIL.match(text, end)
        if m:
            yield start, m


def _word_hits(low: str):
    for word in _ASSIGN_WORDS:
        pos = low.find(word)
        while pos >= 0:
            end = pos + len(word)
            if word != "key":
                yield pos, end
            else:
                q = _KEY_QUALIFIER.search(low, max(0, pos - 8), pos)
                if q:
                    yield q.start(), end
            pos = low.find(word, end)


def _looks_like_secret_literal(value: str, bare: bool) -> bool:
    if len(value) < _ASSIGN_MIN_LEN or any(c.isspace() for c in value):
        return False
    if "://" in value or (value.startswith(("/", "./", "~/")) and not _is_aws_secret(value)):
        return False  # URLs and paths (token endpoints, key file locations)
    if _is_placeholder(value):
        return False
    if bare and _DOTTED_NAME.fullmatch(value):
        return False
    # Words with digits are still words when bare (`TokenizerFast = MBart50Tokenizer` is
    # code) or a class name (`tokenizer_class = "HiggsAudioV2TokenizerModel"`).
    digits = sum(c.isdigit() for c in value)
    if (bare or digits == 0 or (digits <= 2 and _IDENTIFIER.fullmatch(value))) \
            and _looks_like_words(value):
        return False
    return shannon_entropy(value) >= _ASSIGN_MIN_ENTROPY


def _looks_random(value: str, min_entropy: float) -> bool:
    return any(c.isdigit() for c in value) and shannon_entropy(value) >= min_entropy


def _is_placeholder(value: str) -> bool:
    low = value.lower()
    if any(w in low for w in _PLACEHOLDER_WORDS):
        return True
    return len(set(low)) <= 2  # "aaaaaaaa", "0000...", "abababab"


def _looks_like_words(value: str) -> bool:
    """Identifier-ish text ("accessTokenExpiry", "token-type-hint") rather than random."""
    parts = _WORD_PARTS.findall(value)
    letters = sum(len(p) for p in parts)
    if not parts or letters < len(value) * 0.7:
        return False
    return letters / len(parts) >= 3.0


def shannon_entropy(s: str) -> float:
    """Bits per character of ``s`` (0.0 for the empty string)."""
    if not s:
        return 0.0
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


# --- families that need context: AWS secret keys, URLs, headers, bare randomness ----
# Added after bench/secrets_corpus.py planted secrets in real stdlib files and
# found these forms stored as is (docs/decisions.md: secret rules). Each yields
# (start, end, label) of the value alone, so masking keeps the name and the URL.

# An AWS secret access key is 40 base64 characters with no prefix of its own;
# it is taken only near something AWS-ish: "aws" in a name or a key id (AKIA…)
# on the same line or up to two lines before it (CSV exports, console prose).
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_KEY_ID = _TOKEN_RULES[0][0]
_AWS_NEAR_LINES = 2
_AWS_MIN_ENTROPY = 4.0   # random 40 of 64 symbols: 4.78 ± 0.13, none of 5,000 below 4.3

# user:password@ in any URL; the password is the value.
_URL_CREDENTIALS = re.compile(r"://[^\s:/?#@\"'`<>]{1,64}:([^\s/?#@\"'`<>]{1,128})@")
_URL_EXAMPLE_WORDS = ("pass", "pwd", "secret", "user", "login", "foo", "bar", "baz", "spam",
                      "eggs", "hunter2", "1234", "%s", "$")
_URL_MIN_LEN = 6

# Authorization headers: "Bearer <token>" and "Basic <base64 of user:password>".
_BEARER_TAIL = re.compile(r"[ \t]{1,4}([A-Za-z0-9._~+/-]{16,1024}=*)(?![A-Za-z0-9._~+/=-])")
_BASIC_TAIL = re.compile(r"[ \t]{1,4}([A-Za-z0-9+/]{8,512}={0,2})(?![A-Za-z0-9+/=])")
_HEADER_MIN_ENTROPY = 3.5

# A long random literal assigned to any name (DEPLOY_SIG = "…", "auth": "…", X=… in
# an env file). Calibrated on the stdlib (bench/secrets_corpus.py): its test
# vectors are lowercase hex digests or base64 of readable text, both excluded
# below, so only mixed-case-and-digit values above the floor remain.
# One regex per operator: a literal first character lets re skip ahead fast
# (~1 ms/MiB each; the class [=:] costs ~9).
_ASSIGNED_RANDOM = tuple(re.compile(
    op + r"[ \t]{0,8}[\"'`]?([A-Za-z0-9+/_-]{32,512}={0,2})(?![A-Za-z0-9+/=_-])") for op in "=:")
_RANDOM_MIN_ENTROPY = 4.2   # random 32 of 64 symbols: 4.56 ± 0.13 (0.6 % below 4.2)
# Checksums in lock files and sums files (integrity "sha512-…", go.sum "h1:…") are
# random by design and public.
_HASH_LABELS = ("h1", "sha1", "sha256", "sha384", "sha512", "md5", "integrity", "checksum",
                "hash", "digest", "fingerprint")
_SLUG_WORD = re.compile(r"[A-Z]?[a-z]{3,}")


def _context_spans(text: str):
    """(start, end, label) of every value found by the context families, unsorted."""
    yield from _aws_secret_spans(text)
    yield from _url_credential_spans(text)
    yield from _header_spans(text)
    yield from _assigned_random_spans(text)


def _first_context_hit(text: str) -> tuple[int, str] | None:
    hits = [(start, label) for start, _end, label in _context_spans(text)]
    return min(hits) if hits else None


def _aws_secret_spans(text: str):
    has_id = "AKIA" in text or "ASIA" in text   # str search: far cheaper than the regex
    anchors = [m.start() for m in _AWS_KEY_ID.finditer(text)] if has_id else []
    anchors += _word_positions(text, "aws")
    for start, end in _merge((text.rfind("\n", 0, a) + 1, _line_end(text, a, _AWS_NEAR_LINES))
                             for a in anchors):
        for m in _AWS_SECRET.finditer(text, start, end):
            if _looks_like_aws_secret(m.group()):
                yield m.start(), m.end(), "AWS secret access key"


def _line_end(text: str, pos: int, more_lines: int) -> int:
    for _ in range(more_lines + 1):
        pos = text.find("\n", pos)
        if pos < 0:
            return len(text)
        pos += 1
    return pos - 1


def _is_aws_secret(value: str) -> bool:
    """An AWS secret key's shape: may start with "/" like a path does."""
    return _AWS_SECRET.fullmatch(value) is not None and _looks_like_aws_secret(value)


def _looks_like_aws_secret(value: str) -> bool:
    return (_mixed_case_and_digit(value) and not _is_placeholder(value)
            and shannon_entropy(value) >= _AWS_MIN_ENTROPY)


def _mixed_case_and_digit(value: str) -> bool:
    return (any(c.isdigit() for c in value) and any(c.isupper() for c in value)
            and any(c.islower() for c in value))


def _url_credential_spans(text: str):
    if "://" not in text:
        return
    for m in _URL_CREDENTIALS.finditer(text):
        if _looks_like_password(m.group(1)):
            yield m.start(1), m.end(1), "password in a URL"


def _looks_like_password(value: str) -> bool:
    low = value.lower()
    if len(value) < _URL_MIN_LEN or _is_placeholder(value):
        return False
    return not any(w in low for w in _URL_EXAMPLE_WORDS)


def _header_spans(text: str):
    for word, tail, check in (("bearer", _BEARER_TAIL, _looks_like_bearer),
                              ("basic", _BASIC_TAIL, _looks_like_basic)):
        for pos in _word_positions(text, word):
            m = tail.match(text, pos + len(word))
            if m and (pos == 0 or not _is_word_char(text[pos - 1])) and check(m.group(1)):
                yield m.start(1), m.end(1), "Authorization header credential"


def _word_positions(text: str, word: str) -> list[int]:
    """Offsets of ``word`` (lowercase ASCII) in ``text``, any case."""
    low = _lowered(text)
    if len(low) != len(text):   # a non-ASCII case change: offsets would drift
        return [m.start() for m in re.finditer(word, text, re.IGNORECASE)]
    out, pos = [], low.find(word)
    while pos >= 0:
        out.append(pos)
        pos = low.find(word, pos + len(word))
    return out


@lru_cache(maxsize=2)
def _lowered(text: str) -> str:
    # Several families look words up case-blind in the same text: lower it once.
    return text.lower()


def _looks_like_bearer(value: str) -> bool:
    if _is_placeholder(value) or not any(c.isdigit() for c in value):
        return False
    return not _looks_like_words(value) and shannon_entropy(value) >= _HEADER_MIN_ENTROPY


def _looks_like_basic(value: str) -> bool:
    decoded = _b64_text(value)
    if decoded is None or ":" not in decoded:
        return False
    return _looks_like_password(decoded.split(":", 1)[1])


def _b64_text(value: str) -> str | None:
    """The printable text ``value`` is base64 of, or None when it is not (random bytes)."""
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), altchars=b"-_"
                               if ("-" in value or "_" in value) else None, validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return decoded if all(c.isprintable() or c in "\t\r\n" for c in decoded) else None


def _assigned_random_spans(text: str):
    for rx in _ASSIGNED_RANDOM:
        for m in rx.finditer(text):
            label = text[max(0, m.start() - 16):m.start()].rstrip("\"' \t").lower()
            if label.endswith(_HASH_LABELS):
                continue
            if _looks_like_random_literal(m.group(1)):
                yield m.start(1), m.end(1), "high-entropy literal"


def _looks_like_random_literal(value: str) -> bool:
    if not _mixed_case_and_digit(value) or _is_placeholder(value):
        return False
    if value.lower().startswith(tuple(h + "-" for h in _HASH_LABELS)):
        return False
    if _looks_like_words(value) or _looks_like_slug(value) or _b64_text(value) is not None:
        return False   # identifiers, model ids, licence names; base64 of readable text
    return shannon_entropy(value) >= _RANDOM_MIN_ENTROPY


def _looks_like_slug(value: str) -> bool:
    """Words joined by separators ("mistralai/Mistral-Small-4-2603"), not random symbols."""
    parts = re.split(r"[-_/.+]", value)
    return sum(1 for p in parts if _SLUG_WORD.fullmatch(p)) >= 2


# --- redaction ---------------------------------------------------------------

MASK = "\u00abredacted\u00bb"   # «redacted»: no newline, so every line keeps its number
_REPEAT_MIN_LEN = 8              # shorter found values are not hunted elsewhere in the text
# A key block without its END line: the body continues while lines look like base64
# (or the Proc-Type/DEK-Info headers of an encrypted key).
_BODY_LINE = re.compile(r"[ \t]*(?:[A-Za-z0-9+/=]+|Proc-Type:.*|DEK-Info:.*)?[ \t\r]*")


@dataclass(frozen=True)
class Redaction:
    text: str                  # the input with every secret value replaced by MASK
    count: int                 # distinct secret values masked
    lines: tuple[int, ...]     # 1-based lines where each value was first found


def redact_secrets(text: str) -> Redaction | None:
    """``text`` with every value the content check finds masked, or None when clean.

    Masks never remove a newline, so the line numbers of everything else stay
    right. A value found once is masked wherever else it appears (docs repeat
    their example key in prose). Slower than ``secret_content_reason`` (every
    hit of every rule), so callers run it only on text that check flagged.
    """
    found = _merge(_secret_spans(text))
    if not found:
        return None
    repeats = [(s, e) for v in {text[s:e] for s, e in found if e - s >= _REPEAT_MIN_LEN
                                and "\n" not in text[s:e]}
               for s, e in _occurrences(text, v)]
    masked = _merge(found + repeats)
    out, pos = [], 0
    for start, end in masked:
        out.append(text[pos:start])
        out.append("\n".join(MASK if piece.strip() else piece
                              for piece in text[start:end].split("\n")))
        pos = end
    out.append(text[pos:])
    first: dict[str, int] = {}
    for start, end in found:
        first.setdefault(text[start:end], text.count("\n", 0, start) + 1)
    return Redaction("".join(out), len(first), tuple(sorted(set(first.values()))))


def _secret_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every secret value: key bodies, tokens, assigned literals, context families."""
    return (list(_key_block_spans(text)) + list(_token_spans(text)) + list(_assignment_spans(text))
            + [(start, end) for start, end, _label in _context_spans(text)])


def _key_block_spans(text: str):
    if "PRIVATE KEY" not in text:
        return
    for m in _KEY_HEADER.finditer(text):
        if not _KEY_BODY.search(text, m.end(), m.end() + _KEY_BODY_WINDOW):
            continue  # a header alone (parsing code, docs): nothing to hide
        end = text.find("-----END", m.end())
        if end < 0:
            end = _body_end(text, m.end())
        start = m.end()
        while start < end and text[start] in " \t\r\n":
            start += 1
        while end > start and text[end - 1] in " \t\r\n":
            end -= 1
        if end > start:
            yield start, end


def _body_end(text: str, pos: int) -> int:
    """Where a key body without an END line stops: the first line that is not base64."""
    line_end = text.find("\n", pos)
    if line_end < 0:
        return len(text)
    if text[pos:line_end].strip():   # the body follows the header on its line
        return line_end
    while True:
        start = line_end + 1
        line_end = text.find("\n", start)
        stop = len(text) if line_end < 0 else line_end
        if not text[start:stop].strip() or not _BODY_LINE.fullmatch(text, start, stop):
            return start
        if line_end < 0:
            return stop


def _token_spans(text: str):
    for rx, _label, min_entropy in _TOKEN_RULES:
        for m in rx.finditer(text):
            value = m.group()
            if m.start() and _is_word_char(text[m.start() - 1]):
                continue
            if _is_placeholder(value) or (min_entropy and not _looks_random(value, min_entropy)):
                continue
            yield m.span()


def _assignment_spans(text: str):
    for _start, m in _assignment_matches(text):
        group = "dq" if m.group("dq") else "sq" if m.group("sq") else "bare"
        bare = group == "bare"
        if bare and text[m.end():m.end() + 1] in ("(", "["):
            continue
        if _looks_like_secret_literal(m.group(group), bare):
            yield m.span(group)


def _occurrences(text: str, value: str):
    pos = text.find(value)
    while pos >= 0:
        yield pos, pos + len(value)
        pos = text.find(value, pos + len(value))


def _merge(spans) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(s, e) for s, e in out]
