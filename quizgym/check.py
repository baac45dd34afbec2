"""Banks in; every finding at once (schema, keys against stated values, variant stress test, mistake
collisions), each at its ``path:line:col``, out."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from quizgym.errors import AnswerParseError, BankError, Finding, QuizgymError
from quizgym.resources import bundled_banks, read_bank_file, resolve_bank, shortest

# A check whose report is in the cache reads the bank's bytes and prints: the bank format, the
# expression language and the solver are imported by the functions that need them.
if TYPE_CHECKING:
    from quizgym.issued import Issued
    from quizgym.model import AnyQuestion, Bank, Numeric
    from quizgym.solver import Budget, CompiledBank, Slot, Variant

SURVIVAL = 0.1
"""Least share of a question's draws that must meet its ``where`` conditions: a student's draw
is tried up to 200 times, so at 10 % one in a billion students gets the default variant."""

STRESS_SECONDS = 5.0
"""Wall-clock time the variant stress test may take per bank (beyond each default variant)."""
CHECK_KEY_SECONDS, CHECK_BANK_SECONDS = 2.0, 10.0
"""How long ``check`` lets exact solving take: each key, and all of one bank's."""
REPORT_FORMAT = "check-report/2"
"""The layout of a check report kept in the cache (see :func:`check_bank`); 2: with the notes
and the files beside the bank that the findings depend on (packs, images)."""


@dataclass
class BankReport:
    """What checking one bank found."""

    path: str
    bank: Bank | None
    """The bank as loaded (None when it could not be, or when the report was read back from the
    cache: ``slug`` and ``questions`` say what it was)."""
    findings: list[Finding] = field(default_factory=list)
    variants_checked: int = 0
    slug: str | None = None
    """The bank's slug (None when it could not be loaded)."""
    questions: int = 0
    notes: list[str] = field(default_factory=list)
    """What ``check`` reports beyond findings: how many draws meet each question's ``where``."""

    @property
    def errors(self) -> list[Finding]:
        """Findings that make the bank unusable."""
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        """Findings worth a look that do not stop the bank from working."""
        return [f for f in self.findings if f.severity == "warning"]

    def summary(self) -> str:
        """One line: the bank, its size and the outcome."""
        if self.slug is None:
            return f"{self.path}: {len(self.errors)} error(s)"
        count = self.questions
        outcome = (
            "ok"
            if not self.findings
            else (f"{len(self.errors)} error(s), {len(self.warnings)} warning(s)")
        )
        extra = f", {self.variants_checked} variants checked" if self.variants_checked else ""
        return f"{self.path}: {self.slug}, {count} questions{extra}: {outcome}"


def expand_paths(names: Iterable[str]) -> list[Path]:
    """Turn command-line names (files, folders, bundled names) into bank files.

    No names means every bundled bank.
    """
    names = list(names)
    if not names:
        return [shortest(path) for path in bundled_banks().values()]
    paths: list[Path] = []
    for name in names:
        path = Path(name)
        if path.is_dir():
            found = sorted(path.glob("*.yaml")) + sorted(path.glob("*.yml"))
            if not found:
                raise QuizgymError(f"{name}: no banks (*.yaml, *.yml) in this folder")
            paths.extend(found)
        else:
            paths.append(resolve_bank(name))
    return paths


def check_bank(
    path: Path,
    *,
    variant_seeds: int = 200,
    stress_seconds: float = STRESS_SECONDS,
    issued: Issued | None = None,
) -> BankReport:
    """Validate one bank file and lint its content.

    Args:
        path: the bank file.
        variant_seeds: how many seeds the variant stress test draws per question.
        stress_seconds: how long the variant stress test may take (see :func:`lint_bank`).
        issued: a manifest of what was handed out from an earlier version of this bank: list
            what the edits change for the students who hold it (:func:`lint_issued`).

    Returns:
        The report; never raises for problems inside the bank.
    """
    options = (variant_seeds, stress_seconds)
    path, raw = read_bank_file(path)
    kept = _kept_report(path, raw, options) if issued is None else None
    if kept is not None:
        return kept
    from quizgym.loader import parse_bank
    from quizgym.solver.cache import bank_key, save

    try:
        bank = parse_bank(raw, path=str(path))
    except BankError as exc:
        return BankReport(path=str(path), bank=None, findings=exc.findings)
    report = BankReport(path=str(path), bank=bank, slug=bank.bank, questions=len(bank.questions))
    report.findings, report.variants_checked, book, timed = _lint(
        bank,
        variant_seeds=variant_seeds,
        stress_seconds=stress_seconds,
        budget=None,
        notes=report.notes,
    )
    # What was solved serves the next command on this bank (export, practice, render, grade).
    book.cache_key = bank_key(raw)
    save(book)
    if issued is not None:
        report.findings += lint_issued(bank, issued)
    elif not timed:  # the same bytes and code give the same report, unless a clock cut it short
        _keep_report(raw, options, report, _depends(bank))
    return report


