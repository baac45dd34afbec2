"""The ``quizgym`` command: options in, one library function called, its result printed out."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import click

from quizgym.errors import BankError, QuizgymError
from quizgym.export import FORMATS as EXPORT_FORMATS
from quizgym.export import export_bank as _export_bank
from quizgym.terminal import escape_controls
from quizgym.version import __version__

_EXPORT_DEFAULTS = _export_bank.__kwdefaults__ or {}

EXIT_FINDINGS = 1
SHOWN_FLAGS = 20
"""At most this many flagged students are printed (review.csv lists them all)."""
EXIT_USAGE = 2


@contextmanager
def _errors(ctx: click.Context) -> Iterator[None]:
    """Turn library errors into one-line messages (tracebacks only with --debug)."""
    try:
        yield
    except BankError as exc:
        if ctx.find_root().params.get("debug"):
            raise
        for finding in exc.findings:
            click.echo(escape_controls(str(finding)), err=True)
        ctx.exit(EXIT_FINDINGS)
    except QuizgymError as exc:
        if ctx.find_root().params.get("debug"):
            raise
        for line in str(exc).splitlines() or [""]:  # an error per line, each on its own
            click.echo(escape_controls(f"Error: {line}"), err=True)
        ctx.exit(EXIT_USAGE)
    except OSError as exc:  # a folder that cannot be made, a file that cannot be written
        if ctx.find_root().params.get("debug"):
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        click.echo(f"Error: {where}{exc.strerror or exc}", err=True)
        ctx.exit(EXIT_USAGE)


def _example(text: str) -> Callable[[Any], Any]:
    """Append an example to a command's help (shown by ``quizgym CMD --help``)."""

    def decorate(command: Any) -> Any:
        command.__doc__ = f"{command.__doc__}\n\n\b\nExample:\n  {text}"
        return command

    return decorate


def _columns() -> int:
    """The terminal's width as :func:`shutil.get_terminal_size` finds it ($COLUMNS, else the
    terminal of standard output, else 80), without importing shutil (and the compression
    modules it pulls in) for ``--help``."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    stdout = sys.__stdout__
    try:
        return (os.get_terminal_size(stdout.fileno()).columns if stdout else 0) or 80
    except (ValueError, OSError):  # closed, detached or not a terminal
        return 80


class _Formatter(click.HelpFormatter):
    """click's help formatter, its width found by :func:`_columns` (as click finds it)."""

    def __init__(
        self, indent_increment: int = 2, width: int | None = None, max_width: int | None = None
    ) -> None:
        if width is None and click.formatting.FORCED_WIDTH is None:
            width = max(min(_columns(), 80 if max_width is None else max_width) - 2, 50)
        super().__init__(indent_increment, width, max_width)


class _Context(click.Context):
    formatter_class = _Formatter


class _Command(click.Command):
    context_class = _Context


class _Group(click.Group):
    """The root group: an unexpected error is one line too (the traceback only with --debug)."""

    context_class = _Context
    command_class = _Command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as exc:
            if ctx.params.get("debug"):
                raise
            click.echo(
                f"Error: unexpected {type(exc).__name__}: {exc} "
                "(this is a bug in quizgym; --debug shows the traceback)",
                err=True,
            )
            ctx.exit(EXIT_USAGE)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="quizgym")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
def cli(debug: bool) -> None:
    """quizgym: one plain-text question bank, checked like code.

    BANK is a path to a YAML bank or the name of a bundled bank (bert-mlm).
    """


@cli.command()
@click.argument("paths", nargs=-1)
@click.option("--strict", is_flag=True, help="Fail on warnings too.")
@click.option(
    "--seeds",
    type=click.IntRange(1, 100_000),
    default=200,
    show_default=True,
    help="Seeds drawn per question in the variant stress test.",
)
@click.option(
    "--issued",
    type=click.Path(dir_okay=False, exists=True),
    help="An issued.json of this bank: list what an edit changes for students who hold it.",
)
@click.pass_context
@_example("quizgym check bert-mlm")
def check(
    ctx: click.Context, paths: tuple[str, ...], strict: bool, seeds: int, issued: str | None
) -> None:
    """Validate banks, recompute every key and stress-test variants.

    With no PATHS, checks the bundled banks. A folder checks every *.yaml in it. With --issued,
    also lists every issued question whose key, numbers or choice order an edit would change.
    """
    from quizgym.check import check_banks

    with _errors(ctx):
        reports = check_banks(paths, variant_seeds=seeds, issued=Path(issued) if issued else None)
    failed = False
    for report in reports:
        for finding in report.findings:
            click.echo(escape_controls(str(finding)), err=True)
        for note in report.notes:
            click.echo(escape_controls(f"{report.path}: {note}"))
        click.echo(escape_controls(report.summary()))
        failed = failed or bool(report.errors) or (strict and bool(report.warnings))
    if failed:
        ctx.exit(EXIT_FINDINGS)


