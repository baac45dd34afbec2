"""Registering the tool with an LMS: the tool's address in; Canvas's developer key JSON and
Moodle's external tool settings out, and a platform's issuer, client id, endpoints and
deployment ids stored in the server's database."""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from quizgym.errors import QuizgymError
from quizgym.serve.lti.keys import ToolKey, ToolKeys
from quizgym.serve.lti.store import Platform, ensure_tables, save_platform

__all__ = ["canvas_key", "moodle_settings", "register", "rotate_key", "tool_urls"]

SCOPES = (
    "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
    "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
    "https://purl.imsglobal.org/spec/lti-ags/scope/score",
    "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
)


def tool_urls(url: str) -> dict[str, str]:
    """The tool's endpoints under its public address.

    Raises:
        QuizgymError: the address is not an http(s) URL.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise QuizgymError(f"--url {url!r} is not the tool's address (https://host[:port])")
    base = url.rstrip("/")
    return {
        "login": f"{base}/lti/login",
        "launch": f"{base}/lti/launch",
        "jwks": f"{base}/lti/jwks.json",
        "domain": parts.hostname or "",
    }


def canvas_key(url: str, *, title: str = "quizgym") -> dict[str, object]:
    """Canvas's developer key (LTI key, *Paste JSON*): the launch, login and JWKS URLs, the
    AGS and NRPS scopes, and the deep-linking placements."""
    urls = tool_urls(url)
    placement = {
        "text": title,
        "enabled": True,
        "message_type": "LtiDeepLinkingRequest",
        "target_link_uri": urls["launch"],
    }
    return {
        "title": title,
        "description": "Practice and quizzes graded by quizgym; scores sent to the gradebook.",
        "oidc_initiation_url": urls["login"],
        "target_link_uri": urls["launch"],
        "public_jwk_url": urls["jwks"],
        "scopes": list(SCOPES),
        "extensions": [
            {
                "domain": urls["domain"],
                "tool_id": "quizgym",
                "platform": "canvas.instructure.com",
                "privacy_level": "public",
                "settings": {
                    "text": title,
                    "placements": [
                        {**placement, "placement": "assignment_selection"},
                        {**placement, "placement": "link_selection"},
                    ],
                },
            }
        ],
        "custom_fields": {},
    }


_AGS_CHOICE = "Use this service for grade sync and column management"
_NRPS_CHOICE = "Use this service to retrieve members' information as per privacy settings"


def moodle_settings(url: str) -> list[tuple[str, str]]:
    """Moodle's *Manage tools → configure a tool manually* fields, in the form's order."""
    urls = tool_urls(url)
    return [
        ("Tool name", "quizgym"),
        ("Tool URL", urls["launch"]),
        ("LTI version", "LTI 1.3"),
        ("Public key type", "Keyset URL"),
        ("Public keyset", urls["jwks"]),
        ("Initiate login URL", urls["login"]),
        ("Redirection URI(s)", urls["launch"]),
        ("Supports Deep Linking (Content-Item Message)", "yes"),
        ("Content Selection URL", urls["launch"]),
        ("IMS LTI Assignment and Grade Services", _AGS_CHOICE),
        ("IMS LTI Names and Role Provisioning", _NRPS_CHOICE),
        ("Share launcher's name with tool", "Always"),
        ("Accept grades from the tool", "Always"),
    ]  # fmt: skip


def register(
    data: Path, *, db: str | None, issuer: str, client_id: str, auth_login_url: str,
    auth_token_url: str, key_set_url: str, deployments: Sequence[str],
    audience: str | None = None, name: str = "",
) -> tuple[Platform, bool]:  # fmt: skip
    """Store a platform in the data folder's database (and make the tool's key when there
    is none); the platform and whether it is new.

    Raises:
        QuizgymError: an endpoint is no https URL (http only for loopback), no deployment
            id, or the database cannot be written.
    """
    from quizgym.serve.storage import open_database

    for label, value in (
        ("--auth-login-url", auth_login_url), ("--auth-token-url", auth_token_url),
        ("--jwks-url", key_set_url),
    ):  # fmt: skip
        parts = urllib.parse.urlsplit(value)
        loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
        if parts.scheme != "https" and not (parts.scheme == "http" and loopback):
            raise QuizgymError(f"{label} {value!r} is not an https URL")
    if not issuer or not client_id:
        raise QuizgymError("--issuer and --client-id are needed (the LMS shows both)")
    if not deployments:
        raise QuizgymError("name at least one --deployment id (the LMS shows it)")
    data.mkdir(parents=True, exist_ok=True)
    ToolKeys(data).current(datetime.now(UTC))
    database = open_database(db, folder=data)
    try:
        ensure_tables(database)
        return save_platform(
            database, issuer=issuer, client_id=client_id, auth_login_url=auth_login_url,
            auth_token_url=auth_token_url, key_set_url=key_set_url, deployments=deployments,
            audience=audience, name=name,
        )  # fmt: skip
    finally:
        database.close()


def rotate_key(data: Path) -> tuple[ToolKey, list[ToolKey]]:
    """Make the tool's new signing key; it and the older keys still published."""
    if not data.is_dir():
        raise QuizgymError(f"{data}: no such data folder")
    return ToolKeys(data).rotate(datetime.now(UTC))


def describe(url: str) -> str:
    """The text ``register`` prints: the URLs, Canvas's JSON and Moodle's fields."""
    urls = tool_urls(url)
    lines = [
        f"login (OIDC initiation) URL: {urls['login']}",
        f"launch / redirect URI:       {urls['launch']}",
        f"JWKS URL:                    {urls['jwks']}",
        "",
        "Canvas: Admin > Developer Keys > + Developer Key > LTI Key > Method: Paste JSON:",
        json.dumps(canvas_key(url), indent=2),
        "",
        "Moodle: Site administration > Plugins > Activity modules > External tool > Manage tools"
        " > configure a tool manually:",
        *(f"  {label}: {value}" for label, value in moodle_settings(url)),
    ]
    return "\n".join(lines)
