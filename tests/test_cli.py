"""The command line's numbers and paths: each bad one is refused before any work, one clear line, exit 2.

`--timeout -5` once replaced the latest bundle with a "timeout" one; `serve --port 70000` ended in an
OverflowError traceback; `build FILE` made an empty site with exit 0; `--html FILE` replaced the user's
file with the site's link.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reportgen.cli import main

__all__: list[str] = []

CORPUS = Path(__file__).resolve().parent / "data" / "bad_recipes"


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The last stderr line of an argparse refusal (exit 2, nothing run)."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.splitlines()[-1]


def _one_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one stderr line of a refused command (exit 2)."""
    assert main(argv) == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture
def recipe(tmp_path: Path) -> Path:
    for name in ("_good.yaml", "corpus_models.py"):
        shutil.copy(CORPUS / name, tmp_path / name)
    return tmp_path / "_good.yaml"


@pytest.mark.parametrize("value", ["-5", "0", "-0", "0.0", "nan", "inf", "-inf", "1e9", "86401", "5s", "", "1e-400"])
def test_a_timeout_is_positive_finite_and_at_most_a_day(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    line = _usage_error(["run", "no_such.yaml", f"--timeout={value}"], capsys)
    assert (
        line
        == f"reportgen run: error: argument --timeout: expected seconds, more than 0 and at most 86400, got {value!r}"
    )


@pytest.mark.parametrize(("value", "seconds"), [("90", 90.0), ("0.5", 0.5), ("86400", 86400.0), ("1e3", 1000.0)])
def test_good_timeouts_are_taken(
    value: str, seconds: float, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(tmp_path / "missing.yaml"), "--timeout", value]) == 2  # parsed; the recipe is missing
    assert capsys.readouterr().err.endswith("recipe file not found\n")
    assert seconds > 0


def test_a_negative_timeout_leaves_the_latest_bundle_alone(
    recipe: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    latest = tmp_path / "results" / "tiny"
    latest.mkdir(parents=True)
    (latest / "manifest.json").write_text('{"the": "latest run"}')
    _usage_error(["run", str(recipe), "-o", str(tmp_path / "results"), "--timeout", "-5"], capsys)
    assert [p.name for p in (tmp_path / "results").iterdir()] == ["tiny"]
    assert [p.name for p in latest.iterdir()] == ["manifest.json"]
    assert (latest / "manifest.json").read_text() == '{"the": "latest run"}'


@pytest.fixture
def site(tmp_path: Path) -> Path:
    html = tmp_path / "html"
    html.mkdir()
    (html / "index.html").write_text("<p>site</p>")
    return html


@pytest.mark.parametrize("value", ["70000", "65536", "-1", "1e3", "0x50", "８０", " 80", "", "99999999999999999999"])
def test_a_port_is_one_to_65535(value: str, site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _usage_error(["serve", str(site), f"--port={value}"], capsys)
    assert line == (
        f"reportgen serve: error: argument --port: expected a TCP port from 1 to 65535 (0: any free one), got {value!r}"
    )


@pytest.mark.parametrize("value", ["0/2", "3/2", "1/0", "0/0", "-1/2", "1_0/20", " 1/2", "1/2/3", "a/b", "١/٢", "1"])
def test_a_shard_is_i_of_n(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    line = _usage_error(["run", "no_such.yaml", f"--shard={value}"], capsys)
    assert line == f"reportgen run: error: argument --shard: expected i/N with 1 <= i <= N (e.g. 1/2), got {value!r}"


@pytest.mark.parametrize("value", ["0;id", "$(id)", "0,,1", "all,0", "-1", "0 1", "0,\n1", ""])
def test_gpus_are_all_a_count_or_ids(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    line = _usage_error(["run", "no_such.yaml", f"--gpus={value}"], capsys)
    assert line == f"reportgen run: error: argument --gpus: expected all, a count, or GPU ids like 0,2; got {value!r}"


@pytest.mark.parametrize("value", ["all", "2", "0,2", "0, 2", "GPU-8a1b2c3d-0000-1111-2222-333344445555", "MIG-1"])
def test_good_gpus_and_shards_are_taken(value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path / "missing.yaml"), "--gpus", value, "--shard", "2/4"]) == 2
    assert capsys.readouterr().err.endswith("recipe file not found\n")


def test_a_build_of_a_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "results.txt").write_text("not a results directory")
    line = _one_line(["build", str(tmp_path / "results.txt"), "--out", str(tmp_path / "site")], capsys)
    assert (
        line
        == f"reportgen: error: {tmp_path / 'results.txt'}: expected a results directory, got a file (check the path)"
    )
    assert not (tmp_path / "site").exists()


def test_a_build_of_a_missing_directory_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r1").mkdir()
    argv = ["build", str(tmp_path / "r1"), str(tmp_path / "r2"), "--out", str(tmp_path / "site")]
    assert _one_line(argv, capsys) == f"reportgen: error: {tmp_path / 'r2'}: no such results directory (check the path)"
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize("flag", ["--out", "--html"])
def test_a_file_where_the_site_goes_is_kept(flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "results").mkdir()
    (tmp_path / "notes").write_text("the user's notes")
    argv = ["build", str(tmp_path / "results"), "--out", str(tmp_path / "site"), flag, str(tmp_path / "notes")]
    line = _one_line(argv, capsys)
    assert line == (
        f"reportgen: error: {tmp_path / 'notes'}: {flag} must be a directory, but a file stands there "
        "(choose another path)"
    )
    assert (tmp_path / "notes").read_text() == "the user's notes"
    assert not (tmp_path / "notes").is_symlink()


@pytest.mark.parametrize("flag", ["-o", "--inductor-cache"])
def test_a_file_where_a_run_writes_is_one_line(
    flag: str, recipe: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "afile").write_text("in the way")
    line = _one_line(["run", str(recipe), flag, str(tmp_path / "afile")], capsys)
    name = "-o/--results" if flag == "-o" else flag
    assert line == (
        f"reportgen: error: {tmp_path / 'afile'}: {name} must be a directory, but a file stands there "
        "(choose another path)"
    )
    assert (tmp_path / "afile").read_text() == "in the way"


@pytest.mark.parametrize("kind", ["file", "missing"])
def test_history_and_reproduce_read_directories(kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "results"
    if kind == "file":
        path.write_text("x")
    problem = "expected a {}, got a file" if kind == "file" else "no such {}"
    assert _one_line(["history", str(path)], capsys) == (
        f"reportgen: error: {path}: {problem.format('results directory')} (check the path)"
    )
    assert _one_line(["reproduce", str(path)], capsys) == (
        f"reportgen: error: {path}: {problem.format('bundle directory')} (check the path)"
    )
