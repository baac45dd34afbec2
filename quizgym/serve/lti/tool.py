"""The tool side of LTI 1.3 over pylti1p3next: a login initiation's or a launch's form fields
in; the platform's authorization redirect, or the launch checked and its claims, out.

pylti1p3's adapters exist for Django and Flask only; these are the few classes it needs for
any framework (the request's fields, the tool's configuration read from the database, a
service connector with a token cache and time-outs). Its launch check is kept (JWT format,
registration, the signature against the platform's JWKS, the deployment, the message's
claims) and made stricter where it is loose: the login state is a database row used once (no
cookie), the nonce must be the one that login issued and is refused the second time, and the
token's ``aud``, ``iss``, ``exp`` and ``iat`` are checked by PyJWT (pylti1p3 skips ``aud``).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

import jwt
import requests
from pylti1p3.deployment import Deployment
from pylti1p3.exception import LtiException, LtiKeyException
from pylti1p3.message_launch import MessageLaunch
from pylti1p3.registration import Registration
from pylti1p3.request import Request
from pylti1p3.roles import DesignerRole, TeacherRole, TeachingAssistantRole
from pylti1p3.service_connector import ServiceConnector
from pylti1p3.session import SessionService
from pylti1p3.tool_config.abstract import ToolConfAbstract

from quizgym.serve.db import Database, DuplicateError, Tx
from quizgym.serve.lti.keys import ToolKeys
from quizgym.serve.lti.store import Platform, dumps, find_platform

__all__ = [
    "LEEWAY",
    "STATE_SECONDS",
    "Launched",
    "LaunchRefusedError",
    "begin_login",
    "check_launch",
    "connector",
    "is_teacher",
    "registration",
]

log = logging.getLogger("quizgym.serve.lti")

STATE_SECONDS = 600
"""How long a login may take between its initiation and its launch."""
LEEWAY = 60
"""Seconds of clock difference allowed on ``exp`` and ``iat``."""
TIMEOUT = 10.0
"""Seconds a request to a platform may take."""
CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"


class LaunchRefusedError(Exception):
    """A login or launch refused: ``reason`` is logged and shown on a 4xx page."""

    def __init__(self, reason: str, status: int = 403) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.logged = False


class FormRequest(Request):
    """A request's fields for pylti1p3 (read and bounded by the app beforehand)."""

    def __init__(self, fields: Mapping[str, str], *, secure: bool) -> None:
        self._fields = dict(fields)
        self._secure = secure

    @property
    def session(self) -> None:
        return None  # pylti1p3 never needs a framework session here

    def is_secure(self) -> bool:
        return self._secure

    def get_param(self, key: str) -> str:
        return self._fields.get(key, "")


def registration(platform: Platform, keys: ToolKeys, now: float) -> Registration:
    """pylti1p3's registration of a platform, with the tool's current signing key."""
    from datetime import UTC, datetime

    key = keys.current(datetime.fromtimestamp(now, UTC))
    reg = Registration()
    reg.set_issuer(platform.issuer).set_client_id(platform.client_id)
    reg.set_auth_login_url(platform.auth_login_url).set_auth_token_url(platform.auth_token_url)
    reg.set_key_set_url(platform.key_set_url).set_tool_private_key(key.private_pem)
    reg.set_tool_public_key(key.public_pem)  # pylti1p3 reads the kid from it
    if platform.audience:
        reg.set_auth_audience(platform.audience)
    return reg


class _ToolConf(ToolConfAbstract[FormRequest]):
    """The platforms registered in the database, as pylti1p3 asks for them."""

    def __init__(self, tx: Tx, keys: ToolKeys, now: float) -> None:
        self.tx = tx
        self.keys = keys
        self.now = now
        self.issuers_relation_types = {}
        self.found: Platform | None = None

    def check_iss_has_one_client(self, iss: str) -> bool:
        return False

    def check_iss_has_many_clients(self, iss: str) -> bool:
        return True

    def find_registration_by_issuer(self, iss: str, *args: Any, **kwargs: Any) -> Registration:
        raise LtiException("platforms are found by issuer and client id")  # pragma: no cover

    def find_registration_by_params(  # type: ignore[override]
        self, iss: str, client_id: str, *args: Any, **kwargs: Any
    ) -> Registration | None:
        found = find_platform(self.tx, iss, client_id or None)
        if len(found) != 1:
            return None
        self.found = found[0]
        return registration(found[0], self.keys, self.now)

    def find_deployment(self, iss: str, deployment_id: str) -> Deployment | None:
        raise LtiException("deployments are found by issuer and client id")  # pragma: no cover

    def find_deployment_by_params(
        self, iss: str, deployment_id: str, client_id: str, *args: Any, **kwargs: Any
    ) -> Deployment | None:
        found = find_platform(self.tx, iss, client_id)
        if len(found) != 1 or deployment_id not in found[0].deployments:
            return None
        return Deployment().set_deployment_id(deployment_id)


