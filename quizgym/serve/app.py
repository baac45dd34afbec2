"""The web application: HTTP requests in, HTML pages out, over a :class:`Classroom`.

Every form posts ``application/x-www-form-urlencoded`` fields, one per slot named by its slot
id, plus ``_token`` (which form: a repeated submit is recorded once) and ``_csrf``. A request
that cannot be carried out gets a page with a 4xx status and one sentence saying why; the body
is read here, bounded, and decoded strictly (no framework parser sees hostile bytes).
"""

from __future__ import annotations

import csv
import io
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from quizgym.richtext.html import attr, escape
from quizgym.richtext.images import find_image, image_folder
from quizgym.richtext.tree import Image
from quizgym.serve.db import ServeStoreError
from quizgym.serve.engine import Classroom, Form, QuizView, Reask, RefusedError
from quizgym.serve.forms import FormError, draw_question, draw_verdict, rich
from quizgym.serve.keys import SESSION_COOKIE, SESSION_HOURS, Identity, LinkError
from quizgym.serve.pages import CSS, button_form, page, table

__all__ = ["MAX_BODY", "SESSION_COOKIE", "make_app"]

MAX_BODY = 256 * 1024
"""The largest form body read (a larger one is refused with 413)."""
MAX_FIELDS = 400
CSP = "default-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",  # a sign-in link never leaves in a Referer header
    "x-frame-options": "DENY",
}


class _RefusalError(Exception):
    """A request refused with a status and a reason shown to the student."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _html(body: str, status: int = 200) -> Response:
    response = Response(body, status_code=status, media_type="text/html; charset=utf-8")
    response.headers["cache-control"] = "no-store"
    return response


def _problem_page(status: int, reason: str) -> Response:
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
    return _html(page(titles.get(status, "Something went wrong"), body), status)


class _App:
    """The routes' handlers, with the classroom they serve."""

    def __init__(self, room: Classroom) -> None:
        self.room = room

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
            return '<a href="/teacher">Class</a><a href="/teacher/gradebook.csv">Gradebook</a>'
        quiz = '<a href="/quiz">Quiz</a>' if self.room.quiz is not None else ""
        return f'<a href="/">Home</a><a href="/practice">Practise</a>{quiz}'

    def image(self, bank: str) -> Callable[[Image], str | None]:
        def url(image: Image) -> str | None:
            return f"/img/{urllib.parse.quote(bank)}/{urllib.parse.quote(image.src)}"

        return url

    # --- pages --------------------------------------------------------------------------------

    async def sign_in(self, request: Request) -> Response:
        token = str(request.path_params["token"])
        try:
            who = self.room.secret.read_link(token, now=self.room.clock())
        except LinkError as exc:
            raise _RefusalError(403, f"This sign-in link cannot be used: {exc}.") from exc
        if not who.teacher and who.student not in self.room.students:
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

    async def teacher_page(self, request: Request) -> Response:
        who = self.teacher(request)
        rows = await run_in_threadpool(self.room.progress)
        queue = await run_in_threadpool(self.room.review_queue)
        quiz = self.room.quiz is not None
        headers = ["Student", "Name", "Practice answers", "Right"]
        if quiz:
            headers += ["Quiz score", "Submissions"]
        cells: list[list[object]] = []
        for sid, name, n, right, score, total, subs in rows:
            cells.append([sid, name, n, right, *([f"{score:g} / {total:g}", subs] if quiz else [])])
        review = "<p>No answer awaits review.</p>"
        if queue:
            review = table(
                "Marked by the rubric: confirm or change them with quizgym grade --review",
                ["Student", "Slot", "Answer", "Verdict", "Score"],
                [[s, slot, text or "", v, f"{score:g} / {top:g}"]
                 for s, slot, text, v, score, top in queue],
            )  # fmt: skip
        body = (
            f"{table('Progress', headers, cells)}<h2>Review queue</h2>{review}"
            '<p><a href="/teacher/gradebook.csv">Download the gradebook (CSV)</a></p>'
        )
        return _html(page("Class", body, nav=self.nav(who)))

    async def gradebook(self, request: Request) -> Response:
        self.teacher(request)
        rows = await run_in_threadpool(self.room.progress)
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["student", "name", "score", "max_score", "percent", "practice_answers"])
        for sid, name, n, _, score, total, _ in rows:
            percent = f"{100 * score / total:.1f}" if total else ""
            writer.writerow([sid, name, f"{score:g}", f"{total:g}", percent, n])
        response = Response(out.getvalue(), media_type="text/csv; charset=utf-8")
        response.headers["content-disposition"] = 'attachment; filename="gradebook.csv"'
        response.headers["cache-control"] = "no-store"
        return response

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
            response = _problem_page(exc.status, exc.reason)
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


def make_app(room: Classroom, *, folder: Path | None = None, url: str | None = None) -> Starlette:
    """The web application over a classroom; with its data folder, LTI 1.3 too (when
    pylti1p3next is installed: ``quizgym[lti]``), the LMS reaching it at ``url``."""
    app = _App(room)
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

        more, lifespan = lti_routes(LtiClassroom(room, folder), url=url)
        routes += more
    return Starlette(routes=routes, exception_handlers=dict(handlers), lifespan=lifespan)


def _has_lti() -> bool:
    try:
        import pylti1p3  # noqa: F401
    except ImportError:
        return False
    return True
