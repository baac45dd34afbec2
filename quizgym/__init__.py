"""quizgym's public library surface: a bank's file or text in; the bank, its compiled form,
verdicts, documents, exports and a class's grades out."""

# The public library surface is listed here, and only here:
#
#     from quizgym import load_bank, compile_bank, grade_response   # recommended
#     from quizgym.grading.batch import grade_partition              # internals: may change
#
# Each name is imported on first use, so ``import quizgym`` (and ``quizgym --help``) stays light.
# docs/architecture.md shows how the modules behind them are arranged.

from __future__ import annotations

from typing import TYPE_CHECKING

from quizgym.lazy import names_from
from quizgym.version import __version__

_PUBLIC: dict[str, str] = {
    # banks
    "load_bank": "quizgym.loader",
    "parse_bank": "quizgym.loader",
    "Bank": "quizgym.model",
    "check_banks": "quizgym.check",
    "bank_json_schema": "quizgym.schema",
    # the compiled bank and the answer engine
    "compile_bank": "quizgym.solver",
    "CompiledBank": "quizgym.solver",
    "solve": "quizgym.solver",
    "grade_response": "quizgym.answers",
    "grade_question": "quizgym.answers",
    "Verdict": "quizgym.answers",
    "Status": "quizgym.answers",
    # what the commands do
    "run_practice": "quizgym.practice",
    "render_files": "quizgym.render",
    "export_bank": "quizgym.export",
    "grade_submissions": "quizgym.grading.run",
    "GradeRun": "quizgym.grading.run",
    # errors
    "QuizgymError": "quizgym.errors",
    "BankError": "quizgym.errors",
    "SubmissionError": "quizgym.errors",
    "ExportError": "quizgym.errors",
}

__all__ = [
    "Bank",
    "BankError",
    "CompiledBank",
    "ExportError",
    "GradeRun",
    "QuizgymError",
    "Status",
    "SubmissionError",
    "Verdict",
    "__version__",
    "bank_json_schema",
    "check_banks",
    "compile_bank",
    "export_bank",
    "grade_question",
    "grade_response",
    "grade_submissions",
    "load_bank",
    "parse_bank",
    "render_files",
    "run_practice",
    "solve",
]

if TYPE_CHECKING:
    from quizgym.answers import Status, Verdict, grade_question, grade_response
    from quizgym.check import check_banks
    from quizgym.errors import BankError, ExportError, QuizgymError, SubmissionError
    from quizgym.export import export_bank
    from quizgym.grading.run import GradeRun, grade_submissions
    from quizgym.loader import load_bank, parse_bank
    from quizgym.model import Bank
    from quizgym.practice import run_practice
    from quizgym.render import render_files
    from quizgym.schema import bank_json_schema
    from quizgym.solver import CompiledBank, compile_bank, solve


__getattr__ = names_from(__name__, _PUBLIC)
