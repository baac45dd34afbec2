"""A bank, a selection, a student and a date in; printable worksheets and answer keys (HTML,
Markdown and PDF files) out."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2

from quizgym.errors import BankError, QuizgymError
from quizgym.issued import issue, read_issued, succeed, write_issued
from quizgym.model import AnyQuestion, Bank
from quizgym.names import file_stem
from quizgym.places import write_whole
from quizgym.render.env import bundled_env, make_env
from quizgym.render.markup import FILTERS, Target
from quizgym.render.roster import Student, read_roster
from quizgym.render.views import key_view, points_shown, question_view
from quizgym.richtext import (
    ImageFile,
    find_image,
    image_findings,
    image_folder,
    parse,
    question_fields,
)
from quizgym.selection import select_questions
from quizgym.solver import CompiledBank, Variant, compiled

FORMATS = ("html", "md", "pdf")
PAPERS = {"a4": "A4", "letter": "Letter"}


def _variant(
    bank: CompiledBank, question: AnyQuestion, student: Student | None, seed: int | None
) -> Variant:
    if student is not None and student.seed is not None:
        seed = student.seed
    return bank.variant(question, student=student.id if student else None, seed=seed)


def _common(
    bank: CompiledBank,
    *,
    date: str,
    paper: str,
    seed: int | None,
    title: str | None,
    fmt: str,
    for_pdf: bool,
) -> dict[str, Any]:
    if paper not in PAPERS:
        raise QuizgymError(f"unknown paper size {paper!r} (sizes: {', '.join(PAPERS)})")
    kind = "pdf" if for_pdf and fmt == "html" else fmt
    return {
        "bank": bank.bank,
        "title": title or bank.bank.title,
        "date": date,
        "paper": PAPERS[paper],
        "seed": seed,
        # The packs' worksheet notes, then the bank's own (natural logarithms, for one).
        "instructions": bank.instructions,
        "render_target": Target(kind, image_folder(bank.bank.path)),
    }


def _template(env: jinja2.Environment | None, name: str) -> jinja2.Template:
    return (env or bundled_env()).get_template(name)


def _tidy(text: str, fmt: str) -> str:
    """Markdown: no trailing spaces, at most one blank line in a row, one newline at the end."""
    if fmt != "md":
        return text
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def _ext(fmt: str) -> str:
    if fmt not in ("html", "md"):
        raise QuizgymError(f"unknown format {fmt!r} for a template (formats: html, md)")
    return fmt


def render_worksheet(
    bank: Bank | CompiledBank,
    questions: Sequence[AnyQuestion],
    *,
    fmt: str = "html",
    student: Student | None = None,
    seed: int | None = None,
    date: str = "",
    paper: str = "a4",
    title: str | None = None,
    env: jinja2.Environment | None = None,
    for_pdf: bool = False,
) -> str:
    """One student's worksheet (or the class's, without a student) as HTML or Markdown.

    Worksheets and keys are pure functions of the bank, the selection, the student, the seed and the
    date.

    Args:
        bank: the bank.
        questions: the selection, in order (see :func:`select_questions`).
        fmt: ``html`` or ``md``.
        student: whose variant numbers and choice order to print; None for the default variant
            (or the class seed's variant when ``seed`` is given).
        seed: the class seed; a student's own seed wins.
        date: printed in the header; empty leaves a line to write on.
        paper: ``a4`` or ``letter``.
        title: the heading; the bank's title when None.
        env: a Jinja environment from :func:`make_env` (teacher's templates first).
        for_pdf: HTML for WeasyPrint to print: formulas drawn as SVG (with their text laid
            over them) instead of MathML, which WeasyPrint does not lay out.

    Returns:
        The document. HTML carries its images inline; Markdown refers to them by their path
        in the bank (``render_files`` copies them beside it).

    Raises:
        QuizgymError: an image cannot be found or shipped.
    """
    book = compiled(bank)
    views = [
        question_view(book, q, n, _variant(book, q, student, seed))
        for n, q in enumerate(questions, 1)
    ]
    text = _template(env, f"worksheet.{_ext(fmt)}.j2").render(
        **_common(book, date=date, paper=paper, seed=seed, title=title, fmt=fmt, for_pdf=for_pdf),
        student=student,
        questions=views,
        total=points_shown(sum(v.points for v in views)),
    )
    return _tidy(text, fmt)


def render_key(
    bank: Bank | CompiledBank,
    questions: Sequence[AnyQuestion],
    *,
    fmt: str = "html",
    students: Sequence[Student | None] = (None,),
    seed: int | None = None,
    date: str = "",
    paper: str = "a4",
    title: str | None = None,
    env: jinja2.Environment | None = None,
    for_pdf: bool = False,
) -> str:
    """An answer key for one student, or for a class with every student's numbers.

    Each question lists its answer once per variant, with the students who got that variant:
    exact forms (``ln 10``), decimals, the accepted tolerance and interval, known wrong answers,
    the rubric and the worked explanation.

    Args:
        bank: the bank.
        questions: the selection, in order.
        fmt: ``html`` or ``md``.
        students: the students the key covers; ``(None,)`` for a worksheet without a roster.
        seed: the class seed; a student's own seed wins.
        date: printed in the header.
        paper: ``a4`` or ``letter``.
        title: the heading; the bank's title when None.
        env: a Jinja environment from :func:`make_env`.
        for_pdf: HTML for WeasyPrint (see :func:`render_worksheet`).

    Returns:
        The document.

    Raises:
        QuizgymError: no student, or an image cannot be found or shipped.
    """
    if not students:
        raise QuizgymError("an answer key needs at least one student")
    book = compiled(bank)
    keys = [
        key_view(book, q, n, [(s.id if s else "", _variant(book, q, s, seed)) for s in students])
        for n, q in enumerate(questions, 1)
    ]
    text = _template(env, f"key.{_ext(fmt)}.j2").render(
        **_common(book, date=date, paper=paper, seed=seed, title=title, fmt=fmt, for_pdf=for_pdf),
        students=[s for s in students if s is not None],
        keys=keys,
        total=points_shown(sum(k.points for k in keys)),
    )
    return _tidy(text, fmt)


def _images(
    bank: Bank, questions: Sequence[AnyQuestion], folder: Path
) -> list[tuple[str, ImageFile]]:
    """The images the selected questions (and the bank's instructions) show: (the path written
    in the documents, the file), each once."""
    texts = [bank.instructions or ""]
    texts += [text for q in questions for _, text in question_fields(q)]
    found: dict[str, ImageFile] = {}
    for text in texts:
        for image in parse(text).images():
            file = find_image(image.src, folder=folder)
            found.setdefault(file.name, file)
    return sorted(found.items())


def _weasyprint() -> Any:
    """WeasyPrint, imported.

    Raises:
        QuizgymError: WeasyPrint or its system libraries (Pango) are missing.
    """
    try:
        import weasyprint  # type: ignore[import-untyped]
    except ImportError as exc:
        raise QuizgymError(
            f'PDF output needs WeasyPrint ({exc}); install it with: pip install "quizgym[pdf]"'
        ) from exc
    except OSError as exc:  # WeasyPrint imports, but Pango cannot be loaded
        raise QuizgymError(f"PDF output needs Pango (libpango-1.0-0): {exc}") from exc
    return weasyprint


def html_to_pdf(html: str) -> bytes:
    """Print an HTML worksheet or key to PDF with WeasyPrint (page size from its CSS).

    The document carries its images inline (``data:`` addresses, each read and checked from
    the bank's folder): WeasyPrint may fetch nothing else, so an SVG's own reference to an
    address or a file is refused, never followed.

    Raises:
        QuizgymError: WeasyPrint or its system libraries (Pango) are missing.
    """
    weasyprint = _weasyprint()
    fetcher = _inline_only(weasyprint)
    pdf: bytes = weasyprint.HTML(string=html, base_url=".", url_fetcher=fetcher).write_pdf()
    return pdf


def _inline_only(weasyprint: Any) -> Any:
    """A WeasyPrint URL fetcher that serves ``data:`` addresses and refuses everything else."""

    def refuse(url: str) -> None:
        if not url.startswith("data:"):
            raise ValueError(f"quizgym prints only what the document holds; not {url[:80]}")

    base = getattr(weasyprint, "URLFetcher", None)
    if base is None:  # WeasyPrint before 66: a fetcher is a function
        default = weasyprint.default_url_fetcher

        def fetch(url: str, *args: Any, **kwargs: Any) -> Any:
            refuse(url)
            return default(url, *args, **kwargs)

        return fetch

    class InlineOnly(base):  # type: ignore[misc,valid-type]
        def fetch(self, url: str, headers: Any = None) -> Any:
            refuse(url)
            return super().fetch(url, headers)

    return InlineOnly()


def cores() -> int:
    """The CPU cores this process may use (its affinity where the system tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on every system (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def print_pdfs(
    pages: Sequence[str],
    *,
    workers: int | None = None,
    done: Callable[[int], None] | None = None,
) -> list[bytes]:
    """Lay out HTML documents as PDFs, across CPU cores: one process per core at most.

    Laying out a page is the slow part of a PDF (WeasyPrint)
    and each document is independent, so documents are laid out in worker processes while this
    one waits. One document, or ``workers=1``, is laid out here.

    Args:
        pages: the HTML of each document.
        workers: at most this many processes (default: the cores this process may use).
        done: called with each document's index as soon as it is laid out.

    Returns:
        The PDFs, in the order of ``pages``.

    Raises:
        QuizgymError: WeasyPrint or its system libraries (Pango) are missing.
    """
    count = min(len(pages), workers or cores())
    if count <= 1:
        out = []
        for index, html in enumerate(pages):
            out.append(html_to_pdf(html))
            if done:
                done(index)
        return out
    from concurrent.futures import ProcessPoolExecutor, as_completed

    _weasyprint()  # one clear error when it is missing (and, forked, workers start with it)
    results: list[bytes | None] = [None] * len(pages)
    with ProcessPoolExecutor(max_workers=count) as pool:
        futures = {pool.submit(html_to_pdf, html): index for index, html in enumerate(pages)}
        try:
            for future in as_completed(futures):
                index = futures[future]
                results[index] = future.result()
                if done:
                    done(index)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return [r for r in results if r is not None]


def combine_pdfs(documents: Sequence[bytes], *, duplex: bool = False) -> bytes:
    """One PDF of several, in order (a class's worksheets to print in one go).

    Args:
        documents: the PDFs.
        duplex: pad each document to an even number of pages with a blank one, so that printed
            on both sides every document starts on a fresh sheet.

    Raises:
        QuizgymError: pypdf is missing.
    """
    try:
        from pypdf import PdfReader, PdfWriter
    except ImportError as exc:
        raise QuizgymError(
            f'a combined PDF needs pypdf ({exc}); install it with: pip install "quizgym[pdf]"'
        ) from exc
    import io

    writer = PdfWriter()
    for data in documents:
        reader = PdfReader(io.BytesIO(data))
        for page in reader.pages:
            writer.add_page(page)
        if duplex and len(reader.pages) % 2:
            box = reader.pages[-1].mediabox
            writer.add_blank_page(width=box.width, height=box.height)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _pdf_jobs(documents: Sequence[tuple[Path, str | bytes]]) -> Iterator[tuple[Path, str | bytes]]:
    """The PDF documents, one per job, in job order."""
    return (d for d in documents if d[0].suffix == ".pdf")


def today() -> str:
    """Today's local date as YYYY-MM-DD, the default date in a worksheet's header."""
    return datetime.now(UTC).astimezone().date().isoformat()


@dataclass(frozen=True)
class Rendered:
    """What :func:`render_files` wrote."""

    out_dir: Path
    worksheets: int
    keys: int
    questions: int
    files: tuple[Path, ...]
    issued: Path | None = None
    """The issue manifest: which version of each question each sheet carries."""
    combined: Path | None = None
    """Every worksheet in one PDF (``combine``)."""
    images: tuple[Path, ...] = ()
    """Copies of the bank's images beside Markdown documents (HTML and PDF carry theirs)."""

    def summary(self) -> str:
        """One line for the terminal."""
        kinds = sorted({p.suffix.lstrip(".") for p in self.files})
        keys = f" and {self.keys} key{'s' if self.keys != 1 else ''}" if self.keys else ""
        issued = f"; versions recorded in {self.issued.name}" if self.issued else ""
        combined = f"; all worksheets in {self.combined.name}" if self.combined else ""
        return (
            f"{self.out_dir}: {self.worksheets} worksheet{'s' if self.worksheets != 1 else ''}"
            f"{keys} ({', '.join(kinds)}), {self.questions} question"
            f"{'s' if self.questions != 1 else ''} each{combined}{issued}"
        )


def render_files(
    bank: Bank | CompiledBank,
    *,
    out_dir: Path = Path("worksheets"),
    formats: Sequence[str] = ("html",),
    key: bool = False,
    key_per_student: bool = False,
    tags: Sequence[str] = (),
    types: Sequence[str] = (),
    ids: Sequence[str] = (),
    count: int | None = None,
    seed: int | None = None,
    roster: Path | None = None,
    date: str | None = None,
    paper: str = "a4",
    title: str | None = None,
    templates: Path | None = None,
    combine: bool = False,
    duplex: bool = False,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    add: bool = False,
) -> Rendered:
    """Write worksheets (one per student with a roster) and answer keys into a folder.

    Without a roster: ``worksheet.EXT`` (and ``key.EXT``). With one: ``worksheet-ID.EXT`` per
    student, and ``key.EXT`` listing every student's numbers or, with ``key_per_student``,
    ``key-ID.EXT`` per student. ``issued.json`` records which version of each question each sheet
    carries (:mod:`quizgym.issued`): ``quizgym grade --issued`` grades against exactly that.

    Args:
        bank: the bank (compiled once here when it is not yet).
        out_dir: the folder (created).
        formats: any of ``html``, ``md``, ``pdf`` (PDF is printed from the HTML).
        key: also write the answer key.
        key_per_student: one key per student instead of one for the class (implies ``key``).
        tags: see :func:`select_questions`.
        types: see :func:`select_questions`.
        ids: see :func:`select_questions`.
        count: see :func:`select_questions`.
        seed: the class seed: the shuffle of ``count`` and every student's variants.
        roster: a CSV with a ``student`` column (optional ``name``, ``seed``).
        date: for the header; today when None, a blank line to write on when empty.
        paper: ``a4`` or ``letter``.
        title: the heading; the bank's title when None.
        templates: a folder of templates that override the bundled ones by name.
        combine: also write ``worksheets.pdf``, every worksheet in roster order, to print the
            class in one go (implies PDF output).
        duplex: in ``worksheets.pdf``, pad each worksheet to an even number of pages, so that
            printed on both sides every student's sheet starts on a fresh page.
        workers: PDFs are laid out in at most this many processes (default: one per core).
        progress: called with (done, total) after each file.
        add: the folder's ``issued.json`` keeps the students it records and gains this
            roster's (:func:`~quizgym.issued.succeed`); without it, a manifest that records
            students this roster does not list is refused.

    Returns:
        What was written.

    Raises:
        QuizgymError: bad options, roster or templates; nothing is written then.
    """
    bad = [f for f in formats if f not in FORMATS]
    if combine and "pdf" not in formats:
        formats = [*formats, "pdf"]
    if bad or not formats:
        raise QuizgymError(f"unknown format {', '.join(bad)} (formats: {', '.join(FORMATS)})")
    if templates is not None and not templates.is_dir():
        raise QuizgymError(f"{templates}: no such templates folder")
    book = compiled(bank)
    questions = select_questions(book.bank, tags=tags, types=types, ids=ids, count=count, seed=seed)
    bad_images = image_findings(book.bank)
    if bad_images:
        raise BankError(bad_images)
    students: list[Student | None] = list(read_roster(roster)) if roster else [None]
    roster_rows = [(s.id, s.seed) for s in students if s is not None] if roster else None
    manifest = issue(book, questions, issued_by="render", seed=seed, students=roster_rows)
    earlier = out_dir / "issued.json"
    if earlier.exists():  # nothing a student was given is lost or changed: checked first
        manifest = succeed(read_issued(earlier), manifest, where=earlier, add=add)
    env = make_env(user_dir=templates, filters=FILTERS)
    options: dict[str, Any] = {
        "seed": seed,
        "date": today() if date is None else date,
        "paper": paper,
        "title": title,
        "env": env,
    }
    key = key or key_per_student
    jobs: list[tuple[str, str, Any]] = []
    for student in students:
        suffix = f"-{file_stem(student.id)}" if student else ""
        jobs.append((f"worksheet{suffix}", "worksheet", student))
        if key_per_student:
            jobs.append((f"key{suffix}", "key", [student]))
    if key and not key_per_student:
        jobs.append(("key", "key", students))

    def produce(kind: str, who: Any, fmt: str) -> str:
        pdf = fmt == "pdf"
        fmt = "html" if pdf else fmt
        if kind == "worksheet":
            return render_worksheet(book, questions, fmt=fmt, student=who, for_pdf=pdf, **options)
        return render_key(book, questions, fmt=fmt, students=who, for_pdf=pdf, **options)

    # Everything is rendered before anything is written: a template error leaves no half folder.
    documents: list[tuple[Path, str | bytes]] = []
    printing: list[int] = []  # the documents still HTML that become PDFs
    total = len(jobs) * len(formats)
    finished = 0

    def tick() -> None:
        nonlocal finished
        finished += 1
        if progress:
            progress(finished, total)

    try:
        for stem, kind, who in jobs:
            for fmt in formats:
                content: str | bytes = produce(kind, who, fmt)  # HTML for WeasyPrint if PDF
                if fmt == "pdf":
                    printing.append(len(documents))
                documents.append((out_dir / f"{stem}.{fmt}", content))
                if fmt != "pdf":
                    tick()
    except jinja2.TemplateSyntaxError as exc:
        raise QuizgymError(f"{exc.filename or exc.name}:{exc.lineno}: {exc.message}") from exc
    except jinja2.TemplateError as exc:
        raise QuizgymError(f"template error: {exc}") from exc
    pdfs = print_pdfs(
        [str(documents[i][1]) for i in printing], workers=workers, done=lambda _: tick()
    )
    for index, pdf in zip(printing, pdfs, strict=True):
        documents[index] = (documents[index][0], pdf)
    combined = out_dir / "worksheets.pdf" if combine else None
    if combined is not None:
        sheets = [
            content
            for (_, content), (_, kind, _) in zip(_pdf_jobs(documents), jobs, strict=True)
            if kind == "worksheet" and isinstance(content, bytes)
        ]
        combined_pdf = combine_pdfs(sheets, duplex=duplex)
    copies: list[tuple[Path, str | bytes]] = []
    if "md" in formats:  # Markdown refers to its images; HTML and PDF carry them inline
        folder = image_folder(book.bank.path)
        for name, source in _images(book.bank, questions, folder):
            copies.append((out_dir / name, source.data()))
    out_dir.mkdir(parents=True, exist_ok=True)
    if combined is not None:
        write_whole(combined, combined_pdf)
    for path, content in documents + copies:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_whole(path, content if isinstance(content, bytes) else content.encode("utf-8"))
    issued = write_issued(earlier, manifest)
    keys = sum(1 for _, kind, _ in jobs if kind == "key")
    return Rendered(
        out_dir,
        len(jobs) - keys,
        keys,
        len(questions),
        tuple(p for p, _ in documents),
        issued=issued,
        combined=combined,
        images=tuple(p for p, _ in copies),
    )