@cli.command()
@click.option("--indent", type=int, default=2, show_default=True, help="JSON indentation.")
@click.option("--issued", is_flag=True, help="The schema of issued.json instead of a bank.")
@_example("quizgym schema > bank.schema.json")
def schema(indent: int, issued: bool) -> None:
    """Print the JSON Schema of the bank format (for editor completion), or of issued.json."""
    if issued:
        from quizgym.issued import issued_json_schema

        click.echo(issued_json_schema(indent=indent))
        return
    from quizgym.schema import bank_json_schema

    click.echo(bank_json_schema(indent=indent))


@cli.command(context_settings={"ignore_unknown_options": True})
@click.option(
    "--pack",
    "packs",
    multiple=True,
    metavar="PACK",
    help="Also read a domain pack's functions (a bundled pack's name or a file), repeatable.",
)
@click.argument("words", nargs=-1, required=True, metavar="EXPRESSION")
@click.pass_context
@_example('quizgym solve "8 ln 2"')
def solve(ctx: click.Context, packs: tuple[str, ...], words: tuple[str, ...]) -> None:
    """Evaluate an expression exactly as the grader reads it.

    Accepts what students and keys may write (2.30, ln 10, 8 ln 2, 1/2, sind(30), comb(10, 3),
    normal_cdf(1.96), 5!), and with --pack a pack's functions (--pack machine-learning:
    mlm_loss, nsp_loss, uniform_loss). A leading minus needs no quoting: quizgym solve -ln 0.9.
    Exits 1 with the reason when it cannot be read.
    """
    from quizgym.errors import AnswerParseError, QuizgymError
    from quizgym.solver import solve as solve_expression

    expression = " ".join(words)
    try:
        table = None
        if packs:  # the bank format (pydantic) only when a pack is read
            from quizgym.solver import pack_table

            table = pack_table(packs)
        solution = solve_expression(expression, table=table)
    except AnswerParseError as exc:
        click.echo(f"Error: cannot read {expression!r}: {exc.message}", err=True)
        ctx.exit(EXIT_FINDINGS)
    except QuizgymError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(str(solution))


# --- practice and stats -------------------------------------------------------------------------

# model.QUESTION_TYPES, spelled out so that --help need not import pydantic (a test ties them).
_QUESTION_TYPES = (
    "true_false",
    "multiple_choice",
    "spot_the_error",
    "free_text",
    "numeric",
    "matching",
    "cloze",
)
_DB_HELP = "Progress database (default: $QUIZGYM_DB, else progress.sqlite3 in the user data dir)."


def _practice_defaults() -> dict[str, Any]:
    from quizgym.practice import run_practice  # light: the drill itself is imported on use

    return dict(run_practice.__kwdefaults__ or {})


_PRACTICE = _practice_defaults()


@cli.command()
@click.argument("banks", nargs=-1)
@click.option(
    "--new",
    "new",
    type=click.IntRange(0),
    default=_PRACTICE["new"],
    show_default=True,
    help="At most this many never-seen items.",
)
@click.option(
    "--limit",
    type=click.IntRange(1),
    default=_PRACTICE["limit"],
    show_default=True,
    help="At most this many items in all.",
)
@click.option("--tag", "tags", multiple=True, help="Only items with this tag (repeatable).")
@click.option(
    "--type",
    "types",
    multiple=True,
    type=click.Choice(_QUESTION_TYPES),
    help="Only items of this type (repeatable).",
)
@click.option(
    "--all",
    "cram",
    is_flag=True,
    help="Also drill learned items not yet due (extra practice: schedule left alone).",
)
@click.option("--db", type=click.Path(dir_okay=False), help=_DB_HELP)
@click.option("--seed", type=int, help="Reproducible variants, order and intervals.")
@click.pass_context
@_example("quizgym practice --new 5 --tag masking")
def practice(ctx: click.Context, banks: tuple[str, ...], **options: Any) -> None:
    """Drill banks with spaced repetition (the bundled BERT bank by default).

    Due items come first, then new ones. At the answer prompt: ? hint, ! reveal, s skip,
    u undo the last answer, q quit. Every answer is saved the moment it is graded.
    """
    from quizgym.practice import run_practice

    with _errors(ctx):
        run_practice(banks, **options)


