"""The command line: forwarding to the library, end to end, and meta-tests."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from unittest import mock

import click
import pytest
from click.testing import CliRunner

from quizgym.cli import cli

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> click.testing.Result:
    return CliRunner().invoke(cli, list(args))


def test_help_lists_every_command_with_a_one_line_summary() -> None:
    result = run("--help")
    assert result.exit_code == 0
    for name, command in cli.commands.items():
        assert re.search(rf"^  {name}\s+\S", result.output, flags=re.MULTILINE), name
        assert command.help and "Example:" in command.help, f"{name} has no example"


def test_readme_lists_exactly_the_commands_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Commands", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `quizgym (\w+)", table, flags=re.MULTILINE))
    assert documented == set(cli.commands)


def test_check_bundled_bank() -> None:
    result = run("check", "bert-mlm")
    assert result.exit_code == 0, result.output
    assert re.fullmatch(
        r"banks/bert-mlm\.yaml: bert-mlm, \d+ questions, \d+ variants checked: ok\n", result.output
    )


def test_check_forwards_its_options() -> None:
    with mock.patch("quizgym.check.check_banks", return_value=[]) as check_banks:
        result = run("check", "a.yaml", "b.yaml", "--seeds", "7")
    assert result.exit_code == 0
    check_banks.assert_called_once_with(("a.yaml", "b.yaml"), variant_seeds=7, issued=None)


def test_check_strict_fails_on_warnings(tmp_path: Path) -> None:
    bank = tmp_path / "same-position.yaml"
    choices = "[{text: right, correct: true}, {text: wrong}]"
    questions = "".join(
        f"  - {{id: mc-{i}, type: multiple_choice, prompt: Q{i}, choices: {choices}}}\n"
        for i in range(4)
    )
    bank.write_text(f"bank: demo\ntitle: Demo\nquestions:\n{questions}", encoding="utf-8")
    assert run("check", str(bank)).exit_code == 0
    strict = run("check", "--strict", str(bank))
    assert strict.exit_code == 1
    assert "warning: every single-answer choice question has its key at A" in strict.stderr


def test_solve_prints_reading_exact_form_and_value() -> None:
    result = run("solve", "8 ln 2")
    assert result.exit_code == 0
    assert result.output == "read as: 8*ln(2)\nexact:   8 ln 2\nvalue:   5.545177444479562\n"


def test_solve_knows_a_packs_functions() -> None:
    result = run("solve", "--pack", "machine-learning", "mlm_loss(0.2, 0.5)")
    assert result.output.splitlines()[1:] == ["exact:   ln 10", "value:   2.302585092994046"]
    result = run("solve", "--pack", "machine-learning", "nsp_loss(0.9) + uniform_loss(30000)")
    assert result.output.splitlines()[1] == "exact:   ln(100000/3)"


def test_solve_reads_no_domain_function_without_its_pack() -> None:
    result = run("solve", "mlm_loss(0.2, 0.5)")
    assert result.exit_code == 1
    assert "Unknown name 'mlm_loss'" in result.stderr


def test_solve_names_a_missing_pack() -> None:
    result = run("solve", "--pack", "finance", "1")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: no pack 'finance': neither a bundled pack (there is ")


def test_solve_refuses_hostile_text_in_one_line() -> None:
    result = run("solve", "__import__('os')")
    assert result.exit_code == 1
    assert result.stderr == "Error: cannot read \"__import__('os')\": Unexpected character '_'.\n"


def test_schema_is_json_with_every_field_described() -> None:
    result = run("schema")
    schema = json.loads(result.output)
    assert schema["title"] == "Bank"
    for name, definition in schema["$defs"].items():
        for field, spec in definition.get("properties", {}).items():
            assert "description" in spec, f"{name}.{field}"


def test_debug_shows_tracebacks_and_default_does_not(tmp_path: Path) -> None:
    from quizgym.errors import QuizgymError

    missing = str(tmp_path / "missing.yaml")
    result = run("check", missing)
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    debug = run("--debug", "check", missing)
    assert isinstance(debug.exception, QuizgymError)


def test_check_with_no_paths_checks_the_bundled_bank_not_a_local_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bert-mlm").write_text("not a bank", encoding="utf-8")
    result = run("check")
    assert result.exit_code == 0, result.output
    assert "bert-mlm, 70 questions" in result.output


def test_python_dash_m_and_lazy_imports() -> None:
    code = (
        "import sys, runpy; sys.argv = ['quizgym', '--help']\n"
        "try:\n    runpy.run_module('quizgym', run_name='__main__')\n"
        "except SystemExit as e:\n    assert e.code == 0\n"
        "heavy = ('sympy', 'numpy', 'jinja2', 'mpmath', 'markdown_it', 'latex2mathml', 'ziamath',"
        " 'pint')\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Commands:" in out.stdout
    assert "HEAVY []" in out.stdout


@pytest.mark.parametrize("name", ["check", "schema", "solve"])
def test_each_command_has_help(name: str) -> None:
    result = run(name, "--help")
    assert result.exit_code == 0
    assert "Example:" in result.output


def test_an_unexpected_error_is_one_line_without_debug() -> None:
    with mock.patch("quizgym.solver.solve", side_effect=ValueError("boom")):
        result = run("solve", "1")
        debug = CliRunner().invoke(cli, ["--debug", "solve", "1"])
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: unexpected ValueError: boom "
        "(this is a bug in quizgym; --debug shows the traceback)\n"
    )
    assert isinstance(debug.exception, ValueError)


@pytest.mark.parametrize(
    "args",
    [
        ["render", "bert-mlm", "--ids", "tf-bert-generates", "-o"],
        ["grade", "bert-mlm", "SUBMISSIONS", "-o"],
    ],
    ids=["render", "grade"],
)
def test_an_output_folder_that_cannot_be_made_is_one_line(tmp_path: Path, args: list[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    submissions = tmp_path / "class.csv"
    submissions.write_text("student,tf-bert-generates\ns1,false\n", encoding="utf-8")
    argv = [str(submissions) if a == "SUBMISSIONS" else a for a in args]
    result = run(*argv, str(blocker / "out"))
    assert result.exit_code == 2
    assert result.stderr == f"Error: {blocker / 'out'}: Not a directory\n"


def test_check_of_a_folder_without_banks_says_so(tmp_path: Path) -> None:
    result = run("check", str(tmp_path))
    assert result.exit_code == 2
    assert result.stderr == f"Error: {tmp_path}: no banks (*.yaml, *.yml) in this folder\n"


def test_export_to_standard_output() -> None:
    result = run("export", "bert-mlm", "--to", "gift", "-o", "-")
    assert result.exit_code == 0
    assert result.stdout.startswith("// quizgym export of bert-mlm")
    assert result.stderr == "wrote - (gift): 70 questions as 82 items\n"


def test_a_domain_function_with_too_many_arguments_says_which() -> None:
    result = run("solve", "--pack", "machine-learning", "nsp_loss(0.5, 0.2)")
    assert result.exit_code == 1
    assert result.stderr.endswith("nsp_loss() takes one argument.\n")


def test_the_clis_question_types_are_the_models() -> None:
    from quizgym import cli as cli_module
    from quizgym.model import QUESTION_TYPES

    assert tuple(QUESTION_TYPES) == cli_module._QUESTION_TYPES


def test_practice_refuses_a_filter_that_selects_nothing(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["practice", "--tag", "no-such-tag"],
        env={"QUIZGYM_DB": str(tmp_path / "p.db")},
        input="q\n",
    )
    assert result.exit_code == 2
    assert result.stderr == "Error: bert-mlm: no question is tagged no-such-tag\n"
    assert "Session" not in result.stdout


def test_stats_does_not_load_the_answer_engine() -> None:
    code = (
        "import sys\nfrom quizgym import practice\nimport quizgym.practice.ui\n"
        "import quizgym.practice.stats, quizgym.practice.store\n"
        "print([m for m in ('sympy', 'quizgym.answers') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"
