"""The rules a submission row must pass, and the one place each rejection reason is worded.

Every reader (wide and long CSV, JSON Lines, Parquet, Canvas and Moodle exports), in memory or in
chunks, rejects a row through these functions, so a teacher reads the same reason for the same
problem whichever format or engine met it. A rejected row is never dropped: it becomes a
:class:`~quizgym.grading.table.Rejection` with its file, line and reason.

Each reason is a :class:`Reason`: its text, and the kind of rule that gave it, so that a
thousand rows rejected for one kind of reason are summed up in one line on the terminal
(:func:`summarize`) while ``rejected.csv`` keeps every one of them.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

__all__ = [
    "ID_SPACE",
    "MAX_CELL",
    "MAX_RECORD",
    "NO_STUDENT",
    "ROSTER",
    "SEED_DIGITS",
    "UNDECODABLE",
    "Origin",
    "Reason",
    "Seen",
    "look_of",
    "bad_escape",
    "bad_id",
    "blank",
    "canvas_column",
    "cell_problem",
    "clean_id",
    "column_of_type",
    "duplicate_answer",
    "duplicate_column",
    "duplicate_key",
    "duplicate_student",
    "id_problem",
    "invalid_json",
    "items_of_one_slot",
    "kind_of",
    "list_answer",
    "moodle_beyond",
    "moodle_cloze",
    "moodle_pool",
    "moodle_question",
    "never_closed",
    "no_seed",
    "not_a_record",
    "not_in_roster",
    "read_seed",
    "record_too_long",
    "responses_to_one_slot",
    "row_problem",
    "second_header",
    "seed_conflict",
    "strip_id",
    "summarize",
    "swallowed",
    "too_deep",
    "undecodable",
    "unknown_key",
    "unknown_question",
    "wrong_answer_type",
    "wrong_field_type",
    "wrong_id_type",
]

Origin = tuple[str, int]
"""Where a row was read: (file, line)."""

MAX_CELL = 128 * 1024
"""The most characters in one cell (one answer, one id): a 20,000-word essay. A longer cell
rejects its row (the ``csv`` module's own default limit, which used to abort the class)."""
MAX_RECORD = 16 * 1024 * 1024
"""The most bytes in one record (a CSV row over all its lines, a JSON Lines line). A longer one
is rejected without being held in memory: reading a file costs memory bounded by this, whatever
its lines."""
SEED_DIGITS = 20
"""The most digits in a seed (any 64-bit number fits)."""
ROSTER = ("name", "email", "section")
"""Columns (or JSON Lines keys) that say who a student is, carried into the gradebooks."""


class Reason(str):
    """A rejection reason as worded here, with the kind of rule that gave it.

    It is the text itself (it compares, prints and is written as the text); ``kind`` names the
    rule in a few words, the same for every row it rejects (for :func:`summarize`).
    """

    kind: str

    def __new__(cls, text: str, kind: str) -> Reason:
        """A reason ``text`` of the kind ``kind``."""
        made = super().__new__(cls, text)
        made.kind = kind
        return made

    def __reduce__(self) -> tuple[type[Reason], tuple[str, str]]:
        return (Reason, (str(self), self.kind))


UNDECODABLE = Reason("undecodable bytes (the file is not UTF-8)", "undecodable bytes")
NO_STUDENT = Reason("no student id", "no student id")

_BAD_BYTES = re.compile("[\udc80-\udcff]")
_LONE_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")
"""Half characters that are not undecodable bytes: a JSON escape such as ``"\\ud800"``."""
ID_SPACE = " \t\u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u202f\u205f\u3000"
"""What is stripped from the ends of an id: spaces and tabs, as spreadsheets pad cells."""
_ASCII_SPACE = " \t\r\n\x0b\x0c"
_FORBIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode categories no id may hold: controls (NUL, escapes), formats (a BOM, bidi overrides,
zero-width characters), lone surrogates, line and paragraph separators."""
_NUMBER = re.compile(rf"[+-]?[0-9]{{1,{SEED_DIGITS}}}")
_LONG_NUMBER = re.compile(r"[+-]?[0-9]+")


def _shown(text: str, most: int = 40) -> str:
    """A value as a reason quotes it: at most ``most`` characters."""
    return repr(text if len(text) <= most else text[: most - 1] + "…")


def blank(cells: Sequence[str]) -> bool:
    """Whether a CSV record is a blank line (no cells, or one of ASCII whitespace only)."""
    return not cells or (len(cells) == 1 and not cells[0].strip(_ASCII_SPACE))


def undecodable(cells: Iterable[str]) -> bool:
    """Whether some cell holds bytes that were not UTF-8 (kept as lone surrogates)."""
    return _BAD_BYTES.search("".join(cells)) is not None


def strip_id(raw: str) -> str:
    """A student id cell without the spaces and tabs around it, in Unicode's composed form
    (NFC: ``José`` typed with a combining accent is the ``José`` typed with ``é``)."""
    text = raw.strip(ID_SPACE)
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def look_of(student: str) -> str:
    """What ids that print alike share (NFKC: the full-width ``ｓ１`` looks like ``s1``): two
    ids of one look are one student named twice."""
    return student if student.isascii() else unicodedata.normalize("NFKC", student)


def clean_id(raw: str) -> str:
    """A student id as a rejection shows it: stripped, undecodable bytes replaced by U+FFFD,
    control and format characters escaped (a rejected id must not drive the terminal)."""
    text = _LONE_SURROGATE.sub(lambda found: ascii(found[0])[1:-1], raw)
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    text = strip_id(text)
    if text.isprintable():
        return text
    return "".join(
        ch if unicodedata.category(ch) not in _FORBIDDEN else ascii(ch)[1:-1] for ch in text
    )


def bad_id(student: str) -> bool:
    """Whether a (stripped) id holds a character no id may hold (see :data:`_FORBIDDEN`)."""
    if student.isprintable():
        return False
    return any(unicodedata.category(ch) in _FORBIDDEN for ch in student)


def id_problem(student: str) -> Reason | None:
    """Why a (stripped) student id cannot be used, or None."""
    if not student:
        return NO_STUDENT
    if bad_id(student):
        return Reason(
            "a student id with a control or invisible character (NUL, an escape, a byte-order "
            f"mark, a direction override…): {clean_id(student)}",
            "an id with control characters",
        )
    return None


def cell_problem(cells: Iterable[str]) -> Reason | None:
    """Why some cell of a row is too long to grade, or None."""
    longest = max(map(len, cells), default=0)
    if longest <= MAX_CELL:
        return None
    return Reason(f"a cell of {longest:,} characters (the most is {MAX_CELL:,})", "a cell too long")


def row_problem(
    cells: Sequence[str], width: int, *, bad_bytes: bool = True, size: int = 0
) -> Reason | None:
    """Why a row cannot be read at all: undecodable bytes, not as many cells as the header, or a
    cell too long.

    Args:
        cells: the row's cells.
        width: the header's number of cells.
        bad_bytes: whether the row may hold undecodable bytes (a file with none: no need to look).
        size: the row's bytes when known (a row of at most ``MAX_CELL`` bytes has no cell too
            long); 0 when not.
    """
    if bad_bytes and undecodable(cells):
        return UNDECODABLE
    if len(cells) != width:
        many = "too many" if len(cells) > width else "too few"
        return Reason(
            f"{many} cells: {len(cells)}, the header has {width}", "too many or too few cells"
        )
    return None if 0 < size <= MAX_CELL else cell_problem(cells)


def list_answer(items: Sequence[str]) -> str:
    """A list answer (JSON Lines, a Parquet list: a multiple-answer question) as the text the
    engine reads: its items joined by ``, ``, or by line breaks when an item holds a comma, a
    semicolon or a line break (the choice reader splits on those)."""
    kept = [i for i in items if i.strip()]
    if any("," in i or ";" in i or "\n" in i for i in kept):
        return "\n".join(kept)
    return ", ".join(kept)


def second_header(line: int) -> Reason:
    """A row that repeats the header (two files joined into one, a second byte-order mark)."""
    return Reason(f"a second header (the file's header is on line {line})", "a second header")


def read_seed(text: str | None) -> int | None | Reason:
    """A seed cell: the whole number, None when empty, or the reason it is not one.

    A seed is written in ASCII digits, at most :data:`SEED_DIGITS` of them, with an optional
    sign (no ``1_000``, no ``²``: nothing that only Python's ``int()`` would read).
    """
    if text is None or not str(text).strip():
        return None
    value = str(text).strip()
    if _NUMBER.fullmatch(value):
        return int(value)
    if _LONG_NUMBER.fullmatch(value):
        why = f"has more than {SEED_DIGITS} digits"
    else:
        why = "is not a whole number"
    return Reason(f"seed {_shown(value)} {why}", "a seed that is not a whole number")


def no_seed() -> Reason:
    """A row without a seed among rows that have one."""
    return Reason(
        "no seed, while other rows have one (give --seed N for the class seed)",
        "no seed among seeded rows",
    )


def not_in_roster(students: int) -> Reason:
    """A student a per-student issue manifest does not list."""
    return Reason(
        f"not in the issue manifest's roster ({students} students)", "not in the manifest"
    )


def duplicate_student(student: str, first: Origin, named: str | None = None) -> Reason:
    """A student named again in a one-row-per-student format (``named``: as the first row
    wrote the id, when it is written otherwise but prints alike)."""
    if named is not None and named != student:
        return Reason(
            f"student {student} looks like {named} (first at {first[0]}:{first[1]}): ids that "
            "print alike (full-width letters, ligatures) are one student; write it one way",
            "duplicate student",
        )
    return Reason(
        f"duplicate student {student} (first at {first[0]}:{first[1]})", "duplicate student"
    )


def duplicate_answer(student: str, question: str, line: int) -> Reason:
    """A long file's second answer of a student to one slot."""
    return Reason(
        f"duplicate answer of {student} to {question} (first at line {line})",
        "duplicate answer",
    )


def seed_conflict(seed: int, student: str, earlier: int) -> Reason:
    """A long file's row giving a student another seed than an earlier row."""
    return Reason(f"seed {seed} differs from {student}'s seed {earlier}", "a seed that differs")


def unknown_question(name: str, slots: Sequence[str], *, what: str = "question") -> Reason:
    """A column or answer that names no slot of the bank (with the parts, when it names a
    question that has parts). A column's reason ends with "; column ignored"."""
    parts = _parts(tuple(slots)).get(name.casefold())
    hint = f" (it has parts: {', '.join(parts)})" if parts else ""
    text = f"unknown {what} {_shown(name, 60)}{hint}"
    if what.endswith("column"):
        return Reason(f"{text}; column ignored", f"unknown {what}")
    return Reason(text, f"unknown {what}")


@functools.lru_cache(maxsize=8)
def _parts(slots: tuple[str, ...]) -> dict[str, list[str]]:
    """A bank's slots by the question they are parts of (casefolded), once per bank."""
    parts: dict[str, list[str]] = {}
    for slot in slots:
        if "." in slot:
            parts.setdefault(slot.split(".")[0].casefold(), []).append(slot)
    return parts


def duplicate_column(name: str, index: int, first: int) -> Reason:
    """A header cell naming a slot (or a column) that an earlier cell named already."""
    return Reason(
        f"duplicate column {_shown(name, 60)} (column {index + 1}; the first is column "
        f"{first + 1}); column ignored",
        "duplicate column",
    )


def column_of_type(name: str, kind: str) -> Reason:
    """A Parquet column whose values are not text, numbers or lists of them."""
    return Reason(
        f"column {_shown(name, 60)} holds {kind} values, not text; column ignored",
        "a column that is not text",
    )


# --- LMS exports -------------------------------------------------------------------------------


def _lms_column(text: str) -> Reason:
    return Reason(f"{text}; column ignored", "an LMS column that matches nothing")


def canvas_column(name: str, why: str) -> Reason:
    """A Canvas question column that matches no bank question or exported item (``why``)."""
    return _lms_column(f"Canvas question {name[:60]!r} {why}")


def moodle_question(n: int, why: str) -> Reason:
    """A Moodle ``Question N`` text that matches no bank question or exported item."""
    return _lms_column(f"Moodle 'Question {n}' {why}")


def moodle_beyond(column: str, questions: int) -> Reason:
    """A Moodle ``Response N`` past the export's questions (no ``Question N`` to place it)."""
    return _lms_column(f"Moodle {column!r}: the export had {questions} questions")


def moodle_cloze(column: str, question: str) -> Reason:
    """A Moodle response that is a multi-part question exported as one cloze item."""
    return _lms_column(
        f"Moodle {column!r} is the multi-part question {question} (one cloze item): its "
        "responses cannot be read"
    )


def moodle_pool(column: str, question: str) -> Reason:
    """A Moodle response to a pool, without the ``Question N`` texts that say which item."""
    return _lms_column(
        f"Moodle {column!r} is the pool {question}: which version each student drew needs the "
        "'Question N' texts"
    )


def items_of_one_slot(slot: str, items: int, first: int, second: int) -> Reason:
    """A Canvas row answering two items (columns, 0-based) of one slot's pool."""
    return Reason(
        f"answers {items} items of {slot} (columns {first + 1} and {second + 1})",
        "answers a question twice",
    )


def responses_to_one_slot(slot: str, first: int, second: int) -> Reason:
    """A Moodle row whose responses ``first`` and ``second`` both answer one slot."""
    return Reason(
        f"answers {slot} twice (Response {first} and {second})", "answers a question twice"
    )


# --- CSV records that are not rows ---------------------------------------------------------------


def swallowed(start: int, end: int) -> Reason:
    """A quote opened on ``start`` and not closed before ``end + 1``, a line that is a whole row
    itself."""
    where = f"line {start}" if start == end else f"lines {start}–{end} (one cell)"
    return Reason(
        f'a quote (") opened on line {start} is not closed before line {end + 1}, which is a row '
        f"of its own: {where} rejected; the rows after it are read",
        "an unclosed quote",
    )


def never_closed(start: int, end: int) -> Reason:
    """A quote opened on ``start`` and still open at the end of the file."""
    where = f"line {start}" if start == end else f"lines {start}–{end}"
    return Reason(
        f'a quote (") opened on line {start} is never closed ({where} to the end of the file)',
        "an unclosed quote",
    )


def record_too_long(start: int, end: int, size: int) -> Reason:
    """A record over :data:`MAX_RECORD` bytes (read no further than the limit)."""
    where = f"line {start}" if start == end else f"lines {start}–{end}"
    return Reason(
        f"a record of more than {MAX_RECORD:,} bytes ({where}: {size:,} bytes)",
        "a record too long",
    )


# --- JSON Lines -----------------------------------------------------------------------------------


def invalid_json(message: str) -> Reason:
    """A line that is not JSON."""
    return Reason(f"not valid JSON: {message}", "not valid JSON")


def not_a_record() -> Reason:
    """A JSON line that is not an object with an ``answers`` object."""
    return Reason('expected {"student": ..., "answers": {...}}', "not a record")


def too_deep() -> Reason:
    """A JSON line nested deeper than Python's parser goes."""
    return Reason("JSON nested too deeply to be a record", "not a record")


def duplicate_key(key: str) -> Reason:
    """A JSON object naming one key twice (which one counts is up to the parser: neither)."""
    return Reason(f"the key {_shown(key, 60)} appears twice in one object", "a duplicate key")


def unknown_key(key: str) -> Reason:
    """A JSON Lines record with a key that is not one of the format's."""
    known = ", ".join(["student", "seed", "answers", *ROSTER])
    return Reason(
        f"unknown key {_shown(key, 60)} (a record has {known})", "an unknown key in a record"
    )


def bad_escape() -> Reason:
    """A JSON escape such as ``"\\udcff"`` that decodes to half a character."""
    return Reason("an escape that is not a character", "an escape that is not a character")


def wrong_id_type(value: object) -> Reason:
    """A JSON student id that is neither text nor a whole number (a list, an object…)."""
    return Reason(
        f"a student id must be text or a whole number, not {_jsonkind_of(value)}",
        "an id that is not text",
    )


def wrong_answer_type(slot: str, value: object) -> Reason:
    """A JSON answer that is not text, a number, true/false or a list of those."""
    return Reason(
        f"the answer to {slot} must be text, a number or a list of them, not {_jsonkind_of(value)}",
        "an answer that is not text",
    )


def wrong_field_type(key: str, value: object) -> Reason:
    """A JSON seed or roster value of the wrong type."""
    return Reason(
        f"{key} must be text or a whole number, not {_jsonkind_of(value)}",
        "a value that is not text",
    )


def _jsonkind_of(value: object) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, float):
        return f"the number {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