@cli.command()
@click.argument("banks", nargs=-1)
@click.option("--db", type=click.Path(dir_okay=False), help=_DB_HELP)
@click.pass_context
@_example("quizgym stats bert-mlm")
def stats(ctx: click.Context, banks: tuple[str, ...], db: str | None) -> None:
    """Drill progress per bank and tag: accuracy, retention, due forecast, streak, misses."""
    from quizgym.practice import show_stats

    with _errors(ctx):
        show_stats(banks, db=db)


# --- render: printable worksheets and answer keys ----------------------------------------------


def _render_defaults() -> dict[str, Any]:
    from quizgym.render import render_files

    return dict(render_files.__kwdefaults__ or {})


@contextmanager
def _progress(label: str) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on stderr when it is a terminal; nothing at all when piped."""
    if not sys.stderr.isatty():
        yield None
        return
    bars: list[Any] = []

    def update(done: int, total: int) -> None:
        if not bars:
            bars.append(click.progressbar(length=total, label=label, file=sys.stderr))
            bars[0].__enter__()
        bars[0].update(done - bars[0].pos)

    try:
        yield update
    finally:
        if bars:
            bars[0].__exit__(None, None, None)


@cli.command()
@click.argument("bank")
@click.option(
    "--format",
    "formats",
    type=click.Choice(["html", "md", "pdf"]),
    multiple=True,
    help="Output format; repeat for several.  [default: html]",
)
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default="worksheets",
    show_default=True,
    help="Folder to write into.",
)
@click.option("--key", is_flag=True, help="Also write the answer key.")
@click.option("--key-per-student", is_flag=True, help="One key per student (implies --key).")
@click.option("--tag", "tags", multiple=True, help="Only questions with this tag (repeatable).")
@click.option(
    "--type",
    "types",
    type=click.Choice(_QUESTION_TYPES),
    multiple=True,
    help="Only questions of this type (repeatable).",
)
@click.option("--ids", default="", help="Only these question ids, comma-separated, in order.")
@click.option("--count", type=click.IntRange(1), help="Draw this many questions (seeded).")
@click.option("--seed", type=int, help="Class seed: the draw of --count and every variant.")
@click.option("--roster", type=click.Path(dir_okay=False), help="CSV: student[,name][,seed].")
@click.option(
    "--add",
    is_flag=True,
    help="Add this roster's sheets to the folder's issued.json (its students keep theirs).",
)
@click.option("--date", help="Date in the header (default today; '' leaves a blank).")
@click.option("--paper", type=click.Choice(["a4", "letter"]), default="a4", show_default=True)
@click.option("--title", help="Heading (default: the bank's title).")
@click.option("--templates", type=click.Path(file_okay=False), help="Your own templates first.")
@click.option(
    "--combine",
    is_flag=True,
    help="Also write worksheets.pdf: every worksheet in roster order, to print in one go.",
)
@click.option(
    "--duplex", is_flag=True, help="In worksheets.pdf, start every sheet on a fresh page."
)
@click.option(
    "-j",
    "--jobs",
    "workers",
    type=click.IntRange(1),
    help="Lay out PDFs in at most this many processes.  [default: one per core]",
)
@click.pass_context
@_example("quizgym render bert-mlm --roster class.csv --seed 7 --key --format pdf -o out")
def render(
    ctx: click.Context,
    bank: str,
    out_dir: str,
    ids: str,
    roster: str | None,
    templates: str | None,
    **options: Any,
) -> None:
    """Print worksheets and answer keys: HTML, Markdown or PDF, one per student with --roster.

    PDFs are laid out on every core at once; --combine adds one PDF of the whole class.
    """
    from quizgym.render import render_files
    from quizgym.solver.cache import open_bank, save

    options["formats"] = options["formats"] or _render_defaults()["formats"]
    with _errors(ctx), _progress("rendering") as progress:
        book = open_bank(bank)
        result = render_files(
            book,
            out_dir=Path(out_dir),
            ids=[i.strip() for i in ids.split(",") if i.strip()],
            roster=Path(roster) if roster else None,
            templates=Path(templates) if templates else None,
            progress=progress,
            **options,
        )
        save(book)
    click.echo(result.summary())


@cli.command()
@click.argument("bank")
@click.option(
    "--to",
    "to",
    type=click.Choice(sorted(EXPORT_FORMATS)),
    required=True,
    help="Format: " + "; ".join(f"{k}: {v[1]}" for k, v in EXPORT_FORMATS.items()) + ".",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="File to write ('-': standard output)."
)
@click.option(
    "--variants",
    type=click.IntRange(0, 10_000),
    default=_EXPORT_DEFAULTS["variants"],
    show_default=True,
    help="Variants of each parametric question, exported as a pool to draw one from.",
)
@click.option("--seed", type=int, default=_EXPORT_DEFAULTS["seed"], show_default=True,
              help="Seed of the first variant (variant k uses seed + k).")  # fmt: skip
@click.option(
    "--check",
    is_flag=True,
    help="Also score typed answers to every numeric item as the LMS will (qti12: Canvas; "
    "moodle, gift: Moodle; qti21: the QTI 2.1 rules) and list where it differs from quizgym. "
    "Exits 1 when a correct answer would be refused or a wrong one accepted (without --check, "
    "each such blank is one 'warning:' line on standard error).",
)
@click.pass_context
@_example("quizgym export bert-mlm --to moodle -o bert-mlm.xml --check")
def export(
    ctx: click.Context,
    bank: str,
    to: str,
    output: str | None,
    variants: int,
    seed: int,
    check: bool,
) -> None:
    """Export BANK for an LMS or Anki (default file: BANK-FORMAT.ext here)."""
    from quizgym.export import export_bank

    with _errors(ctx):
        result = export_bank(bank, to=to, output=output, variants=variants, seed=seed, check=check)
    click.echo(result.summary(), err=output == "-")  # keep standard output for the file
    if result.check is None:  # --check lists these itself, with every answer tried
        for line in result.warnings:
            click.echo(line, err=True)
    else:
        for line in result.check.lines():
            click.echo(line, err=output == "-")
        for line in result.warnings:  # what the check does not emulate (not numeric blanks)
            if line not in result.check.warnings():
                click.echo(line, err=output == "-")
        if result.check.failed:
            ctx.exit(EXIT_FINDINGS)


@cli.command()
@click.argument("bank")
@click.argument("submissions", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default="graded",
    show_default=True,
    help="Folder to write grades, responses, items and the report to.",
)
@click.option("--feedback", is_flag=True, help="Also write feedback/<student>.md per student.")
@click.option(
    "--gradebook",
    type=click.Choice(["canvas", "moodle"]),
    help="Also write the CSV that LMS imports.",
)
@click.option(
    "--compare",
    type=click.Path(file_okay=False, exists=True),
    help="A previous output folder: list the students whose score changed, and why.",
)
@click.option(
    "--engine",
    type=click.Choice(["numpy", "dask"]),
    default="numpy",
    show_default=True,
    help='Where pieces are graded: this process, or Dask (pip install "quizgym[dask]").',
)
@click.option("--scheduler", help="Dask: address of a running scheduler (default: a local one).")
@click.option(
    "--chunk-rows",
    type=click.IntRange(min=1),
    help="Read and grade this many students at a time (bounded memory).",
)
@click.option(
    "--issued",
    type=click.Path(dir_okay=False, exists=True),
    help="The issued.json that render or export wrote: grade what each student was given.",
)
@click.option(
    "--seed",
    type=int,
    help="Each student's own version, as 'render --roster … --seed N' drew it.",
)
@click.option(
    "--version",
    "version",
    type=click.Choice(["default", "per-student"]),
    help="default: one sheet for everyone; per-student: each their own, drawn without a seed.",
)
@click.option(
    "--accept-changes",
    is_flag=True,
    help="Grade issued versions, and keep --review decisions, on a bank edited since.",
)
@click.option(
    "--review",
    type=click.Path(dir_okay=False, exists=True),
    help="An edited review.csv: its scores replace the machine's for every such answer.",
)
@click.option(
    "--irt",
    is_flag=True,
    help='Also fit Rasch and 2PL models: irt.csv, abilities.csv (pip install "quizgym[irt]").',
)
@click.pass_context
@_example("quizgym grade bert-mlm class.csv -o graded --issued out/issued.json")
def grade(
    ctx: click.Context,
    bank: str,
    submissions: tuple[str, ...],
    out_dir: str,
    feedback: bool,
    gradebook: str | None,
    compare: str | None,
    engine: Literal["numpy", "dask"],
    scheduler: str | None,
    chunk_rows: int | None,
    issued: str | None,
    seed: int | None,
    version: Literal["default", "per-student"] | None,
    accept_changes: bool,
    review: str | None,
    irt: bool,
) -> None:
    """Grade a class: grades, responses, item analysis, report (and gradebooks).

    SUBMISSIONS are wide or long CSV or Parquet, JSON Lines, Canvas "Student Analysis" or Moodle
    "Responses" exports. When questions differ per student, say what was handed out: --issued,
    --seed or --version (or a seed column on every row). Answers the machine is not sure of (free
    text, unreadable answers) are listed once each in review.csv: score them there and grade
    again with --review. Exits 1 when any row was rejected (listed in rejected.csv) or a grade
    may be wrong (warnings, also in report.html).
    """
    from quizgym.grading.run import grade_submissions

    with _errors(ctx), _progress("grading") as tick:
        run = grade_submissions(
            bank,
            [Path(s) for s in submissions],
            engine=engine,
            chunk_rows=chunk_rows,
            scheduler=scheduler,
            out_dir=Path(out_dir),
            feedback=feedback,
            gradebook=gradebook,
            compare=Path(compare) if compare else None,
            issued=Path(issued) if issued else None,
            seed=seed,
            version=version,
            accept_changes=accept_changes,
            review=Path(review) if review else None,
            progress=tick,
            irt=irt,
        )
    from quizgym.grading.rows import summarize

    for note in run.reading:
        click.echo(escape_controls(f"note: {note}"), err=True)
    for line in summarize(run.rejected):
        click.echo(escape_controls(line), err=True)
    for warning in run.warnings:
        click.echo(escape_controls(f"warning: {warning}"), err=True)
    for flag in run.flags[:SHOWN_FLAGS]:
        click.echo(escape_controls(f"flagged: {flag}"), err=True)
    if len(run.flags) > SHOWN_FLAGS:
        click.echo(f"flagged: … and {len(run.flags) - SHOWN_FLAGS} more (review.csv)", err=True)
    click.echo(escape_controls(run.summary()))
    if run.rejected or run.warnings:
        ctx.exit(EXIT_FINDINGS)


# --- serve: practice and quizzes in a browser ---------------------------------------------------


def _serve_defaults() -> dict[str, Any]:
    from quizgym.serve import prepare  # light: Starlette and the engine are imported on use

    return dict(prepare.__kwdefaults__ or {})


_SERVE = _serve_defaults()


class _ServeGroup(click.Group):
    """``quizgym serve BANK…`` runs the server; ``quizgym serve export`` is a subcommand."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["start", *args]
        return super().parse_args(ctx, args)


