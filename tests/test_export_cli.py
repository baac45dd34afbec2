"""``quizgym export``: forwarding to the library, end to end, errors and exit codes."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import pytest
from click.testing import CliRunner
from export_checkers import SPECIAL

from quizgym.cli import cli
from quizgym.export import FORMATS, ExportResult


def test_forwards_options_to_the_library(tmp_path: Path) -> None:
    result = ExportResult(tmp_path / "x.xml", "moodle", 9, 10, 2)
    with mock.patch("quizgym.export.export_bank", return_value=result) as called:
        run = CliRunner().invoke(
            cli,
            ["export", "b.yaml", "--to", "moodle", "-o", "x.xml", "--variants", "3", "--seed", "9"],
        )
    assert run.exit_code == 0, run.output
    called.assert_called_once_with(
        "b.yaml", to="moodle", output="x.xml", variants=3, seed=9, check=False
    )
    assert (
        run.output
        == f"wrote {tmp_path / 'x.xml'} (moodle): 9 questions as 10 items, 2 variant pools\n"
    )


@pytest.mark.parametrize(
    ("fmt", "suffix", "items"),
    [("moodle", ".xml", 9), ("gift", ".gift", 10), ("qti12", ".zip", 10), ("qti21", ".zip", 9),
     ("anki", ".apkg", 9), ("blackboard", ".txt", 10)],
)  # fmt: skip
def test_end_to_end_writes_the_default_file(
    fmt: str, suffix: str, items: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke(cli, ["export", str(SPECIAL), "--to", fmt])
    assert run.exit_code == 0, run.output
    name = f"special-chars-{fmt}{suffix}"
    assert run.stdout == (
        f"wrote {name} ({fmt}): 9 questions as {items} items; "
        f"items recorded in {name}.issued.json\n"
    )
    # Blackboard holds one answer and tolerance: ln 10 to 3 figures, right in quizgym, is not
    assert run.stderr == (
        "warning: num-specials: Blackboard refuses 2.3, which quizgym accepts (one answer and "
        "one tolerance per question: 2.30258509299 ± 0.002302586095)\n"
        if fmt == "blackboard"
        else ""
    )
    assert (tmp_path / name).stat().st_size > 0
    assert (tmp_path / f"{name}.issued.json").read_text(encoding="utf-8").count('"ident"') == items


def test_every_format_is_offered() -> None:
    run = CliRunner().invoke(cli, ["export", "--help"])
    assert run.exit_code == 0
    for name in FORMATS:
        assert name in run.output


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["nope", "--to", "gift"], 2,
         "Error: nope: no such file or bundled bank (bundled: bert-mlm, bert-tokens)\n"),
        ([str(SPECIAL), "--to", "blackboard", "--variants", "2"], 2,
         "Error: the Blackboard upload format has no question pools; export variants with "
         "--to moodle, gift, qti12 or qti21\n"),
    ],
)  # fmt: skip
def test_errors_are_one_line(
    args: list[str], code: int, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke(cli, ["export", *args])
    assert (run.exit_code, run.output) == (code, message)


def test_unwritable_output_is_a_usage_error(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "x.gift"
    run = CliRunner().invoke(cli, ["export", str(SPECIAL), "--to", "gift", "-o", str(target)])
    assert run.exit_code == 2
    assert run.output == f"Error: {target}: cannot write: No such file or directory\n"


def test_bank_the_format_cannot_express_exits_1_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(SPECIAL.read_text(encoding="utf-8").replace("credit: 0.5}", "credit: 0.45}"))
    run = CliRunner().invoke(cli, ["export", str(bad), "--to", "gift", "-o", str(tmp_path / "o")])
    assert run.exit_code == 1
    assert run.output.startswith(f"{bad}:")
    assert "num-specials: Moodle accepts no weight of 45%" in run.output
    assert not (tmp_path / "o").exists()


PHYSICS = Path(__file__).resolve().parent / "data" / "export" / "physics-stats.yaml"


def test_check_lists_what_the_lms_accepts_and_exits_0_when_it_scores_as_quizgym(
    tmp_path: Path,
) -> None:
    run = CliRunner().invoke(
        cli, ["export", str(PHYSICS), "--to", "moodle", "-o", str(tmp_path / "p.xml"), "--check"]
    )
    assert run.exit_code == 0, run.output
    lines = run.output.splitlines()
    assert (
        lines[1] == "check moodle as Moodle scores it; schema: no official schema for this format"
    )
    assert "fall-speed: accepts 19.4129070466 to 20.2052705995" in lines
    assert "standard-error: accepts 1.95 to 2.05" in lines  # the edge included: 1.95 is right
    assert "z-score: accepts 1.99490000001 to 2.00509999999" in lines
    assert lines[-1].startswith("ok: 9 numeric blanks, ")
    assert "DIFFERS" not in run.output


def test_check_exits_1_when_canvas_would_refuse_a_correct_answer(tmp_path: Path) -> None:
    run = CliRunner().invoke(
        cli, ["export", "bert-mlm", "--to", "qti12", "-o", str(tmp_path / "c.zip"), "--check"]
    )
    assert run.exit_code == 1, run.output
    assert "schema: ASI 1.2.1 DTD: ok" in run.output
    assert "num-mlm-two: accepts 2.3003 to 2.3048, 2.3\n" in run.output
    assert (
        "  note: Canvas cannot give this partial credit: 1.15 (the mean-vs-sum mistake, "
        "to 3 figures): 0%, quizgym 50%" in run.output
    )
    assert (
        "num-nsp-ratio.loss_y: accepts 0.0101\n  DIFFERS: correct answer refused: 0.01005 "
        "(the key to 4 figures) as 0.01: 0%, quizgym 100%" in run.output
    )
    assert run.output.splitlines()[-1].startswith("FAILED: 21 numeric blanks")
    assert (tmp_path / "c.zip").stat().st_size > 0  # the file is written all the same


def test_check_of_a_format_it_does_not_emulate_is_refused_before_writing(tmp_path: Path) -> None:
    target = tmp_path / "a.apkg"
    run = CliRunner().invoke(cli, ["export", str(SPECIAL), "--to", "anki", "-o", str(target),
                                   "--check"])  # fmt: skip
    assert run.exit_code == 2
    assert run.output == (
        "Error: --check scores numeric items as qti12, moodle, gift, qti21 do; not anki\n"
    )
    assert not target.exists()


def test_check_with_the_file_on_standard_output_reports_on_standard_error() -> None:
    run = CliRunner().invoke(cli, ["export", str(PHYSICS), "--to", "gift", "-o", "-", "--check"])
    assert run.exit_code == 0
    assert run.stdout.startswith("// quizgym export of physics-stats")
    assert "check gift as Moodle (GIFT) scores it" in run.stderr
    assert "check gift" not in run.stdout


FIELD = Path(__file__).resolve().parent / "data" / "field" / "stats-mechanics.yaml"


def test_plain_canvas_export_warns_of_each_blank_canvas_scores_unlike_quizgym(
    tmp_path: Path,
) -> None:
    """Without --check the file is written and the command exits 0, but a blank under which a
    wrong answer earns credit (or a right one none) is named on standard error."""
    run = CliRunner().invoke(
        cli, ["export", "bert-mlm", "--to", "qti12", "-o", str(tmp_path / "c.zip")]
    )
    assert run.exit_code == 0, run.output
    assert run.stdout.startswith("wrote ") and "warning" not in run.stdout
    assert run.stderr.splitlines() == [
        "warning: num-nsp-ratio.loss_y: Canvas scores it unlike quizgym: correct answer refused: "
        "0.01005 (the key to 4 figures) as 0.01: 0%, quizgym 100%; wrong answer accepted: 0.01007 "
        "(a near miss 0.2% above) as 0.0101: 100%, quizgym 0%"
    ]
    assert (tmp_path / "c.zip").stat().st_size > 0


@pytest.mark.parametrize("fmt", ["qti12", "moodle", "gift", "qti21"])
def test_plain_export_of_a_field_bank_warns_where_the_lms_credits_a_wrong_answer(
    fmt: str, tmp_path: Path
) -> None:
    """require_units cannot be expressed in any LMS: 5 typed without its unit is half credit in
    quizgym and full credit there."""
    run = CliRunner().invoke(cli, ["export", str(FIELD), "--to", fmt, "-o", str(tmp_path / "f")])
    assert run.exit_code == 0, run.output
    warnings = run.stderr.splitlines()
    assert warnings and all(line.startswith("warning: ") for line in warnings)
    assert any(
        line.startswith("warning: speed-required-units: ")
        and "wrong answer accepted: 5 (the key in full): 100%, quizgym 50%" in line
        for line in warnings
    ), warnings
    with_check = CliRunner().invoke(
        cli, ["export", str(FIELD), "--to", fmt, "-o", str(tmp_path / "g"), "--check"]
    )
    assert with_check.exit_code == 1
    assert "warning: " not in with_check.output  # the report lists them with every answer
    differs, blank = set(), ""
    for line in with_check.output.splitlines():
        if not line.startswith(" "):
            blank = line.split(": accepts ")[0]
        elif line.startswith("  DIFFERS: "):
            differs.add(blank)
    assert {line.split(": ")[1] for line in warnings} == differs


def test_plain_export_that_scores_as_quizgym_prints_no_warning(tmp_path: Path) -> None:
    run = CliRunner().invoke(cli, ["export", "bert-mlm", "--to", "gift", "-o", str(tmp_path / "b")])
    assert run.exit_code == 0, run.output
    assert run.stderr == ""


def test_a_warm_export_warns_without_scoring_its_file_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same bank exported again writes the same bytes: the warnings kept with the compiled
    # bank are printed, and the scoring check (tens of ms) does not run.
    monkeypatch.setenv("QUIZGYM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("QUIZGYM_CACHE", raising=False)
    args = ["export", "bert-mlm", "--to", "qti12", "-o", str(tmp_path / "c.zip")]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0 and first.stderr.startswith("warning: num-nsp-ratio.loss_y:")
    with mock.patch("quizgym.export.scoring.check_export", side_effect=AssertionError("ran")):
        again = CliRunner().invoke(cli, args)
        assert again.exit_code == 0, again.output
        assert again.stderr == first.stderr
        edited = tmp_path / "m.yaml"  # another bank (other bytes): scored, so it would fail
        edited.write_text(
            (Path(__file__).parents[1] / "banks" / "bert-mlm.yaml").read_text(encoding="utf-8")
            + "\n",
            encoding="utf-8",
        )
        out = str(tmp_path / "x.zip")
        other = CliRunner().invoke(cli, ["export", str(edited), "--to", "qti12", "-o", out])
        assert other.exit_code == 2 and "unexpected AssertionError: ran" in other.output
