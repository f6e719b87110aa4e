"""Secret detection by name and by content.

Every secret-looking value is assembled at runtime so this file itself does
not trip secret scanners.
"""

from __future__ import annotations

import pytest

from indexd.scan.secrets import (MASK, redact_secrets, secret_content_reason, secret_name_reason,
                                 shannon_entropy)

RAND36 = "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"   # 36 mixed alnum
RAND40 = RAND36 + "cD7e"


# --- names -----------------------------------------------------------------

@pytest.mark.parametrize("path", [
    ".env", ".env.local", "config/.env.production", "certs/server.pem", "tls.key",
    "store.p12", "cert.pfx", "id_rsa", "home/.ssh/id_ed25519", "id_ecdsa_work",
    ".netrc", ".pgpass", "gcp/credentials.json", ".aws/credentials",
    "home/.aws/credentials", "android/release.keystore",
])
def test_secret_names_flagged(path):
    reason = secret_name_reason(path)
    assert reason and reason.startswith("name matches ")


@pytest.mark.parametrize("path", [
    ".env.example", ".env.sample", ".env.template", "id_rsa.pub", "id_ed25519.pub",
    "src/env.py", "environment.md", "keys.py", "key.txt", "credentials.py",
    "aws/credentials.md", ".npmrc", ".pypirc", "README.md", "monkey",
])
def test_ordinary_names_not_flagged(path):
    assert secret_name_reason(path) is None


def test_allow_globs_exempt_names():
    assert secret_name_reason("tests/fixtures/server.pem", allow=("tests/fixtures/",)) is None
    assert secret_name_reason("certs/server.pem", allow=("tests/fixtures/",))
    assert secret_name_reason("demo/.env", allow=("demo/.env",)) is None


# --- content: token formats --------------------------------------------------

def _key_block(kind: str) -> str:
    body = "\n".join(["MIIEowIBAAKCAQEA" + RAND36 + "xyz0", RAND40 + "QRSTUV12"] * 3)
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----\n"


@pytest.mark.parametrize("kind", [
    "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "OPENSSH PRIVATE KEY",
    "PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK",
])
def test_private_key_blocks(kind):
    text = "# deploy key\n\n" + _key_block(kind)
    assert secret_content_reason(text) == "content: private key block at line 3"


def test_private_key_inside_string_literal():
    text = 'KEY = "' + _key_block("RSA PRIVATE KEY").replace("\n", "\\n") + '"\n'
    assert "private key block at line 1" in secret_content_reason(text)


def test_key_header_without_body_is_code_not_a_key():
    text = 'if line.startswith("-----BEGIN RSA PRIVATE KEY-----"):\n    parse(line)\n'
    assert secret_content_reason(text) is None


TOKENS = {
    "AWS access key id": "AKIA" + "Q7ZLM2N4P6R8T0VX",
    "AWS access key id ": "ASIA" + "Q7ZLM2N4P6R8T0VX",
    "GitHub token": "ghp_" + RAND36,
    "GitHub token ": "gho_" + RAND36,
    "GitHub token  ": "github_pat_" + "11ABCDEFG0" + RAND36 + "_" + RAND36,
    "GitLab token": "glpat-" + "x1Y2z3A4b5C6d7E8f9G0",
    "Slack token": "xoxb-" + "123456789012-1234567890123-" + RAND36[:24],
    "Stripe live key": "sk_live_" + RAND36[:24],
    "Google API key": "AIza" + RAND36 + "Zq",
    "API key (sk-)": "sk-" + RAND40 + "Zz09",
    "JWT": "eyJ" + "hbGciOiJIUzI1NiJ9" + ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0" + "." + RAND36[:30],
}


@pytest.mark.parametrize("label,token", TOKENS.items())
def test_token_formats(label, token):
    text = "import os\n\nvalue = compute()\nclient = Client('" + token + "')\n"
    reason = secret_content_reason(text)
    assert reason == f"content: {label.strip()} at line 4"
    assert token not in reason