@cli.group(cls=_ServeGroup)
@_example("quizgym serve bert-mlm --roster class.csv --quiz-tag masking --attempts 2")
def serve() -> None:
    """Practice and a quiz in a browser or on a phone: quizgym serve BANK… --roster R."""


def _when(text: str | None) -> Any:

    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise click.BadParameter(f"{text!r} is not an ISO-8601 time") from exc
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


@serve.command("start")
@click.argument("banks", nargs=-1, required=True)
@click.option("--roster", type=click.Path(dir_okay=False),
              help="CSV: student[,name]; one sign-in link each (optional when the class comes"
              " from an LMS: quizgym serve lti register).")  # fmt: skip
@click.option("--data", type=click.Path(file_okay=False), default=str(_SERVE["data"]),
              show_default=True,
              help="Folder of the database, secret, issued.json, links.")  # fmt: skip
@click.option("--db", help="postgresql://… to share one store between servers (default: SQLite).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--url", help="Address students reach (behind a proxy); the links start with it.")
@click.option(
    "--quiz-tag", "quiz_tags", multiple=True, help="Quiz: the first bank's questions with this tag."
)
@click.option("--quiz-ids", default="", help="Quiz: these question ids, comma-separated, in order.")
@click.option("--opens", help="When the quiz opens (ISO-8601, UTC unless given).")
@click.option("--closes", help="When the quiz closes (ISO-8601).")
@click.option("--attempts", type=click.IntRange(1), help="Most quiz submissions per student.")
@click.option("--feedback", type=click.Choice(["now", "submitted", "closed"]),
              default=_SERVE["feedback"], show_default=True,
              help="When quiz verdicts show: at once, after finishing, after closing.")  # fmt: skip
