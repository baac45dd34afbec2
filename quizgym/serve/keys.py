"""The server's secret and what it signs: sign-in links, session cookies, CSRF tokens and the
seeds of every variant a student is shown.

quizgym is open source, so the numbers a student sees must not follow from anything they can
guess: a bank plus a guessable seed would give every key away. Every seed here is an HMAC of
the server's secret, and every credential is a value signed with it; none is stored.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from quizgym.errors import QuizgymError

__all__ = ["SESSION_COOKIE", "SESSION_HOURS", "Identity", "LinkError", "Secret"]

SECRET_BYTES = 32
SESSION_COOKIE = "quizgym_session"
"""The cookie a signed session travels in (set by a sign-in link or an LTI launch)."""
SESSION_HOURS = 12
"""How long a session lasts."""


class LinkError(QuizgymError):
    """A sign-in link or session that is forged, damaged or expired (the reason is the text)."""


@dataclass(frozen=True)
class Identity:
    """Who a link or session belongs to: a student of the roster, or the teacher."""

    student: str
    teacher: bool = False


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, TypeError) as exc:
        raise LinkError("the link is damaged (not base64)") from exc


class Secret:
    """The server's secret key, and every value derived from or signed with it."""

    def __init__(self, key: bytes) -> None:
        if len(key) < 16:
            raise QuizgymError("the server's secret is too short (16 bytes at least)")
        self._key = key

    @classmethod
    def load(cls, path: Path) -> Secret:
        """The secret in ``path``, created (mode 0600) when the file does not exist.

        Raises:
            QuizgymError: the file cannot be read or made, or others can read it.
        """
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        except OSError as exc:
            raise QuizgymError(f"{path}: cannot create the secret: {exc.strerror}") from exc
        else:
            with os.fdopen(fd, "w", encoding="ascii") as stream:
                stream.write(secrets.token_hex(SECRET_BYTES) + "\n")
        try:
            mode = path.stat().st_mode
            text = path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise QuizgymError(f"{path}: cannot read the secret") from exc
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise QuizgymError(
                f"{path}: others may read the server's secret (mode {stat.S_IMODE(mode):o});"
                f" run chmod 600 {path}"
            )
        try:
            return cls(bytes.fromhex(text))
        except ValueError as exc:
            raise QuizgymError(f"{path}: the secret is not hexadecimal text") from exc

    def mac(self, *parts: str) -> bytes:
        """HMAC-SHA256 of the parts (separated so that no two lists of parts collide)."""
        message = "".join(f"{len(p)}:{p}" for p in parts)  # length-prefixed: unambiguous
        return hmac.new(self._key, message.encode("utf-8", "replace"), hashlib.sha256).digest()

    def seed(self, *parts: str) -> int:
        """A 31-bit seed nobody without the secret can predict."""
        return int.from_bytes(self.mac("seed", *parts)[:4], "big") >> 1

    # --- sign-in links ------------------------------------------------------------------------

    def link_token(self, who: Identity, *, expires: datetime) -> str:
        """The token of a sign-in link (``/in/TOKEN``), valid until ``expires``."""
        role = "t" if who.teacher else "s"
        stamp = str(int(expires.timestamp()))
        body = f"{role}.{_b64(who.student.encode('utf-8'))}.{stamp}"
        return f"{body}.{_b64(self.mac('link', body)[:18])}"

    def read_link(self, token: str, *, now: datetime) -> Identity:
        """Who a link token signs in, checked.

        Raises:
            LinkError: the token is damaged, forged or expired.
        """
        return self._read(token, "link", now=now, what="link")

    # --- sessions and CSRF --------------------------------------------------------------------

    def session(self, who: Identity, *, expires: datetime) -> str:
        """A session cookie's value: the identity, an expiry and a nonce, signed."""
        role = "t" if who.teacher else "s"
        stamp = str(int(expires.timestamp()))
        nonce = _b64(secrets.token_bytes(12))
        body = f"{role}.{_b64(who.student.encode('utf-8'))}.{stamp}.{nonce}"
        return f"{body}.{_b64(self.mac('session', body)[:18])}"

    def read_session(self, value: str, *, now: datetime) -> Identity:
        """Who a session cookie belongs to.

        Raises:
            LinkError: the cookie is damaged, forged or expired.
        """
        return self._read(value, "session", now=now, what="session")

    def csrf(self, session: str) -> str:
        """The CSRF token of every form of a session (bound to its nonce)."""
        return _b64(self.mac("csrf", session)[:18])

    def csrf_ok(self, session: str, token: str) -> bool:
        """Whether a form's token is its session's."""
        return hmac.compare_digest(self.csrf(session), token)

    def _read(self, token: str, purpose: str, *, now: datetime, what: str) -> Identity:
        if len(token) > 600:
            raise LinkError(f"the {what} is damaged (too long)")
        body, _, sig = token.rpartition(".")
        fields = body.split(".")
        if len(fields) not in (3, 4) or fields[0] not in ("s", "t"):
            raise LinkError(f"the {what} is damaged")
        expected = _b64(self.mac(purpose, body)[:18])
        if not hmac.compare_digest(expected.encode(), sig.encode("utf-8", "replace")):
            raise LinkError(f"the {what} is not signed by this server (forged or mistyped)")
        role, student, stamp = fields[:3]
        if not stamp.isdigit() or int(stamp) < now.timestamp():
            raise LinkError(f"the {what} has expired: ask your teacher for a new link")
        try:
            name = _unb64(student).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise LinkError(f"the {what} is damaged") from exc
        return Identity(name, teacher=role == "t")