def _report_key(raw: bytes, options: tuple[int, float], path: Path) -> str:
    """A report's key: the bank's bytes, the options, and where the bank is (the findings about
    its images name files beside it)."""
    from quizgym.solver.cache import bank_key

    where = str(path.resolve())
    return bank_key(raw + f"\0{REPORT_FORMAT}:{options}:{where}".encode())


def _depends(bank: Bank) -> dict[str, object] | None:
    """The files beside a bank that its report depends on: each pack's digest, and the size of
    each image (-1 for none); None when a pack cannot be read (the report is then not kept)."""
    from quizgym.richtext import bank_fields, image_folder, parse
    from quizgym.solver.cache import pack_digests

    packs = pack_digests(list(bank.packs), bank.path)
    if packs is None:
        return None
    folder = image_folder(bank.path)  # what image findings are relative to
    sources = sorted({image.src for _, text in bank_fields(bank) for image in parse(text).images()})
    return {"packs": packs, "images": [[src, _image_size(folder, src)] for src in sources]}


def _image_size(folder: Path, src: str) -> int:
    """An image file's size, or -1 when there is no such file (what image findings depend on)."""
    try:
        target = (folder / src).resolve()
        return target.stat().st_size if target.is_file() else -1
    except (OSError, ValueError):
        return -1


def _still(depends: dict[str, object], path: Path, packs: list[str]) -> bool:
    """Whether the files a kept report depended on are as they were."""
    from quizgym.solver.cache import pack_digests

    if pack_digests(packs, str(path)) != depends["packs"]:
        return False
    images = depends["images"]
    if not isinstance(images, list):
        return False
    folder = path.resolve().parent  # richtext.image_folder, without importing the text machinery
    return all(_image_size(folder, str(src)) == int(size) for src, size in images)


def _kept_report(path: Path, raw: bytes, options: tuple[int, float]) -> BankReport | None:
    """The report an earlier check of these same bytes left in the cache, or None."""
    from quizgym.solver.cache import read

    stored = read(_report_key(raw, options, path))
    try:
        record = stored.parts if stored is not None else None
        if record is None or record.get("format") != REPORT_FORMAT:
            return None
        if not _still(record["depends"], path, [str(name) for name in record["packs"]]):
            return None  # a pack or an image beside the bank changed: check again
        findings = [
            Finding(str(path), int(line), int(col), str(message), str(severity))
            for line, col, message, severity in record["findings"]
        ]
        return BankReport(
            path=str(path),
            bank=None,
            findings=findings,
            variants_checked=int(record["variants_checked"]),
            slug=str(record["slug"]),
            questions=int(record["questions"]),
            notes=[str(note) for note in record["notes"]],
        )
    except (KeyError, TypeError, ValueError):
        return None


def _keep_report(
    raw: bytes,
    options: tuple[int, float],
    report: BankReport,
    depends: dict[str, object] | None,
) -> None:
    """Keep a report for the next check of the same bytes (when every finding is in this file
    and the files beside it it depends on could be read)."""
    from quizgym.solver.cache import write

    if depends is None or any(f.path != report.path for f in report.findings):
        return
    assert report.bank is not None
    record = {
        "format": REPORT_FORMAT,
        "packs": list(report.bank.packs),
        "depends": depends,
        "slug": report.slug,
        "questions": report.questions,
        "variants_checked": report.variants_checked,
        "findings": [[f.line, f.col, f.message, f.severity] for f in report.findings],
        "notes": list(report.notes),
    }
    write(_report_key(raw, options, Path(report.path)), record)


def check_banks(
    names: Iterable[str], *, variant_seeds: int = 200, issued: Path | None = None
) -> list[BankReport]:
    """Check every bank named (see :func:`expand_paths`); with ``issued``, exactly one.

    It validates every bank it is given and returns all findings at once; it never
    stops at the first problem. Findings carry ``path:line:col`` so editors can jump to them.

    Raises:
        QuizgymError: ``issued`` with other than one bank, or an unreadable manifest.
    """
    paths = expand_paths(names)
    manifest = None
    if issued is not None:
        from quizgym.issued import read_issued

        if len(paths) != 1:
            raise QuizgymError(f"--issued {issued}: name the one bank it was issued from")
        manifest = read_issued(issued)
    return [check_bank(p, variant_seeds=variant_seeds, issued=manifest) for p in paths]


