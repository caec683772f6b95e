"""Tests of reportgen.credentials: passwords in URLs and token shapes are redacted and counted by kind."""

from __future__ import annotations

import pytest

from reportgen.credentials import (
    REDACTED,
    TOKEN_ANCHORS,
    TOKEN_KINDS,
    looks_like_token,
    redact,
    redact_env,
    redact_env_yaml,
    secret_name,
    secret_parts,
)

__all__: list[str] = []

TOKENS = {
    "Hugging Face token": "hf_" + "a1B2" * 8,
    "GitHub token": "github_pat_" + "x1Y2" * 8,
    "AWS access key id": "AKIA" + "ABCDEFGHIJKLMNOP",
    "Slack token": "xoxb-" + "123456789012-abc",
    "OpenAI-style key": "sk-" + "q" * 30,
    "JWT": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl",
    "PEM private key": "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----",
}


def test_every_declared_kind_has_a_sample() -> None:
    assert set(TOKENS) == set(TOKEN_KINDS)


VARIANTS = [("GitHub token", f"gh{letter}_" + "a1B2" * 6) for letter in "pousr"] + [
    ("AWS access key id", "ASIA" + "ABCDEFGHIJKLMNOP"),
    *(("Slack token", f"xox{letter}-" + "123456789012-abc") for letter in "abpr"),
    ("PEM private key", "-----BEGIN PRIVATE KEY-----\\nMIIE"),
]
"""Every alternative of each kind's pattern: each must carry one of the kind's `TOKEN_ANCHORS`, or `redact`
would not look for it."""


def test_every_declared_kind_has_anchors() -> None:
    assert set(TOKEN_ANCHORS) == set(TOKEN_KINDS)


@pytest.mark.parametrize(("kind", "token"), [*TOKENS.items(), *VARIANTS])
def test_every_form_of_a_kind_carries_its_anchor_and_is_redacted(kind: str, token: str) -> None:
    assert any(anchor in token for anchor in TOKEN_ANCHORS[kind])
    assert redact(f"x = {token!r}") == (f"x = '{REDACTED}'", {kind: 1})


def test_a_text_without_anchors_is_returned_as_it_is() -> None:
    text = "def triton_poi_fused_add_0(in_ptr0, xnumel, XBLOCK: tl.constexpr):  # high mask-free\n" * 1000
    assert redact(text) == (text, {})


@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_each_token_kind_is_redacted_whole_and_counted(kind: str) -> None:
    text, found = redact(f"before {TOKENS[kind]} after")
    assert text == f"before {REDACTED} after"
    assert found == {kind: 1}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("DATABASE_URL=postgres://u:pw@h/db", "DATABASE_URL=postgres://u:[redacted]@h/db"),
        ("pip: https://user:p%40ss@pypi.example:8443/simple", "pip: https://user:[redacted]@pypi.example:8443/simple"),
        ("redis://:only-a-password@localhost:6379/0", "redis://:[redacted]@localhost:6379/0"),
        ("'amqp://guest:guest@rabbit/'", "'amqp://guest:[redacted]@rabbit/'"),
    ],
    ids=["postgres", "percent-encoded", "no-user", "quoted"],
)
def test_a_password_in_a_url_keeps_scheme_user_and_host(text: str, expected: str) -> None:
    assert redact(text) == (expected, {"password in a URL": 1})


@pytest.mark.parametrize(
    "text",
    [
        "ssh://git@github.com/pytorch/pytorch",
        "git@github.com:pytorch/pytorch.git",
        "http://localhost:8000/reports/x:y@z",
        "https://host:8080/path",
        "time 12:30@noon",
        "sk-short hf_short",
    ],
)
def test_what_is_no_credential_stays(text: str) -> None:
    assert redact(text) == (text, {})
    assert not looks_like_token(text)


def test_redacting_twice_changes_nothing_more() -> None:
    once, _ = redact(f"postgres://u:pw@h/db {TOKENS['GitHub token']}")
    assert redact(once) == (once, {})


def test_literal_secrets_go_first_and_are_counted_as_such() -> None:
    text, found = redact("MY_PASSWORD=hunter22 and hunter22 again", secrets=["hunter22"])
    assert text == f"MY_PASSWORD={REDACTED} and {REDACTED} again"
    assert found == {"value of a secret variable": 2}


def test_a_url_with_a_password_looks_like_a_credential() -> None:
    assert looks_like_token("https://u:pw@host/simple")


def test_secret_parts_take_the_whole_value_only_of_secret_names() -> None:
    assert secret_parts("HF_TOKEN", "abc") == ["abc"]
    assert secret_parts("DATABASE_URL", "postgres://u:s3cret-pw@h/db") == ["s3cret-pw"]
    assert secret_parts("NOTE", f"see {TOKENS['Hugging Face token']}") == [TOKENS["Hugging Face token"]]
    assert secret_parts("HOME", "/root") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("env:\n  SERVICE_PASSWORD: hunter2\n", 'env:\n  SERVICE_PASSWORD: "[redacted]"\n'),
        ("env: {DB_PASSWORD: 'a''b', X: 1}\n", 'env: {DB_PASSWORD: "[redacted]", X: 1}\n'),
        ('  "API_KEY": "q\\"x"  # note\n', '  "API_KEY": "[redacted]"  # note\n'),
        ("  GH_TOKEN: |\n    line one\n    line two\n  NEXT: 1\n", '  GH_TOKEN: "[redacted]"\n  NEXT: 1\n'),
        ("  AUTH_HEADER: [redacted]\n", '  AUTH_HEADER: "[redacted]"\n'),
    ],
    ids=["plain", "flow-single-quoted", "quoted-key-and-comment", "block-scalar", "flow-sequence"],
)
def test_secret_named_env_entries_of_a_recipe_are_redacted(text: str, expected: str) -> None:
    assert redact_env_yaml(text) == (expected, 1)


@pytest.mark.parametrize(
    "text",
    [
        "model:\n  kwargs: {max_tokens: 128, tokenizer: gpt2}\n",  # lower-case keys are arguments, not env
        "env:\n  TORCHINDUCTOR_MAX_AUTOTUNE: '1'\n",
        'env:\n  HF_TOKEN: "[redacted]"\n',
    ],
    ids=["kwargs", "not-secret-named", "already-redacted"],
)
def test_other_entries_stay(text: str) -> None:
    assert redact_env_yaml(text) == (text, 0)


def test_redact_env_takes_every_secret_named_value() -> None:
    env = {"SERVICE_PASSWORD": "hunter2", "X": "1", "MY_SESSION": "a"}
    assert redact_env(env) == {"SERVICE_PASSWORD": REDACTED, "X": "1", "MY_SESSION": REDACTED}


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("NOX_CURRENT_SESSION", False),
        ("XDG_SESSION_TYPE", False),
        ("nox_current_session", False),
        ("SSH_AUTH_SOCK", True),
        ("SESSION_TOKEN", True),
        ("MY_SESSION", True),
        ("DB_PASSWORD", True),
        ("HOME", False),
    ],
)
def test_a_secret_name_leaves_out_the_variables_tools_set(name: str, secret: bool) -> None:
    assert secret_name(name) is secret
    assert (secret_parts(name, "report") == ["report"]) is secret
    assert (redact_env({name: "report"})[name] == "[redacted]") is secret
