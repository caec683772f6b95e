"""Tests of reportgen.run.scrub: secret values and token-shaped strings become `[redacted]`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reportgen.run.scrub import REDACTED, Scrubber

__all__: list[str] = []

HF = "hf_" + "a1B2" * 9
GHP = "ghp_" + "Zz09" * 9
AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
ENVIRON = {
    "HF_TOKEN": HF,
    "AWS_SECRET_ACCESS_KEY": AWS,
    "MY_PASSWORD": "hunter22",
    "TORCH_NOTE": GHP,
    "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
    "API_KEY": "1",  # too short to search for
    "HOME": "/root",
    "TORCHINDUCTOR_MAX_AUTOTUNE": "1",
}


def test_from_environ_picks_secret_named_and_token_valued_vars() -> None:
    scrubber = Scrubber.from_environ(ENVIRON)
    assert set(scrubber.secrets) == {HF, AWS, "hunter22", GHP, "/tmp/ssh-x/agent.1"}
    assert [len(s) for s in scrubber.secrets] == sorted((len(s) for s in scrubber.secrets), reverse=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"HF_TOKEN={HF}\n", f"HF_TOKEN={REDACTED}\n"),
        (f"aws {AWS} and pw hunter22.", f"aws {REDACTED} and pw {REDACTED}."),
        (f"repr: {{'TORCH_NOTE': '{GHP}'}}", f"repr: {{'TORCH_NOTE': '{REDACTED}'}}"),
        ("a token nobody set: hf_" + "Q" * 30, f"a token nobody set: {REDACTED}"),
        ("AKIAABCDEFGHIJKLMNOP then sk-" + "x" * 24, f"{REDACTED} then {REDACTED}"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow+/=\nAbc\n-----END RSA PRIVATE KEY-----\nafter", f"{REDACTED}\nafter"),
        ("API_KEY=1 and 1 + 1", "API_KEY=1 and 1 + 1"),
        ("nothing to see", "nothing to see"),
    ],
    ids=["env-value", "several", "inside-repr", "token-pattern", "aws-id-and-sk", "pem-block", "short", "clean"],
)
def test_scrub(text: str, expected: str) -> None:
    assert Scrubber.from_environ(ENVIRON).scrub(text) == expected


def test_a_pem_key_in_json_keeps_the_json_valid() -> None:
    document = json.dumps({"error": "-----BEGIN PRIVATE KEY-----\nMIIB\nQQ==\n", "next": 1})
    assert json.loads(Scrubber().scrub(document)) == {"error": REDACTED, "next": 1}


def test_scrub_file_rewrites_only_files_with_secrets(tmp_path: Path) -> None:
    scrubber = Scrubber.from_environ(ENVIRON)
    dirty, clean = tmp_path / "run.log", tmp_path / "clean.log"
    dirty.write_text(f"token {HF}\n")
    clean.write_bytes(b"plain \xff bytes\n")
    scrubber.scrub_file(dirty)
    scrubber.scrub_file(clean)
    scrubber.scrub_file(tmp_path / "missing.log")
    assert dirty.read_text() == f"token {REDACTED}\n"
    assert clean.read_bytes() == b"plain \xff bytes\n"
    assert not (tmp_path / "missing.log").exists()