# --- the terminal ---------------------------------------------------------------------------------


class _Rejected(Protocol):
    """What :func:`summarize` reads of a :class:`~quizgym.grading.table.Rejection`."""

    @property
    def source(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def reason(self) -> str: ...
    @property
    def records(self) -> int: ...


def summarize(rejected: Sequence[_Rejected], *, most: int = 20, shown: int = 10) -> list[str]:
    """The lines the terminal shows for a run's rejections: each one as ``file:line: reason``,
    except that a kind of reason given more than ``most`` times shows its first ``shown`` and
    one line for the rest (``rejected.csv`` lists every one).
    """
    kinds = Counter(kind_of(r.reason) for r in rejected)
    printed: Counter[str] = Counter()
    lines: list[str] = []
    for rejection in rejected:
        kind = kind_of(rejection.reason)
        printed[kind] += 1
        if kinds[kind] <= most or printed[kind] <= shown:
            lines.append(f"{rejection.source}:{rejection.line}: {rejection.reason}")
        elif printed[kind] == shown + 1:
            rest = kinds[kind] - shown
            what = "columns" if rejection.records == 0 else "rows"
            lines.append(f"… and {rest:,} more {what} of the same kind ({kind}): see rejected.csv")
    return lines


def kind_of(reason: str) -> str:
    """The kind of a reason (its text, for a reason not worded here)."""
    return reason.kind if isinstance(reason, Reason) else reason


class Seen:
    """The students read so far, and the rule for a student named twice.

    One ``Seen`` spans whatever is read together: a file, a class of several files, or every
    piece of a chunked run (the first occurrence wins; later ones are rejected).
    """

    def __init__(self, earlier: Callable[[str], Origin | None] = lambda _: None) -> None:
        """Start with the students ``earlier`` knows (e.g. a class's rows read before)."""
        self._earlier = earlier
        self._new: dict[str, Origin] = {}
        """By :func:`look_of`: where a student was first read."""
        self._written: dict[str, str] = {}
        """By :func:`look_of`: an id written otherwise than its look (``ｓ１``), as written."""

    def claim(self, student: str, origin: Origin) -> Reason | None:
        """Record a student at ``origin``; if read before (or an id that prints alike was), the
        reason to reject this row."""
        look = look_of(student)
        found = self._new.get(look)
        if found is not None:
            return duplicate_student(student, found, self._written.get(look, look))
        first = self._earlier(student)
        if first is not None:
            return duplicate_student(student, first)
        self._new[look] = origin
        if look != student:
            self._written[look] = student
        return None

    def first(self, student: str) -> Origin | None:
        """Where a student was first read, or None."""
        found = self._new.get(look_of(student))
        return found if found is not None else self._earlier(student)

    def __contains__(self, student: object) -> bool:
        return isinstance(student, str) and self.first(student) is not None
