"""Regrading: which students' scores changed since a previous run, and why.

After a key or tolerance change, ``quizgym grade … --compare PREVIOUS_DIR`` reads both runs'
``grades.csv`` and ``responses.csv`` and lists, for every student whose total changed, each
answer whose score changed: the old and new verdict and score, how the answer is read now and
the new feedback (or, without feedback, the answer now expected). Students graded only in one of
the runs are listed too. The comparison works on the output files (and the bank, for the
expected answers), so every engine (in memory, chunked, Dask) compares the same way.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from quizgym.answers import grade_response
from quizgym.errors import QuizgymError, SubmissionError
from quizgym.grading.cells import undefuse
from quizgym.grading.outputs import write_rows
from quizgym.grading.table import ClassAnswers
from quizgym.grading.variants import Variants
from quizgym.solver import CompiledBank

__all__ = [
    "Change",
    "check_previous",
    "compare_runs",
    "expected_answers",
    "regrade",
    "seeds_of",
    "write_changes",
]


@dataclass(frozen=True, kw_only=True)
class Change:
    """A changed answer of a student whose total changed (or a student in one run only)."""

    student: str
    old_total: str = ""
    new_total: str = ""
    question: str = ""
    old_verdict: str = ""
    new_verdict: str = ""
    old_score: str = ""
    new_score: str = ""
    reason: str

    def __str__(self) -> str:
        return f"{self.student}: {self.old_total} → {self.new_total}: {self.reason}"


def _rows(path: Path) -> Iterator[dict[str, str]]:
    """The rows of one of quizgym's CSV files, read one at a time, cells unguarded."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as stream:
            for row in csv.DictReader(stream):
                yield {key: undefuse(value) for key, value in row.items()}
    except OSError as exc:
        raise SubmissionError(path, f"cannot read the run: {exc.strerror}") from exc


def check_previous(previous: Path, out_dir: Path) -> None:
    """Refuse, before grading, a previous run that cannot be compared with.

    Raises:
        QuizgymError: ``previous`` is the output folder itself, lacks its two CSV files, holds
            a run that did not finish (no ``run.json``, written last), or was damaged since:
            ``run.json`` unreadable, or its two CSV files not whole or not holding the rows
            ``run.json`` counted.
    """
    if previous.resolve() == out_dir.resolve():
        raise QuizgymError(
            f"--compare {previous}: name the previous run's folder, not the one this run writes"
        )
    for name in ("grades.csv", "responses.csv"):
        if not (previous / name).is_file():
            raise QuizgymError(f"--compare {previous}: no {name} there (is it a grade folder?)")
    if not (previous / "run.json").is_file():
        raise QuizgymError(
            f"--compare {previous}: the run there did not finish (no run.json): grade it again"
        )
    record = _run_record(previous)
    for name, columns, key in (
        ("grades.csv", ("student", "score"), "students"),
        ("responses.csv", ("student", "question", "verdict", "score", "read_as"), "responses"),
    ):
        rows = _count_rows(previous, name, columns)
        if rows != record[key]:
            raise QuizgymError(
                f"--compare {previous}: {name} holds {rows:,} rows, and run.json says the run "
                f"wrote {record[key]:,} {key}: the folder was changed since; grade it again"
            )


_RUN_FORMAT = "quizgym-run/1"


def _run_record(previous: Path) -> dict[str, int]:
    """The counts a previous run's ``run.json`` records, or an error saying what is wrong."""
    import json

    where = f"--compare {previous}: run.json"
    try:
        record = json.loads((previous / "run.json").read_text(encoding="utf-8"))
    except OSError as exc:
        raise QuizgymError(f"{where}: cannot read: {exc.strerror}") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise QuizgymError(f"{where} is damaged (not JSON): grade it again") from exc
    if not isinstance(record, dict) or record.get("format") != _RUN_FORMAT:
        raise QuizgymError(f"{where} is not a quizgym run record ({_RUN_FORMAT})")
    counts = {}
    for key in ("students", "responses"):
        value = record.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise QuizgymError(f"{where} is damaged ({key} is not a count): grade it again")
        counts[key] = value
    return counts