@pytest.mark.parametrize("text", [
    "key = 'AKIAIOSFODNN7EXAMPLE'\n",              # AWS documentation example
    "TOKEN = 'ghp_" + "x" * 36 + "'\n",            # obvious placeholder
    "name = 'sk-" + "this-is-a-very-long-css-class-name-here" + "'\n",
    "url = 'https://example.com/eyJhbGci.not-a-jwt'\n",
    "MASKAKIAQ7ZLM2N4P6R8T0VX = 1\n",               # inside a longer identifier
])
def test_token_lookalikes_not_flagged(text):
    assert secret_content_reason(text) is None


# --- content: assignments ----------------------------------------------------

HIGH = "Zx8" + "qT4vN1" + "wLp6Ks"    # 15 chars, ~3.9 bits/char


@pytest.mark.parametrize("text", [
    'password = "' + HIGH + '"\n',
    "DB_PASSWORD=" + HIGH + "\n",
    "api_key: '" + HIGH + "'\n",
    '  "client_secret": "' + HIGH + '",\n',
    "//registry.npmjs.org/:_authToken=" + HIGH + "\n",
    "privateKey => '" + HIGH + "'\n",
    "AWS_ACCESS_KEY = " + HIGH + "\n",
])
def test_high_entropy_assignments(text):
    reason = secret_content_reason("x = 1\n" + text)
    assert reason == "content: high-entropy value assigned to a secret-like name at line 2"
    assert HIGH not in reason


@pytest.mark.parametrize("text", [
    "token = tokenize(x)\n",
    "tokens = tokenizer.tokenize_all_the_things(x)\n",
    "secret = self.secret_key_value\n",
    'password = os.environ["DB_PASSWORD"]\n',
    'password = os.getenv("DB_PASSWORD")\n',
    'password = "changeme"\n',
    'password = "' + "x" * 20 + '"\n',
    'api_key = "<your-api-key-here>"\n',
    'API_KEY="${API_KEY}"\n',
    'secret: "{{ vault_secret }}"\n',
    'token = "your_token_goes_here"\n',
    'password = "example-Passw0rd-1"\n',
    'password = "dummyPassword123"\n',
    'token_url = "https://oauth2.googleapis.com/token"\n',
    'private_key_path = "/etc/ssl/private/server.key"\n',
    'password = "Please enter your password"\n',
    'token_type = "accessTokenExpiry"\n',
    "secret = 'short1'\n",
    "if password == expected_password_hash:\n",
    "monkey = 'Zx8qT4vN1wLp6Ks'\n",
])
def test_ordinary_code_not_flagged(text):
    assert secret_content_reason(text) is None


def test_reports_first_finding_by_line():
    text = "a = 1\n" + 'password = "' + HIGH + '"\n' + "k = 'AKIA" + "Q7ZLM2N4P6R8T0VX'\n"
    assert secret_content_reason(text).endswith("at line 2")


def test_non_ascii_text_still_scanned():
    # "İ".lower() is two characters long; the slow path must keep working.
    text = "# İstanbul\n" + 'password = "' + HIGH + '"\n'
    assert secret_content_reason(text).endswith("at line 2")


def test_entropy():
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaa") == 0.0
    assert abs(shannon_entropy("abcd") - 2.0) < 1e-9
    assert shannon_entropy(HIGH) >= 3.5


def test_config_files_with_auth_are_content_checked():
    npmrc = "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=npm_" + RAND36 + "\n"
    pypirc = "[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmc" + RAND36 + RAND36 + "\n"
    assert secret_name_reason(".npmrc") is None and secret_name_reason(".pypirc") is None
    assert secret_content_reason(npmrc) == "content: npm token at line 2"
    assert secret_content_reason(pypirc) == "content: PyPI token at line 3"
    assert secret_content_reason("registry=https://registry.npmjs.org/\n") is None


# --- redaction ---------------------------------------------------------------

DJANGO_KEY = "192b9bdd22ab9ed4d12e236c78afcb9a393ec15f71bbf5dc987d54727823bcbf"


