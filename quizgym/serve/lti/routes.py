"""The LTI pages of ``quizgym serve``: a platform's login initiation, launch and deep-linking
requests in; redirects, a signed-in session, the tool's JWKS, the deep-linking picker and the
teacher's view of the LMS roster and score queue out.

Every refusal is a 4xx page with one sentence (and a logged reason). The launch sets the
server's own session cookie on its own site: the tool is opened in a window of its own, so no
third-party cookie is needed, and the login's state lives in the database.
"""

from __future__ import annotations

import contextlib
import logging
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from typing import Any, cast

from pylti1p3.deep_link import DeepLink
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.lineitem import LineItem
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from quizgym.richtext.html import attr, escape
from quizgym.serve.keys import SESSION_COOKIE, SESSION_HOURS, Identity, LinkError
from quizgym.serve.lti.service import LtiClassroom
from quizgym.serve.lti.tool import (
    Launched,
    LaunchRefusedError,
    begin_login,
    check_launch,
    registration,
)
from quizgym.serve.pages import page, table

__all__ = ["lti_routes"]

log = logging.getLogger("quizgym.serve.lti")

MAX_BODY = 96 * 1024
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
_CSP = "default-src 'self'; form-action 'self'{extra}; frame-ancestors 'none'; base-uri 'none'"


def _page(title: str, body: str, status: int = 200, *, form_to: str = "") -> Response:
    response = Response(
        page(title, body), status_code=status, media_type="text/html; charset=utf-8"
    )
    response.headers["cache-control"] = "no-store"
    response.headers["content-security-policy"] = _CSP.format(
        extra=f" {form_to}" if form_to else ""
    )
    response.headers["x-content-type-options"] = "nosniff"
    response.headers["referrer-policy"] = "no-referrer"
    return response


def _refused(status: int, reason: str) -> Response:
    body = f'<p class="problem" role="alert">{escape(reason)}</p>'
    return _page("This launch cannot be used", body, status)