# --- lint -------------------------------------------------------------------------------------


Locate = Callable[..., None]
"""``at(loc, message, severity="error")``: record a finding at a field of the bank."""


def lint_bank(
    bank: Bank,
    *,
    variant_seeds: int = 200,
    stress_seconds: float = STRESS_SECONDS,
    budget: Budget | None = None,
    notes: list[str] | None = None,
) -> tuple[list[Finding], int]:
    """Hold every key to the author's numbers and stress-test the variants.

    Checks: every key and mistake parses and evaluates; ``value`` agrees with the default
    variant's key under the question's tolerance; no mistake lies within tolerance of the key or of
    another mistake, for any variant drawn; parametric questions yield distinct, finite variants;
    the correct choices are not all in the same position; and the bank's text
    (:func:`quizgym.richtext.text_findings`): every image is a file beside the bank with alt
    text, every formula prints, no text is past the layout limits.

    Every default variant is checked. The further draws of the stress test stop once
    ``stress_seconds`` have passed, with a warning naming what was not stress-tested; exact
    solving is bounded by ``budget``. A question with ``where`` conditions reports in ``notes``
    how many of its draws meet them, and fails when its default variant does not, or when
    fewer than :data:`SURVIVAL` of them do. Placeholders with a format (``{p:.1f}``) are held
    to the numbers they stand for: a warning names a format that shows a student another number
    than the one the key uses. Units that look like a unit but are none get a warning.

    Returns:
        The findings and the number of variants evaluated.
    """
    findings, checked, _, _ = _lint(
        bank,
        variant_seeds=variant_seeds,
        stress_seconds=stress_seconds,
        budget=budget,
        notes=notes,
    )
    return findings, checked


def _lint(
    bank: Bank,
    *,
    variant_seeds: int,
    stress_seconds: float,
    budget: Budget | None,
    notes: list[str] | None = None,
) -> tuple[list[Finding], int, CompiledBank, bool]:
    """:func:`lint_bank`, with the compiled bank it made and whether a time limit shaped the
    findings (a budget that refused a key, or the stress test cut short)."""
    from quizgym.expr import work_seconds
    from quizgym.model import LETTERS
    from quizgym.richtext import text_findings
    from quizgym.solver import Budget, compile_bank
    from quizgym.types import blanks_of, choices_of, numeric_of

    budget = budget or Budget(key_seconds=CHECK_KEY_SECONDS, bank_seconds=CHECK_BANK_SECONDS)
    book = compile_bank(bank, partial=True, budget=budget)
    timed = False
    findings: list[Finding] = list(book.findings)
    checked = 0
    stress = _Stress(deadline=work_seconds() + stress_seconds, seconds=stress_seconds)

    def at(loc: tuple[str | int, ...], message: str, severity: str = "error") -> None:
        path, line, col = bank.locate(loc)
        findings.append(Finding(path, line, col, message, severity))

    for index, question in enumerate(bank.questions):
        numeric = numeric_of(question)
        if numeric is not None and book.slots_of(question):
            question = numeric.question
            try:
                if question.where and not _lint_where(book, question, index, at, notes):
                    continue
                checked += _lint_numeric(book, question, index, at, variant_seeds, stress)
            except BankError as exc:  # a key or mistake refused by a budget, already located
                findings.extend(exc.findings)
                timed = True
            except AnswerParseError as exc:
                at(("questions", index, "answer"), f"{question.id}: {exc.message}")
        elif blanks_of(question) is not None and book.slots_of(question):
            _lint_blanks(book, question, at)
    positions = [
        options.right[0]
        for q in bank.questions
        if (options := choices_of(q)) is not None
        and options.lettered
        and not options.multiple
        and not options.shuffle
    ]
    if stress.skipped:
        first = stress.skipped[0]
        at(("questions", first[0]), stress.message(), "warning")
    findings += text_findings(bank)
    if len(positions) >= 4 and len(set(positions)) == 1:
        letter = LETTERS[positions[0]]
        at(
            ("questions",),
            f"every single-answer choice question has its key at {letter}; vary it",
            "warning",
        )
    return findings, checked, book, timed or book.out_of_budget or bool(stress.skipped)


