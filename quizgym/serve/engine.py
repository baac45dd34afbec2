"""A class's practice and quiz: a student and a submitted form in; the answers graded by the
answer engine, committed, and the stored verdicts out.

Practice is the drill's spaced repetition per student (:mod:`quizgym.practice.queue` orders the
items, py-fsrs schedules, a rating is the drill's rating of the verdict); the quiz is one
version per student, as recorded in ``issued.json``. Nothing here speaks HTTP. Every answer is
committed before anything shows its verdict: the pages read verdicts back from the database.
"""

from __future__ import annotations

import functools
import hashlib
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal, overload

from fsrs import Card, Scheduler, State

from quizgym.answers import Status, Verdict, grade_response
from quizgym.errors import QuizgymError
from quizgym.issued import Issued
from quizgym.model import AnyQuestion
from quizgym.practice.drill import RETRY_GAP, explanation_for, rating_for, verdict_word
from quizgym.practice.queue import content_sha, is_due, order_queue
from quizgym.serve.db import Database, Tx
from quizgym.serve.forms import Shown, read_answers
from quizgym.serve.keys import Secret
from quizgym.solver import CompiledBank, Variant
from quizgym.version import __version__

__all__ = [
    "FEEDBACK",
    "question_ids",
    "Classroom",
    "Form",
    "Quiz",
    "QuizView",
    "Reask",
    "RefusedError",
    "Result",
]

Feedback = Literal["now", "submitted", "closed"]
FEEDBACK: tuple[Feedback, ...] = ("now", "submitted", "closed")
"""When a quiz shows its verdicts: after each submission, once the student has finished (no
attempts left, or *Submit and finish*), or once the quiz has closed."""


class RefusedError(QuizgymError):
    """A request the server will not carry out; ``status`` is its HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Reask(Exception):  # noqa: N818  (not an error: the student is asked again)
    """Answers that cannot be graded yet (blank, unreadable): nothing is recorded."""

    def __init__(self, messages: Mapping[str, str], values: Mapping[str, str | None]) -> None:
        super().__init__("; ".join(messages.values()))
        self.messages = dict(messages)
        self.values = dict(values)


@dataclass(frozen=True, kw_only=True)
class Quiz:
    """A quiz: questions of one bank, a window, an attempt cap and a feedback policy."""

    bank: str
    questions: tuple[str, ...]
    opens: datetime | None = None
    closes: datetime | None = None
    attempts: int | None = None
    """The most submissions per student (None: no cap)."""
    feedback: Feedback = "now"


@dataclass(frozen=True)
class Form:
    """A form handed to a student: its token, and what it asks (server side only)."""

    token: str
    book: CompiledBank
    questions: tuple[AnyQuestion, ...]
    variants: tuple[Variant, ...]
    seed: int | None = None
    """Practice: the variant's seed."""


@dataclass(frozen=True, kw_only=True)
class Result:
    """A submission as stored, with each slot's verdict."""

    token: str
    mode: str
    bank: str
    item: str | None
    answered_at: datetime
    verdict: str
    score: float
    max_score: float
    slots: tuple[Shown, ...]
    scheduled: bool = False
    next_due: datetime | None = None
    finish: bool = False


@dataclass(frozen=True, kw_only=True)
class QuizView:
    """What a student's quiz page shows now."""

    state: Literal["not-open", "open", "closed", "none"]
    used: int
    left: int | None
    finished: bool
    form: Form | None
    last: Mapping[str, str | None] = field(default_factory=dict)
    results: Mapping[str, Shown] = field(default_factory=dict)
    show_verdicts: bool = False
    show_answers: bool = False
    score: float = 0.0
    max_score: float = 0.0


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="microseconds")


def _card(text: str | None) -> Card | None:
    return Card.from_json(text) if text else None


def _card_id(student: str, bank: str, item: str) -> int:
    digest = hashlib.sha256(f"{student}\x1f{bank}\x1f{item}".encode()).digest()
    return int.from_bytes(digest[:7], "big")