def _origin(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


async def _fields(request: Request) -> dict[str, str]:
    """The request's fields (query, and a posted form), bounded; one value per name."""
    fields = dict(request.query_params)
    if request.method == "POST":
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            raise LaunchRefusedError(
                "a launch is a form post (application/x-www-form-urlencoded)", 415
            )
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                raise LaunchRefusedError(f"the launch is larger than {MAX_BODY // 1024} KB", 413)
        try:
            pairs = urllib.parse.parse_qsl(
                bytes(body).decode("ascii"), keep_blank_values=True, errors="strict",
                max_num_fields=50,
            )  # fmt: skip
        except (UnicodeDecodeError, ValueError) as exc:
            raise LaunchRefusedError("the launch's form cannot be read", 400) from exc
        fields.update(pairs)
    return fields


class _Lti:
    def __init__(self, lti: LtiClassroom, url: str | None) -> None:
        self.lti = lti
        self.room = lti.room
        self.url = (url or "").rstrip("/")

    def base(self, request: Request) -> str:
        """The address the LMS reaches the tool at: ``--url``, else the request's own."""
        return self.url or str(request.base_url).rstrip("/")

    def teacher(self, request: Request) -> bool:
        value = request.cookies.get(SESSION_COOKIE)
        if not value:
            return False
        try:
            return self.room.secret.read_session(value, now=self.room.clock()).teacher
        except LinkError:
            return False

    async def jwks(self, request: Request) -> Response:
        keys = await run_in_threadpool(self.lti.keys.jwks, self.room.clock())
        response = JSONResponse(keys)
        response.headers["cache-control"] = "public, max-age=300"
        return response

    async def login(self, request: Request) -> Response:
        fields = await _fields(request)
        url = await run_in_threadpool(
            lambda: begin_login(
                self.lti.db, fields, launch_url=f"{self.base(request)}/lti/launch",
                now=self.lti.wall(),
            )
        )  # fmt: skip
        return RedirectResponse(url, status_code=302)

    async def launch(self, request: Request) -> Response:
        fields = await _fields(request)
        launched = await run_in_threadpool(
            lambda: check_launch(
                self.lti.db, self.lti.keys, fields, secure=request.url.scheme == "https",
                now=self.lti.wall(),
            )
        )  # fmt: skip
        sid, teacher, target = await run_in_threadpool(self.lti.arrived, launched)
        notice = ""
        if teacher and launched.body.get(
            "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
        ):
            try:
                count = await run_in_threadpool(self.lti.sync_roster, launched)
                log.info("LMS roster read: %d members", count)
            except Exception as exc:  # the launch goes on; the roster is read at the next one
                log.warning("the LMS roster could not be read: %s", exc)
                notice = "The course's roster could not be read from the LMS; launch again later."
        who = Identity("teacher", teacher=True) if teacher else Identity(sid)
        if launched.kind == "LtiDeepLinkingRequest":
            if not teacher:
                raise LaunchRefusedError("only a course's teachers may add quizgym activities")
            base = self.base(request)
            response = await run_in_threadpool(self.picker, launched, base)
        else:
            where = (
                "/teacher"
                if teacher
                else {"quiz": "/quiz", "practice": "/practice"}.get(target, "/")
            )
            if target == "quiz" and self.room.quiz is None and not teacher:
                where = "/"
            response = RedirectResponse(where, status_code=303)
        if notice:
            log.info(notice)
        expires = self.room.clock() + timedelta(hours=SESSION_HOURS)
        response.set_cookie(
            SESSION_COOKIE, self.room.secret.session(who, expires=expires),
            max_age=SESSION_HOURS * 3600, httponly=True, samesite="lax",
            secure=request.url.scheme == "https", path="/",
        )  # fmt: skip
        return response

    def picker(self, launched: Launched, base: str) -> Response:
        """The deep-linking page: one button per activity, each a form that posts its signed
        deep-linking response straight back to the LMS (no script)."""
        settings = launched.body.get(DL)
        if not isinstance(settings, dict) or not settings.get("deep_link_return_url"):
            raise LaunchRefusedError("the deep-linking request has no return URL", 400)
        back = str(settings["deep_link_return_url"])
        reg = registration(launched.platform, self.lti.keys, self.lti.wall())
        link = DeepLink(reg, launched.deployment_id, cast(Any, settings))
        choices: list[tuple[str, str, DeepLinkResource]] = []
        quiz = self.room.quiz
        if quiz is not None:
            book = self.room.books[quiz.bank]
            points = sum(s.points for q in quiz.questions for s in book.slots_of(q))
            title = f"{book.bank.title or quiz.bank}: quiz"
            item = _LineItem()
            item.set_score_maximum(points).set_label(title).set_tag("quizgym")
            item.set_resource_id(f"quizgym-quiz-{quiz.bank}")
            item.released = quiz.feedback == "now"
            resource = _Resource().set_url(f"{base}/lti/launch").set_title(title)
            resource.set_custom_params({"quizgym": "quiz"}).set_lineitem(item)
            detail = f"{len(quiz.questions)} questions, {points:g} points, graded in the LMS"
            choices.append((title, detail, resource))
        for slug, book in self.room.books.items():
            title = f"{book.bank.title or slug}: practice"
            resource = _Resource().set_url(f"{base}/lti/launch").set_title(title)
            resource.set_custom_params({"quizgym": "practice", "bank": slug})
            choices.append(
                (title, f"{len(book.bank.questions)} questions, for no credit", resource)
            )
        forms = []
        for title, detail, resource in choices:
            token = link.get_response_jwt([resource])
            forms.append(
                f'<li><form method="post" action="{attr(back)}">'
                f'<input type="hidden" name="JWT" value="{attr(token)}">'
                f'<button type="submit">Add {escape(title)}</button></form>'
                f'<p class="muted">{escape(detail)}</p></li>'
            )
        body = f"<p>Pick the activity to add to the course.</p><ul>{''.join(forms)}</ul>"
        return _page("Add a quizgym activity", body, form_to=_origin(back))

    async def roster(self, request: Request) -> Response:
        if not self.teacher(request):
            return _refused(403, "This page is for the teacher: launch quizgym from the LMS.")
        members = await run_in_threadpool(self.lti.members)
        queued = await run_in_threadpool(self.lti.queued)
        people = table(
            "The course's members, from the LMS",
            ["Student id", "Name", "Role"],
            [[s, n, "Learner" if learner else "Teacher"] for s, n, learner, _ in members],
        )
        posted = sum(1 for q in queued if q[5])
        waiting = [q for q in queued if not q[5]]
        scores = table(
            f"Scores for the LMS: {posted} posted, {len(waiting)} waiting",
            ["Student", "Score", "Grading", "Tries", "Last error"],
            [[s, "" if g is None else f"{g:g}", gr, t, e] for _, s, g, gr, t, _, e in waiting],
        )
        return _page("LMS", f"{people}{scores}")


class _LineItem(LineItem):
    """pylti1p3's line item, with AGS's ``gradesReleased`` (set from the feedback policy)."""

    released: bool | None = None


class _Resource(DeepLinkResource):
    """pylti1p3's resource link, writing its line item's ``gradesReleased``."""

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = super().to_dict()
        released = getattr(self.get_lineitem(), "released", None)
        item = out.get("lineItem")
        if isinstance(item, dict) and released is not None:
            item["gradesReleased"] = released
        return out


Handler = Callable[[Request], Awaitable[Response]]


def _guard(handler: Handler) -> Handler:
    async def run(request: Request) -> Response:
        try:
            return await handler(request)
        except LaunchRefusedError as exc:
            if not exc.logged:
                log.warning("LTI request refused (%s): %s", request.url.path, exc.reason)
            return _refused(exc.status, f"The LMS's request was refused: {exc.reason}.")

    return run


def lti_routes(lti: LtiClassroom, *, url: str | None = None) -> tuple[list[Route], Any]:
    """The LTI routes of a classroom and a lifespan that runs its score queue; ``url`` is the
    address the LMS reaches the tool at (the request's own when None)."""
    app = _Lti(lti, url)
    routes = [
        Route("/lti/jwks.json", app.jwks, methods=["GET"]),
        Route("/lti/login", _guard(app.login), methods=["GET", "POST"]),
        Route("/lti/launch", _guard(app.launch), methods=["POST"]),
        Route("/lti/roster", _guard(app.roster), methods=["GET"]),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        lti.queue.start()
        try:
            yield
        finally:
            await run_in_threadpool(lti.queue.stop)

    return routes, lifespan
