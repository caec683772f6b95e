"""Tests of reportgen.run.scrub: secret values and token-shaped strings become `[redacted]`."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml

from reportgen.recipe import Recipe
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


def test_counts_by_kind_and_place_never_the_values(tmp_path: Path) -> None:
    scrubber = Scrubber.from_environ({"DATABASE_URL": "postgres://u:s3cret-pw@h/db", "HF_TOKEN": HF})
    assert scrubber.scrub("printed postgres://u:s3cret-pw@h/db and s3cret-pw", "run.log") == (
        f"printed postgres://u:{REDACTED}@h/db and {REDACTED}"
    )
    assert scrubber.scrub(f"error: {HF} and https://a:b@c", "error") == f"error: {REDACTED} and https://a:{REDACTED}@c"
    modules = tmp_path / "modules" / "kernels"
    modules.mkdir(parents=True)
    (modules / "k.py").write_text(f"# {GHP}\n")
    scrubber.scrub_modules(tmp_path)
    assert (modules / "k.py").read_text() == f"# {REDACTED}\n"
    report = [(r.kind, r.where, r.count) for r in scrubber.report()]
    assert report == [
        ("GitHub token", "modules/", 1),
        ("password in a URL", "error", 1),
        ("value of a secret variable", "error", 1),
        ("value of a secret variable", "run.log", 2),
    ]
    assert not any("s3cret" in str(item) or HF in str(item) for item in scrubber.report())


def test_the_recipe_copy_keeps_its_names_and_loses_its_credentials() -> None:
    recipe = Recipe.model_validate(
        {
            "name": "hf_abcdefghijklmnopqrstuvwxyz",  # a name shaped like a token stays: it is the bundle's name
            "description": "weights at https://bob:pw@host/x",
            "model": {"ref": "m:Net", "kwargs": {"mirror": ["https://u:pw2@m/", 3], "key": GHP}},
            "inputs": {"tensors": [{"shape": [4]}]},
            "variants": [{"name": "a", "description": f"token {HF}"}],
        }
    )
    scrubber = Scrubber()
    clean = scrubber.scrub_recipe(recipe)
    assert clean.name == recipe.name and clean.model.ref == "m:Net"
    assert clean.description == f"weights at https://bob:{REDACTED}@host/x"
    assert clean.model.kwargs == {"mirror": [f"https://u:{REDACTED}@m/", 3], "key": REDACTED}
    assert clean.variants[0].description == f"token {REDACTED}"
    assert sum(r.count for r in scrubber.report() if r.where == "recipe") == 4


def test_the_scrub_writes_nothing_through_a_link(tmp_path: Path) -> None:
    """The run's files are rewritten scrubbed: a log, a module or the `modules` directory that is a link (or a
    hard link) to an outside file is never written through, and `modules -> /` is not walked."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text(f"token {GHP}\n")
    (outside / "hard.py").write_text(f"token {GHP}\n")
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    bundle = tmp_path / "bundle"
    (bundle / "modules" / "kernels").mkdir(parents=True)
    (bundle / "run.log").symlink_to(outside / "notes.txt")
    (bundle / "capture.json").hardlink_to(outside / "hard.py")
    (bundle / "modules" / "wrappers").symlink_to(outside, target_is_directory=True)
    (bundle / "modules" / "kernels" / "k.py").symlink_to(outside / "notes.txt")
    (bundle / "modules" / "kernels" / "h.py").hardlink_to(outside / "hard.py")
    (bundle / "modules" / "kernels" / "own.py").write_text(f"token {GHP}\n")
    scrubber = Scrubber.from_environ(ENVIRON)
    for name in ("run.log", "capture.json"):
        scrubber.scrub_file(bundle / name)
    scrubber.scrub_modules(bundle)
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before
    assert (bundle / "modules" / "kernels" / "own.py").read_text() == f"token {REDACTED}\n"
    (bundle / "modules" / "kernels").rename(tmp_path / "kernels")
    (bundle / "modules" / "wrappers").unlink()
    (bundle / "modules").rmdir()
    (bundle / "modules").symlink_to(outside, target_is_directory=True)
    scrubber.scrub_modules(bundle)
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before


def test_secret_named_env_values_are_never_kept_whatever_their_length() -> None:
    """`SERVICE_PASSWORD: hunter2` has no token shape, and `DB_PASSWORD: abc` is too short to search for: neither
    reaches the manifest's recipe copy nor the recipe file copy."""
    recipe_text = (
        "name: app\nmodel: {ref: 'm:Net'}\ninputs: {tensors: [{shape: [4]}]}\n"
        "env:\n  SERVICE_PASSWORD: hunter2\n  DB_PASSWORD: 'abc'\n  TORCHINDUCTOR_UNIQUE_KERNEL_NAMES: '1'\n"
        "variants:\n  - name: a\n    env: {API_KEY: xyz}\n"
    )
    recipe = Recipe.model_validate(
        {
            "name": "app",
            "model": {"ref": "m:Net"},
            "inputs": {"tensors": [{"shape": [4]}]},
            "env": {"SERVICE_PASSWORD": "hunter2", "DB_PASSWORD": "abc", "TORCHINDUCTOR_UNIQUE_KERNEL_NAMES": "1"},
            "variants": [{"name": "a", "env": {"API_KEY": "xyz"}}],
        }
    )
    scrubber = Scrubber.from_environ(recipe.env)
    clean = scrubber.scrub_recipe(recipe)
    assert clean.env == {
        "SERVICE_PASSWORD": REDACTED,
        "DB_PASSWORD": REDACTED,
        "TORCHINDUCTOR_UNIQUE_KERNEL_NAMES": "1",
    }
    assert clean.variants[0].env == {"API_KEY": REDACTED}
    copy = scrubber.scrub_recipe_text(recipe_text)
    assert "hunter2" not in copy and "abc" not in copy and "xyz" not in copy
    assert "TORCHINDUCTOR_UNIQUE_KERNEL_NAMES: '1'" in copy
    assert yaml.safe_load(copy)["env"]["DB_PASSWORD"] == REDACTED


def test_the_runs_traces_are_scrubbed(tmp_path: Path) -> None:
    """A `record_function` label holding a token, and a secret variable's value in an arg, in the trace and in a
    graph benchmark's trace; a trace past the bounds is removed, not kept unscrubbed."""
    events = [
        {"ph": "X", "cat": "user_annotation", "name": f"token=ghp_{'Q' * 36}", "ts": 0, "dur": 1},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "args": {"note": "pw hunter22"}},
    ]
    text = json.dumps({"traceEvents": events}).encode()
    (tmp_path / "graphs").mkdir()
    for path in (tmp_path / "trace.json.gz", tmp_path / "graphs" / "graph-0.json.gz"):
        path.write_bytes(gzip.compress(text))
    (tmp_path / "graphs" / "graph-1.json.gz").write_bytes(gzip.compress(b'{"traceEvents": [' + b" " * (20 << 20)))
    scrubber = Scrubber.from_environ(ENVIRON)
    scrubber.scrub_traces(tmp_path)
    for path in (tmp_path / "trace.json.gz", tmp_path / "graphs" / "graph-0.json.gz"):
        scrubbed = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
        assert scrubbed[0]["name"] == f"token={REDACTED}"
        assert scrubbed[1]["args"]["note"] == f"pw {REDACTED}"
    assert not (tmp_path / "graphs" / "graph-1.json.gz").exists()
    report = {(r.kind, r.where): r.count for r in scrubber.report()}
    assert report[("GitHub token", "trace.json.gz")] == 1
    assert report[("value of a secret variable", "graphs/graph-0.json.gz")] == 1
