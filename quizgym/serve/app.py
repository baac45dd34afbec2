"""The web application: HTTP requests in, HTML pages out, over a :class:`Classroom`.

Every form posts ``application/x-www-form-urlencoded`` fields, one per slot named by its slot
id, plus ``_token`` (which form: a repeated submit is recorded once) and ``_csrf``. A request
that cannot be carried out gets a page with a 4xx status and one sentence saying why; the body
is read here, bounded, and decoded strictly (no framework parser sees hostile bytes).
"""

from __future__ import annotations

import csv
import io
import math
import threading
import time
import urllib.parse
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Mapping, Sequence, Set
from datetime import timedelta
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from quizgym.errors import QuizgymError
from quizgym.grading.cells import undefuse
from quizgym.grading.decisions import STUDENT_ROW
from quizgym.grading.review import HEADER as REVIEW_HEADER
from quizgym.richtext.html import attr, escape
from quizgym.richtext.images import find_image, image_folder
from quizgym.richtext.tree import Image
from quizgym.serve.db import ServeStoreError
from quizgym.serve.engine import Classroom, Form, QuizView, Reask, RefusedError
from quizgym.serve.forms import FormError, draw_question, draw_verdict, rich
from quizgym.serve.keys import SESSION_COOKIE, SESSION_HOURS, Identity, LinkError
from quizgym.serve.pages import CSS, button_form, page, table
from quizgym.serve.teacher import GRADEBOOKS, Changed, ClassRun, DecisionError, Teacher

__all__ = ["MAX_BODY", "SESSION_COOKIE", "SignInLimit", "make_app"]

MAX_BODY = 256 * 1024
"""The largest form body read (a larger one is refused with 413)."""
MAX_FIELDS = 400
REVIEW_PAGE = 20
"""Answers to review on one page of the queue (a page stays small on a phone)."""
SIGN_IN_FAILURES = 10
SIGN_IN_WINDOW = 15 * 60.0
"""At most this many sign-in links that do not work per client address in this many seconds."""
CSP = "default-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",  # a sign-in link never leaves in a Referer header
    "x-frame-options": "DENY",
}