def test_redaction_masks_every_finding_and_keeps_lines():
    text = ("# settings\nDEBUG = True\n"
            f"SECRET_KEY = '{DJANGO_KEY}'\n"
            "aws = 'AKIA" + "Q7ZLM2N4P6R8T0VX'\n"
            "echo " + DJANGO_KEY + " again\n"        # the same value, unassigned
            "# deploy\n" + _key_block("RSA PRIVATE KEY") + "tail line\n")
    assert secret_content_reason(text)
    red = redact_secrets(text)
    assert red.count == 3 and red.lines == (3, 4, 8)
    assert red.text.count("\n") == text.count("\n")
    assert DJANGO_KEY not in red.text and "Q7ZLM2N4P6R8T0VX" not in red.text
    assert RAND36 not in red.text and "MIIE" not in red.text
    assert f"SECRET_KEY = '{MASK}'" in red.text
    assert "-----BEGIN RSA PRIVATE KEY-----" in red.text and "tail line" in red.text
    for old, new in zip(text.splitlines(), red.text.splitlines()):
        if old == new:
            continue
        assert MASK in new, (old, new)
    assert secret_content_reason(red.text) is None   # nothing left to find


def test_redaction_of_clean_text_is_none():
    assert redact_secrets("x = 1\npassword = os.environ['P']\n") is None


@pytest.mark.parametrize("text", [
    'password = "' + HIGH + '"\n',
    '  "client_secret": "' + HIGH + '",\n',
    "DB_PASSWORD=" + HIGH + "\n",
    "# İstanbul\n" + 'password = "' + HIGH + '"\n',       # non-ASCII slow path
    "key = 'x'\ntoken: " + "ghp_" + RAND36 + "\n",
    "k = '" + "-----BEGIN PRIVATE KEY-----\\n" + RAND40 + "QRSTUV12\\n-----END PRIVATE KEY-----'\n",
])
def test_redaction_leaves_nothing_detectable(text):
    red = redact_secrets(text)
    assert red is not None and red.count >= 1
    assert HIGH not in red.text and RAND36 not in red.text and RAND40 not in red.text
    assert red.text.count("\n") == text.count("\n")
    assert secret_content_reason(red.text) is None


# --- content: forms the planted-secret corpus found stored (bench/secrets_corpus.py) ---

SAK = "wJ9r" + "Xk2Ut" + "nFEMI/K7MDENG/bPxRfiCY" + "Lq4sZp0a7"   # 40 chars, AWS secret key shape
PW = "qC8ev" + "Qhy7cTK" + ".Mx2"
OPAQUE = "x7Gh" + "Qe9LmN2pR" + "4tVb8KcZ" + "1sWd5YfJ" + "3uAi6oEr"   # 37 chars url-safe
B64_40 = "k2J9" + "qLw8ZxN4vB" + "7mTr1sYp" + "0dHf+gC3eU" + "6aWo5iRtKj"[:8]
BASIC = "ZGVwbG95O" + "nFDOGV2UWh5N2NUSw=="   # base64 of deploy:<a password>

assert len(SAK) == 40

CONTEXT_FORMS = {
    # the case: nothing in the name but "AWS"
    'AWS_SAK = "' + SAK + '"\n': ("AWS secret access key", SAK),
    "aws_sak: " + SAK + "\n": ("AWS secret access key", SAK),
    'AWS_SECRET_ACCESS_KEY: "/' + SAK[1:] + '"\n': (None, "/" + SAK[1:]),   # starts like a path
    "ci-bot,AKIA" + "Q7ZLM2N4P6R8T0VX," + SAK + "\n": ("AWS access key id", SAK),
    "Access key ID: AKIA" + "Q7ZLM2N4P6R8T0VX\nSecret access key: " + SAK + "\n":
        ("AWS access key id", SAK),
    'DATABASE_URL = "postgres://app:' + PW + '@db.internal:5432/main"\n': ("password in a URL", PW),
    "# connect with mysql://svc:" + PW + "@10.0.3.7/main\n": ("password in a URL", PW),
    'curl -H "Authorization: Bearer ' + OPAQUE + '" https://api.internal/v1\n':
        ("Authorization header credential", OPAQUE),
    'headers = {"Authorization": "Bearer ' + OPAQUE + '"}\n': ("Authorization header credential", OPAQUE),
    "Authorization: Basic " + BASIC + "\n": ("Authorization header credential", BASIC),
    'DEPLOY_SIG = "' + B64_40 + '"\n': ("high-entropy literal", B64_40),
    '"upstream_auth": "' + B64_40 + '",\n': ("high-entropy literal", B64_40),
    "PEPPER=" + B64_40 + "\n": ("high-entropy literal", B64_40),
    "hook = 'https://hooks.slack.com/services/T0ABCDEFG/B0HIJKLMNOP/" + RAND36[:24] + "'\n":
        ("Slack webhook", RAND36[:24]),
    "SENDGRID = 'SG." + RAND36[:22] + "." + RAND40 + "Q7z'\n": ("SendGrid key", RAND40),
    "TWILIO = 'SK" + "3f9a0c1d7e5b2a4f6c8d0e1f2a3b4c5d'\n": ("Twilio key", "3f9a0c1d7e5b2a4f6c8d0e1f"),
}