@click.option("--rate", type=click.IntRange(1), default=_SERVE["rate"], show_default=True,
              help="Most answers a student may send a minute.")  # fmt: skip
@click.option("--sync", type=click.Choice(["full", "normal"]), default=_SERVE["sync"],
              show_default=True,
              help="SQLite: full = on disk before each verdict; normal = faster, safe from a "
              "server crash, not from a power cut.")  # fmt: skip
@click.option("--link-days", type=click.IntRange(1), default=_SERVE["link_days"],
              show_default=True, help="Days the sign-in links stay valid.")  # fmt: skip
@click.pass_context
@_example("quizgym serve bert-mlm --roster class.csv --quiz-tag masking --attempts 2")
def serve_start(
    ctx: click.Context,
    banks: tuple[str, ...],
    roster: str | None,
    data: str,
    quiz_ids: str,
    opens: str | None,
    closes: str | None,
    **options: Any,
) -> None:
    """Serve BANKS to the roster's students until Ctrl-C (the default of quizgym serve)."""
    from quizgym.serve import serve as run

    with _errors(ctx):
        now = os.environ.get("QUIZGYM_NOW")
        run(banks, roster=Path(roster) if roster else None, data=Path(data), opens=_when(opens),
            closes=_when(closes), quiz_ids=[i.strip() for i in quiz_ids.split(",") if i.strip()],
            now=_when(now), **options)  # fmt: skip


