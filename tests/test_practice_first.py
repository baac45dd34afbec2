"""The first prompt shown from the bank's preview, before the drill is loaded (practice/first.py).

A drill whose bank has a preview in the cache must be, to the student and in the progress
database, the very drill it is without one: the same screens, verdicts, answers, times and
schedule. Each case drills the same answers twice from the same progress, once with the cache
off (the drill works everything out itself) and once with the preview, and compares both.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from practice_helpers import rows, run

import quizgym.practice.first as first

HERE = Path(__file__).parent
BANK = HERE / "data" / "practice" / "first.yaml"
ATTEMPTS = (
    "SELECT item_id, response, verdict, score, rating, answered_at, duration_ms, scheduled,"
    " content_sha, tag, card_before, card_after FROM attempt ORDER BY id"
)

CASES = {
    # tag: answers typed (the first one at the first prompt)
    "choice": ["A", "", "q"],
    "several": ["A B", "", "q"],
    "statement": ["B", "", "q"],
    "parts": ["6", "4.8", "", "q"],
    "truth": ["t", "e", "q"],
    "words": ["more signal, enough context", "", "", "q"],
    "drawn": ["9", "", "q"],  # numbers drawn: not previewed, the drill shows it itself
}


def _drill(
    tmp: Path, name: str, answers: list[str], *, cache: str, tag: str
) -> tuple[str, list[tuple[Any, ...]]]:
    db = tmp / f"{name}.sqlite3"
    if (tmp / "before.sqlite3").exists():
        shutil.copy(tmp / "before.sqlite3", db)
    env = {"QUIZGYM_CACHE": cache, "QUIZGYM_CACHE_DIR": str(tmp / "cache")}
    result = run(db, answers, str(BANK), "--tag", tag, env=env)
    assert result.exit_code == 0, result.output
    return result.output, rows(db, ATTEMPTS)


@pytest.mark.parametrize("tag", list(CASES))
def test_the_first_prompt_from_the_preview_is_the_drill_itself(
    tag: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[str] = []
    show = first.show_first

    def recording(found: Any, **kwargs: Any) -> first.Opening:
        opening = show(found, **kwargs)
        shown.append(opening.view.item_id)
        return opening

    monkeypatch.setattr(first, "show_first", recording)
    answers = CASES[tag]
    plain = _drill(tmp_path, "plain", answers, cache="off", tag=tag)
    assert not shown
    _drill(tmp_path, "warm", ["q"], cache="on", tag=tag)  # the first drill keeps the preview
    assert not shown
    previewed = _drill(tmp_path, "previewed", answers, cache="on", tag=tag)
    assert previewed == plain  # every screen, every saved answer, time and card
    assert shown == ([] if tag == "drawn" else [plain[1][0][0]])
    assert plain[1], "the first answer was saved"


def test_a_review_is_previewed_with_its_schedule_and_fresh_choice_order(tmp_path: Path) -> None:
    # An item answered before comes back due: the preview reads its card and its attempts
    # (each review draws its own choice order), as the drill does.
    env = {"QUIZGYM_CACHE": "on", "QUIZGYM_CACHE_DIR": str(tmp_path / "cache")}
    before = tmp_path / "before.sqlite3"
    done = run(before, ["B", "", "q"], str(BANK), "--tag", "choice", env=env)
    assert done.exit_code == 0, done.output
    later = "2026-02-05T10:00:00+00:00"
    outputs = []
    for cache in ("off", "on"):
        db = tmp_path / f"{cache}.sqlite3"
        shutil.copy(before, db)
        env["QUIZGYM_CACHE"] = cache
        result = run(db, ["A", "", "q"], str(BANK), "--tag", "choice", now=later, env=env)
        assert result.exit_code == 0, result.output
        outputs.append((result.output, rows(db, ATTEMPTS)))
    assert outputs[0] == outputs[1]
    assert "· new" not in outputs[1][0]  # a review, not a new item


def test_quitting_at_the_first_prompt_saves_nothing_and_says_so(tmp_path: Path) -> None:
    env = {"QUIZGYM_CACHE": "on", "QUIZGYM_CACHE_DIR": str(tmp_path / "cache")}
    run(tmp_path / "warm.sqlite3", ["q"], str(BANK), env=env)
    db = tmp_path / "p.sqlite3"
    result = run(db, [], str(BANK), env=env)  # end of input at the first prompt
    assert result.exit_code == 0, result.output
    assert "Session ended early" in result.output and "Answered 0" in result.output
    assert rows(db, "SELECT count(*) FROM attempt") == [(0,)]
    assert rows(db, "SELECT count(*) FROM session WHERE ended_at IS NOT NULL") == [(1,)]


def test_a_damaged_preview_is_never_trusted(tmp_path: Path) -> None:
    env = {"QUIZGYM_CACHE": "on", "QUIZGYM_CACHE_DIR": str(tmp_path / "cache")}
    plain = run(tmp_path / "a.sqlite3", ["A", "", "q"], str(BANK), env={"QUIZGYM_CACHE": "off"})
    run(tmp_path / "warm.sqlite3", ["q"], str(BANK), env=env)
    for path in (tmp_path / "cache").glob("*.json"):  # flip a byte of every file's body
        data = bytearray(path.read_bytes())
        data[-5] ^= 1
        path.write_bytes(bytes(data))
    again = run(tmp_path / "b.sqlite3", ["A", "", "q"], str(BANK), env=env)
    assert again.exit_code == 0, again.output
    assert again.output == plain.output