def _count_rows(previous: Path, name: str, columns: Sequence[str]) -> int:
    """The rows of one of a previous run's CSV files, each checked to be whole: its header has
    ``columns`` and every row as many cells as the header."""
    from quizgym.grading.rows import MAX_RECORD

    where = f"--compare {previous}: {name}"
    if csv.field_size_limit() < MAX_RECORD:  # a feedback cell may be long
        csv.field_size_limit(MAX_RECORD)
    rows = 0
    try:
        with (previous / name).open(encoding="utf-8-sig", newline="") as stream:
            reader = csv.reader(stream, strict=True)
            header = next(reader, [])
            missing = [c for c in columns if c not in header]
            if missing:
                raise QuizgymError(f"{where} is damaged: no {missing[0]} column; grade it again")
            for row in reader:
                if len(row) != len(header):
                    raise QuizgymError(
                        f"{where}:{reader.line_num}: a row of {len(row)} cells under a header "
                        f"of {len(header)} (the file is damaged); grade it again"
                    )
                rows += 1
    except OSError as exc:
        raise QuizgymError(f"{where}: cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise QuizgymError(f"{where} is damaged (not UTF-8); grade it again") from exc
    except csv.Error as exc:
        raise QuizgymError(f"{where}:{reader.line_num}: damaged ({exc}); grade it again") from exc
    return rows


def seeds_of(answers: ClassAnswers) -> dict[str, int]:
    """The students of a class who were given a seed, and their seed."""
    seeds = answers.seeds
    if seeds.count(None) == len(seeds):  # most classes: nobody (counted at C speed)
        return {}
    return {s: d for s, d in zip(answers.students, seeds, strict=True) if d is not None}


def expected_answers(
    bank: CompiledBank, seeds: Mapping[str, int], variants: Variants
) -> Callable[[str, str], str]:
    """``expected(student, slot)``: the answer that slot expects of that student, as shown in
    their verdict (their own numbers and choice order, as the run's ``variants`` say); '' when
    only the submissions could tell their variant."""

    def expected(student: str, slot_id: str) -> str:
        try:
            slot = bank.slot(slot_id)
        except KeyError:
            return ""
        variant = variants.variant_of(bank, slot.question, student, seeds.get(student))
        if variant is None:
            return ""
        return grade_response(bank, slot.question, None, part=slot.part, variant=variant).expected

    return expected


def compare_runs(
    previous: Path, current: Path, *, expected: Callable[[str, str], str] | None = None
) -> list[Change]:
    """Compare two output folders: the previous run's and this one's.

    Both are read from their files, streamed, so a chunked or Dask run compares as the in-memory
    one does, with the same result: every total (``grades.csv``) is held in memory, and only the
    answers (``responses.csv``) of students whose total changed.

    Args:
        previous: the previous run's folder.
        current: this run's folder.
        expected: gives the answer a student's slot now expects (:func:`expected_answers`),
            shown for a changed answer that is not right and has no feedback of its own.

    Raises:
        SubmissionError: a folder has no readable grades.csv / responses.csv.
    """
    old_totals = {row["student"]: row["score"] for row in _rows(previous / "grades.csv")}
    new_totals = {row["student"]: row["score"] for row in _rows(current / "grades.csv")}
    changed = {
        s for s in old_totals.keys() | new_totals.keys() if old_totals.get(s) != new_totals.get(s)
    }
    old_answers: dict[tuple[str, str], dict[str, str]] = {}
    new_answers: dict[str, list[dict[str, str]]] = {}
    if changed:
        for record in _rows(previous / "responses.csv"):
            if record["student"] in changed:
                old_answers[record["student"], record["question"]] = record
        for record in _rows(current / "responses.csv"):
            if record["student"] in changed:
                new_answers.setdefault(record["student"], []).append(record)
    changes: list[Change] = []
    for student in sorted(changed):
        old_t, new_t = old_totals.get(student, ""), new_totals.get(student, "")
        if student not in new_totals:
            changes.append(Change(student=student, old_total=old_t, reason="not in this run"))
            continue
        if student not in old_totals:
            changes.append(
                Change(student=student, new_total=new_t, reason="not in the previous run")
            )
            continue
        found = False
        for new in new_answers.get(student, []):
            question = new["question"]
            old = old_answers.get((student, question))
            if old is not None and old["score"] == new["score"]:
                continue
            found = True
            old_v = old["verdict"] if old else "(none)"
            old_s = old["score"] if old else ""
            why = f"{question}: {old_v} ({old_s}) → {new['verdict']} ({new['score']})"
            if new.get("scored_by") == "teacher":
                why += "; scored by a teacher (review)"
            if new["read_as"]:
                why += f"; read as {new['read_as']}"
            if new["feedback"]:
                why += f"; {new['feedback']}"
            elif new["verdict"] != "correct" and expected and (text := expected(student, question)):
                why += f"; expected {text}"
            changes.append(
                Change(
                    student=student,
                    old_total=old_t,
                    new_total=new_t,
                    question=question,
                    old_verdict=old_v,
                    new_verdict=new["verdict"],
                    old_score=old_s,
                    new_score=new["score"],
                    reason=why,
                )
            )
        if not found:
            changes.append(
                Change(
                    student=student,
                    old_total=old_t,
                    new_total=new_t,
                    reason="points per question changed",
                )
            )
    return changes


def regrade(
    bank: CompiledBank,
    previous: Path,
    out_dir: Path,
    seeds: Mapping[str, int],
    variants: Variants,
) -> list[Change]:
    """Compare this run's folder with a previous one and write ``changes.csv`` there.

    Args:
        bank: this run's bank (for the keys shown with changed answers).
        previous: the previous run's folder.
        out_dir: this run's folder, its outputs written.
        seeds: the students given a seed (:func:`seeds_of`).
        variants: how this run knew each student's variant (for their own keys).
    """
    expected = expected_answers(bank, seeds, variants)
    changes = compare_runs(previous, out_dir, expected=expected)
    write_changes(out_dir / "changes.csv", changes)
    return changes


def write_changes(path: Path, changes: Sequence[Change]) -> None:
    """``changes.csv``: one row per changed answer."""

    header = (
        "student",
        "old_total",
        "new_total",
        "question",
        "old_verdict",
        "new_verdict",
        "old_score",
        "new_score",
        "reason",
    )
    rows = [[getattr(c, h) for h in header] for c in changes]
    write_rows(path, header, rows)
