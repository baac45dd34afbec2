"""LMS exports: one module per format behind a small registry.

Every exporter is a pure function of the bank (and of the variant count, the first seed and, for
Anki, a timestamp): identifiers come from question ids, never from the clock or a random source,
so exporting twice gives the same bytes and re-importing updates rather than duplicates.

>>> from quizgym.loader import load_bank
>>> data = exporter("gift", load_bank("bert-mlm")).to_bytes()
"""

from __future__ import annotations

import importlib
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, ClassVar

from quizgym.errors import ExportError
from quizgym.export.targets import TARGETS

if TYPE_CHECKING:  # the CLI imports this module for FORMATS; keep it light
    from pathlib import Path

    from quizgym.export.scoring import CheckReport
    from quizgym.model import Bank
    from quizgym.solver import CompiledBank

FORMATS: dict[str, tuple[str, str]] = {
    "moodle": ("quizgym.export.moodle", "Moodle XML (.xml): cloze for multi-part numeric"),
    "gift": ("quizgym.export.gift", "GIFT text (.gift), for Moodle"),
    "qti12": ("quizgym.export.qti12", "IMS QTI 1.2 package for Canvas (.zip)"),
    "qti21": ("quizgym.export.qti21", "IMS QTI 2.1 content package (.zip)"),
    "anki": ("quizgym.export.anki", "Anki deck package (.apkg), needs quizgym[anki]"),
    "blackboard": ("quizgym.export.blackboard", "Blackboard 'Upload Questions' file (.txt)"),
}
"""Format name → (module, one-line description). Each module defines ``EXPORTER``."""


class Exporter(ABC):
    """Turns a bank into one file of one format."""

    name: ClassVar[str]
    suffix: ClassVar[str]
    splits_parts: ClassVar[bool] = False
    """Whether a multi-part numeric question becomes one item per part."""
    math: ClassVar[str] = "tex"
    """How formulas are written: ``tex`` (``\\(…\\)`` for the LMS's filter) or ``mathml``."""
    kinds: ClassVar[frozenset[str]] = frozenset({"truth", "choice", "text", "number"})
    """The interactions (:mod:`quizgym.types.interactions`) the format writes; a bank with
    another one is refused, question by question, rather than written wrong."""
    refusals: ClassVar[dict[str, str]] = {}
    """Why the format cannot write an interaction it does not have (said with the refusal)."""

    def __init__(self, bank: Bank | CompiledBank, *, variants: int = 0, seed: int = 0) -> None:
        """Prepare an export.

        Args:
            bank: the bank (compiled here when it is not yet).
            variants: export this many variants of each parametric question as a pool to draw
                one from (0: the default variant of every question).
            seed: the seed of the first variant; variant k uses ``seed + k``.
        """
        from quizgym.solver import compiled
        from quizgym.types import interaction_of

        self.compiled = compiled(bank)
        self.bank = self.compiled.bank
        refused = [
            f"{q.id}: a {q.type} question ({kind}) cannot be exported to {self.name}"
            + (f": {self.refusals[kind]}" if kind in self.refusals else "")
            for q in self.bank.questions
            if (kind := interaction_of(q).kind) not in self.kinds
        ]
        if refused:
            raise ExportError("; ".join(refused))
        self.variants = variants
        self.seed = seed
        self.warnings: list[str] = []
        """Filled by :meth:`to_bytes`: one ``warning: …`` line per item the format cannot
        score as quizgym does (for a format :mod:`quizgym.export.scoring` does not check)."""

    @abstractmethod
    def to_bytes(self) -> bytes:
        """The whole file.

        Raises:
            ExportError: the bank cannot be expressed in this format.
        """

    def write(self, stream: BinaryIO) -> None:
        """Write the file to a binary stream."""
        stream.write(self.to_bytes())

    def save(self, path: str | Path) -> Path:
        """Write the file to ``path`` (created or replaced) and return the path."""
        from pathlib import Path

        from quizgym.places import write_whole

        target = Path(path)
        data = self.to_bytes()
        try:
            write_whole(target, data)
        except OSError as exc:
            raise ExportError(f"{target}: cannot write: {exc.strerror}") from exc
        return target


