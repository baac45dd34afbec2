"""The drill says what the grader knows (issue #31), in a real terminal: ``did you mean true?``,
``read as the ratio 1/6?``, ``did you mean A, B and C?`` instead of a parse error; an answer
rounded to fewer figures than asked may be typed again with more; a known mistake is a
sentence, never ``misconception: tag``; a rubric's points are not the self-mark's scale.

Each test runs the installed ``quizgym`` command in a pseudo-terminal (pexpect) on a one-question
bank, and reads what the drill saved with a separate connection.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pexpect
from practice_helpers import T0, rows

QUIZGYM = Path(sys.executable).with_name("quizgym")

QUESTIONS = {
    "tf": """
  - id: tf-skew
    type: true_false
    prompt: In a right-skewed distribution the mean is usually larger than the median.
    answer: true
""",
    "ma": """
  - id: ma-spread
    type: multiple_choice
    multiple: true
    prompt: Which of these measure spread?
    choices:
      - {text: the range, correct: true}
      - {text: the interquartile range, correct: true}
      - {text: the standard deviation, correct: true}
      - {text: the median}
""",
    "six": """
  - id: num-six
    type: numeric
    prompt: A fair die is rolled once. What is the probability of a six? Give 3 significant figures.
    answer: 1/6
    tolerance: {sigfigs: 3}
    mistakes:
      - {answer: 1/5, feedback: "A die has six faces, not five.", tag: wrong-denominator}
      - {answer: 5/6, feedback: "That is the chance of anything but a six.", tag: not-a-six}
""",
    "comma": """
  - id: num-accel
    type: numeric
    prompt: A car goes from rest to 24 m/s in 10 s. What is its acceleration in m/s²?
    answer: 24 / 10
""",
    "free": """
  - id: why-sd
    type: free_text
    prompt: Why is the standard deviation in the same units as the data?
    points: 6
    model_answer: It is the square root of the variance.
    rubric:
      - {criterion: The square root of the variance, any_of: [square root], points: 3}
      - {criterion: The variance is in the units squared, any_of: [units squared], points: 3}
