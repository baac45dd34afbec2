"""``quizgym serve``: banks, a roster and a data folder in; a web server for practice and a
quiz out (plus the folder's secret, ``issued.json`` and ``links.csv``), and ``serve export``:
the attempts out as the JSON Lines ``quizgym grade`` reads.

Starlette and uvicorn are imported only here (``pip install "quizgym[serve]"``), so that the
rest of quizgym, and ``quizgym --help``, never load them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from quizgym.errors import QuizgymError

if TYPE_CHECKING:
    from quizgym.serve.engine import Classroom, Feedback

__all__ = ["DEFAULT_DATA", "Prepared", "export_attempts", "prepare", "serve"]

DEFAULT_DATA = "quizgym-serve"
INSTALL = 'quizgym serve needs its extra: pip install "quizgym[serve]"'


@dataclass(frozen=True)
class Prepared:
    """A data folder made ready: the classroom, and the teacher's and students' links."""

    room: Classroom
    folder: Path
    teacher_link: str
    links: dict[str, str]


def _need_extra() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise QuizgymError(INSTALL) from exc


def prepare(
    banks: Sequence[str],
    *,
    roster: Path | None,
    data: Path = Path(DEFAULT_DATA),
    db: str | None = None,
    url: str = "http://127.0.0.1:8000",
    quiz_tags: Sequence[str] = (),
    quiz_ids: Sequence[str] = (),
    opens: datetime | None = None,
    closes: datetime | None = None,
    attempts: int | None = None,
    feedback: Feedback = "now",
    rate: int = 20,
    link_days: int = 120,
    sync: Literal["full", "normal"] = "full",
    now: datetime | None = None,
) -> Prepared:
    """Load the banks and roster, make the data folder ready (secret, database, issued.json,
    links.csv) and return the classroom to serve.

    Args:
        banks: bank paths or bundled names; the quiz is drawn from the first.
        roster: the class's roster CSV (``student[,name]``); None: the class comes from an LMS
            (LTI launches), so a platform must be registered in the data folder.
        data: the data folder (made when missing).
        db: a PostgreSQL URL (``postgresql://…``) or an SQLite file; the folder's
            ``serve.sqlite3`` when None.
        url: the address students reach the server at (the links start with it).
        quiz_tags: the quiz is the first bank's questions with one of these tags ...
        quiz_ids: ... or these questions, in this order (no quiz when both are empty).
        opens: when the quiz opens (None: at once).
        closes: when it closes (None: never).
        attempts: the most submissions per student (None: no cap).
        feedback: when verdicts are shown: ``now``, ``submitted`` or ``closed``.
        rate: the most answers a student may send a minute.
        link_days: how long the sign-in links in links.csv stay valid.
        sync: SQLite: ``full``, each answer on disk before its verdict is sent; ``normal``,
            faster, each answer safe from a crash of the server but not from a power cut.
        now: the time (tests and ``QUIZGYM_NOW``); the wall clock when None.

    Raises:
        QuizgymError: a bank, the roster, the quiz or the data folder cannot be used.
    """
    _need_extra()
    from quizgym.practice.views import clock_from, utc_now
    from quizgym.render.roster import read_roster
    from quizgym.serve.engine import Classroom
    from quizgym.serve.folder import make_quiz, write_issued_for, write_links
    from quizgym.serve.keys import Secret
    from quizgym.serve.storage import open_database
    from quizgym.solver.cache import open_bank

    if not banks:
        raise QuizgymError("name at least one bank to serve")
    if rate < 1:
        raise QuizgymError("--rate must be at least 1 answer a minute")
    books = [open_bank(name) for name in banks]
    slugs = [book.bank.bank for book in books]
    if len(set(slugs)) != len(slugs):
        raise QuizgymError(f"two banks have the same slug ({', '.join(slugs)})")
    students = read_roster(roster) if roster is not None else []
    try:
        data.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise QuizgymError(f"{data}: cannot make the data folder: {exc.strerror}") from exc
    if roster is None and not _has_platform(data, db):
        raise QuizgymError(
            "give the class's --roster, or register an LMS first (quizgym serve lti register)"
        )
    secret = Secret.load(data / "secret")
    clock = utc_now if now is None else clock_from(now.isoformat())
    quiz = make_quiz(
        books[0], tags=quiz_tags, ids=quiz_ids, opens=opens, closes=closes, attempts=attempts,
        feedback=feedback,
    )  # fmt: skip
    issued = None
    if quiz is not None and students:  # else issued as the LMS's students arrive
        issued = write_issued_for(books[0], quiz, [s.id for s in students], secret, data)
    database = open_database(db, folder=data, sync=sync)
    room = Classroom(
        books=books, students={s.id: s.name for s in students}, secret=secret, db=database,
        quiz=quiz, issued=issued, clock=clock, rate=rate, folder=data,
    )  # fmt: skip
    teacher, links = write_links(
        secret, [s.id for s in students], url=url, folder=data, days=link_days, now=clock()
    )
    return Prepared(room, data, teacher, links)


def _has_platform(data: Path, db: str | None) -> bool:
    """Whether an LMS is registered in the data folder's database."""
    try:
        import pylti1p3  # noqa: F401  (LTI needs quizgym[lti])
    except ImportError:
        return False
    from quizgym.serve.lti.store import ensure_tables, platforms
    from quizgym.serve.storage import open_database

    if db is None and not (data / "serve.sqlite3").is_file():
        return False
    database = open_database(db, folder=data)
    try:
        ensure_tables(database)
        return bool(platforms(database))
    finally:
        database.close()


def serve(
    banks: Sequence[str],
    *,
    roster: Path | None,
    host: str = "127.0.0.1",
    port: int = 8000,
    url: str | None = None,
    **options: object,
) -> None:
    """Run the server until it is stopped (Ctrl-C), printing its address and the teacher's
    link; see :func:`prepare` for the options.

    Raises:
        QuizgymError: see :func:`prepare`; the address cannot be listened on.
    """
    _need_extra()
    import socket

    import uvicorn

    from quizgym.serve.app import make_app

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise QuizgymError(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    sock.listen(128)
    bound = sock.getsockname()[1]
    shown_host = f"[{host}]" if ":" in host else host
    address = f"http://{shown_host}:{bound}"
    prepared = prepare(banks, roster=roster, url=url or address, **options)  # type: ignore[arg-type]
    print(f"serving on {address}", flush=True)  # noqa: T201
    print(f"teacher: {prepared.teacher_link}", flush=True)  # noqa: T201
    if prepared.links:
        first, link = next(iter(prepared.links.items()))
        print(  # noqa: T201
            f"student links: {prepared.folder / 'links.csv'} ({len(prepared.links)} students;"
            f" {first}: {link})",
            flush=True,
        )
    else:
        print(f"students: from the LMS (LTI launch: {address}/lti/login)", flush=True)  # noqa: T201
    app = make_app(prepared.room, folder=prepared.folder, url=url)
    config = uvicorn.Config(
        app, log_level="warning", access_log=False, proxy_headers=True, timeout_graceful_shutdown=5
    )
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        prepared.room.db.close()


def export_attempts(
    *, data: Path, output: Path, db: str | None = None, practice: Path | None = None
) -> tuple[int, int]:
    """Write every quiz student's answers, the last one to each slot (the one that counts), as
    JSON Lines that ``quizgym grade BANK FILE --issued DATA/issued.json`` regrades, and with
    ``practice`` every practice answer (one record per slot answered, with the seed of its
    variant: :func:`quizgym.serve.folder.write_practice`); return the number of students and
    of practice answers written.

    Raises:
        QuizgymError: the data folder's database cannot be read or a file written.
    """
    from quizgym.serve.folder import write_export, write_practice
    from quizgym.serve.storage import open_database

    if db is None and not (data / "serve.sqlite3").is_file():
        raise QuizgymError(f"{data}: no serve.sqlite3 here (is it a quizgym serve data folder?)")
    database = open_database(db, folder=data)
    try:
        students = write_export(database, output)
        answers = write_practice(database, practice) if practice is not None else 0
        return students, answers
    finally:
        database.close()