@serve.command("export")
@click.option("--data", type=click.Path(file_okay=False), default=str(_SERVE["data"]),
              show_default=True, help="The server's data folder.")  # fmt: skip
@click.option("--db", help="postgresql://… when the server used one.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True)
@click.option("--practice", type=click.Path(dir_okay=False),
              help="Also write every practice answer (one JSON Lines record per slot answered, "
              "with its variant's seed, verdict and time) to this file.")  # fmt: skip
@click.pass_context
@_example("quizgym serve export --data quizgym-serve -o attempts.jsonl --practice practice.jsonl")
def serve_export(
    ctx: click.Context, data: str, db: str | None, output: str, practice: str | None
) -> None:
    """Write the quiz's answers (the last one to each slot) as JSON Lines for quizgym grade,
    and with --practice every practice answer."""
    from quizgym.serve import export_attempts

    with _errors(ctx):
        count, answers = export_attempts(
            data=Path(data), output=Path(output), db=db,
            practice=Path(practice) if practice is not None else None,
        )  # fmt: skip
    click.echo(
        f"wrote {count} students to {output}; grade them with --issued {Path(data) / 'issued.json'}"
    )
    if practice is not None:
        click.echo(f"wrote {answers} practice answers to {practice}")


@serve.group("lti")
@_example("quizgym serve lti register --url https://quiz.example.edu")
def serve_lti() -> None:
    """LTI 1.3: register the tool with an LMS, rotate its key, send regraded scores."""


@serve_lti.command("register")
@click.option("--data", type=click.Path(file_okay=False), default=str(_SERVE["data"]),
              show_default=True, help="The server's data folder.")  # fmt: skip
@click.option("--db", help="postgresql://… when the server uses one.")
@click.option("--url", required=True, help="The address the LMS reaches the tool at (https://…).")
@click.option("--issuer", help="The platform's issuer (Canvas: https://canvas.instructure.com).")
@click.option("--client-id", help="The client id the LMS gave the tool.")
@click.option("--auth-login-url", help="The platform's OIDC authorization endpoint.")
@click.option("--auth-token-url", help="The platform's OAuth2 access token URL.")
@click.option("--jwks-url", help="The platform's public keyset (JWKS) URL.")
@click.option("--audience", help="The token endpoint's audience, when not its URL (rare).")
@click.option("--deployment", "deployments", multiple=True, help="A deployment id (repeatable).")
@click.option("--name", default="", help="A name for the platform, for people.")
@click.pass_context
@_example("quizgym serve lti register --url https://quiz.example.edu --issuer https://canvas."
          "instructure.com --client-id 1000000000042 --deployment 7:abc …")  # fmt: skip
def serve_lti_register(
    ctx: click.Context, data: str, db: str | None, url: str, issuer: str | None,
    client_id: str | None, auth_login_url: str | None, auth_token_url: str | None,
    jwks_url: str | None, audience: str | None, deployments: tuple[str, ...], name: str,
) -> None:  # fmt: skip
    """Print the tool's configuration for Canvas and Moodle; with --issuer, store a platform."""
    from pathlib import Path

    from quizgym.serve.lti.setup import describe, register

    with _errors(ctx):
        text = describe(url)
        if issuer is not None:
            missing = [o for o, v in (("--client-id", client_id), ("--auth-login-url",
                       auth_login_url), ("--auth-token-url", auth_token_url),
                       ("--jwks-url", jwks_url)) if not v]  # fmt: skip
            if missing:
                raise click.UsageError(f"--issuer needs {', '.join(missing)} too")
            platform, new = register(
                Path(data), db=db, issuer=issuer, client_id=str(client_id),
                auth_login_url=str(auth_login_url), auth_token_url=str(auth_token_url),
                key_set_url=str(jwks_url), deployments=deployments, audience=audience, name=name,
            )  # fmt: skip
            click.echo(text)
            click.echo(
                f"\n{'registered' if new else 'updated'} platform {platform.id}: {platform.issuer}"
                f" (client id {platform.client_id}; deployments {', '.join(platform.deployments)})"
            )
        else:
            click.echo(text)


@serve_lti.command("rotate-key")
@click.option("--data", type=click.Path(file_okay=False), default=str(_SERVE["data"]),
              show_default=True, help="The server's data folder.")  # fmt: skip
@click.pass_context
@_example("quizgym serve lti rotate-key --data quizgym-serve")
def serve_lti_rotate_key(ctx: click.Context, data: str) -> None:
    """Make a new signing key; the JWKS keeps the old one for a week."""
    from pathlib import Path

    from quizgym.serve.lti.keys import RETIRE_DAYS
    from quizgym.serve.lti.setup import rotate_key

    with _errors(ctx):
        new, old = rotate_key(Path(data))
    click.echo(f"signing with key {new.kid}")
    for key in old:
        click.echo(f"still published until replaced + {RETIRE_DAYS} days: {key.kid}")


@serve_lti.command("regrade")
@click.argument("grades", type=click.Path(dir_okay=False, exists=True))
@click.option("--data", type=click.Path(file_okay=False), default=str(_SERVE["data"]),
              show_default=True, help="The server's data folder.")  # fmt: skip
@click.option("--db", help="postgresql://… when the server uses one.")
@click.pass_context
@_example("quizgym serve lti regrade graded/grades.csv --data quizgym-serve")
def serve_lti_regrade(ctx: click.Context, grades: str, data: str, db: str | None) -> None:
    """Queue the changed scores of a regrade (grades.csv of quizgym grade --review) for the LMS;
    the running server posts them."""
    from pathlib import Path

    from quizgym.serve.lti.service import queue_regrade

    with _errors(ctx):
        changed = queue_regrade(Path(data), Path(grades), db=db)
    for student, old, new in changed:
        was = "none" if old is None else f"{old:g}"
        click.echo(f"{student}: {was} -> {new:g}")
    click.echo(f"{len(changed)} changed scores queued for the LMS")


def main() -> None:
    """Entry point of the ``quizgym`` command and of ``python -m quizgym``: the process ends
    when it returns (it freezes the collector, see :func:`_leaving`); a program that runs
    commands and goes on calls :func:`cli` (click's group) instead.

    Each command parses its options, calls one library function, prints, and maps
    :class:`~quizgym.errors.QuizgymError` to a one-line message and an exit code: 0 clean, 1
    findings, 2 usage or unreadable input. Heavy libraries (sympy, numpy, jinja2) are imported
    inside commands so that ``quizgym --help`` stays fast.
    """
    try:
        cli(prog_name="quizgym")
    finally:
        _leaving()


def _leaving() -> None:
    """What the process does once its command is done, whether it succeeded or not.

    The interpreter's finalization runs the garbage collector over every object left, more than
    once, only to free memory the system takes back at exit anyway, which after grading a large
    class is a measurable part of the run (the objects lie scattered over a large heap). Frozen
    objects are not walked: they are still freed by their reference counts as the modules are
    cleared, only reference cycles are left to the system, and every file the commands write is
    closed by then (``with`` blocks), so nothing is lost.
    """
    gc.freeze()


if __name__ == "__main__":  # pragma: no cover
    main()
