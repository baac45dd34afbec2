"""quizgym's exceptions: what went wrong in, one message that names the file, line and field (or the
answer's offset) out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


class QuizgymError(Exception):
    """Base class of every error quizgym reports to a user.

    Two audiences, two channels: student input problems are returned as values by the answer engine
    (and raised as :class:`AnswerParseError` inside it); author and user problems are exceptions
    that name the file, the line and the field.
    """


class AnswerParseError(QuizgymError):
    """A student's (or an author's) expression could not be read."""

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


@dataclass(frozen=True)
class Finding:
    """One problem in a bank, located as precisely as we can."""

    path: str
    line: int
    col: int
    message: str
    severity: str = "error"  # "error" or "warning"

    def __str__(self) -> str:
        tag = "" if self.severity == "error" else "warning: "
        return f"{self.path}:{self.line}:{self.col}: {tag}{self.message}"


class BankError(QuizgymError):
    """A bank could not be loaded; carries every finding at once."""

    def __init__(self, findings: list[Finding]) -> None:
        self.findings = findings
        super().__init__("\n".join(str(f) for f in findings))


class BankNotFoundError(QuizgymError):
    """A bank was named that is neither a file nor a bundled bank."""

    def __init__(self, name: str, bundled: list[str]) -> None:
        known = ", ".join(bundled) or "none"
        super().__init__(f"{name}: no such file or bundled bank (bundled: {known})")


class ExportError(QuizgymError):
    """A bank cannot be expressed in the requested export format."""


class SubmissionError(QuizgymError):
    """A submissions file cannot be read at all."""

    def __init__(self, path: Path | str, message: str, line: int = 0) -> None:
        self.path = str(path)
        self.line = line
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")