def exporter(name: str, bank: Bank | CompiledBank, *, variants: int = 0, seed: int = 0) -> Exporter:
    """The exporter of format ``name`` for ``bank``.

    Raises:
        ExportError: unknown format, or its optional dependency is missing.
    """
    if name not in FORMATS:
        raise ExportError(f"unknown format {name!r}; choose one of {', '.join(FORMATS)}")
    module = importlib.import_module(FORMATS[name][0])
    cls: type[Exporter] = module.EXPORTER
    return cls(bank, variants=variants, seed=seed)


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export_bank` wrote."""

    path: Path
    format: str
    questions: int
    items: int
    pools: int
    check: CheckReport | None = None
    """With ``check=True``: how the LMS will score the file's numeric items."""
    issued: Path | None = None
    """The issue manifest beside the file (None when the file went to standard output)."""
    warnings: tuple[str, ...] = ()
    """For a format the check emulates (:data:`TARGETS`), one
    ``warning: …`` line per numeric blank the LMS will score unlike quizgym (a correct answer
    refused or a wrong one accepted), found whether or not ``check`` was asked."""

    def summary(self) -> str:
        """One line for the terminal."""
        pools = f", {self.pools} variant pools" if self.pools else ""
        issued = f"; items recorded in {self.issued}" if self.issued else ""
        return (
            f"wrote {self.path} ({self.format}): {self.questions} questions "
            f"as {self.items} items{pools}{issued}"
        )


def export_bank(
    bank: str | Path,
    *,
    to: str,
    output: str | Path | None = None,
    variants: int = 0,
    seed: int = 0,
    check: bool = False,
) -> ExportResult:
    """Load a bank (a path or a bundled name) and export it to one file.

    Args:
        bank: path of a YAML bank or name of a bundled bank.
        to: the format, a key of :data:`FORMATS`.
        output: the file to write; default ``<bank>-<format><suffix>`` in the current folder.
        variants: variants per parametric question (0: default variants only).
        seed: the first variant's seed.
        check: also score realistic typed answers to every numeric item as the target LMS
            will, from the bytes written (:func:`quizgym.export.scoring.check_export`).

    Returns:
        Where it wrote and how much, each numeric blank the LMS will score unlike quizgym
        (``warnings``, for every format the check emulates), and, with ``check``, the check's
        report. Beside the file, ``FILE.issued.json`` records every item with its question,
        part, version and text (:mod:`quizgym.issued`), for ``quizgym grade --issued``.

    Raises:
        QuizgymError: the bank cannot be loaded or exported, or ``check`` was asked of a
            format the check does not emulate.
    """
    from pathlib import Path

    from quizgym.export.plan import issued_items, plan, split_parts
    from quizgym.issued import issue, write_issued
    from quizgym.solver.cache import open_bank, save

    if check and to not in TARGETS:
        raise ExportError(f"--check scores numeric items as {', '.join(TARGETS)} do; not {to}")
    book = open_bank(bank)  # from the cache when this bank was compiled before
    loaded = book.bank
    job = exporter(to, book, variants=variants, seed=seed)
    data = job.to_bytes()
    pools = plan(job.compiled, variants=variants, seed=seed)
    items = sum(len(split_parts(i)) if job.splits_parts else 1 for p in pools for i in p.items)
    report = None
    warnings: tuple[str, ...] = ()
    if to in TARGETS:  # always: an item that scores unlike quizgym is never written silently

        def scored() -> CheckReport:
            from quizgym.export.scoring import check_export  # not needed when kept

            return check_export(
                job.compiled, fmt=to, data=data, variants=variants, seed=seed, schema=check
            )

        if check:
            report = scored()
            warnings = tuple(report.warnings())
        else:  # the same bytes score the same: kept with the compiled bank (and its cache)
            import hashlib  # here: the CLI imports this module for --help

            digest = hashlib.sha256(data).hexdigest()
            warnings = job.compiled.memo(
                "export_warnings", (to, variants, seed, digest), lambda: tuple(scored().warnings())
            )
    # The exporter's own too, once each (the scoring check emulates numeric blanks only).
    warnings = tuple(dict.fromkeys([*warnings, *job.warnings]))
    # written once the bytes were read back (scored), whole or not at all: a failure leaves
    # no broken file behind
    if output == "-":  # standard output, for piping
        target = Path("-")
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        from quizgym.places import write_whole

        target = Path(output) if output is not None else Path(f"{loaded.bank}-{to}{job.suffix}")
        try:
            write_whole(target, data)
        except OSError as exc:
            raise ExportError(f"{target}: cannot write: {exc.strerror}") from exc
    issued = None
    if output != "-":
        manifest = issue(
            job.compiled,
            loaded.questions,
            issued_by=f"export {to}",
            items=issued_items(pools, split=job.splits_parts, math=job.math),
            pools=any(p.variants for p in pools),
        )
        issued = write_issued(target.with_name(target.name + ".issued.json"), manifest)
    save(book)
    return ExportResult(
        target,
        to,
        len(loaded.questions),
        items,
        sum(1 for p in pools if p.variants),
        report,
        issued,
        warnings,
    )


__all__ = ["FORMATS", "TARGETS", "ExportResult", "Exporter", "export_bank", "exporter"]