""",
}


def _bank(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"bank: drill-{name}\ntitle: Drill\nquestions:{QUESTIONS[name]}", "utf-8")
    return path


@contextmanager
def _drill(tmp_path: Path, name: str) -> Iterator[pexpect.spawn]:
    env = {
        **os.environ,
        "QUIZGYM_DB": str(tmp_path / "progress.sqlite3"),
        "QUIZGYM_NOW": T0,
        "TERM": "dumb",
        "NO_COLOR": "1",
        "COLUMNS": "200",
    }
    child = pexpect.spawn(
        str(QUIZGYM),
        ["practice", str(_bank(tmp_path, name)), "--seed", "1"],
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
    )
    try:
        yield child
    finally:
        child.close(force=True)


def _saved(tmp_path: Path) -> list[tuple[object, ...]]:
    return rows(tmp_path / "progress.sqlite3", "SELECT verdict, rating, response FROM attempt")


def test_a_typo_of_true_is_asked_about_and_not_graded(tmp_path: Path) -> None:
    with _drill(tmp_path, "tf") as child:
        child.expect_exact("True or false? (t/f) > ")
        child.sendline("ture")
        child.expect_exact(
            "“ture” could not be read: did you mean true? Type it the way you mean it."
        )
        child.expect_exact("True or false? (t/f) > ")  # asked again: nothing saved
        child.sendline("idk")
        child.expect_exact("That is no answer. Type your answer, or ? hint")
        child.expect_exact("True or false? (t/f) > ")
        child.sendline("true")
        child.expect_exact("✓ Correct")
        child.expect_exact("Enter: next")
        child.sendline("q")
        child.expect(pexpect.EOF)
    assert _saved(tmp_path) == [("correct", 3, "true")]


def test_letters_run_together_are_asked_about_by_name(tmp_path: Path) -> None:
    with _drill(tmp_path, "ma") as child:
        child.expect_exact("Your choices (e.g. A C) > ")
        child.sendline("ABC")
        child.expect_exact("“ABC” could not be read: did you mean A, B and C?")
        child.expect_exact("Your choices (e.g. A C) > ")
        child.sendline("A B C")
        child.expect_exact("✓ Correct")
        child.sendline("q")
        child.expect(pexpect.EOF)
    assert _saved(tmp_path) == [("correct", 3, "A B C")]


def test_a_ratio_is_asked_about_and_too_few_figures_may_be_added_to(tmp_path: Path) -> None:
    with _drill(tmp_path, "six") as child:
        child.expect_exact("Your answer > ")
        child.sendline("1:6")
        child.expect_exact(
            "“1:6” could not be read: read as the ratio 1/6? Type it the way you mean it."
        )
        child.expect_exact("Your answer > ")
        child.sendline("0.17")
        child.expect_exact(
            "0.17 agrees with the answer as far as it goes. Give at least 3 significant"
        )
        child.expect_exact("figures. Type it again with more figures.")
        child.expect_exact("Your answer > ")  # not rated Again: asked again
        child.sendline("0.167")
        child.expect_exact("✓ Correct")
        child.expect_exact("Rated good")
        child.sendline("q")
        child.expect(pexpect.EOF)
    assert _saved(tmp_path) == [("correct", 3, "0.167")]


def test_figures_are_asked_for_once_then_the_answer_is_graded_as_typed(tmp_path: Path) -> None:
    with _drill(tmp_path, "six") as child:
        child.expect_exact("Your answer > ")
        child.sendline("0.17")
        child.expect_exact("Type it again with more figures.")
        child.expect_exact("Your answer > ")
        child.sendline("0.17")
        child.expect_exact("✗ Not quite")
        child.expect_exact("Rated again")
        child.sendline("q")
        child.expect(pexpect.EOF)
    assert _saved(tmp_path) == [("incorrect", 1, "0.17")]


def test_a_known_mistake_is_told_as_a_sentence_never_as_a_tag(tmp_path: Path) -> None:
    with _drill(tmp_path, "six") as child:
        child.expect_exact("Your answer > ")
        child.sendline("5/6")  # a known mistake with its tag
        child.expect_exact("✗ Not quite")
        child.expect_exact("That is the chance of anything but a six.")
        child.expect_exact("This is a common mistake (not a six).")
        seen = child.before
        child.expect_exact("Enter: next")
        child.sendline("q")
        child.expect_exact("Common mistakes you made: not a six.")
        child.expect(pexpect.EOF)
        assert "misconception" not in seen + child.before
        assert "not-a-six" not in seen + child.before
    assert _saved(tmp_path) == [("incorrect", 1, "5/6")]


def test_a_rubric_s_points_are_not_the_self_mark_s_scale(tmp_path: Path) -> None:
    with _drill(tmp_path, "free") as child:
        child.expect_exact("Your answer (one line) > ")
        child.sendline("it is the square root")
        child.expect_exact("  - The square root of the variance (3 pt)")
        child.expect_exact("The rubric finds 3 of 6 points: ")
        child.expect_exact("Your mark is how well you knew it (1–4), not points.")
        child.expect_exact("Your mark: 1 again · 2 hard · 3 good · 4 easy [2] > ")
        before = child.before
        assert "Suggested score from the rubric; to be reviewed." not in before
        child.sendline("")
        child.expect_exact("Rated hard")
        child.sendline("q")
        child.expect(pexpect.EOF)
    assert _saved(tmp_path) == [("partial", 2, "it is the square root")]


def test_a_comma_is_explained_without_saying_which_reading_is_right(tmp_path: Path) -> None:
    with _drill(tmp_path, "comma") as child:
        child.expect_exact("Your answer > ")
        child.sendline("2,400")  # 2.4 is the key: the drill must not say so
        child.expect_exact("2,400 is ambiguous: write it with a decimal point")
        child.expect_exact("Your answer > ")
        assert "did you mean" not in child.before
        child.sendline("2.4")
        child.expect_exact("✓ Correct")
        child.sendline("q")
        child.expect(pexpect.EOF)
    assert _saved(tmp_path) == [("correct", 3, "2.4")]
