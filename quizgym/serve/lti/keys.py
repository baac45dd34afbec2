"""The tool's signing keys in the data folder: RSA keys in, the key that signs now and the
JWKS that the platforms read (the current key and, for a while, the ones it replaced) out.

Each key is ``lti-keys/KID.pem`` (mode 0600, in a folder of mode 0700), listed in
``lti-keys/keys.json`` with when it was made and when it was replaced. ``rotate`` makes a new
key that signs from then on; a replaced key stays in the JWKS for ``RETIRE_DAYS`` days, so that
a platform that cached the old JWKS still reads what was signed before.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from quizgym.errors import QuizgymError

__all__ = ["RETIRE_DAYS", "ToolKey", "ToolKeys"]

RETIRE_DAYS = 7
"""How long a replaced key stays in the JWKS."""
_FOLDER = "lti-keys"


@dataclass(frozen=True)
class ToolKey:
    """One RSA key: its id, its private key (PEM) and its public JWK."""

    kid: str
    private_pem: str
    public_pem: str
    public_jwk: dict[str, Any]
    made: datetime
    replaced: datetime | None = None


def _new_key() -> tuple[str, str, dict[str, Any]]:
    from jwcrypto.jwk import JWK  # type: ignore[import-untyped]

    key = JWK.generate(kty="RSA", size=2048)
    kid = str(key.thumbprint())
    pem = key.export_to_pem(private_key=True, password=None).decode("ascii")
    public: dict[str, Any] = json.loads(key.export_public())
    public.update({"kid": kid, "alg": "RS256", "use": "sig"})
    return kid, pem, public


def _public_of(pem: str, kid: str) -> tuple[str, dict[str, Any]]:
    from jwcrypto.jwk import JWK

    key = JWK.from_pem(pem.encode("ascii"))
    public: dict[str, Any] = json.loads(key.export_public())
    public.update({"kid": kid, "alg": "RS256", "use": "sig"})
    return key.export_to_pem().decode("ascii"), public


class ToolKeys:
    """The keys of a data folder (made on first use)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder / _FOLDER
        self.index = self.folder / "keys.json"

    def _read(self) -> list[dict[str, Any]]:
        if not self.index.exists():
            return []
        try:
            listed = json.loads(self.index.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise QuizgymError(f"{self.index}: cannot read the tool's key list: {exc}") from exc
        if not isinstance(listed, list):
            raise QuizgymError(f"{self.index}: not a list of keys")
        return listed

    def _write(self, listed: list[dict[str, Any]]) -> None:
        partial = self.index.with_suffix(".partial")
        partial.write_text(json.dumps(listed, indent=1) + "\n", encoding="utf-8")
        partial.replace(self.index)

    def _make(self, now: datetime) -> dict[str, Any]:
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            kid, pem, _ = _new_key()
            fd = os.open(self.folder / f"{kid}.pem", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as stream:
                stream.write(pem)
        except OSError as exc:
            raise QuizgymError(
                f"{self.folder}: cannot write the tool's key: {exc.strerror}"
            ) from exc
        return {"kid": kid, "made": now.isoformat(), "replaced": None}

    def all(self, now: datetime) -> list[ToolKey]:
        """The keys still published, newest (the one that signs) first; one is made when the
        folder has none.

        Raises:
            QuizgymError: a key cannot be read or made, or others may read it.
        """
        listed = self._read()
        if not listed:
            listed = [self._make(now)]
            self._write(listed)
        out = []
        for entry in reversed(listed):
            replaced = datetime.fromisoformat(entry["replaced"]) if entry["replaced"] else None
            if replaced is not None and now - replaced > timedelta(days=RETIRE_DAYS):
                continue
            path = self.folder / f"{entry['kid']}.pem"
            try:
                mode = path.stat().st_mode
                pem = path.read_text(encoding="ascii")
            except (OSError, UnicodeDecodeError) as exc:
                raise QuizgymError(f"{path}: cannot read the tool's key") from exc
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise QuizgymError(
                    f"{path}: others may read the tool's private key; run chmod 600 {path}"
                )
            out.append(
                ToolKey(entry["kid"], pem, *_public_of(pem, entry["kid"]),
                        datetime.fromisoformat(entry["made"]), replaced)
            )  # fmt: skip
        return out

    def current(self, now: datetime) -> ToolKey:
        """The key that signs now."""
        return self.all(now)[0]

    def jwks(self, now: datetime) -> dict[str, Any]:
        """The JSON Web Key Set the tool publishes."""
        return {"keys": [key.public_jwk for key in self.all(now)]}

    def rotate(self, now: datetime) -> tuple[ToolKey, list[ToolKey]]:
        """Make a new key that signs from now on; the new key and the ones still published
        beside it. Keys replaced more than ``RETIRE_DAYS`` days ago are deleted.

        Raises:
            QuizgymError: the folder cannot be written.
        """
        self.all(now)  # the first key, when there is none yet
        listed = self._read()
        for entry in listed:
            if entry["replaced"] is None:
                entry["replaced"] = now.isoformat()
        kept = []
        for entry in listed:
            replaced = datetime.fromisoformat(entry["replaced"])
            if now - replaced > timedelta(days=RETIRE_DAYS):
                (self.folder / f"{entry['kid']}.pem").unlink(missing_ok=True)
            else:
                kept.append(entry)
        kept.append(self._make(now))
        self._write(kept)
        keys = self.all(now)
        return keys[0], keys[1:]
