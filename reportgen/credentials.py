"""What a credential looks like, and how it is taken out of text: secret-sounding variable names, passwords
in URLs and known token formats, each kind declared once.

Used by the recipe model (no credentials in published recipes), the run's environment allowlist, the
run's scrubber of everything it writes and the renderers (again, for bundles made elsewhere); imports
nothing but the standard library, so that every stage may use it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Final

__all__ = [
    "ENV_VALUE",
    "NOT_SECRET_NAMES",
    "REDACTED",
    "SECRET_NAME",
    "SECRET_VALUE",
    "TOKEN_ANCHORS",
    "TOKEN_KINDS",
    "URL_PASSWORD",
    "is_secret",
    "looks_like_token",
    "redact",
    "redact_env",
    "redact_env_yaml",
    "secret_name",
    "secret_parts",
]

REDACTED: Final = "[redacted]"
SECRET_NAME = re.compile(r"TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION", re.I)
"""Variable names that say the value is a credential (`secret_name`, which knows the exceptions)."""
NOT_SECRET_NAMES: Final = frozenset(
    {
        "NOX_CURRENT_SESSION",  # nox's session name: `nox -s report` made every "report" of a run's log [redacted]
        "XDG_SESSION_ID",
        "XDG_SESSION_TYPE",  # x11, wayland, tty
        "XDG_SESSION_CLASS",  # user, greeter
        "XDG_SESSION_DESKTOP",
        "XDG_SESSION_PATH",
        "DESKTOP_SESSION",
        "SESSION_MANAGER",
        "DBUS_SESSION_BUS_ADDRESS",
        "KEYTIMEOUT",
    }
)
"""Names `SECRET_NAME` matches whose values the desktop, the login or a tool sets, never a credential: their values
(a word such as `report` or `user`) are not searched for in what a run writes, where each would garble every word
that holds it. A value shaped like a credential is still taken out wherever it is (`redact`). An agent's socket
(`SSH_AUTH_SOCK`) stays a secret: it opens the keys on that host."""

URL_PASSWORD: Final = "password in a URL"
ENV_VALUE: Final = "value of a secret variable"
TOKEN_KINDS: Final[dict[str, str]] = {
    "PEM private key": r"-----BEGIN (?P<pem>[A-Z ]*)PRIVATE KEY-----[A-Za-z0-9+/=\s\\]*(?:-----END (?P=pem)PRIVATE KEY-----)?",
    "Hugging Face token": r"hf_[A-Za-z0-9]{20,}",
    "GitHub token": r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}",
    "AWS access key id": r"AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}",
    "Slack token": r"xox[abpr]-[\w-]{10,}",
    "OpenAI-style key": r"sk-[A-Za-z0-9_-]{20,}",
    "JWT": r"eyJ[\w-]{10,}\.[\w-]{10,}(?:\.[\w-]+)?",
}
"""Credential formats by kind; a PEM private key is taken with its body (also with JSON-escaped newlines)."""
TOKEN_ANCHORS: Final[dict[str, tuple[str, ...]]] = {
    "PEM private key": ("-----BEGIN ",),
    "Hugging Face token": ("hf_",),
    "GitHub token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "AWS access key id": ("AKIA", "ASIA"),
    "Slack token": ("xoxa-", "xoxb-", "xoxp-", "xoxr-"),
    "OpenAI-style key": ("sk-",),
    "JWT": ("eyJ",),
}
"""Literal text every credential of a kind contains: a text with none of them is not searched with the patterns
(over a mixnet_l bundle's 521 modules, 7 MB: 0.07 s instead of 0.72-0.80 s; random hashes in paths held "xox")."""
_ANCHORS = tuple(anchor for anchors in TOKEN_ANCHORS.values() for anchor in anchors)
_URL_ANCHOR = "://"

_URL_CREDENTIALS = re.compile(
    r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@'\"<>]*:)(?!\[redacted\]@)(?P<password>[^\s/?#@'\"<>]+)(?=@)"
)
"""`scheme://user:password@host`: the password, between the user's colon and the host's @."""
_TOKEN = re.compile("|".join(f"(?P<k{i}>{pattern})" for i, pattern in enumerate(TOKEN_KINDS.values())))
_KIND_OF_GROUP = {f"k{i}": kind for i, kind in enumerate(TOKEN_KINDS)}
SECRET_VALUE = re.compile(f"{_TOKEN.pattern}|{_URL_CREDENTIALS.pattern}")
"""Anything shaped like a credential: a known token format or a password in a URL."""


def looks_like_token(value: str) -> bool:
    """Whether `value` contains something shaped like a credential (whatever its variable is called)."""
    return SECRET_VALUE.search(value) is not None


def secret_name(name: str) -> bool:
    """Whether a variable's name says its value is a credential."""
    return SECRET_NAME.search(name) is not None and name.upper() not in NOT_SECRET_NAMES


def is_secret(name: str, value: str) -> bool:
    """Whether a variable looks like it carries a credential, by its name or its value."""
    return secret_name(name) or looks_like_token(value)


def secret_parts(name: str, value: str) -> list[str]:
    """The secrets a variable carries: its whole value when its name says so, else the credential-shaped
    parts of its value (tokens, a URL's password: `DATABASE_URL` keeps its user and host)."""
    if secret_name(name):
        return [value]
    return [m.group() for m in _TOKEN.finditer(value)] + [m["password"] for m in _URL_CREDENTIALS.finditer(value)]


_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
"""An environment variable's name as recipes write them (`recipe.model.ENV_NAME_RE`)."""
_YAML_ENTRY = re.compile(
    r"""(?P<key>(?<![\w$.-])(?P<q>["']?)(?P<name>[A-Z_][A-Z0-9_]*)(?P=q)[ \t]*:[ \t]+)"""
    r"""(?P<value>"(?:[^"\\\n]|\\.)*"|'(?:[^'\n]|'')*'|\[[^\]\n]*\]"""  # quoted, a one-line flow sequence
    r"""|[|>][-+0-9]*[ \t]*(?:\#[^\n]*)?(?:\n(?:[ \t]*\n)*(?P<indent>[ \t]+)[^\n]*(?:\n(?:[ \t]*\n)*(?P=indent)[^\n]*)*)?"""
    r"""|[^\s#,\[\]{}\n'"|>](?:[^#,\]\}\n]*?))(?=[ \t]*(?:\#|,|\]|\}|$))""",
    re.M,
)
"""`NAME: value` in YAML, block or flow style: the value quoted, a block scalar (`|`, `>` and its indented lines),
or plain up to a comment, a comma or a bracket."""


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with the value of every secret-named variable replaced by ``[redacted]``, whatever it looks like."""
    return {name: REDACTED if secret_name(name) else value for name, value in env.items()}


def redact_env_yaml(text: str) -> tuple[str, int]:
    """Recipe text (YAML) with the value of every secret-named, env-style entry (`SERVICE_PASSWORD: hunter2`)
    replaced by ``"[redacted]"``, and how many were: a value with no token shape, too short to search for as a
    literal, is still never published."""
    count = 0

    def entry(match: re.Match[str]) -> str:
        nonlocal count
        if not secret_name(match["name"]) or match["value"] in (f'"{REDACTED}"', f"'{REDACTED}'"):
            return match.group()
        count += 1
        return f'{match["key"]}"{REDACTED}"'

    if not any(secret_name(name) for name in _ENV_NAME.findall(text)):
        return text, 0
    return _YAML_ENTRY.sub(entry, text), count


def redact(text: str, secrets: Iterable[str] = ()) -> tuple[str, Counter[str]]:
    """`text` with every credential replaced by ``[redacted]``, and how many of each kind were.

    :param secrets: literal values to take out too (the values of secret variables), longest first
    """
    found: Counter[str] = Counter()
    for value in secrets:
        if value in text:
            found[ENV_VALUE] += text.count(value)
            text = text.replace(value, REDACTED)

    def token(match: re.Match[str]) -> str:
        found[_KIND_OF_GROUP[str(match.lastgroup)]] += 1
        return REDACTED

    def password(match: re.Match[str]) -> str:
        found[URL_PASSWORD] += 1
        return f"{match['head']}{REDACTED}"

    if any(anchor in text for anchor in _ANCHORS):
        text = _TOKEN.sub(token, text)
    if _URL_ANCHOR in text:
        text = _URL_CREDENTIALS.sub(password, text)
    return text, found
