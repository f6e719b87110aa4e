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