@dataclass
class _Stress:
    """The stress test's time budget, and what it skipped when that ran out."""

    deadline: float
    seconds: float
    skipped: list[tuple[int, str, int, int]] = field(default_factory=list)
    """Per question cut short: its index, id, and seeds drawn of those asked for."""

    def over(self) -> bool:
        from quizgym.expr import work_seconds  # CPU time: a busy machine skips nothing more

        return work_seconds() > self.deadline

    def message(self) -> str:
        untested = [qid for _, qid, done, _ in self.skipped if done <= 1]
        partly = [(qid, done, asked) for _, qid, done, asked in self.skipped if done > 1]
        parts = []
        if partly:
            parts.append(
                "; ".join(f"{qid} with {done} of {asked} seeds" for qid, done, asked in partly)
            )
        if untested:
            shown = ", ".join(untested[:5]) + (
                f" and {len(untested) - 5} more" if len(untested) > 5 else ""
            )
            parts.append(f"{len(untested)} question(s) with their default variant only ({shown})")
        return (
            f"the variant stress test stopped at its time budget ({self.seconds:g} s): checked "
            + " and ".join(parts)
            + "; check those with fewer --seeds, or split the bank"
        )


def _lint_where(
    book: CompiledBank, question: Numeric, index: int, at: Locate, notes: list[str] | None
) -> bool:
    """Hold a question's ``where`` to its draws: the default must meet it, and enough of the
    first attempts of 200 students' draws. Returns whether the question can be drawn."""
    draw = book.draw(question)
    default = book.variant(question)
    broken = draw.failed(dict(default.params))
    loc = ("questions", index, "where")
    if broken:
        at(loc, f"{question.id}: the default variant ({default.label}) breaks {broken}")
        return False
    seeds = 200
    survived = draw.survivors(seeds)
    if notes is not None:
        notes.append(f"{question.id}: where: {survived} of {seeds} draws meet the conditions")
    if survived < SURVIVAL * seeds:
        what = "no draw" if not survived else f"only {survived} of {seeds} draws"
        at(
            loc,
            f"{question.id}: {what} meet{'s' if not survived else ''} the where conditions; "
            f"at least {SURVIVAL:.0%} must, or students would get the default variant: loosen "
            "the conditions or narrow the parameters",
        )
        return False
    return True


def _lint_formats(
    question: Numeric, variant: Variant, index: int, at: Locate, reported: set[str]
) -> None:
    """Warn about a placeholder format that shows a variant's number as another number."""
    from quizgym.model import placeholder_specs
    from quizgym.solver import show_number
    from quizgym.solver.variants import WHOLE_FORMATS
    from quizgym.tolerance import is_exact

    values = variant.values
    texts = [question.prompt, *(p.prompt for p in question.parts)]
    for text in texts:
        for name, spec in placeholder_specs(text):
            if spec is None or name not in values or f"{name}:{spec}" in reported:
                continue
            shown = show_number(values[name], spec)
            if spec[-1:] in WHOLE_FORMATS and shown == show_number(values[name]):
                if f"{name}:{spec}" not in reported and not float(values[name]).is_integer():
                    reported.add(f"{name}:{spec}")
                    at(
                        ("questions", index, "prompt"),
                        f"{question.id}: {{{name}:{spec}}} is a format for whole numbers, but "
                        f"{name} can be {shown}: it is shown as {shown}; drop the format or "
                        "choose whole values",
                        "warning",
                    )
                continue
            number = _shown_number(shown)
            value = float(values[name])
            if number is None or not is_exact(value=number, key=value):
                reported.add(f"{name}:{spec}")
                at(
                    ("questions", index, "prompt"),
                    f"{question.id}: {{{name}:{spec}}} shows {show_number(values[name])} as "
                    f"{shown}: students would compute with another number than the key; give "
                    "the format more digits, or choose values it shows exactly",
                    "warning",
                )


def _lint_unused(book: CompiledBank, question: Numeric, index: int, at: Locate) -> None:
    """Warn about a parameter the prompt shows but no key uses: students compute with a number
    the key ignores (``answer: 20 * 0.5`` where ``n * p`` was meant)."""
    from quizgym.model import placeholder_specs

    used: set[str] = set()
    for slot in book.slots_of(question):
        if slot.key is not None:
            used |= slot.key.names
    derived = dict(book.draw(question).derived)
    todo = [name for name in used if name in derived]
    while todo:
        name = todo.pop()
        for other in derived[name].names - used:
            used.add(other)
            if other in derived:
                todo.append(other)
    texts = [question.prompt, *(p.prompt for p in question.parts)]
    shown = {name for text in texts for name, _ in placeholder_specs(text)}
    for name in question.params:
        if name in shown and name not in used:
            at(
                ("questions", index, "params", name),
                f"{question.id}: the prompt shows {{{name}}}, but no key uses {name}: students "
                "would compute with a number the key ignores",
                "warning",
            )