@pytest.mark.parametrize("text", CONTEXT_FORMS)
def test_context_families_flag_and_mask(text):
    label, value = CONTEXT_FORMS[text]
    reason = secret_content_reason("x = 1\n" + text)
    assert reason is not None and value not in reason
    if label:
        assert reason == f"content: {label} at line 2"
    red = redact_secrets("x = 1\n" + text)
    assert value not in red.text and MASK in red.text
    assert red.text.count("\n") == text.count("\n") + 1
    assert secret_content_reason(red.text) is None   # the reader stores it, not withholds it


@pytest.mark.parametrize("text", [
    "law_firm = 'ZmFrZSBhd3MgbmVhcmJ5IGZvciB0aGUgdGVzdHM='\n",   # "aws" inside a word; base64 of text
    "REGION = 'eu-west-1'  # aws\nsha = '" + "a" * 20 + "b" * 20 + "'\n",
    "url = 'https://user:pass@example.com/'\n",                    # the docs' example credentials
    "url = 'ftp://joe:password@ftp.example.net/'\n",
    "dsn = 'postgres://app:${DB_PASSWORD}@db/main'\n",
    "url = f'http://{user}:{password}@{host}/'\n",
    "Authorization: Bearer <token>\n",
    "Authorization: Bearer $GITHUB_TOKEN\n",
    "# basic authentication is described below\n",
    "Authorization: Basic dXNlcjpwYXNzd29yZA==\n",               # user:password, placeholder
    'checkpoint = "mistralai/Mistral-Small-4-119B-2603"\n',       # a model id
    "'BSD-3-Clause-No-Nuclear-License-2014': {'id': 1}\n",
    '"integrity": "sha512-' + RAND40 + RAND36 + '==",\n',        # package-lock checksum
    "golang.org/x/text v0.3.0 h1:" + RAND40 + "Zz=\n",           # go.sum
    'digest = "' + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" + '"\n',
    'data = "' + "VGhlIHF1aWNrIGJyb3duIGZveCBqdW1wcyBvdmVyIHRoZSBsYXp5IGRvZw==" + '"\n',
    "MBart50TokenizerFast = MBart50Tokenizer\n",                  # code: class aliases
    'audio_tokenizer_class = "HiggsAudioV2TokenizerModel"\n',
])
def test_context_lookalikes_not_flagged(text):
    assert secret_content_reason(text) is None


# Real stdlib files full of digests, base64 test vectors and example credentials.
STDLIB_DATA_FILES = [
    "test/test_hashlib.py", "test/test_hmac.py", "test/test_base64.py", "test/test_binascii.py",
    "test/test_urlparse.py", "test/test_urllib2.py", "test/test_ssl.py", "test/test_uuid.py",
    "test/test_zipfile.py", "test/test_httplib.py", "test/test_email/test_email.py",
    "test/test_tomllib/burntsushi.py", "base64.py", "hashlib.py", "urllib/request.py",
]


def test_stdlib_hash_and_base64_data_not_flagged():
    import sysconfig
    from pathlib import Path

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    present = [p for p in STDLIB_DATA_FILES if (stdlib / p).is_file()]
    if len(present) < len(STDLIB_DATA_FILES) // 2:
        pytest.skip("this Python ships without its test suite")
    flagged = {p: secret_content_reason((stdlib / p).read_text(encoding="utf-8", errors="replace"))
               for p in present}
    assert {p: r for p, r in flagged.items() if r} == {}