class _Session(requests.Session):
    """A requests session whose every request times out."""

    def request(self, method: Any, url: Any, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("timeout", TIMEOUT)
        return super().request(method, url, *args, **kwargs)


_TOKENS: dict[tuple[str, str], tuple[str, float]] = {}
_TOKENS_LOCK = threading.Lock()


class _Connector(ServiceConnector):
    """pylti1p3's service connector with its access tokens kept until they expire."""

    def _get_cached_access_token(self, scope_key: str) -> str | None:
        key = (str(self._registration.get_client_id()), scope_key)
        with _TOKENS_LOCK:
            found = _TOKENS.get(key)
        if found is None or found[1] <= time.time():
            return None
        return found[0]

    def _cache_access_token(self, scope_key: str, access_token: str, expires_in: float) -> None:
        key = (str(self._registration.get_client_id()), scope_key)
        with _TOKENS_LOCK:
            _TOKENS[key] = (access_token, time.time() + max(0.0, float(expires_in) - 30))


def connector(platform: Platform, keys: ToolKeys, now: float) -> ServiceConnector:
    """A service connector to a platform (AGS, NRPS), signed with the tool's current key."""
    session = _Session()
    session.headers["User-Agent"] = "quizgym-lti"
    return _Connector(registration(platform, keys, now), session)


def forget_tokens() -> None:
    """Drop every cached access token (a platform restarted with new keys)."""
    with _TOKENS_LOCK:
        _TOKENS.clear()


# --- login initiation -------------------------------------------------------------------------


def begin_login(db: Database, fields: Mapping[str, str], *, launch_url: str, now: float) -> str:
    """A login initiation's fields in; the URL of the platform's authorization endpoint to
    redirect to out, with a new state and nonce stored in the database.

    Raises:
        LaunchRefusedError: no issuer or login hint, an unknown platform or deployment.
    """
    issuer = fields.get("iss", "")
    hint = fields.get("login_hint", "")
    if not issuer:
        raise LaunchRefusedError("the login initiation names no issuer (iss)", 400)
    if not hint:
        raise LaunchRefusedError("the login initiation has no login_hint", 400)
    client_id = fields.get("client_id") or None
    with db.transaction("begin an LTI login") as tx:
        found = find_platform(tx, issuer, client_id)
        if len(found) != 1:
            what = "is not registered" if not found else "has several client ids: send client_id"
            raise LaunchRefusedError(
                f"the platform {issuer!r}"
                + (f" with client id {client_id!r}" if client_id else "")
                + f" {what} (quizgym serve lti register)",
                400,
            )
        platform = found[0]
        deployment = fields.get("lti_deployment_id")
        if deployment and deployment not in platform.deployments:
            raise LaunchRefusedError(
                f"the deployment {deployment!r} is not registered for {issuer!r}", 400
            )
        state = secrets.token_urlsafe(32)
        nonce = secrets.token_urlsafe(32)
        tx.run("DELETE FROM lti_state WHERE made_ts < ?", (now - STATE_SECONDS,))
        tx.run(
            "INSERT INTO lti_state (state, nonce, platform_id, made_ts) VALUES (?, ?, ?, ?)",
            (state, nonce, platform.id, now),
        )
    params = {
        "scope": "openid",
        "response_type": "id_token",
        "response_mode": "form_post",
        "prompt": "none",
        "client_id": platform.client_id,
        "redirect_uri": launch_url,
        "state": state,
        "nonce": nonce,
        "login_hint": hint,
    }
    if fields.get("lti_message_hint"):
        params["lti_message_hint"] = fields["lti_message_hint"]
    sep = "&" if "?" in platform.auth_login_url else "?"
    return f"{platform.auth_login_url}{sep}{urllib.parse.urlencode(params)}"


# --- the launch -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Launched:
    """A launch that passed every check: its platform, deployment and claims."""

    id: str
    platform: Platform
    deployment_id: str
    body: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return str(self.body.get(CLAIM + "message_type", ""))

    @property
    def sub(self) -> str:
        return str(self.body.get("sub", ""))

    def claim(self, name: str, spec: str = CLAIM) -> Any:
        return self.body.get(spec + name)


JWKS_SECONDS = 300.0
"""How long a platform's fetched JWKS is used before it is fetched again."""
_JWKS: dict[str, tuple[dict[str, Any], float]] = {}
_JWKS_LOCK = threading.Lock()


class _Launch(MessageLaunch):  # type: ignore[type-arg]
    """pylti1p3's launch check, with the state and nonce kept in the database."""

    def __init__(self, request: FormRequest, conf: _ToolConf, tx: Tx, now: float) -> None:
        storage_free = SessionService(request)
        super().__init__(request, conf, session_service=storage_free, cookie_service=object())
        self.tx = tx
        self.now = now
        self.state_row: tuple[str, int, float] | None = None

    def _get_request_param(self, key: str) -> str:
        return str(self._request.get_param(key))

    def validate(self) -> _Launch:
        self._validated = True
        try:
            self.validate_state()
            self.validate_jwt_format()
            self.validate_registration()
            self.validate_jwt_signature()
            self.validate_nonce()
            self.validate_deployment()
            self.validate_message()
        except Exception:
            self._validated = False
            raise
        return self

    def validate_state(self) -> _Launch:
        state = self._get_request_param("state")
        if not state:
            raise LaunchRefusedError("the launch has no state: it did not come from a login")
        rows = self.tx.rows(
            "DELETE FROM lti_state WHERE state = ? RETURNING nonce, platform_id, made_ts",
            (state[:200],),
        )
        if not rows:
            raise LaunchRefusedError(
                "the launch's state is unknown or was used already (a replayed or forged launch)"
            )
        nonce, platform_id, made = rows[0]
        if self.now - float(made) > STATE_SECONDS:
            raise LaunchRefusedError("the login took too long (its state expired): launch again")
        self.state_row = (str(nonce), int(platform_id), float(made))
        return self

    def get_public_key(self) -> tuple[str, str]:
        """The platform's key for the token's kid, from its JWKS as fetched in the last
        ``JWKS_SECONDS`` (fetched again at once for a kid it does not have: a new key)."""
        reg = self._registration
        assert reg is not None
        url = str(reg.get_key_set_url())
        with _JWKS_LOCK:
            cached = _JWKS.get(url)
        if cached is not None and cached[1] > self.now - JWKS_SECONDS:
            reg.set_key_set(cast(Any, cached[0]))
            try:
                return super().get_public_key()
            except LtiKeyException:
                pass  # not in the cached set: the platform may have rotated its key
        reg.set_key_set(None)
        found = super().get_public_key()
        with _JWKS_LOCK:
            _JWKS[url] = (cast(Any, reg.get_key_set()), self.now)
        return found

    def validate_jwt_signature(self) -> _Launch:
        conf: _ToolConf = self._tool_config
        platform = conf.found
        assert platform is not None and self.state_row is not None
        if platform.id != self.state_row[1]:
            raise LaunchRefusedError("the id_token is from another platform than the login")
        try:
            public_key, alg = self.get_public_key()
        except LtiException as exc:
            raise LaunchRefusedError(f"the platform's key cannot be found: {exc}") from exc
        try:
            body = jwt.decode(
                self._get_id_token(), public_key, algorithms=[alg], audience=platform.client_id,
                issuer=platform.issuer, leeway=LEEWAY,
                options={"require": ["exp", "iat", "iss", "aud", "nonce"]},
            )  # fmt: skip
        except jwt.ExpiredSignatureError as exc:
            raise LaunchRefusedError("the id_token has expired") from exc
        except jwt.InvalidAudienceError as exc:
            raise LaunchRefusedError(
                f"the id_token's audience (aud) is not this tool's client id {platform.client_id!r}"
            ) from exc
        except jwt.InvalidIssuerError as exc:
            raise LaunchRefusedError("the id_token's issuer (iss) is not the platform's") from exc
        except jwt.InvalidSignatureError as exc:
            raise LaunchRefusedError(
                "the id_token's signature does not match the platform's key (a forged token)"
            ) from exc
        except jwt.InvalidTokenError as exc:
            raise LaunchRefusedError(f"the id_token cannot be read: {exc}") from exc
        if float(body["iat"]) > self.now + LEEWAY:
            raise LaunchRefusedError("the id_token was issued in the future (iat)")
        aud = body["aud"]
        if isinstance(aud, list) and len(aud) > 1 and body.get("azp") != platform.client_id:
            raise LaunchRefusedError("the id_token has several audiences and no azp of this tool")
        self._jwt["body"] = cast(Any, body)
        return self

    def validate_nonce(self) -> _Launch:
        assert self.state_row is not None
        nonce = str(self._jwt["body"].get("nonce", ""))
        if not secrets.compare_digest(nonce.encode(), self.state_row[0].encode()):
            raise LaunchRefusedError("the id_token's nonce is not the one its login issued")
        try:
            self.tx.run(
                "INSERT INTO lti_nonce (platform_id, nonce, used_ts) VALUES (?, ?, ?)",
                (self.state_row[1], nonce, self.now),
            )
        except DuplicateError as exc:  # pragma: no cover - the state row goes first
            raise LaunchRefusedError("the id_token's nonce was used before (a replay)") from exc
        return self

    def validate_registration(self) -> _Launch:
        try:
            super().validate_registration()
        except LtiException as exc:
            raise LaunchRefusedError(
                "the id_token's issuer and audience (client id) are no registered platform"
            ) from exc
        return self

    def validate_deployment(self) -> _Launch:
        try:
            super().validate_deployment()
        except LtiException as exc:
            raise LaunchRefusedError(
                f"{exc} (register it: quizgym serve lti register --deployment ID)"
            ) from exc
        return self

    def validate_message(self) -> _Launch:
        try:
            super().validate_message()
        except LtiException as exc:
            raise LaunchRefusedError(f"the launch message is not valid: {exc}", 400) from exc
        return self


def check_launch(
    db: Database, keys: ToolKeys, fields: Mapping[str, str], *, secure: bool, now: float
) -> Launched:
    """A launch's form fields (``id_token``, ``state``) in; the launch out, checked and
    recorded, or refused with the reason (logged).

    Raises:
        LaunchRefusedError: the state, token, signature, nonce, audience, issuer, expiry,
            deployment or message is not right.
    """
    if len(fields.get("id_token", "")) > 64_000:
        raise LaunchRefusedError("the id_token is too long", 400)
    try:
        with db.transaction("check an LTI launch") as tx:
            conf = _ToolConf(tx, keys, now)
            launch = _Launch(FormRequest(fields, secure=secure), conf, tx, now)
            try:
                launch.validate()
            except LaunchRefusedError:
                raise
            except LtiException as exc:
                raise LaunchRefusedError(f"the launch is not valid: {exc}") from exc
            platform = conf.found
            assert platform is not None
            body: dict[str, Any] = cast(Any, launch._jwt["body"])
            deployment = str(body[CLAIM + "deployment_id"])
            launch_id = secrets.token_urlsafe(24)
            tx.run(
                "INSERT INTO lti_launch (id, platform_id, deployment_id, student, teacher, kind,"
                " body, made_ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (launch_id, platform.id, deployment, "", int(is_teacher(body)),
                 str(body.get(CLAIM + "message_type", "")), dumps(body), now),
            )  # fmt: skip
    except LaunchRefusedError as exc:
        digest = hashlib.sha256(fields.get("id_token", "").encode()).hexdigest()[:12]
        log.warning("LTI launch refused (token %s): %s", digest, exc.reason)
        exc.logged = True
        raise
    return Launched(launch_id, platform, deployment, body)


def is_teacher(body: Mapping[str, Any]) -> bool:
    """Whether a launch's (or a member's) roles make the user a teacher of the course."""
    return any(
        role(cast(Any, body)).check() for role in (TeacherRole, TeachingAssistantRole, DesignerRole)
    )
