"""IRT beside the classical statistics (``grade --irt``): classes drawn from known item
parameters are recovered, mirt and girth agree, and small classes get a sentence, not numbers."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from quizgym.cli import cli
from quizgym.errors import QuizgymError
from quizgym.irt import MIN_2PL, MIN_RASCH, fit_irt

pytest.importorskip("mirt")


def _draw(
    students: int, items: int, *, seed: int, spread: float = 1.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.6, 2.0, items)
    b = rng.normal(0, 1, items)
    theta = rng.normal(0, spread, students)
    p = 1 / (1 + np.exp(-a * (theta[:, None] - b)))
    return (rng.random((students, items)) < p).astype(np.int64), a, b


def test_2pl_parameters_of_2000_students_correlate_with_the_truth() -> None:
    x, a, b = _draw(2000, 30, seed=1)
    fit = fit_irt(x, [f"q{k}" for k in range(30)])
    assert fit.notes == [] and fit.twopl is not None and fit.rasch is not None
    a_hat = np.array([i.a for i in fit.items], dtype=float)
    b_hat = np.array([i.b for i in fit.items], dtype=float)
    assert np.corrcoef(a_hat, a)[0, 1] >= 0.95
    assert np.corrcoef(b_hat, b)[0, 1] >= 0.95
    # abilities come with standard errors, smallest where the test informs most
    assert fit.twopl.theta.shape == (2000,) and (fit.twopl.se > 0).all()
    theta, test, _ = fit.information() or (None, None, None)
    assert theta is not None and test is not None
    assert float(np.median(fit.twopl.se)) == pytest.approx(
        float(np.median(1 / np.sqrt(np.interp(fit.twopl.theta, theta, test)))), rel=0.25
    )


def test_mirt_and_girth_agree_within_their_standard_errors() -> None:
    girth = pytest.importorskip("girth")
    x, _, _ = _draw(1000, 10, seed=2, spread=1.0)
    fit = fit_irt(x, [f"q{k}" for k in range(10)])
    theirs = girth.twopl_mml(x.T.astype(np.int64))
    close_a = close_b = 0
    for item, a, b in zip(fit.items, theirs["Discrimination"], theirs["Difficulty"], strict=True):
        assert item.a is not None and item.a_se is not None
        assert item.b is not None and item.b_se is not None
        close_a += abs(item.a - a) <= 2 * item.a_se
        close_b += abs(item.b - b) <= 2 * item.b_se
    assert close_a >= 9 and close_b >= 9
    rasch = girth.onepl_mml(x.T.astype(np.int64))
    assert fit.rasch_a is not None and fit.rasch_a_se is not None
    assert abs(fit.rasch_a - float(rasch["Discrimination"])) <= 2 * fit.rasch_a_se
    for item, b in zip(fit.items, rasch["Difficulty"], strict=True):
        assert item.rasch_b is not None and item.rasch_b_se is not None
        assert abs(item.rasch_b - b) <= 2 * item.rasch_b_se


def test_a_class_too_small_gets_a_sentence_instead_of_numbers() -> None:
    x, _, _ = _draw(MIN_RASCH - 1, 8, seed=3)
    fit = fit_irt(x, [f"q{k}" for k in range(8)])
    assert fit.notes == [
        f"IRT needs at least {MIN_RASCH} students to estimate difficulties that would hold from "
        f"one class to the next; this class has {MIN_RASCH - 1}, so no model was fitted"
    ]
    assert all(i.rasch_b is None and i.a is None for i in fit.items)
    assert fit.information() is None


def test_below_the_2pl_size_only_the_rasch_model_is_fitted_and_constant_items_are_left_out() -> (
    None
):
    x, _, _ = _draw(MIN_RASCH + 50, 6, seed=4)
    x[:, 2] = 1  # everyone right: says nothing of who is abler
    fit = fit_irt(x, [f"q{k}" for k in range(6)])
    assert fit.left_out == ["q2"]
    assert fit.twopl is None and fit.rasch is not None
    assert fit.notes[0].startswith(
        f"the 2PL model (a discrimination per item) needs at least {MIN_2PL}"
    )
    assert fit.items[2].rasch_b is None and fit.items[2].right == 1.0
    assert all(i.rasch_b is not None and i.a is None for k, i in enumerate(fit.items) if k != 2)


BANK = "bank: irt\ntitle: IRT\nquestions:\n" + "".join(
    f"  - {{id: t{k}, type: true_false, prompt: Item {k}., answer: true}}\n" for k in range(6)
)


def _class(folder: Path, students: int) -> Path:
    x, _, _ = _draw(students, 6, seed=5)
    path = folder / "class.csv"
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["student", *(f"t{k}" for k in range(6))])
        for k, row in enumerate(x):
            writer.writerow([f"s{k:04d}", *("true" if v else "false" for v in row)])
    return path


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))


def test_grade_irt_writes_the_fit_and_the_report_shows_it(tmp_path: Path) -> None:
    (tmp_path / "bank.yaml").write_text(BANK, encoding="utf-8")
    submissions = _class(tmp_path, 600)
    out = tmp_path / "out"
    args = ["grade", str(tmp_path / "bank.yaml"), str(submissions), "-o", str(out)]
    result = CliRunner().invoke(cli, [*args, "--irt"])
    assert result.exit_code == 0, result.output
    items = _rows(out / "irt.csv")
    assert [r["question"] for r in items] == [f"t{k}" for k in range(6)]
    assert all(r["rasch_difficulty"] and r["discrimination"] and r["difficulty_se"] for r in items)
    abilities = _rows(out / "abilities.csv")
    assert len(abilities) == 600 and abilities[0]["student"] == "s0000"
    assert all(float(r["ability_se"]) > 0 for r in abilities)
    report = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="irt"' in report and "Item information (2PL)" in report
    assert "The test measures most precisely at ability θ =" in report
    # chunked, the same files
    chunked = tmp_path / "chunked"
    again = CliRunner().invoke(cli, [*args[:3], "-o", str(chunked), "--irt", "--chunk-rows", "97"])
    assert again.exit_code == 0, again.output
    for name in ("irt.csv", "abilities.csv"):
        assert (chunked / name).read_bytes() == (out / name).read_bytes()
    # without --irt: no files, no section
    plain = tmp_path / "plain"
    assert CliRunner().invoke(cli, [*args[:3], "-o", str(plain)]).exit_code == 0
    assert not (plain / "irt.csv").exists()
    assert 'id="irt"' not in (plain / "report.html").read_text(encoding="utf-8")


def test_a_small_class_report_says_why_there_are_no_irt_numbers(tmp_path: Path) -> None:
    (tmp_path / "bank.yaml").write_text(BANK, encoding="utf-8")
    submissions = _class(tmp_path, 40)
    out = tmp_path / "out"
    args = ["grade", str(tmp_path / "bank.yaml"), str(submissions), "-o", str(out), "--irt"]
    assert CliRunner().invoke(cli, args).exit_code == 0
    report = (out / "report.html").read_text(encoding="utf-8")
    assert "IRT needs at least 100 students" in report and "Item information" not in report
    rows = _rows(out / "irt.csv")
    assert all(r["rasch_difficulty"] == "" and r["right"] for r in rows)


def test_without_mirt_grade_irt_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from quizgym.grading.run import grade_submissions

    monkeypatch.setitem(sys.modules, "mirt", None)
    (tmp_path / "bank.yaml").write_text(BANK, encoding="utf-8")
    with pytest.raises(QuizgymError, match=r'--irt needs the mirt package .*"quizgym\[irt\]"'):
        grade_submissions(
            tmp_path / "bank.yaml", [_class(tmp_path, 5)], out_dir=tmp_path / "out", irt=True
        )
    assert not (tmp_path / "out").exists()