def _safe_grade(
    book: CompiledBank, question: AnyQuestion, text: str | None, variant: Variant,
    part: str | None, earlier: Mapping[str, str],
) -> Verdict:  # fmt: skip
    """The engine's verdict; an engine failure on one answer is reported as unreadable."""
    try:
        return grade_response(book, question, text, variant=variant, part=part, earlier=earlier)
    except Exception as exc:  # per-answer isolation, as in the drill: the server goes on
        slot_id = question.id if part is None else f"{question.id}.{part}"
        return Verdict(
            question=slot_id,
            status=Status.INVALID,
            score=0.0,
            max_score=1.0,
            feedback=f"Your answer could not be graded ({type(exc).__name__}); this is a bug in"
            " quizgym. Type it another way.",
        )


@functools.cache
def question_ids(book: CompiledBank) -> frozenset[str]:
    """The ids of a bank's questions (worked out once per compiled bank)."""
    return frozenset(q.id for q in book.bank.questions)


@functools.cache
def _sha(book: CompiledBank, question: str) -> str:
    """A question's content hash, as the drill's store records it (once per question)."""
    return content_sha(book.bank.question(question))


class Classroom:
    """The banks, the roster, the quiz and the database of one server."""

    def __init__(
        self,
        *,
        books: Sequence[CompiledBank],
        students: Mapping[str, str],
        secret: Secret,
        db: Database,
        quiz: Quiz | None,
        issued: Issued | None,
        clock: Callable[[], datetime],
        rate: int,
        fuzz: bool = True,
        folder: Path | None = None,
    ) -> None:
        self.folder = folder
        """The data folder (its ``issued.json`` is the quiz's record)."""
        self.books = {book.bank.bank: book for book in books}
        self.students = dict(students)
        self.secret = secret
        self.db = db
        self.quiz = quiz
        self.issued = issued
        self.clock = clock
        self.rate = rate
        self.scheduler = Scheduler(enable_fuzzing=fuzz)
        self.graded: list[Callable[[Tx, str, str, datetime], Callable[[], None] | None]] = []
        """Called in each graded quiz submission's own transaction, after its rows are written,
        with (transaction, student, the form's token, time): what they write commits with it;
        what they return (if anything) is called once it has committed."""

    # --- shared -----------------------------------------------------------------------------

    def _grade(self, form: Form, answers: Mapping[str, str | None]) -> list[tuple[str, Verdict]]:
        """Every slot's verdict; :class:`Reask` when one cannot be read."""
        graded: list[tuple[str, Verdict]] = []
        problems: dict[str, str] = {}
        for question, variant in zip(form.questions, form.variants, strict=True):
            earlier: dict[str, str] = {}
            for slot in form.book.slots_of(question):
                text = answers.get(slot.id)
                verdict = _safe_grade(form.book, question, text, variant, slot.part, earlier)
                if verdict.status is Status.INVALID:
                    problems[slot.id] = verdict.feedback or "That cannot be read as an answer."
                if slot.part is not None and text is not None:
                    earlier[slot.part] = text
                graded.append((slot.id, verdict))
        if problems:
            raise Reask(problems, answers)
        return graded

    def _limit(self, tx: Tx, student: str, now: datetime) -> None:
        """Refuse an answer past the per-minute cap (nobody bisects a tolerance)."""
        since = _iso(now - timedelta(minutes=1))
        (count,) = tx.rows(
            "SELECT COUNT(*) FROM submission WHERE student = ? AND answered_at > ?",
            (student, since),
        )[0]
        if count >= self.rate:
            raise RefusedError(
                429,
                f"Too many answers: at most {self.rate} a minute. Wait a minute and send it again.",
            )

    def _insert(
        self, tx: Tx, *, token: str, student: str, mode: str, form: Form,
        graded: Sequence[tuple[str, Verdict]], answers: Mapping[str, str | None],
        now: datetime, verdict: str, score: float, max_score: float, rating: int | None,
        scheduled: bool, before: Card | None, after: Card | None, finish: bool,
        seed: int | None, versions: Mapping[str, int],
    ) -> None:  # fmt: skip
        item = form.questions[0].id if mode == "practice" else None
        (sub_id,) = tx.rows(
            "INSERT INTO submission (token, student, mode, bank_id, item_id, answered_at,"
            " verdict, score, max_score, rating, scheduled, card_before, card_after, finish)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                token, student, mode, form.book.bank.bank, item, _iso(now), verdict, score,
                max_score, rating, int(scheduled),
                before.to_json() if before else None, after.to_json() if after else None,
                int(finish),
            ),
        )[0]  # fmt: skip
        questions = {
            slot.id: slot.question for q in form.questions for slot in form.book.slots_of(q)
        }
        tx.many(
            "INSERT INTO attempt (submission_id, student, mode, bank_id, item_id, slot,"
            " response, verdict, score, max_score, read_as, feedback, expected, tag,"
            " needs_review, seed, version, content_sha, engine, answered_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    sub_id, student, mode, form.book.bank.bank, questions[slot_id].id, slot_id,
                    answers.get(slot_id), str(v.status), v.score, v.max_score, v.read_as,
                    v.feedback, v.expected, v.tag, int(v.needs_review), seed,
                    versions.get(questions[slot_id].id), _sha(form.book, questions[slot_id].id),
                    __version__, _iso(now),
                )
                for slot_id, v in graded
            ],
        )  # fmt: skip

    @staticmethod
    def _written(
        *, token: str, mode: str, form: Form, now: datetime, verdict: str, score: float,
        max_score: float, graded: Sequence[tuple[str, Verdict]],
        answers: Mapping[str, str | None], scheduled: bool, after: Card | None, finish: bool,
    ) -> Result:  # fmt: skip
        """The result of a submission just written, as :meth:`result` would read it back."""
        slots = tuple(
            Shown(slot_id, answers.get(slot_id), str(v.status), v.score, v.max_score, v.read_as,
                  v.feedback, v.expected)
            for slot_id, v in graded
        )  # fmt: skip
        return Result(
            token=token, mode=mode, bank=form.book.bank.bank,
            item=form.questions[0].id if mode == "practice" else None,
            answered_at=datetime.fromisoformat(_iso(now)), verdict=verdict, score=score,
            max_score=max_score, slots=slots, scheduled=scheduled,
            next_due=after.due if after is not None and scheduled else None, finish=finish,
        )  # fmt: skip

    def result(self, student: str, token: str) -> Result | None:
        """A submission of this student's, as stored (None: not answered yet)."""
        with self.db.transaction("read an answer", write=False) as tx:
            return self._result(tx, student, token)

    def _result(self, tx: Tx, student: str, token: str) -> Result | None:
        found = tx.rows(
            "SELECT id, mode, bank_id, item_id, answered_at, verdict, score, max_score,"
            " scheduled, card_after, finish FROM submission WHERE token = ? AND student = ?",
            (token, student),
        )
        if not found:
            return None
        sub_id, mode, bank, item, at, verdict, score, max_score, scheduled, after, finish = found[0]
        rows = tx.rows(
            "SELECT slot, response, verdict, score, max_score, read_as, feedback, expected"
            " FROM attempt WHERE submission_id = ? ORDER BY id",
            (sub_id,),
        )
        card = _card(after)
        return Result(
            token=token, mode=mode, bank=bank, item=item,
            answered_at=datetime.fromisoformat(at), verdict=verdict, score=score or 0.0,
            max_score=max_score, slots=tuple(Shown(*row) for row in rows),
            scheduled=bool(scheduled),
            next_due=card.due if card is not None and scheduled else None, finish=bool(finish),
        )  # fmt: skip

    # --- practice ---------------------------------------------------------------------------

    def practice_form(self, student: str, *, fresh: str | None = None) -> Form | None:
        """The question to practise now: the form handed out last if it is still unanswered,
        else the next item of the student's queue (due items first, then new ones); with
        ``fresh`` (a form's token), the same question as that form with new numbers. None:
        nothing is due and nothing is new."""
        now = self.clock()
        with self.db.transaction("hand out a question", lock=student) as tx:
            if fresh is None:
                open_ = tx.rows(
                    "SELECT s.token FROM shown s WHERE s.student = ? AND s.mode = 'practice'"
                    " AND NOT EXISTS (SELECT 1 FROM submission b WHERE b.token = s.token)"
                    " ORDER BY s.shown_at DESC LIMIT 1",
                    (student,),
                )
                if open_:
                    form = self._practice_form(tx, student, open_[0][0])
                    if form is not None:
                        return form
                picked = self._next(tx, student, now)
            else:
                row = tx.rows(
                    "SELECT bank_id, item_id FROM shown WHERE token = ? AND student = ?",
                    (fresh, student),
                )
                if not row or row[0][0] not in self.books:
                    raise RefusedError(404, "That question is not one of yours.")
                book = self.books[row[0][0]]
                if row[0][1] not in question_ids(book):
                    raise RefusedError(404, "That question is no longer in the bank.")
                picked = (book, book.bank.question(row[0][1]))
            if picked is None:
                return None
            book, question = picked
            (review,) = tx.rows(
                "SELECT COUNT(*) FROM shown WHERE student = ? AND bank_id = ? AND item_id = ?",
                (student, book.bank.bank, question.id),
            )[0]
            seed = self.secret.seed("practice", student, book.bank.bank, question.id, str(review))
            token = secrets.token_urlsafe(18)
            tx.run(
                "INSERT INTO shown (token, student, mode, bank_id, item_id, seed, review,"
                " shown_at) VALUES (?, ?, 'practice', ?, ?, ?, ?, ?)",
                (token, student, book.bank.bank, question.id, seed, review, _iso(now)),
            )
        return Form(token, book, (question,), (book.variant(question, seed=seed),), seed)

    @overload
    def _practice_form(self, tx: Tx, student: str, token: str) -> Form | None: ...

    @overload
    def _practice_form(
        self, tx: Tx, student: str, token: str, *, answered: Literal[True]
    ) -> Form | Literal["answered"] | None: ...

    def _practice_form(
        self, tx: Tx, student: str, token: str, *, answered: bool = False
    ) -> Form | Literal["answered"] | None:
        """A practice form handed to this student (None: none such, or its question is gone);
        with ``answered``, ``"answered"`` when it has been answered already (one statement
        either way)."""
        row = tx.rows(
            "SELECT s.bank_id, s.item_id, s.seed, b.id FROM shown s LEFT JOIN submission b"
            " ON b.token = s.token WHERE s.token = ? AND s.student = ? AND s.mode = 'practice'",
            (token, student),
        )
        if not row:
            return None
        bank, item, seed, submitted = row[0]
        if answered and submitted is not None:
            return "answered"
        book = self.books.get(bank)
        if book is None or item not in question_ids(book):
            return None
        question = book.bank.question(item)
        return Form(token, book, (question,), (book.variant(question, seed=seed),), seed)

    def _next(self, tx: Tx, student: str, now: datetime) -> tuple[CompiledBank, AnyQuestion] | None:
        cards = {
            (bank, item): _card(text)
            for bank, item, text in tx.rows(
                "SELECT bank_id, item_id, fsrs_card FROM card WHERE student = ?", (student,)
            )
        }
        candidates = [
            ((book, q), cards.get((slug, q.id)))
            for slug, book in self.books.items()
            for q in book.bank.questions
        ]
        queue = order_queue(
            candidates, now=now, new=len(candidates), limit=len(candidates), cram=False
        )
        recent = {
            (bank, item)
            for bank, item in tx.rows(
                "SELECT bank_id, item_id FROM submission WHERE student = ? AND mode = 'practice'"
                " ORDER BY id DESC LIMIT ?",
                (student, RETRY_GAP),
            )
        }
        # A wrong answer's item comes back after others (the drill's RETRY_GAP), not at once.
        later = [entry for entry in queue if (entry[0].bank.bank, entry[1].id) not in recent]
        chosen = later or queue
        return chosen[0] if chosen else None

    def practice_shown(self, student: str, token: str) -> Form:
        """A practice form handed to this student.

        Raises:
            RefusedError: no such form of this student's (404).
        """
        with self.db.transaction("read a question", write=False) as tx:
            form = self._practice_form(tx, student, token)
        if form is None:
            raise RefusedError(
                404, "This question was not handed to you (or is no longer in the bank)."
            )
        return form

    def practice_answer(
        self, student: str, token: str, fields: Sequence[tuple[str, str]]
    ) -> Result:
        """Grade and commit an answer to a practice form; the result as stored. A form answered
        before gives its stored result (a repeated submit is recorded once).

        Raises:
            RefusedError: not this student's form (404), too many answers a minute (429).
            FormError: the form's fields cannot be read (400).
            Reask: blank or unreadable answers (nothing is recorded).
        """
        with self.db.transaction("read your answer", write=False) as tx:
            found = self._practice_form(tx, student, token, answered=True)
            stored = self._result(tx, student, token) if found == "answered" else None
        if stored is not None:
            return stored
        if found == "answered":
            found = None
        if found is None:
            raise RefusedError(
                404, "This question was not handed to you (or is no longer in the bank)."
            )
        form = found
        question = form.questions[0]
        answers = read_answers(form.book, form.questions, fields)
        if all(v is None for v in answers.values()):
            raise Reask({"": "Type an answer first."}, answers)
        graded = self._grade(form, answers)
        score = sum(v.score for _, v in graded) / (sum(v.max_score for _, v in graded) or 1)
        word = verdict_word([v.status for _, v in graded], score)
        rating = rating_for(score, False)  # machine-judged: no self-rating (free text: rubric)
        now = self.clock()
        bank = form.book.bank.bank
        with self.db.transaction("save your answer", lock=student) as tx:
            stored = self._result(tx, student, token)
            if stored is not None:
                return stored
            self._limit(tx, student, now)
            row = tx.rows(
                "SELECT fsrs_card FROM card WHERE student = ? AND bank_id = ? AND item_id = ?",
                (student, bank, question.id),
            )
            before = _card(row[0][0]) if row else None
            scheduled = is_due(before, now)
            after = before
            if scheduled:
                start = before or Card(card_id=_card_id(student, bank, question.id), due=now)
                after, _ = self.scheduler.review_card(start, rating, review_datetime=now)
            lapse = int(before is not None and before.state == State.Review and rating == 1)
            self._insert(
                tx, token=token, student=student, mode="practice", form=form, graded=graded,
                answers=answers, now=now, verdict=word, score=score,
                max_score=sum(v.max_score for _, v in graded), rating=int(rating),
                scheduled=scheduled, before=before, after=after, finish=False, seed=form.seed,
                versions={},
            )  # fmt: skip
            if scheduled and after is not None:
                tx.run(
                        "INSERT INTO card (student, bank_id, item_id, fsrs_card, due_ts, state,"
                        " lapses) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (student, bank_id,"
                        " item_id) DO UPDATE SET fsrs_card = excluded.fsrs_card,"
                        " due_ts = excluded.due_ts, state = excluded.state,"
                        " lapses = card.lapses + excluded.lapses",
                        (
                            student, bank, question.id, after.to_json(),
                            int(after.due.timestamp()), int(after.state), lapse,
                        ),
                    )  # fmt: skip
        return self._written(
            token=token,
            mode="practice",
            form=form,
            now=now,
            verdict=word,
            score=score,
            max_score=sum(v.max_score for _, v in graded),
            graded=graded,
            answers=answers,
            scheduled=scheduled,
            after=after,
            finish=False,
        )  # committed: the page reads it back from the database

    def explanation(self, form: Form) -> str | None:
        """The practice question's explanation for its variant (after the verdict only)."""
        return explanation_for(form.book, form.questions[0], form.variants[0])

    def next_due(self, student: str) -> datetime | None:
        """When the student's next scheduled review falls (None: nothing scheduled)."""
        with self.db.transaction("read your schedule", write=False) as tx:
            (due,) = tx.rows("SELECT MIN(due_ts) FROM card WHERE student = ?", (student,))[0]
        return None if due is None else datetime.fromtimestamp(due, tz=self.clock().tzinfo)

    # --- the quiz ---------------------------------------------------------------------------

    def quiz_variants(self, student: str) -> tuple[tuple[AnyQuestion, Variant, int], ...]:
        """The student's version of each quiz question, as issued.json records it."""
        quiz, issued = self.quiz, self.issued
        assert quiz is not None
        book = self.books[quiz.bank]
        record = None if issued is None else issued.student(student)
        if record is None or issued is None:
            raise RefusedError(403, "You are not on this quiz's roster.")
        out = []
        for qid in quiz.questions:
            index = record.versions[qid]
            out.append(
                (book.bank.question(qid), book.complete(issued.version_of(qid, index)), index)
            )
        return tuple(out)

    def _state(self, now: datetime) -> Literal["not-open", "open", "closed", "none"]:
        quiz = self.quiz
        if quiz is None:
            return "none"
        if quiz.opens is not None and now < quiz.opens:
            return "not-open"
        if quiz.closes is not None and now >= quiz.closes:
            return "closed"
        return "open"

    def quiz_view(self, student: str) -> QuizView:
        """The student's quiz now: its state, attempts, last answers and (by the feedback
        policy) verdicts; an open quiz comes with a form to submit."""
        now = self.clock()
        state = self._state(now)
        if state == "none":
            return QuizView(state=state, used=0, left=None, finished=False, form=None)
        quiz = self.quiz
        assert quiz is not None
        versions = self.quiz_variants(student)
        with self.db.transaction("read your quiz") as tx:
            used, finished = tx.rows(
                "SELECT COUNT(*), COALESCE(MAX(finish), 0) FROM submission"
                " WHERE student = ? AND mode = 'quiz'",
                (student,),
            )[0]
            last = self._last_answers(tx, student)
            left = None if quiz.attempts is None else max(0, quiz.attempts - used)
            done = bool(finished) or left == 0
            form = None
            if state == "open" and not done:
                token = self._quiz_token(tx, student, now)
                book = self.books[quiz.bank]
                form = Form(
                    token, book, tuple(q for q, _, _ in versions), tuple(v for _, v, _ in versions)
                )
        if quiz.feedback == "now":
            show = used > 0
        elif quiz.feedback == "submitted":
            show = done or state == "closed"
        else:
            show = state == "closed"
        answers_ok = show and (done or state == "closed")
        results = dict(last)
        score = sum(s.score for s in results.values())
        max_score = sum(
            slot.points for q, _, _ in versions for slot in self.books[quiz.bank].slots_of(q)
        )
        return QuizView(
            state=state, used=used, left=left, finished=done, form=form,
            last={slot: shown.response for slot, shown in last.items()}, results=results,
            show_verdicts=show, show_answers=answers_ok, score=score, max_score=max_score,
        )  # fmt: skip

    def _last_answers(self, tx: Tx, student: str) -> dict[str, Shown]:
        """Each quiz slot's last answer (the one that counts), as stored."""
        rows = tx.rows(
            "SELECT slot, response, verdict, score, max_score, read_as, feedback, expected"
            " FROM attempt WHERE student = ? AND mode = 'quiz' ORDER BY id",
            (student,),
        )
        return {row[0]: Shown(*row) for row in rows}

    def _quiz_token(self, tx: Tx, student: str, now: datetime) -> str:
        quiz = self.quiz
        assert quiz is not None
        open_ = tx.rows(
            "SELECT s.token FROM shown s WHERE s.student = ? AND s.mode = 'quiz'"
            " AND NOT EXISTS (SELECT 1 FROM submission b WHERE b.token = s.token)"
            " ORDER BY s.shown_at DESC LIMIT 1",
            (student,),
        )
        if open_:
            return str(open_[0][0])
        token = secrets.token_urlsafe(18)
        tx.run(
            "INSERT INTO shown (token, student, mode, bank_id, item_id, seed, review, shown_at)"
            " VALUES (?, ?, 'quiz', ?, NULL, NULL, 0, ?)",
            (token, student, quiz.bank, _iso(now)),
        )
        return token

    def quiz_answer(
        self, student: str, token: str, fields: Sequence[tuple[str, str]], *, finish: bool
    ) -> Result:
        """Grade and commit a quiz submission (the slots it answers); the result as stored. A
        form submitted before gives its stored result.

        Raises:
            RefusedError: no quiz, not open, no attempts left, finished, unknown form, too many
                answers a minute.
            FormError: the form's fields cannot be read.
            Reask: unreadable answers (nothing is recorded, no attempt used).
        """
        now = self.clock()
        quiz = self.quiz
        if quiz is None:
            raise RefusedError(404, "This server runs no quiz.")
        with self.db.transaction("read your quiz") as tx:
            known = tx.rows(
                "SELECT 1 FROM shown WHERE token = ? AND student = ? AND mode = 'quiz'",
                (token, student),
            )
            stored = self._result(tx, student, token)
        if stored is not None:
            return stored
        if not known:
            raise RefusedError(404, "This quiz form was not handed to you: open the quiz again.")
        state = self._state(now)
        if state == "not-open":
            raise RefusedError(403, f"The quiz opens at {quiz.opens:%Y-%m-%d %H:%M} UTC.")
        if state == "closed":
            raise RefusedError(403, f"The quiz closed at {quiz.closes:%Y-%m-%d %H:%M} UTC.")
        versions = self.quiz_variants(student)
        book = self.books[quiz.bank]
        form = Form(token, book, tuple(q for q, _, _ in versions), tuple(v for _, v, _ in versions))
        given = read_answers(book, form.questions, fields)
        sent = {slot for slot, _ in fields if not slot.startswith("_")}
        # A question the form answers is recorded whole: its parts not sent keep their last
        # answer, graded again beside the new ones (error carried forward reads them), so the
        # last answer to each slot always has the verdict quizgym grade gives it.
        touched = {slot.question.id for q in form.questions for slot in book.slots_of(q)
                   if slot.id in sent}  # fmt: skip
        with self.db.transaction("read your quiz") as tx:
            last = {slot: shown.response for slot, shown in self._last_answers(tx, student).items()}
        answers = {slot: given[slot] if slot in sent else last.get(slot) for slot in given}
        graded = [(s, v) for s, v in self._grade(form, answers) if s.split(".", 1)[0] in touched]
        if not graded and not finish:
            raise Reask({"": "Answer at least one question."}, given)
        score = sum(v.score for _, v in graded)
        max_score = sum(v.max_score for _, v in graded)
        word = verdict_word([v.status for _, v in graded], score / (max_score or 1))
        with self.db.transaction("save your answers", lock=student) as tx:
            stored = self._result(tx, student, token)
            if stored is not None:
                return stored
            used, finished = tx.rows(
                "SELECT COUNT(*), COALESCE(MAX(finish), 0) FROM submission"
                " WHERE student = ? AND mode = 'quiz'",
                (student,),
            )[0]
            if finished:
                raise RefusedError(403, "You have finished this quiz; your answers are saved.")
            if quiz.attempts is not None and used >= quiz.attempts:
                raise RefusedError(403, f"No attempts left: you have used all {quiz.attempts}.")
            self._limit(tx, student, now)
            self._insert(
                tx, token=token, student=student, mode="quiz", form=form, graded=graded,
                answers=answers, now=now, verdict=word, score=score, max_score=max_score,
                rating=None, scheduled=False, before=None, after=None, finish=finish,
                seed=None, versions={q.id: index for q, _, index in versions},
            )  # fmt: skip
            then = [hook(tx, student, token, now) for hook in self.graded]
        for committed in then:
            if committed is not None:
                committed()
        return self._written(
            token=token,
            mode="quiz",
            form=form,
            now=now,
            verdict=word,
            score=score,
            max_score=max_score,
            graded=graded,
            answers=answers,
            scheduled=False,
            after=None,
            finish=finish,
        )  # committed: the page reads it back from the database

    # --- the teacher ------------------------------------------------------------------------

    def progress(self) -> list[tuple[str, str, int, int, float, float, int]]:
        """Per student of the roster: (id, name, practice answers, right ones, quiz score,
        quiz max, quiz submissions)."""
        with self.db.transaction("read the class's progress", write=False) as tx:
            practice = {
                s: (n, right)
                for s, n, right in tx.rows(
                    "SELECT student, COUNT(*), SUM(CASE WHEN verdict = 'correct' THEN 1 ELSE 0"
                    " END) FROM submission WHERE mode = 'practice' GROUP BY student"
                )
            }
            quiz = dict(
                tx.rows(
                    "SELECT student, COUNT(*) FROM submission WHERE mode = 'quiz' GROUP BY student"
                )
            )
            last = {s: self._last_answers(tx, s) for s in quiz}
        out = []
        total = self._quiz_points()
        for sid, name in self.students.items():
            n, right = practice.get(sid, (0, 0))
            scores = last.get(sid, {})
            out.append(
                (sid, name, int(n), int(right or 0), sum(s.score for s in scores.values()), total,
                 quiz.get(sid, 0))
            )  # fmt: skip
        return out

    def _quiz_points(self) -> float:
        quiz = self.quiz
        if quiz is None:
            return 0.0
        book = self.books[quiz.bank]
        return sum(slot.points for q in quiz.questions for slot in book.slots_of(q))

    def review_queue(self) -> list[tuple[str, str, str | None, str, float, float]]:
        """Answers a person should look at (free text marked by the rubric): (student, slot,
        answer, verdict, score, max score), oldest first."""
        with self.db.transaction("read the review queue", write=False) as tx:
            rows = tx.rows(
                "SELECT student, slot, response, verdict, score, max_score FROM attempt"
                " WHERE needs_review = 1 ORDER BY id"
            )
        return [tuple(r) for r in rows]