class _RefusalError(Exception):
    """A request refused with a status and a reason shown to the student."""

    def __init__(
        self, status: int, reason: str, *, title: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:  # fmt: skip
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.title = title
        self.headers = dict(headers or {})


class SignInLimit:
    """Sign-in links that did not work, counted per client address in a sliding window: past
    ``failures`` in ``window`` seconds, the address may not sign in (not even with a good link)
    until its oldest failure leaves the window, so nobody tries links by the thousand.

    Counted in this process (several servers behind one proxy each count their own); at most
    ``clients`` addresses are remembered (the oldest forgotten first).
    """

    def __init__(
        self, *, failures: int = SIGN_IN_FAILURES, window: float = SIGN_IN_WINDOW,
        clients: int = 100_000, clock: Callable[[], float] = time.monotonic,
    ) -> None:  # fmt: skip
        self.failures = failures
        self.window = window
        self.clients = clients
        self.clock = clock
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def _recent(self, client: str, now: float) -> deque[float]:
        times = self._seen.get(client)
        if times is None:
            return deque()
        while times and times[0] <= now - self.window:
            times.popleft()
        if not times:
            del self._seen[client]
        return times

    def wait(self, client: str) -> float:
        """Seconds until ``client`` may try again (0: now)."""
        now = self.clock()
        with self._lock:
            times = self._recent(client, now)
            if len(times) < self.failures:
                return 0.0
            return max(1.0, times[0] + self.window - now)

    def failed(self, client: str) -> None:
        """Count a link from ``client`` that did not work."""
        now = self.clock()
        with self._lock:
            times = self._recent(client, now)
            times.append(now)
            self._seen[client] = times
            self._seen.move_to_end(client)
            while len(self._seen) > self.clients:
                self._seen.popitem(last=False)


def _html(body: str, status: int = 200) -> Response:
    response = Response(body, status_code=status, media_type="text/html; charset=utf-8")
    response.headers["cache-control"] = "no-store"
    return response


def _download(data: bytes, name: str) -> Response:
    response = Response(data, media_type="text/csv; charset=utf-8")
    response.headers["content-disposition"] = f'attachment; filename="{name}"'
    response.headers["cache-control"] = "no-store"
    return response


def _problem_page(status: int, reason: str, title: str | None = None) -> Response:
    titles = {
        400: "This form cannot be read",
        401: "Please sign in",
        403: "Not allowed",
        404: "Not found",
        405: "Not allowed",
        409: "Already answered",
        413: "Too much text",
        415: "Not a form",
        422: "Answer again",
        429: "Too many answers",
        503: "Cannot save right now",
    }
    body = f'<p class="problem" role="alert">{escape(reason)}</p><p><a href="/">Home</a></p>'
    return _html(page(title or titles.get(status, "Something went wrong"), body), status)


class _App:
    """The routes' handlers, with the classroom they serve."""

    def __init__(self, room: Classroom, sign_ins: SignInLimit) -> None:
        self.room = room
        self.sign_ins = sign_ins
        self.teacher_view = Teacher(room, room.folder) if room.folder is not None else None
        self.lti = False
        """Whether LTI is mounted (the teacher's navigation links the LMS page)."""

    # --- requests -----------------------------------------------------------------------------

    def who(self, request: Request) -> tuple[Identity, str]:
        """The signed-in identity and its session cookie, or a 401."""
        value = request.cookies.get(SESSION_COOKIE)
        if not value:
            raise _RefusalError(401, "Sign in with the link your teacher sent you.")
        try:
            who = self.room.secret.read_session(value, now=self.room.clock())
        except LinkError as exc:
            raise _RefusalError(
                401, f"Your session is not valid ({exc}): sign in with your link."
            ) from exc
        if not who.teacher and who.student not in self.room.students:
            raise _RefusalError(403, "You are not on this class's roster.")
        return who, value

    def student(self, request: Request) -> tuple[str, str]:
        who, session = self.who(request)
        if who.teacher:
            raise _RefusalError(403, "This page is for students: sign in with a student's link.")
        return who.student, session

    async def fields(self, request: Request, session: str) -> list[tuple[str, str]]:
        """The posted form's fields, read within bounds, with its CSRF token checked."""
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            raise _RefusalError(
                415, "Send the answers as a form (application/x-www-form-urlencoded)."
            )
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY:
            raise _RefusalError(413, f"The form is larger than {MAX_BODY // 1024} KB.")
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                raise _RefusalError(413, f"The form is larger than {MAX_BODY // 1024} KB.")
        try:
            text = bytes(body).decode("ascii")
            pairs = urllib.parse.parse_qsl(
                text, keep_blank_values=True, errors="strict", max_num_fields=MAX_FIELDS
            )
        except UnicodeDecodeError as exc:
            raise _RefusalError(400, "The form is not valid UTF-8 text.") from exc
        except ValueError as exc:
            raise _RefusalError(400, f"The form has more than {MAX_FIELDS} fields.") from exc
        csrf = [v for k, v in pairs if k == "_csrf"]
        if len(csrf) != 1 or not self.room.secret.csrf_ok(session, csrf[0]):
            raise _RefusalError(
                403, "This form has expired or did not come from this site: reload it."
            )
        return pairs

    @staticmethod
    def one(pairs: Sequence[tuple[str, str]], name: str) -> str:
        found = [v for k, v in pairs if k == name]
        if len(found) != 1 or not found[0] or len(found[0]) > 100:
            raise _RefusalError(400, f"The form needs exactly one {name} field.")
        return found[0]

    def nav(self, who: Identity | None) -> str:
        if who is None:
            return "<span>quizgym</span>"
        if who.teacher:
            return (
                '<a href="/teacher">Class</a><a href="/teacher/items">Items</a>'
                '<a href="/teacher/review">Review</a>'
                + ('<a href="/lti/roster">LMS</a>' if self.lti else "")
            )
        quiz = '<a href="/quiz">Quiz</a>' if self.room.quiz is not None else ""
        return f'<a href="/">Home</a><a href="/practice">Practise</a>{quiz}'

    def image(self, bank: str) -> Callable[[Image], str | None]:
        def url(image: Image) -> str | None:
            return f"/img/{urllib.parse.quote(bank)}/{urllib.parse.quote(image.src)}"

        return url

    # --- pages --------------------------------------------------------------------------------

    async def sign_in(self, request: Request) -> Response:
        token = str(request.path_params["token"])
        client = request.client.host if request.client is not None else ""
        wait = self.sign_ins.wait(client)
        if wait:
            minutes = self.sign_ins.window / 60
            raise _RefusalError(
                429,
                f"Too many sign-in links that did not work came from your address (more than"
                f" {self.sign_ins.failures} in {minutes:g} minutes): wait {math.ceil(wait / 60)}"
                " minutes, then open the link your teacher sent you.",
                title="Too many sign-in attempts",
                headers={"retry-after": str(math.ceil(wait))},
            )
        try:
            who = self.room.secret.read_link(token, now=self.room.clock())
        except LinkError as exc:
            self.sign_ins.failed(client)
            raise _RefusalError(403, f"This sign-in link cannot be used: {exc}.") from exc
        if not who.teacher and who.student not in self.room.students:
            self.sign_ins.failed(client)
            raise _RefusalError(403, "This link's student is not on the class's roster.")
        expires = self.room.clock() + timedelta(hours=SESSION_HOURS)
        value = self.room.secret.session(who, expires=expires)
        response = RedirectResponse("/teacher" if who.teacher else "/", status_code=303)
        response.set_cookie(
            SESSION_COOKIE, value, max_age=SESSION_HOURS * 3600, httponly=True, samesite="lax",
            secure=request.url.scheme == "https", path="/",
        )  # fmt: skip
        return response

    async def home(self, request: Request) -> Response:
        who, _ = self.who(request)
        if who.teacher:
            return RedirectResponse("/teacher", status_code=303)
        name = self.room.students.get(who.student) or who.student
        quiz = ""
        if self.room.quiz is not None:
            quiz = '<li><a href="/quiz">Take the quiz</a></li>'
        body = (
            f"<p>Signed in as {escape(name)}.</p><ul>"
            '<li><a href="/practice">Practise</a>: the questions due for you, new numbers'
            " each time, for no credit.</li>"
            f"{quiz}</ul>"
        )
        return _html(page("Welcome", body, nav=self.nav(who)))

    def csrf_field(self, session: str) -> str:
        token = self.room.secret.csrf(session)
        return f'<input type="hidden" name="_csrf" value="{attr(token)}">'

    def form_html(
        self, form: Form, session: str, *, action: str, headings: Sequence[str],
        values: Mapping[str, str | None] | None = None, verdicts: Mapping[str, str] | None = None,
        buttons: str, problems: Mapping[str, str] | None = None,
    ) -> str:  # fmt: skip
        image = self.image(form.book.bank.bank)
        sections = []
        for heading, question, variant in zip(headings, form.questions, form.variants, strict=True):
            sections.append(
                draw_question(
                    form.book,
                    question,
                    variant,
                    heading=heading,
                    values=values,
                    verdicts=verdicts,
                    image=image,
                )  # fmt: skip
            )
        alert = ""
        if problems:
            items = "".join(
                f"<li>{escape(k + ': ' if k else '')}{escape(v)}</li>" for k, v in problems.items()
            )
            alert = f'<div class="problem" role="alert"><ul>{items}</ul></div>'
        return (
            f'{alert}<form method="post" action="{attr(action)}">'
            f'<input type="hidden" name="_token" value="{attr(form.token)}">'
            f"{self.csrf_field(session)}{''.join(sections)}{buttons}</form>"
        )

    async def practice(self, request: Request) -> Response:
        student, session = self.student(request)
        form = await run_in_threadpool(self.room.practice_form, student)
        who = Identity(student)
        if form is None:
            due = await run_in_threadpool(self.room.next_due, student)
            when = f" Your next review is due {due:%Y-%m-%d %H:%M} UTC." if due else ""
            body = f"<p>Nothing is due now.{escape(when)}</p>"
            return _html(page("Practice", body, nav=self.nav(who)))
        return _html(page("Practice", self.practice_body(form, session), nav=self.nav(who)))

    def practice_body(
        self, form: Form, session: str, *, values: Mapping[str, str | None] | None = None,
        problems: Mapping[str, str] | None = None,
    ) -> str:  # fmt: skip
        question = form.questions[0]
        return self.form_html(
            form, session, action="/practice", headings=[question.id], values=values,
            problems=problems, buttons='<button type="submit">Check my answer</button>',
        )  # fmt: skip

    async def practice_post(self, request: Request) -> Response:
        student, session = self.student(request)
        pairs = await self.fields(request, session)
        token = self.one(pairs, "_token")
        try:
            result = await run_in_threadpool(self.room.practice_answer, student, token, pairs)
        except Reask as exc:
            form = await run_in_threadpool(self.room.practice_shown, student, token)
            body = self.practice_body(form, session, values=exc.values, problems=exc.messages)
            return _html(page("Practice", body, nav=self.nav(Identity(student))), 422)
        return RedirectResponse(f"/practice/done/{urllib.parse.quote(result.token)}", 303)

    async def practice_done(self, request: Request) -> Response:
        student, session = self.student(request)
        token = str(request.path_params["token"])
        result = await run_in_threadpool(self.room.result, student, token)
        if result is None or result.mode != "practice":
            raise _RefusalError(404, "There is no answer of yours to this question.")
        form = await run_in_threadpool(self.room.practice_shown, student, token)
        image = self.image(form.book.bank.bank)
        verdicts = {s.slot: draw_verdict(s, image=image) for s in result.slots}
        values = {s.slot: s.response for s in result.slots}
        question = form.questions[0]
        sections = draw_question(
            form.book, question, form.variants[0], heading=question.id, values=values,
            verdicts=verdicts, image=image,
        )  # fmt: skip
        sections = sections.replace("<input ", "<input disabled ").replace(
            "<textarea ", "<textarea disabled "
        )
        explanation = self.room.explanation(form)
        why = (
            f"<p><strong>Why:</strong> {rich(explanation, image=image)}</p>" if explanation else ""
        )
        when = ""
        if result.scheduled and result.next_due is not None:
            when = f"<p>Next review of this question: {result.next_due:%Y-%m-%d %H:%M} UTC.</p>"
        elif not result.scheduled:
            when = '<p class="muted">Extra practice: the schedule is unchanged.</p>'
        hidden = {"_token": token, "_csrf": self.room.secret.csrf(session)}
        again = ""
        if form.book.varies(question):
            again = button_form(
                "/practice/again", "Same question, new numbers", hidden, second=True
            )
        body = (
            f'<p data-verdict="{attr(result.verdict)}">'
            f"<strong>{escape(result.verdict.capitalize())}"
            f"</strong>: {result.score * result.max_score:g} of {result.max_score:g}.</p>"
            f"{sections}{why}{when}"
            '<p><a href="/practice">Next question</a></p>'
            f"{again}"
        )
        return _html(page("Practice: your answer", body, nav=self.nav(Identity(student))))

    async def practice_again(self, request: Request) -> Response:
        student, session = self.student(request)
        pairs = await self.fields(request, session)
        token = self.one(pairs, "_token")
        await run_in_threadpool(lambda: self.room.practice_form(student, fresh=token))
        return RedirectResponse("/practice", 303)

    # --- the quiz -----------------------------------------------------------------------------

    def quiz_body(
        self, view: QuizView, session: str, student: str, *,
        values: Mapping[str, str | None] | None = None, problems: Mapping[str, str] | None = None,
    ) -> str:  # fmt: skip
        room = self.room
        quiz = room.quiz
        assert quiz is not None
        parts = []
        if view.state == "not-open":
            assert quiz.opens is not None
            return f"<p>The quiz opens at {quiz.opens:%Y-%m-%d %H:%M} UTC.</p>"
        cap = "no limit" if view.left is None else f"{view.left} left"
        parts.append(f"<p>Attempts: {view.used} used, {cap}.")
        if quiz.closes is not None:
            parts.append(f" The quiz closes at {quiz.closes:%Y-%m-%d %H:%M} UTC.")
        parts.append("</p>")
        if view.show_verdicts and view.used:
            parts.append(
                f'<p data-score="{view.score:g}">Your score: {view.score:g} of'
                f" {view.max_score:g}.</p>"
            )
        elif view.used:
            policy = (
                "once you submit and finish"
                if quiz.feedback == "submitted"
                else "once the quiz closes"
            )
            parts.append(f"<p>Your answers are saved. The verdicts are shown {policy}.</p>")
        book = room.books[quiz.bank]
        image = self.image(quiz.bank)
        verdicts: dict[str, str] = {}
        if view.show_verdicts:
            verdicts = {
                slot: draw_verdict(shown, answer=view.show_answers, image=image)
                for slot, shown in view.results.items()
            }
        shown_values = dict(view.last) if values is None else dict(values)
        versions = room.quiz_variants(student)
        headings = [f"Question {k}" for k in range(1, len(versions) + 1)]
        if view.form is not None:
            finish = ""
            if quiz.feedback != "now" or quiz.attempts is not None:
                finish = (
                    '<button type="submit" name="_finish" value="1" class="second">'
                    "Submit and finish</button>"
                )
            buttons = f'<button type="submit">Submit</button>{finish}'
            parts.append(
                self.form_html(
                    view.form,
                    session,
                    action="/quiz",
                    headings=headings,
                    values=shown_values,
                    verdicts=verdicts,
                    buttons=buttons,
                    problems=problems,
                )  # fmt: skip
            )
        else:
            if view.state == "closed":
                parts.append("<p>The quiz is closed.</p>")
            elif view.finished:
                parts.append("<p>You have finished the quiz.</p>")
            for heading, (question, variant, _) in zip(headings, versions, strict=True):
                section = draw_question(
                    book, question, variant, heading=heading, values=shown_values,
                    verdicts=verdicts, image=image,
                )  # fmt: skip
                parts.append(
                    section.replace("<input ", "<input disabled ").replace(
                        "<textarea ", "<textarea disabled "
                    )
                )
        return "".join(parts)

    async def quiz_page(self, request: Request) -> Response:
        student, session = self.student(request)
        if self.room.quiz is None:
            raise _RefusalError(404, "This server runs no quiz.")
        view = await run_in_threadpool(self.room.quiz_view, student)
        body = await run_in_threadpool(self.quiz_body, view, session, student)
        return _html(page("Quiz", body, nav=self.nav(Identity(student))))

    async def quiz_post(self, request: Request) -> Response:
        student, session = self.student(request)
        if self.room.quiz is None:
            raise _RefusalError(404, "This server runs no quiz.")
        pairs = await self.fields(request, session)
        token = self.one(pairs, "_token")
        finish = any(k == "_finish" for k, _ in pairs)
        try:
            await run_in_threadpool(
                lambda: self.room.quiz_answer(student, token, pairs, finish=finish)
            )
        except Reask as exc:
            view = await run_in_threadpool(self.room.quiz_view, student)
            values, problems = exc.values, exc.messages
            body = await run_in_threadpool(
                lambda: self.quiz_body(view, session, student, values=values, problems=problems)
            )
            return _html(page("Quiz", body, nav=self.nav(Identity(student))), 422)
        return RedirectResponse("/quiz", 303)

    # --- the teacher --------------------------------------------------------------------------

    def teacher(self, request: Request) -> Identity:
        who, _ = self.who(request)
        if not who.teacher:
            raise _RefusalError(403, "This page is for the teacher.")
        return who

    def class_run(self) -> tuple[ClassRun | None, str]:
        """The grading run of the quiz's answers, or None and why there is none."""
        if self.teacher_view is None or self.room.quiz is None:
            return None, "This server runs no quiz: there is nothing to grade."
        try:
            run = self.teacher_view.run()
        except QuizgymError as exc:
            return None, f"quizgym grade refused the answers: {exc}"
        if run is None:
            return None, "Nobody has answered the quiz yet."
        return run, ""

    async def teacher_page(self, request: Request) -> Response:
        who = self.teacher(request)
        rows = await run_in_threadpool(self.room.progress)
        run, why = await run_in_threadpool(self.class_run)
        quiz = self.room.quiz is not None
        headers = ["Student", "Name", "Practice answers", "Right"]
        if quiz:
            headers += ["Quiz score", "Submissions"]
        cells: list[list[object]] = []
        for sid, name, n, right, score, total, subs in rows:
            if run is not None and sid in run.scores:
                score, total = run.scores[sid]
            cells.append([sid, name, n, right, *([f"{score:g} / {total:g}", subs] if quiz else [])])
        parts = [table("Progress", headers, cells)]
        if run is None:
            parts.append(f"<p>{escape(why)}</p>")
        else:
            answers = [r for r in run.review if r[0] != STUDENT_ROW]
            parts.append(
                "<h2>The quiz, graded</h2><p>Graded by quizgym grade on the answers as they are"
                f" now: {len(run.scores)} students; {len(answers)} distinct"
                f" {'answer' if len(answers) == 1 else 'answers'} to review,"
                f" {run.decided} decided.</p><ul>"
                '<li><a href="/teacher/items">Item analysis</a> (as report.html)</li>'
                '<li><a href="/teacher/review">Review queue</a></li></ul>'
            )
        downloads = [("gradebook.csv", "this page's table")]
        if quiz:
            downloads += [(name, "as quizgym grade writes it") for name in GRADEBOOKS]
            downloads.append(("decisions.csv", "your review decisions, for grade --review"))
        links = "".join(
            f'<li><a href="/teacher/{attr(n)}">{escape(n)}</a>: {escape(what)}</li>'
            for n, what in downloads
        )
        parts.append(f"<h2>Downloads</h2><ul>{links}</ul>")
        return _html(page("Class", "".join(parts), nav=self.nav(who)))

    async def items_page(self, request: Request) -> Response:
        who = self.teacher(request)
        run, why = await run_in_threadpool(self.class_run)
        if run is None:
            body = f"<p>{escape(why)}</p>"
        else:
            body = (
                '<div class="analysis wide" tabindex="0" role="region" aria-label="Item analysis">'
                f"{run.analysis}</div>"
            )
        return _html(page("Item analysis", body, nav=self.nav(who)))

    async def review_page(self, request: Request) -> Response:
        who, session = self.who(request)
        if not who.teacher:
            raise _RefusalError(403, "This page is for the teacher.")
        run, why = await run_in_threadpool(self.class_run)
        if run is None:
            return _html(page("Review queue", f"<p>{escape(why)}</p>", nav=self.nav(who)))
        number = request.query_params.get("page", "1")
        posted: Set[str] = set()
        if self.teacher_view is not None and self.teacher_view.changes:
            posted = await run_in_threadpool(self.teacher_view.posted)
        body = self.review_body(
            run, session, page=int(number) if number.isdigit() else 1, posted=posted
        )
        return _html(page("Review queue", body, nav=self.nav(who)))

    def review_body(
        self, run: ClassRun, session: str, *, page: int,
        problem: tuple[str, str, str, str] | None = None, posted: Set[str] = frozenset(),
    ) -> str:  # fmt: skip
        """A page of the review queue; ``problem``: (fingerprint, why, score, note) of a decision
        refused, shown with what was typed; ``posted``: the LMS rows of the last decision's
        changed scores that the LMS has taken."""
        at = {name: k for k, name in enumerate(REVIEW_HEADER)}
        rows = [r for r in run.review if r[at["question"]] != STUDENT_ROW]
        flagged = [r for r in run.review if r[at["question"]] == STUDENT_ROW]
        pages = max(1, -(-len(rows) // REVIEW_PAGE))
        page = min(max(page, 1), pages)
        shown = rows[(page - 1) * REVIEW_PAGE : page * REVIEW_PAGE]
        parts = [
            "<p>The answers quizgym grade is not sure of, each once with how many students gave"
            " it. A score you give applies to every student who gave that answer, as"
            ' <code>grade --review</code> applies it; <a href="/teacher/decisions.csv">'
            "decisions.csv</a> is the file it reads. An empty score and note undo a decision.</p>"
        ]
        if problem is not None:
            parts.append(f'<p class="problem" role="alert">{escape(problem[1])}</p>')
        elif self.teacher_view is not None and self.teacher_view.changes:
            parts.append(self.changes_html(self.teacher_view.changes, posted))
        if flagged:
            parts.append(
                table(
                    "Students to check (a version check: fix the record, not a score)",
                    ["Student", "Why"],
                    [[r[at["students"]], r[at["reason"]]] for r in flagged],
                )
            )
        if not rows:
            parts.append("<p>No answer awaits review.</p>")
        csrf = self.csrf_field(session)
        for k, row in enumerate(shown, start=(page - 1) * REVIEW_PAGE + 1):
            printed = row[at["fingerprint"]]
            answer = undefuse(row[at["answer"]])
            top = row[at["max_score"]]
            score, note = row[at["score"]], row[at["comment"]]
            if problem is not None and problem[0] == printed:
                score, note = problem[2], problem[3]
            decided = (
                f"decided: {escape(score)}"
                if score
                else f"suggested: {escape(row[at['suggested']])}"
            )
            version = f" (version {row[at['version']]})" if row[at["version"]] else ""
            who = "student" if row[at["count"]] == "1" else "students"
            parts.append(
                f'<form method="post" action="/teacher/review?page={page}" class="q">'
                f'<h2 id="r{k}">{escape(row[at["question"]])}{escape(version)}:'
                f" “{escape(answer)}”</h2>"
                f"<p>{escape(row[at['count']])} {who}"
                f" ({escape(row[at['students']])});"
                f" {escape(row[at['reason']])}; read as {escape(row[at['read_as']] or '–')};"
                f" right answer {escape(row[at['expected']] or '–')}; {decided} of {escape(top)}."
                f'</p>{csrf}<input type="hidden" name="fingerprint" value="{attr(printed)}">'
                f'<label for="s{k}">Score (0 to {escape(top)})</label>'
                f'<input type="text" inputmode="decimal" id="s{k}" name="score"'
                f' value="{attr(score)}" autocomplete="off">'
                f'<label for="n{k}">Note to the students (optional)</label>'
                f'<input type="text" id="n{k}" name="comment" value="{attr(note)}"'
                ' autocomplete="off"><button type="submit">Save the decision</button></form>'
            )
        if pages > 1:
            links = " ".join(
                f'<a href="/teacher/review?page={n}"'
                + (' aria-current="page"' if n == page else "")
                + f">{n}</a>"
                for n in range(1, pages + 1)
            )
            parts.append(f'<nav aria-label="Pages of the queue"><p>Pages: {links}</p></nav>')
        return "".join(parts)

    @staticmethod
    def changes_html(changes: Sequence[Changed], posted: Set[str]) -> str:
        """The scores the last decision changed, and whether the LMS has them."""
        items = []
        for c in changes:
            line = f"{c.student}: {c.old:g} → {c.new:g} of {c.top:g}"
            if c.key is not None:
                line += ", sent to the LMS" if c.key in posted else ", waiting for the LMS"
            elif c.why:
                line += f" (not sent to the LMS: {c.why})"
            items.append(f"<li>{escape(line)}</li>")
        return (
            '<section aria-labelledby="changed"><h2 id="changed">Scores the last decision'
            f' changed</h2><ul class="changed">{"".join(items)}</ul></section>'
        )

    async def review_post(self, request: Request) -> Response:
        who, session = self.who(request)
        if not who.teacher or self.teacher_view is None:
            raise _RefusalError(403, "This page is for the teacher.")
        pairs = await self.fields(request, session)
        printed = self.one(pairs, "fingerprint")
        given = {name: [v for k, v in pairs if k == name] for name in ("score", "comment")}
        if any(len(v) > 1 for v in given.values()):
            raise _RefusalError(400, "The form needs at most one score and one comment.")
        score, comment = (v[0] if v else "" for v in given.values())
        number = request.query_params.get("page", "1")
        page_no = int(number) if number.isdigit() else 1
        teacher = self.teacher_view
        try:
            await run_in_threadpool(teacher.decide, printed, score, comment)
        except DecisionError as exc:
            run, why = await run_in_threadpool(self.class_run)
            if run is None:
                raise _RefusalError(409, str(exc)) from exc
            problem = (printed, str(exc), score, comment)
            body = self.review_body(run, session, page=page_no, problem=problem)
            return _html(page("Review queue", body, nav=self.nav(who)), 422)
        return RedirectResponse(f"/teacher/review?page={page_no}", 303)

    async def gradebook(self, request: Request) -> Response:
        self.teacher(request)
        rows = await run_in_threadpool(self.room.progress)
        run, _ = await run_in_threadpool(self.class_run)
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["student", "name", "score", "max_score", "percent", "practice_answers"])
        for sid, name, n, _, score, total, _ in rows:
            if run is not None and sid in run.scores:
                score, total = run.scores[sid]
            percent = f"{100 * score / total:.1f}" if total else ""
            writer.writerow([sid, name, f"{score:g}", f"{total:g}", percent, n])
        return _download(out.getvalue().encode("utf-8"), "gradebook.csv")

    async def graded_file(self, request: Request) -> Response:
        self.teacher(request)
        name = str(request.path_params["name"])
        if name not in (*GRADEBOOKS, "decisions.csv"):
            raise _RefusalError(404, "There is no such file.")
        run, why = await run_in_threadpool(self.class_run)
        if run is None or self.teacher_view is None:
            raise _RefusalError(404, why)
        if name == "decisions.csv":
            data = run.decisions_csv.encode("utf-8")
        else:
            teacher = self.teacher_view
            found = await run_in_threadpool(teacher.gradebook, name)
            if found is None:
                raise _RefusalError(404, "Nobody has answered the quiz yet.")
            data = found
        return _download(data, name)

    # --- files --------------------------------------------------------------------------------

    async def css(self, request: Request) -> Response:
        response = PlainTextResponse(CSS, media_type="text/css")
        response.headers["cache-control"] = "public, max-age=3600"
        return response

    async def image_file(self, request: Request) -> Response:
        self.who(request)
        bank = self.room.books.get(str(request.path_params["bank"]))
        if bank is None:
            raise _RefusalError(404, "No such bank.")
        try:
            found = find_image(str(request.path_params["src"]), folder=image_folder(bank.bank.path))
        except ValueError as exc:
            raise _RefusalError(404, f"No such image ({exc}).") from exc
        if not found.path.is_file():
            raise _RefusalError(404, "No such image.")
        return FileResponse(found.path, media_type=found.mime)


Handler = Callable[[Request], Awaitable[Response]]


def _guarded(handler: Handler) -> Handler:
    """Map every refusal to its page (never a traceback)."""

    async def run(request: Request) -> Response:
        try:
            response = await handler(request)
        except _RefusalError as exc:
            response = _problem_page(exc.status, exc.reason, exc.title)
            for key, value in exc.headers.items():
                response.headers[key] = value
        except RefusedError as exc:
            response = _problem_page(exc.status, str(exc))
        except FormError as exc:
            response = _problem_page(400, f"This form cannot be read: {exc}.")
        except ServeStoreError as exc:
            response = _problem_page(503, f"Your answer could not be saved ({exc}); try again.")
        for key, value in _HEADERS.items():
            response.headers[key] = value
        return response

    return run


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    reason = {404: "There is no such page.", 405: "This page does not take that method."}.get(
        status, "The server could not answer."
    )
    response = _problem_page(status, reason)
    for key, value in _HEADERS.items():
        response.headers[key] = value
    return response


def make_app(
    room: Classroom, *, folder: Path | None = None, url: str | None = None,
    sign_ins: SignInLimit | None = None,
) -> Starlette:  # fmt: skip
    """The web application over a classroom; with its data folder, LTI 1.3 too (when
    pylti1p3next is installed: ``quizgym[lti]``), the LMS reaching it at ``url``; ``sign_ins``:
    the limit on sign-in links that do not work, per client address (:class:`SignInLimit`'s
    defaults when None)."""
    app = _App(room, sign_ins or SignInLimit())
    routes = [
        Route("/", _guarded(app.home)),
        Route("/in/{token}", _guarded(app.sign_in)),
        Route("/practice", _guarded(app.practice), methods=["GET"]),
        Route("/practice", _guarded(app.practice_post), methods=["POST"]),
        Route("/practice/done/{token}", _guarded(app.practice_done)),
        Route("/practice/again", _guarded(app.practice_again), methods=["POST"]),
        Route("/quiz", _guarded(app.quiz_page), methods=["GET"]),
        Route("/quiz", _guarded(app.quiz_post), methods=["POST"]),
        Route("/teacher", _guarded(app.teacher_page)),
        Route("/teacher/gradebook.csv", _guarded(app.gradebook)),
        Route("/teacher/items", _guarded(app.items_page)),
        Route("/teacher/review", _guarded(app.review_page), methods=["GET"]),
        Route("/teacher/review", _guarded(app.review_post), methods=["POST"]),
        Route("/teacher/{name}", _guarded(app.graded_file)),
        Route("/static/quizgym.css", _guarded(app.css)),
        Route("/img/{bank}/{src:path}", _guarded(app.image_file)),
    ]
    handlers: Mapping[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
        HTTPException: _http_error,
        Exception: _http_error,
    }
    lifespan = None
    if folder is not None and _has_lti():
        from quizgym.serve.lti.routes import lti_routes
        from quizgym.serve.lti.service import LtiClassroom

        lti = LtiClassroom(room, folder)
        more, lifespan = lti_routes(lti, url=url)
        routes += more
        app.lti = True
        if app.teacher_view is not None:  # decisions' changed scores go to the LMS
            app.teacher_view.sink = lti
            lti.decided = app.teacher_view.decided_scores
    return Starlette(routes=routes, exception_handlers=dict(handlers), lifespan=lifespan)


def _has_lti() -> bool:
    try:
        import pylti1p3  # noqa: F401
    except ImportError:
        return False
    return True
