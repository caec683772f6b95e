"""Loading recipe files: a good recipe round-trips, and every bad one gets one exact, located message."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reportgen.errors import RecipeError
from reportgen.recipe import Recipe, load_recipe, load_recipes
from reportgen.recipe.loader import MAX_RECIPE_BYTES

GOOD = """\
name: tiny
model:
  ref: models:TinyMLP
inputs:
  batch_size: 4
  tensors:
    - shape: [16]
"""
RECIPE_KEYS = "format, name, title, description, model, inputs, task, amp, device, compile, cudnn_benchmark, env, allow_env, profile, timeout_s, cpu, distributed, regression_threshold, device_regression_threshold, variants, sweep"
REPO_RECIPES = sorted((Path(__file__).parents[2] / "recipes").glob("*.yaml"))


@pytest.fixture
def recipe_dir(tmp_path: Path) -> Path:
    """A directory with the `models.py` that GOOD refers to."""
    (tmp_path / "models.py").write_text("import torch.nn as nn\n\n\nclass TinyMLP: ...\n")
    return tmp_path


def write(directory: Path, content: str | bytes, name: str = "recipe.yaml") -> Path:
    path = directory / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def error_message(path: Path) -> str:
    with pytest.raises(RecipeError) as info:
        load_recipe(path)
    return str(info.value)


def test_good_recipe_loads(recipe_dir: Path) -> None:
    recipe = load_recipe(write(recipe_dir, GOOD))
    assert recipe.name == "tiny"
    assert recipe.model.ref == "models:TinyMLP"
    assert recipe.inputs.batch_size == 4
    assert [spec.shape for spec in recipe.inputs.tensors] == [[16]]
    assert (recipe.task, recipe.amp, recipe.device, recipe.format) == ("infer", "none", "auto", 1)


def test_good_recipe_round_trips_through_yaml(recipe_dir: Path) -> None:
    full = GOOD + "title: Tiny\ntask: train\nenv:\n  TORCH_LOGS: recompiles\n  TORCHINDUCTOR_X: 1\ncpu:\n  amp: bf16\n"
    recipe = load_recipe(write(recipe_dir, full))
    dumped = yaml.safe_dump(recipe.model_dump(mode="json"), sort_keys=False)
    again = load_recipe(write(recipe_dir, dumped, "again.yaml"))
    assert again == recipe
    assert again.env == {"TORCH_LOGS": "recompiles", "TORCHINDUCTOR_X": "1"}


def test_load_recipe_accepts_a_string_path(recipe_dir: Path) -> None:
    assert isinstance(load_recipe(str(write(recipe_dir, GOOD))), Recipe)


@pytest.mark.parametrize("path", REPO_RECIPES, ids=lambda path: path.name)
def test_repository_recipes_load(path: Path) -> None:
    assert load_recipe(path).name == path.stem


def _with(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new)


LOCATED_ERRORS = [
    pytest.param(
        GOOD + "modle: x\n",
        f":8:1: unknown key 'modle' in recipe; expected one of: {RECIPE_KEYS}",
        id="unknown-top-level-key",
    ),
    pytest.param(
        _with("  ref: models:TinyMLP\n", "  ref: models:TinyMLP\n  reff: 1\n"),
        ":4:3: unknown key 'reff' in model; expected one of: ref, kwargs",
        id="unknown-nested-key",
    ),
    pytest.param(
        _with("    - shape: [16]\n", "    - shape: [16]\n      shpe: [1]\n"),
        ":8:7: unknown key 'shpe' in inputs.tensors[0]; expected one of: shape, dtype, requires_grad, high",
        id="unknown-key-in-list-item",
    ),
    pytest.param(_with("models:TinyMLP", "[5]"), ":3:8: model.ref: expected a string, got a list", id="wrong-type"),
    pytest.param(
        GOOD + "task: training\n", ":8:7: task: expected one of 'train', 'infer', got 'training'", id="bad-enum"
    ),
    pytest.param(
        "name: tiny\ninputs:\n  tensors:\n    - shape: [16]\n", ":1:1: missing required key 'model'", id="missing-key"
    ),
    pytest.param(
        _with("- shape: [16]", "- dtype: float16"),
        ":7:7: missing required key 'shape' in inputs.tensors[0]",
        id="missing-nested-key",
    ),
    pytest.param(
        _with("[16]", "[16"),
        ":8:1: invalid YAML: expected ',' or ']', but got '<stream end>' "
        "(while parsing a flow sequence at line 7, column 14)",
        id="unclosed-bracket",
    ),
    pytest.param(
        _with("  batch_size", "\tbatch_size"),
        ":5:1: invalid YAML: found character '\\t' that cannot start any token "
        "(indent with spaces; YAML does not allow tabs)",
        id="tab-indentation",
    ),
    pytest.param(
        GOOD + "---\nname: other\n",
        ":8:1: invalid YAML: expected a single document in the stream, but found another document",
        id="two-documents",
    ),
    pytest.param(
        GOOD + "name: other\n", ":8:1: duplicate key 'name' (first defined at line 1, column 1)", id="duplicate-key"
    ),
    pytest.param("- tiny\n- small\n", ":1:1: expected a mapping at the top level, got a list", id="list-at-top"),
    pytest.param("tiny\n", ":1:1: expected a mapping at the top level, got 'tiny'", id="string-at-top"),
    pytest.param(
        "name: &n tiny\ntitle: *n\n",
        ":2:8: YAML alias '*n' is not allowed in recipes; write the value out",
        id="alias",
    ),
    pytest.param(
        "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n",
        ":2:8: YAML alias '*a' is not allowed in recipes; write the value out",
        id="billion-laughs",
    ),
    pytest.param(
        GOOD + "compile:\n  <<: {backend: eager}\n",
        ":9:3: merge keys ('<<') are not supported in recipes",
        id="merge-key",
    ),
    pytest.param(
        GOOD + "1: x\n",
        ":8:1: expected a string key, got integer 1 (quote the key to make it a string)",
        id="integer-key",
    ),
    pytest.param(
        GOOD + "on: x\n",
        ":8:1: expected a string key, got boolean true (quote the key to make it a string)",
        id="boolean-key",
    ),
    pytest.param(
        GOOD + "[a, b]: x\n",
        ":8:1: expected a string key, got a list (quote the key to make it a string)",
        id="list-key",
    ),
    pytest.param(
        GOOD + "description: 2024-13-45\n",
        ":8:14: cannot read '2024-13-45' as a date: month must be in 1..12 (quote it to make it a string)",
        id="impossible-date",
    ),
    pytest.param(
        GOOD + "description: !shout hello\n",
        ":8:14: unsupported YAML tag '!shout'; write a plain value",
        id="unknown-tag",
    ),
    pytest.param(
        GOOD + "env: !!set {A: null}\n",
        ":8:6: unsupported YAML tag '!!set'; write a plain mapping",
        id="set-tag",
    ),
    pytest.param("a: " + "[" * 100 + "]" * 100 + "\n", ":1:67: values nested deeper than 64 levels", id="deep-nesting"),
    pytest.param("name: ti\x07ny\n", ":1:9: invalid YAML: character '\\x07' is not allowed", id="control-character"),
    pytest.param(
        _with("batch_size: 4", "batch_size: -4"),
        ":5:15: inputs.batch_size: must be at least 1, got integer -4",
        id="negative-batch-size",
    ),
    pytest.param(
        _with("[16]", "[16, 0]"),
        ":7:19: inputs.tensors[0].shape[1]: must be at least 1, got integer 0",
        id="zero-dimension",
    ),
    pytest.param(
        _with("- shape: [16]", "- shape: [16]\n      dtype: float8"),
        ":8:14: inputs.tensors[0].dtype: expected one of 'float32', 'float16', 'bfloat16', 'float64', 'int64', "
        "'int32', 'int16', 'int8', 'uint8', 'bool', got 'float8'",
        id="bad-dtype",
    ),
    pytest.param(
        GOOD + "env:\n  torch_logs: recompiles\n",
        ":9:3: env: env var name 'torch_logs' must match [A-Z_][A-Z0-9_]*",
        id="bad-env-var-name",
    ),
    pytest.param(
        GOOD + "env:\n  TORCH_LOGS:\n    level: 1\n",
        ":10:5: env: env var TORCH_LOGS must be a string, not a mapping",
        id="env-var-value-mapping",
    ),
    pytest.param(
        _with("name: tiny", "name: Tiny Model"),
        ":1:7: name: expected a value matching ^[a-z0-9][a-z0-9_.-]{0,63}$, got 'Tiny Model'",
        id="bad-name",
    ),
    pytest.param(GOOD + "title: ''\n", ":8:8: title: must not be empty", id="empty-title"),
    pytest.param(GOOD + "format: 2\n", ":8:9: format: expected 1, got integer 2", id="unknown-format"),
    pytest.param(
        GOOD + "compile:\n  fullgraph: maybe\n",
        ":9:14: compile.fullgraph: expected true or false, got 'maybe'",
        id="bad-boolean",
    ),
    pytest.param(GOOD + "profile: 3\n", ":8:10: profile: expected a mapping, got integer 3", id="scalar-for-mapping"),
    pytest.param(
        _with("  tensors:\n    - shape: [16]\n", ""),
        ":5:3: inputs: expected 'tensors' (a list of tensor specs) or 'factory'",
        id="no-inputs",
    ),
    pytest.param(
        _with("models:TinyMLP", "models"),
        ":3:8: model.ref: expected 'timm:<name>', 'torchvision:<name>' or 'module.path:callable'",
        id="malformed-ref",
    ),
    pytest.param(
        GOOD + "task: training\nmodle: 1\namp: fp8\n",
        ":8:7: task: expected one of 'train', 'infer', got 'training' (and 2 more errors)",
        id="several-errors",
    ),
    pytest.param(
        "amp: fp8\n" + GOOD + "task: training\n",
        ":1:6: amp: expected one of 'none', 'fp16', 'bf16', got 'fp8' (and 1 more error)",
        id="errors-in-document-order",
    ),
    pytest.param(
        _with("model:", "modle:"),
        f":2:1: unknown key 'modle' in recipe; expected one of: {RECIPE_KEYS} (and 1 more error)",
        id="misspelt-required-key-before-missing-key",
    ),
    pytest.param(
        _with("models:TinyMLP", "nosuchmodule:Net"),
        ":3:8: model.ref: cannot find module 'nosuchmodule' (looked next to the recipe and on sys.path)",
        id="model-module-missing",
    ),
    pytest.param(
        _with("  tensors:\n    - shape: [16]\n", "  factory: nosuchinputs:make\n"),
        ":6:12: inputs.factory: cannot find module 'nosuchinputs' (looked next to the recipe and on sys.path)",
        id="factory-module-missing",
    ),
    pytest.param(
        GOOD + "distributed:\n  nproc_per_node: 0\n",
        ":9:19: distributed.nproc_per_node: expected a whole number from 1 to 64 or 'all', got 0",
        id="distributed-no-ranks",
    ),
    pytest.param(
        GOOD + "distributed:\n  strategy: fsdp\n",
        ":9:13: distributed.strategy: expected one of 'ddp', 'fsdp2', got 'fsdp'",
        id="distributed-unknown-strategy",
    ),
    pytest.param(
        GOOD + "distributed:\n  strategy: fsdp2\n  bucket_cap_mb: 4\n",
        ":9:3: distributed: bucket_cap_mb applies to strategy 'ddp' only (FSDP2 has no gradient buckets)",
        id="distributed-buckets-without-ddp",
    ),
    pytest.param(
        GOOD + "device: cpu\ndistributed:\n  backend: nccl\n",
        ":10:12: backend 'nccl' needs GPUs; this recipe runs on the CPU (use 'gloo')",
        id="distributed-nccl-on-cpu",
    ),
]


@pytest.mark.parametrize(("content", "expected"), LOCATED_ERRORS)
def test_invalid_recipe_message(recipe_dir: Path, content: str, expected: str) -> None:
    path = write(recipe_dir, content)
    assert error_message(path) == f"{path}{expected}"


def test_callable_missing_in_existing_module(recipe_dir: Path) -> None:
    path = write(recipe_dir, _with("models:TinyMLP", "models:Foo"))
    assert error_message(path) == (
        f"{path}:3:8: model.ref: module 'models' ({recipe_dir / 'models.py'}) defines no 'Foo'; "
        "expected a factory function or nn.Module class"
    )


@pytest.mark.parametrize(
    "content",
    ["", "\n\n", "# only a comment\n   \n# and another\n", "---\n"],
    ids=["empty", "blank-lines", "comments-only", "empty-document"],
)
def test_empty_recipe(recipe_dir: Path, content: str) -> None:
    path = write(recipe_dir, content)
    assert error_message(path) == f"{path}: recipe is empty; expected a mapping with at least 'name', 'model', 'inputs'"


def test_binary_junk(recipe_dir: Path) -> None:
    path = write(recipe_dir, b"name: x\n\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert error_message(path) == f"{path}:4:1: recipe file contains NUL bytes; expected UTF-8 text, not a binary file"


def test_non_utf8(recipe_dir: Path) -> None:
    path = write(recipe_dir, "name: tiny\ntitle: café\n".encode("latin-1"))
    assert error_message(path) == f"{path}:2:11: recipe file is not valid UTF-8 (byte 0xe9); save it as UTF-8"


def test_huge_file_is_refused_before_parsing(recipe_dir: Path) -> None:
    path = write(recipe_dir, b"[" * (MAX_RECIPE_BYTES + 1))
    assert error_message(path) == (
        f"{path}: recipe file is 1048577 bytes; recipes are limited to 1 MiB (1048576 bytes)"
    )


def test_missing_file(tmp_path: Path) -> None:
    assert error_message(tmp_path / "nope.yaml") == f"{tmp_path / 'nope.yaml'}: recipe file not found"


def test_directory(tmp_path: Path) -> None:
    assert error_message(tmp_path) == f"{tmp_path}: expected a recipe file, got a directory"


def test_error_attributes_locate_the_node(recipe_dir: Path) -> None:
    path = write(recipe_dir, GOOD + "task: training\n")
    with pytest.raises(RecipeError) as info:
        load_recipe(path)
    assert (info.value.path, info.value.line, info.value.column) == (str(path), 8, 7)
    assert info.value.__cause__ is None


def test_load_recipes_keeps_order(recipe_dir: Path) -> None:
    first = write(recipe_dir, GOOD, "a.yaml")
    second = write(recipe_dir, _with("name: tiny", "name: small"), "b.yaml")
    assert [recipe.name for recipe in load_recipes([second, first])] == ["small", "tiny"]


def test_duplicate_names_across_recipes(recipe_dir: Path) -> None:
    first = write(recipe_dir, GOOD, "a.yaml")
    second = write(recipe_dir, "# the same name again\n" + GOOD, "b.yaml")
    with pytest.raises(RecipeError) as info:
        load_recipes([first, second])
    assert str(info.value) == f"{second}:2:7: recipe name 'tiny' is already used by {first}; names must be unique"


def test_load_recipes_reports_the_first_invalid_file(recipe_dir: Path) -> None:
    good = write(recipe_dir, GOOD, "a.yaml")
    bad = write(recipe_dir, GOOD + "task: training\n", "b.yaml")
    with pytest.raises(RecipeError) as info:
        load_recipes([good, bad])
    assert str(info.value).startswith(f"{bad}:8:7: task:")


@pytest.fixture(scope="module")
def fuzz_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("fuzz")
    (directory / "models.py").write_text("class TinyMLP: ...\n")
    return directory / "fuzz.yaml"


YAML_PIECES = st.sampled_from(
    [
        *"abc:-[]{}&*!|>'\"#%@`,?\n\t 019.~=<\\",
        "\x00",
        "\ufeff",
        "é",
        "---",
        "name",
        "model",
        "ref",
        "inputs",
        "tensors",
        "shape",
        "env",
        "&a",
        "*a",
        "!!binary",
        "!!timestamp",
        "!!bool",
        "<<",
        "1e999",
        "2020-13-45",
        "yes",
        "models:TinyMLP",
    ]
)
FUZZ_TEXT = st.one_of(
    st.text(max_size=80),
    st.lists(YAML_PIECES, max_size=40).map("".join),
    st.builds(
        lambda at, piece: GOOD[:at] + piece + GOOD[at:],
        st.integers(0, len(GOOD)),
        st.lists(YAML_PIECES, max_size=4).map("".join),
    ),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=FUZZ_TEXT)
def test_fuzz_text_raises_only_recipe_errors(fuzz_path: Path, text: str) -> None:
    fuzz_path.write_bytes(text.encode("utf-8", errors="surrogatepass"))
    try:
        load_recipe(fuzz_path)
    except RecipeError as exc:
        assert str(exc).startswith(str(fuzz_path))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=120))
def test_fuzz_bytes_raises_only_recipe_errors(fuzz_path: Path, data: bytes) -> None:
    fuzz_path.write_bytes(data)
    try:
        load_recipe(fuzz_path)
    except RecipeError as exc:
        assert str(exc).startswith(str(fuzz_path))
