"""The bad-recipe corpus: every file gets exactly one clear line from `reportgen validate`, exit code 2.

`tests/data/bad_recipes/expected.json` maps each corpus file to the exact stderr line (or to
``{"args": [...], "stderr": ...}`` when the case needs other arguments). The CLI runs in-process
with the corpus directory as working directory, so messages hold short relative paths. The huge
files are generated here rather than committed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reportgen.cli import main
from reportgen.errors import RecipeError
from reportgen.recipe import load_recipe
from reportgen.recipe.loader import MAX_RECIPE_BYTES

__all__: list[str] = []

CORPUS = Path(__file__).resolve().parents[1] / "data" / "bad_recipes"
EXPECTED: dict[str, str | dict[str, object]] = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))
HELPERS = {"_good.yaml"}
MIN_CASES = 40
GOOD = (CORPUS / "_good.yaml").read_text(encoding="utf-8")


def _case(name: str) -> tuple[list[str], str]:
    entry = EXPECTED[name]
    if isinstance(entry, str):
        return [name], entry
    args, stderr = entry["args"], entry["stderr"]
    assert isinstance(args, list) and isinstance(stderr, str)
    return [str(arg) for arg in args], stderr


def _validate(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Exit code and stderr of `reportgen validate ARGS`; stdout must stay empty."""
    code = main(["validate", *args])
    captured = capsys.readouterr()
    assert captured.out == ""
    return code, captured.err


def _assert_one_clear_line(code: int, stderr: str) -> str:
    assert code == 2
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("reportgen: error: ")
    return lines[0]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_recipe_gets_its_exact_message(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(CORPUS)
    args, expected = _case(name)
    code, stderr = _validate(args, capsys)
    assert _assert_one_clear_line(code, stderr) == expected


def _huge_file() -> bytes:
    return (GOOD + "description: '" + "x" * MAX_RECIPE_BYTES + "'\n").encode()


def _huge_description() -> bytes:
    return (GOOD + "description: '" + "x" * 900_000 + "'\n").encode()


def _many_tensors() -> bytes:
    tensors = "".join("    - shape: [8]\n" for _ in range(20_000))
    return (GOOD.split("  tensors:")[0] + "  tensors:\n" + tensors + "    - shape: [0]\n").encode()


GENERATED = [
    pytest.param(
        _huge_file,
        f"huge.yaml: recipe file is {len(_huge_file())} bytes; recipes are limited to 1 MiB (1048576 bytes)",
        id="over-1-MiB",
    ),
    pytest.param(
        _huge_description,
        "huge.yaml:8:14: description: must have at most 10000 characters, got 900000",
        id="900-kB-description",
    ),
    pytest.param(
        _many_tensors,
        "huge.yaml:20007:15: inputs.tensors[20000].shape[0]: must be at least 1, got integer 0",
        id="20000-tensors",
    ),
]


@pytest.mark.parametrize(("content", "expected"), GENERATED)
def test_huge_recipe_gets_one_line(
    content: object, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert callable(content)
    (tmp_path / "huge.yaml").write_bytes(content())
    monkeypatch.chdir(tmp_path)
    code, stderr = _validate(["huge.yaml"], capsys)
    assert _assert_one_clear_line(code, stderr) == f"reportgen: error: {expected}"


def test_every_corpus_file_has_an_expected_message() -> None:
    files = {p.name for p in CORPUS.glob("*.yaml")} - HELPERS
    listed = {name for name, entry in EXPECTED.items() if isinstance(entry, str) or name.endswith(".yaml")}
    assert files == listed


def test_corpus_has_enough_cases() -> None:
    assert len(EXPECTED) + len(GENERATED) >= MIN_CASES
    messages = [_case(name)[1] for name in EXPECTED]
    assert len(set(messages)) == len(messages)


def test_helper_recipe_is_valid(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CORPUS)
    assert main(["validate", *HELPERS]) == 0
    assert capsys.readouterr().out == "_good.yaml: ok (tiny)\n"


@pytest.fixture(scope="module")
def mutant_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("mutants")
    for module in ("corpus_models.py", "broken_models.py"):
        shutil.copy(CORPUS / module, directory / module)
    return directory


CORPUS_FILES = sorted(p.name for p in CORPUS.glob("*.yaml"))
_EDIT = st.tuples(st.sampled_from(["delete", "insert", "replace"]), st.floats(0, 1), st.binary(min_size=1, max_size=4))


def _mutate(raw: bytes, edits: list[tuple[str, float, bytes]]) -> bytes:
    for kind, where, data in edits:
        at = int(where * len(raw))
        end = at + len(data) if kind != "insert" else at
        raw = raw[:at] + (b"" if kind == "delete" else data) + raw[end:]
    return raw


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(CORPUS_FILES), edits=st.lists(_EDIT, min_size=1, max_size=4))
def test_fuzz_mutated_corpus_files_raise_only_recipe_errors(
    mutant_dir: Path, name: str, edits: list[tuple[str, float, bytes]]
) -> None:
    path = mutant_dir / "mutant.yaml"
    path.write_bytes(_mutate((CORPUS / name).read_bytes(), edits))
    try:
        load_recipe(path)
    except RecipeError as exc:
        assert str(exc).startswith(str(path))
        assert "\n" not in str(exc)
