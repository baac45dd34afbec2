"""Every bank error message, one invalid bank each: the exact ``file:line:col: message``."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from quizgym.check import check_bank
from quizgym.cli import cli

INVALID = Path(__file__).parent / "data" / "invalid"
CASES = sorted(INVALID.glob("*.yaml"))


def expectation(path: Path) -> str:
    first = path.read_bytes().split(b"\n", 1)[0].decode()
    assert first.startswith("# expect: "), f"{path.name} lacks its '# expect:' line"
    return first.removeprefix("# expect: ")


def test_there_is_a_case_per_message() -> None:
    assert len(CASES) >= 15
    assert len({expectation(p) for p in CASES}) == len(CASES)


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_invalid_bank_is_reported_at_its_line(path: Path) -> None:
    report = check_bank(path)
    lines = [str(f) for f in report.errors]
    expected = f"{path}:{expectation(path)}"
    assert any(line.startswith(expected) for line in lines), "\n".join(lines)


@pytest.mark.parametrize("path", CASES[:4], ids=[p.stem for p in CASES[:4]])
def test_cli_prints_the_line_and_exits_1(path: Path) -> None:
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 1
    assert f"{path}:{expectation(path)}" in result.stderr
    assert "Traceback" not in result.output


def test_all_problems_are_reported_at_once(tmp_path: Path) -> None:
    bank = tmp_path / "many.yaml"
    bank.write_text(
        "bank: demo\ntitle: Demo\nquestions:\n"
        "  - {id: tf-a, type: true_false, prompt: One, answer: maybe}\n"
        "  - {id: tf-b, type: true_false, prompt: Two, answer: true, colour: red}\n"
        "  - {id: tf-a, type: true_false, prompt: Three, answer: true}\n",
        encoding="utf-8",
    )
    messages = [f.message for f in check_bank(bank).errors]
    assert len(messages) == 3, messages
    assert any("valid boolean" in m for m in messages)
    assert any("unknown field 'colour'" in m for m in messages)
    assert any("duplicate id 'tf-a'" in m for m in messages)


def test_missing_file_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["check", "no-such-bank.yaml"])
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: no-such-bank.yaml: no such file or bundled bank")
