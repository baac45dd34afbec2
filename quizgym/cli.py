"""The ``quizgym`` command: thin click wrappers over the library.

Each command parses its options, calls one library function, prints, and maps
:class:`~quizgym.errors.QuizgymError` to a one-line message and an exit code: 0 clean, 1 findings,
2 usage or unreadable input. Heavy libraries (sympy, numpy, jinja2) are imported inside commands
so that ``quizgym --help`` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from quizgym import __version__
from quizgym.errors import BankError, QuizgymError

EXIT_FINDINGS = 1
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
            click.echo(str(finding), err=True)
        ctx.exit(EXIT_FINDINGS)
    except QuizgymError as exc:
        if ctx.find_root().params.get("debug"):
            raise
        click.echo(f"Error: {exc}", err=True)
        ctx.exit(EXIT_USAGE)


def _example(text: str) -> Callable[[Any], Any]:
    """Append an example to a command's help (shown by ``quizgym CMD --help``)."""

    def decorate(command: Any) -> Any:
        command.__doc__ = f"{command.__doc__}\n\n\b\nExample:\n  {text}"
        return command

    return decorate


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
@click.pass_context
@_example("quizgym check bert-mlm")
def check(ctx: click.Context, paths: tuple[str, ...], strict: bool, seeds: int) -> None:
    """Validate banks, recompute every key and stress-test variants.

    With no PATHS, checks the bundled banks. A folder checks every *.yaml in it.
    """
    from quizgym.check import check_banks

    with _errors(ctx):
        reports = check_banks(paths, variant_seeds=seeds)
    failed = False
    for report in reports:
        for finding in report.findings:
            click.echo(str(finding), err=True)
        click.echo(report.summary())
        failed = failed or bool(report.errors) or (strict and bool(report.warnings))
    if failed:
        ctx.exit(EXIT_FINDINGS)


@cli.command()
@click.option("--indent", type=int, default=2, show_default=True, help="JSON indentation.")
@_example("quizgym schema > bank.schema.json")
def schema(indent: int) -> None:
    """Print the JSON Schema of the bank format (for editor completion)."""
    from quizgym.schema import bank_json_schema

    click.echo(bank_json_schema(indent=indent))


@cli.command()
@click.argument("expression")
@click.pass_context
@_example('quizgym solve "8 ln 2"')
def solve(ctx: click.Context, expression: str) -> None:
    """Evaluate an expression exactly as the grader reads it.

    Accepts what students may type (2.30, ln 10, 8 ln 2, 1/2) and the keys' domain functions
    (mlm_loss, nsp_loss, uniform_loss). Exits 1 with the reason when it cannot be read.
    """
    from quizgym.errors import AnswerParseError
    from quizgym.solver import solve as solve_expression

    try:
        solution = solve_expression(expression)
    except AnswerParseError as exc:
        click.echo(f"Error: cannot read {expression!r}: {exc.message}", err=True)
        ctx.exit(EXIT_FINDINGS)
    click.echo(str(solution))


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
@click.pass_context
@_example("quizgym grade bert-mlm class.csv -o graded --gradebook canvas")
def grade(
    ctx: click.Context,
    bank: str,
    submissions: tuple[str, ...],
    out_dir: str,
    feedback: bool,
    gradebook: str | None,
    compare: str | None,
    engine: str,
    scheduler: str | None,
    chunk_rows: int | None,
) -> None:
    """Grade a class: grades, responses, item analysis, report (and gradebooks).

    SUBMISSIONS are wide or long CSV or Parquet, JSON Lines, Canvas "Student Analysis" or Moodle
    "Responses" exports. Exits 1 when any row was rejected (listed in rejected.csv).
    """
    from functools import partial
    from pathlib import Path

    from quizgym.grading.pipeline import grade_submissions
    from quizgym.grading.scale import CHUNK_ROWS, grade_at_scale, wants_scale

    scaled = wants_scale(submissions, engine=engine, chunk_rows=chunk_rows)
    grader: Callable[..., Any] = grade_submissions
    if scaled:
        grader = partial(
            grade_at_scale,
            engine=engine,
            chunk_rows=chunk_rows or CHUNK_ROWS,
            scheduler=scheduler,
        )
    with _errors(ctx), _progress() as tick:
        run = grader(
            bank,
            [Path(s) for s in submissions],
            out_dir=Path(out_dir),
            feedback=feedback,
            gradebook=gradebook,
            compare=Path(compare) if compare else None,
            progress=tick,
        )
    for rejection in run.rejected:
        click.echo(f"{rejection.source}:{rejection.line}: {rejection.reason}", err=True)
    click.echo(run.summary())
    if run.rejected:
        ctx.exit(EXIT_FINDINGS)


@contextmanager
def _progress() -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on a terminal (stderr); nothing when piped."""
    import sys

    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("grading", total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


def main() -> None:
    """Entry point for ``python -m quizgym``."""
    cli(prog_name="quizgym")


if __name__ == "__main__":  # pragma: no cover
    main()