def _shown_number(text: str) -> float | None:
    """The number a formatted placeholder shows (``25%`` is 0.25, ``12,345`` is 12345)."""
    plain = text.replace(",", "").replace("_", "").strip()
    scale = 1.0
    if plain.endswith("%"):
        plain, scale = plain[:-1], 0.01
    try:
        return float(plain) * scale
    except ValueError:
        return None


def _lint_blanks(book: CompiledBank, question: AnyQuestion, at: Locate) -> None:
    """A cloze's number blanks: each key must evaluate, each unit be one quizgym reads."""
    from quizgym.units import unit_problem

    default = book.variant(question)
    for slot in book.numbered(question):
        if slot.units and unit_problem(slot.units):
            at((*slot.loc, "units"), f"{slot.id}: {unit_problem(slot.units)}", "warning")
        try:
            book.key(slot, default)
        except AnswerParseError as exc:
            at((*slot.loc, "answer"), f"{slot.id}: the key cannot be evaluated: {exc.message}")
            return


def _slot_loc(slot: Slot, index: int) -> tuple[str | int, ...]:
    base: tuple[str | int, ...] = ("questions", index)
    return base if slot.part is None else (*base, "parts", slot.index)


def _lint_numeric(
    book: CompiledBank, question: Numeric, index: int, at: Locate, seeds: int, stress: _Stress
) -> int:
    from quizgym.expr import parse
    from quizgym.solver import param_values
    from quizgym.tolerance import compare
    from quizgym.units import unit_problem

    qid = question.id
    default = book.variant(question)
    slots = book.slots_of(question)
    formats: set[str] = set()
    _lint_formats(question, default, index, at, formats)
    _lint_unused(book, question, index, at)
    for slot in slots:
        spec = slot.part_model if slot.part_model is not None else question
        base = _slot_loc(slot, index)
        if slot.units and unit_problem(slot.units):
            at((*base, "units"), f"{slot.id}: {unit_problem(slot.units)}", "warning")
        try:
            key = book.key(slot, default)
        except AnswerParseError as exc:
            at((*base, "answer"), f"{slot.id}: the key cannot be evaluated: {exc.message}")
            return 0
        if spec.value is not None:
            assert slot.tolerance is not None
            typed = parse(_decimal_text(spec.value))
            match = compare(
                value=float(spec.value),
                key=key.number,
                tolerance=slot.tolerance,
                kind=typed.kind,
                decimals=typed.decimals,
                sigfigs=typed.sigfigs,
                zeros=typed.zeros,
            )
            if not match.ok:
                at(
                    (*base, "value"),
                    f"{slot.id}: value {_decimal_text(spec.value)} disagrees with the key {key} "
                    "under the question's tolerance",
                )
    # Stress test: many students' variants must all evaluate, and no mistake may pass for the key.
    seen_params = set()
    distinct_keys = set()
    reported: set[tuple[int, str]] = set()
    draws = seeds if question.params else 1
    for seed in range(draws):
        if seed and stress.over():
            stress.skipped.append((index, qid, seed, draws))
            draws = seed
            break
        variant = (
            default if seed == 0 else book.variant(question, student=f"stress-{seed}", seed=seed)
        )
        seen_params.add(variant.signature)
        _lint_formats(question, variant, index, at, formats)
        try:
            keys = book.keys(question, variant)
        except AnswerParseError as exc:
            at(
                ("questions", index, "params"),
                f"{qid}: variant {dict(variant.params)} fails: {exc.message}",
            )
            return seed
        distinct_keys.add(tuple(round(k.number, 9) for k in keys))
        for slot in slots:
            assert slot.tolerance is not None
            base = _slot_loc(slot, index)
            values = [keys[slot.index].number]
            for m_index, mistake in enumerate(book.mistakes(slot, variant)):
                if mistake.derived:
                    continue
                for other in values:
                    clash = compare(
                        value=mistake.value,
                        key=other,
                        tolerance=slot.tolerance,
                        kind="mixed",
                        decimals=0,
                        sigfigs=0,
                    ).ok
                    if clash and (slot.index, str(m_index)) not in reported:
                        reported.add((slot.index, str(m_index)))
                        what = "the key" if other == values[0] else "an earlier mistake"
                        where = "" if variant is default else f" for {_params_text(variant)}"
                        compiled_mistake = slot.mistakes[m_index]
                        loc = compiled_mistake.loc or (*base, "mistakes", m_index, "answer")
                        if compiled_mistake.credit >= 1 and other == values[0]:
                            at(
                                loc,
                                f"{qid}: another correct answer lies within tolerance of the "
                                f"key{where}; it adds nothing",
                                "warning",
                            )
                            continue
                        number = loc[-2] if loc[-1] == "answer" else loc[-1]
                        assert isinstance(number, int)
                        label = (
                            f"answers[{number}]" if "answers" in loc else f"mistake {number + 1}"
                        )
                        at(
                            loc,
                            f"{qid}: {label} lies within tolerance of {what}{where}; "
                            "a student giving it could not be told apart",
                        )
                values.append(mistake.value)
    if question.params and len(seen_params) > 1 and len(distinct_keys) < min(len(seen_params), 2):
        at(
            ("questions", index, "params"),
            f"{qid}: different parameters give the same key",
            "warning",
        )
    cut_short = bool(stress.skipped) and stress.skipped[-1][0] == index
    if (
        question.params
        and not cut_short
        and any(len(param_values(p)) > 1 for p in question.params.values())
        and len(seen_params) < 2
    ):
        at(("questions", index, "params"), f"{qid}: {draws} draws gave only one variant", "warning")
    return draws


