"""A real LTI 1.3 platform on a loopback port for the tests: lti1p3platform's registration,
login, launch, access tokens and deep-linking check, behind a small Starlette app that adds
the LMS's line items, score and membership endpoints; stoppable and restartable on its port
(an LMS that is down for a while)."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from jwcrypto.jwk import JWK
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request as PlatformRequest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

CLIENT_ID = "quizgym-tool-1"
DEPLOYMENT = "deployment-1"
SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"


def rsa_pem() -> tuple[str, str]:
    key = JWK.generate(kty="RSA", size=2048)
    return (
        key.export_to_pem(private_key=True, password=None).decode(),
        key.export_to_pem().decode(),
    )


class _Conf(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, **kwargs: Any) -> None:
        self._registration = kwargs["registration"]

    def get_registration_by_params(self, **kwargs: Any) -> Registration:
        return self._registration


class _Req(PlatformRequest):
    def build_metadata(self, request: Any) -> Any:
        return request


class _Login(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs: Any) -> None:
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url: str) -> str:
        return url


class _Launch(LTIAdvantageMessageLaunchAbstract):
    def render_launch_form(self, launch_data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return launch_data


@dataclass
class Member:
    sub: str
    name: str
    roles: list[str]


@dataclass
class LineItem:
    id: int
    label: str
    score_maximum: float
    resource_link: str
    resource_id: str
    grades_released: bool | None
    scores: list[dict[str, Any]] = field(default_factory=list)


class Platform:
    """The LMS: a course of members, one tool registration, its line items and scores."""

    def __init__(self, members: list[Member]) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.issuer = self.url
        self.private, self.public = rsa_pem()
        self.members = {m.sub: m for m in members}
        self.lineitems: dict[int, LineItem] = {}
        self.links: dict[str, dict[str, Any]] = {}
        """resource link id → its content item (from deep linking)."""
        self.hints: dict[str, dict[str, Any]] = {}
        self.refused: list[str] = []
        self.nrps_reads = 0
        self.tool_url = ""
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # --- the registration ---------------------------------------------------------------------

    def registration(self, *, deployment: str = DEPLOYMENT) -> Registration:
        reg = Registration()
        reg.set_iss(self.issuer).set_client_id(CLIENT_ID).set_deployment_id(deployment)
        reg.set_oidc_login_url(f"{self.tool_url}/lti/login")
        reg.set_launch_url(f"{self.tool_url}/lti/launch")
        reg.set_deeplink_launch_url(f"{self.tool_url}/lti/launch")
        reg.set_platform_public_key(self.public).set_platform_private_key(self.private)
        reg.set_tool_key_set_url(f"{self.tool_url}/lti/jwks.json")
        return reg

    def conf(self) -> _Conf:
        return _Conf(registration=self.registration())

    def register_args(self) -> list[str]:
        return [
            "--issuer", self.issuer, "--client-id", CLIENT_ID,
            "--auth-login-url", f"{self.url}/auth", "--auth-token-url", f"{self.url}/token",
            "--jwks-url", f"{self.url}/jwks", "--deployment", DEPLOYMENT,
        ]  # fmt: skip

    # --- what a browser in the LMS does -------------------------------------------------------

    def login_url(self, sub: str, *, link: str | None = None, deep_link: bool = False) -> str:
        """The tool's login initiation URL for a member opening a link (or deep linking)."""
        hint = f"h{len(self.hints)}"
        self.hints[hint] = {"sub": sub, "link": link, "deep_link": deep_link}
        login = _Login(_Req({"method": "GET", "get_data": {}, "form_data": {}}), self.conf())
        login.set_lti_message_hint(hint=hint)
        return str(login.initiate_login(sub))

    def launch_form(self, query: dict[str, str], **claims: Any) -> dict[str, Any]:
        """The platform's answer to the tool's authorization redirect: the form a browser
        posts to the tool (launch URL, id_token, state). ``claims`` replace the message's."""
        request = _Req({"method": "GET", "get_data": query, "form_data": {}})
        launch = _Launch(request, self.conf())
        hint = self.hints[query["lti_message_hint"]]
        member = self.members[hint["sub"]]
        launch.set_user_data(member.sub, member.roles, full_name=member.name)
        launch.set_launch_context_claim("course-1", context_title="Course one")
        launch.set_nrps(f"{self.url}/nrps")
        if hint["deep_link"]:
            launch.set_dl(f"{self.url}/deep-link", title="Add an activity")
        else:
            link = self.links[hint["link"]]
            launch.set_resource_link_claim(hint["link"], title=link.get("title"))
            if link.get("custom"):
                launch.set_custom_parameters_claim(link["custom"])
            item = next(
                (li for li in self.lineitems.values() if li.resource_link == hint["link"]), None
            )
            if item is not None:
                launch.set_ags(
                    f"{self.url}/lineitems", f"{self.url}/lineitems/{item.id}",
                    allow_creating_lineitems=False,
                )  # fmt: skip
        if claims:
            launch.set_extra_claims(claims)
        return dict(launch.lti_launch())

    # --- the HTTP side ------------------------------------------------------------------------

    def _bearer(self, request: Request, scope: str) -> bool:
        header = request.headers.get("authorization", "")
        if not header.startswith("Bearer "):
            return False
        try:
            return self.conf().validate_token(header[7:], allowed_scopes=[scope])
        except Exception:
            return False

    def app(self) -> Starlette:
        def auth(request: Request) -> Response:
            query = dict(request.query_params)
            if query.get("client_id") != CLIENT_ID or not query.get("redirect_uri", "").startswith(
                self.tool_url
            ):
                return HTMLResponse("bad authorization request", 400)
            form = self.launch_form(query)
            inputs = "".join(
                f'<input type="hidden" name="{k}" value="{v}">'
                for k, v in form.items() if k != "launch_url"
            )  # fmt: skip
            return HTMLResponse(
                f'<form method="post" action="{form["launch_url"]}">{inputs}</form>'
            )

        def jwks(request: Request) -> Response:
            conf = self.conf()
            conf.get_registration()
            return JSONResponse(conf.get_jwks())

        async def token(request: Request) -> Response:
            form = dict(urllib.parse.parse_qsl((await request.body()).decode()))
            try:
                return JSONResponse(self.conf().get_access_token(form))
            except Exception as exc:
                self.refused.append(f"token: {exc}")
                return JSONResponse({"error": "invalid_client"}, 400)

        async def deep_link(request: Request) -> Response:
            form = dict(urllib.parse.parse_qsl((await request.body()).decode()))
            conf = self.conf()
            conf.get_registration()
            items = conf.validate_deeplinking_resp({"JWT": form["JWT"]})
            with self._lock:
                for item in items:
                    link = f"link-{len(self.links) + 1}"
                    self.links[link] = item
                    if "lineItem" in item:
                        li = item["lineItem"]
                        n = len(self.lineitems) + 1
                        self.lineitems[n] = LineItem(
                            n, li.get("label", ""), float(li["scoreMaximum"]), link,
                            li.get("resourceId", ""), li.get("gradesReleased"),
                        )  # fmt: skip
            return HTMLResponse("added")

        def nrps(request: Request) -> Response:
            if not self._bearer(request, NRPS):
                return JSONResponse({"error": "unauthorized"}, 401)
            self.nrps_reads += 1
            members = [
                {"user_id": m.sub, "name": m.name, "roles": m.roles, "status": "Active"}
                for m in self.members.values()
            ]
            body = {"id": f"{self.url}/nrps", "context": {"id": "course-1"}, "members": members}
            return JSONResponse(
                body, media_type="application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
            )

        async def scores(request: Request) -> Response:
            if not self._bearer(request, SCORE):
                return JSONResponse({"error": "unauthorized"}, 401)
            item = self.lineitems.get(int(request.path_params["item"]))
            if item is None:
                return JSONResponse({"error": "no such line item"}, 404)
            if request.headers.get("content-type") != "application/vnd.ims.lis.v1.score+json":
                return JSONResponse({"error": "not a score"}, 415)
            score = json.loads(await request.body())
            with self._lock:
                item.scores.append(score)
            return JSONResponse({}, 200)

        return Starlette(
            routes=[
                Route("/auth", auth), Route("/jwks", jwks),
                Route("/token", token, methods=["POST"]),
                Route("/deep-link", deep_link, methods=["POST"]),
                Route("/nrps", nrps),
                Route("/lineitems/{item:int}/scores", scores, methods=["POST"]),
            ]
        )  # fmt: skip

    def start(self) -> None:
        config = uvicorn.Config(
            self.app(), host="127.0.0.1", port=self.port, log_level="warning", access_log=False
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the test platform did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(30)
            self._server = None

    def scores_of(self, item: int = 1) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.lineitems[item].scores)


def query_of(url: str) -> dict[str, str]:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