def _params_text(variant: Variant) -> str:
    from quizgym.solver import show_number

    return ", ".join(f"{k}={show_number(v)}" for k, v in variant.signature)


def _decimal_text(value: float) -> str:
    """The author's number as they most likely typed it (YAML gives us a float)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


# --- edits after issuing ----------------------------------------------------------------------


def lint_issued(bank: Bank, issued: Issued) -> list[Finding]:
    """What an edit changes for students who already hold an issued version (a lockfile check).

    Every issued version is held against the bank as it is now (:func:`quizgym.issued.reconcile`):
    a version that cannot be graded as issued is an error; a key or a slot's scoring that moved
    for some issued version is a warning naming the versions and how many students hold them; a
    question whose choices were reordered or whose wording changed is listed; a new render that
    would draw other numbers is a warning (the manifest keeps the issued ones). A last line says
    whether it is safe to grade with ``--accept-changes``.
    """
    from quizgym.issued import reconcile
    from quizgym.solver import compile_bank

    findings: list[Finding] = []

    def at(qid: str | None, message: str, severity: str = "warning") -> None:
        index = next((k for k, q in enumerate(bank.questions) if q.id == qid), None)
        loc: tuple[str | int, ...] = ("questions",) if index is None else ("questions", index)
        path, line, col = bank.locate(loc if qid is not None else ())
        shown = message if qid is None else f"{qid}: {message}"
        findings.append(Finding(path, line, col, shown, severity))

    book = compile_bank(bank, partial=True)
    reconciled = reconcile(issued, book)
    for edit in reconciled.edits:
        if edit.kind == "refused":
            at(edit.question if edit.question != issued.bank else None, edit.message, "error")
        else:
            at(edit.question, edit.message)
    if issued.bank != bank.bank:
        return findings
    for qid in reconciled.changed:
        try:
            question = bank.question(qid)
        except KeyError:
            continue
        redrawn = _redrawn(book, reconciled.issued, question)
        if redrawn:
            at(qid, f"a new render would give {redrawn} other numbers or orders (the manifest "
               "keeps the ones issued)")  # fmt: skip
    for note in reconciled.notes:
        at(None, note)
    if reconciled.edits:
        severity = "error" if reconciled.refused else "warning"
        at(None, reconciled.summary(detail=False), severity)
    return findings


def _redrawn(book: CompiledBank, issued: Issued, question: AnyQuestion) -> str:
    """How many issued students a new draw would give another version ('' for none)."""
    from quizgym.issued import IssuedVersion

    if issued.mode != "per-student" or not book.varies(question):
        return ""
    count = 0
    for student in issued.students:
        index = student.versions.get(question.id)
        if index is None:
            continue
        record = issued.versions[question.id][index]
        now = book.variant(question, student=student.id, seed=student.seed)
        if IssuedVersion.of_draw(now) != (record.params, record.order):
            count += 1
    return f"{count} student{'s' if count != 1 else ''}" if count else ""
