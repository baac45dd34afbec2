"""LMS response exports: Canvas's quiz "Student Analysis" and Moodle's quiz "Responses" CSV.

Both name a question by the text students saw, so a column is matched to the bank by identity,
never by position:

- with an issue manifest (``--issued``, the ``FILE.issued.json`` of ``quizgym export``): to the
  exported item whose text it is, which gives the slot *and the version* (the numbers that
  student saw, or the pool item they drew), for every variant and every part;
- without one: to a question of the bank whose text it is; a question with per-student numbers
  cannot be matched this way (its bank text holds ``{placeholders}``), and is reported.

Canvas: ``name, id, …`` then for every question any student was given a ``"<n>: <text>"`` column
and a points column (a student not given an item has both blank), so a pool's items are separate
columns; the one a student answered says which version they had. Moodle: ``Response N`` columns,
and ``Question N`` (the text of the question each student was given in slot N) when the report
was downloaded with the question text. Without ``Question N`` the slot order comes from the
manifest; without either, the file is refused. A column that matches nothing is reported on the
header line and ignored; a file none of whose columns match is refused.

A matching question is one LMS question, answered in one cell, that maps back onto its items'
slots (``question.item``) by their texts, never by position: Canvas writes every item in the
question's order as ``item=>answer`` joined by ``,`` (``=>`` and ``,`` of a text escaped with a
backslash; an item left unanswered ``item=>``), Moodle the answered ones in the order shown as
``item -> answer`` joined by ``; ``. An item the cell does not name is blank; a cell whose items
cannot be told is given whole to each item, so each is graded unreadable, never guessed.

A cloze is one LMS question too (its text shows each blank as Canvas's ``[name]`` or Moodle's
``_____`` / ``{option; option}``), answered in one cell that maps back onto its blanks' slots
(``question.blank``) by their order in the text: Canvas's fill-in question writes every blank's
typed text joined by ``,`` (``\\,`` within one; an unanswered blank empty), its dropdowns question
only the chosen options, which their texts place (an option more than one blank offers, answered
alone, cannot be placed); Moodle writes ``part 1: …; part 2: …``, every blank numbered. A cell
that cannot be split one way only is given whole to each blank, marked
(:data:`~quizgym.answers.UNSPLIT`), so each is graded unreadable, never guessed.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from quizgym.answers import UNSPLIT, is_blank
from quizgym.errors import SubmissionError
from quizgym.grading.readers.layout import CANVAS_QUESTION, MOODLE_RESPONSE
from quizgym.grading.readers.text import Record
from quizgym.grading.rows import (
    UNDECODABLE,
    canvas_column,
    clean_id,
    items_of_one_slot,
    moodle_beyond,
    moodle_cloze,
    moodle_pool,
    moodle_question,
    responses_to_one_slot,
    row_problem,
    second_header,
    strip_id,
    undecodable,
)
from quizgym.grading.table import ClassAnswers
from quizgym.issued import Issued
from quizgym.model import BLANK, AnyQuestion, Bank, slot_id
from quizgym.types import (
    BlanksInteraction,
    PairingInteraction,
    blanks_of,
    choices_of,
    pairing_of,
    statement_of,
)

__all__ = ["Matcher", "read_canvas", "read_moodle"]

_MOODLE_QUESTION = re.compile(r"^Question (\d+)$")
_POINTS = re.compile(r"^\s*\d+(\.\d+)?\s*$")
_CANVAS_SUMMARY = frozenset({"    Points Possible"})
"""The first cell of the row a Canvas gradebook export puts first (its id cell is blank)."""
_MOODLE_SUMMARY = frozenset({"Overall average", "Group average"})
"""The first cell (Surname) of the rows Moodle's quiz reports append (``overallaverage`` and
``groupavg`` of its grades strings): their identity cells are all blank."""
_MOODLE_IDS = ("id number", "idnumber", "email address", "username")


def _fold(text: str) -> str:
    """Text as an LMS may have rewritten it: tags and entities gone, case and width folded,
    whitespace dropped (an LMS strips tags without leaving the space a line break made)."""
    plain = html.unescape(re.sub(r"<[^>]+>", " ", text))
    return "".join(unicodedata.normalize("NFKC", plain).casefold().split())


def _shown_forms(body: str) -> list[str]:
    """A bank text folded as an LMS may show it: as written, as the HTML an export writes (its
    formulas as ``\\(…\\)`` TeX or as MathML's characters, images as their alt text), and as
    plain text (formulas in Unicode)."""
    from quizgym.richtext import HtmlStyle, html_plain, parse, plain_text, to_html  # LMS files

    forms = [_fold(body), _fold(plain_text(body))]
    for math in ("tex", "mathml"):
        style = HtmlStyle(math=math, image=lambda image: image.src)
        forms.append(_fold(html_plain(to_html(parse(body), style, inline=False))))
    return list(dict.fromkeys(f for f in forms if f))


@dataclass(frozen=True)
class Found:
    """What an LMS column (or cell) stands for."""

    slot: str
    version: int | None = None
    """Index into the manifest's versions of the question (None: no manifest)."""
    whole: bool = False
    """``slot`` is a matching question whose items one cell answers (see the module docs)."""


class Matcher:
    """Finds the slot (and, with a manifest, the version) of an LMS question text."""

    def __init__(self, bank: Bank, issued: Issued | None) -> None:
        self.bank = bank
        self.issued = issued
        self._entries: list[tuple[str, Found | str]] = []
        if issued is not None:
            for item in issued.items:
                question = _question(bank, item.question)
                if question is None:
                    continue
                whole = _whole(question)
                if question.part_ids() and item.part is None and not whole:
                    why = f"{item.question} is one multi-part item in this export (cloze)"
                    self._entries.append((_fold(item.text), why))
                    continue
                blanks = blanks_of(question)
                part = None if blanks is not None else item.part  # a cloze is one LMS item
                found = Found(slot_id(item.question, part), item.version, whole)
                forms = [_fold(item.text)]
                if blanks is not None:  # the manifest writes its blanks {{name}}
                    forms = _blanks_shown(blanks, forms, _ISSUED_BLANK)
                self._entries.extend((form, found) for form in forms)
        else:
            for question in bank.questions:
                whole = _whole(question)
                if question.part_ids() and not whole:
                    continue  # one LMS item per part is not a layout we can recognise unissued
                body = question.prompt
                blanks = blanks_of(question)
                if blanks is not None:
                    body = BLANK.sub(_MARK, body)
                statement = statement_of(question)
                if statement is not None:
                    body = f"{statement}\n{body}"
                forms = _shown_forms(body)
                if blanks is not None:
                    forms = _blanks_shown(blanks, forms, _MARKED)
                for form in forms:
                    self._entries.append((form, Found(question.id, whole=whole)))

    def find(self, text: str) -> Found | str:
        """The slot a text is, or the reason it cannot be told.

        An exact text wins; then the longest item text the column starts with (Moodle's
        question summary appends the choices); then an item text the column begins (a shortened
        header). Texts of several versions that name different slots or versions are ambiguous.
        """
        wanted = _fold(text)
        if not wanted:
            return "no question text"
        exact = [f for t, f in self._entries if t == wanted]
        longer = sorted(
            ((t, f) for t, f in self._entries if len(t) >= 12 and wanted.startswith(t)),
            key=lambda e: -len(e[0]),
        )
        shorter = [f for t, f in self._entries if len(wanted) >= 20 and t.startswith(wanted)]
        for candidates in (exact, [f for t, f in longer if len(t) == len(longer[0][0])] if longer
                           else [], shorter):  # fmt: skip
            distinct = list(dict.fromkeys(candidates))
            if len(distinct) == 1:
                return distinct[0]
            if len(distinct) > 1:
                reasons = [f for f in distinct if isinstance(f, str)]
                if reasons:
                    return reasons[0]
                names = ", ".join(
                    sorted(
                        {
                            f.slot if f.version is None else f"{f.slot} v{f.version}"
                            for f in distinct
                            if isinstance(f, Found)
                        }
                    )
                )
                return f"{_SEVERAL} ({names}): cannot tell which"
        if self.issued is None:
            return "matches no question of the bank (one with per-student numbers needs --issued)"
        return "matches no item of the issue manifest"


_SEVERAL = "its text is that of several items"
_MARK = "QZBLANKQ"
"""What stands for a cloze's blank while its bank text is folded (letters and digits only, so no
Markup reads it as syntax)."""
_MARKED = re.compile("qzblankq")
"""A blank's mark, folded."""
_ISSUED_BLANK = re.compile(r"\{\{[^{}]*\}\}")
"""A blank in a folded manifest text (``{{name}}``: the text students saw, but its blanks)."""


def _whole(question: AnyQuestion) -> bool:
    """Whether one LMS cell answers the question's several slots (a matching question, a
    cloze)."""
    return pairing_of(question) is not None or blanks_of(question) is not None


def _blanks_shown(blanks: BlanksInteraction, forms: list[str], mark: re.Pattern[str]) -> list[str]:
    """A cloze's folded texts with each blank (``mark``, in the text's order) as Canvas shows it
    (``[name]``, and a typed choice's options after it: ``[name] (a / b)``) and as Moodle's
    question summary does (a choice's options ``{a; b}``, any other blank ``_____``)."""
    from quizgym.richtext import plain_text  # LMS files

    names = blanks.names
    dropdowns = all(blanks.blank(name).kind == "choice" for name in names)
    canvas, moodle = [], []
    for name in names:
        choices = [plain_text(c) for c in blanks.blank(name).choices]
        typed = f" ({' / '.join(choices)})" if choices and not dropdowns else ""
        canvas.append(_fold(f"[{name}]{typed}"))
        moodle.append(_fold("{" + "; ".join(choices) + "}" if choices else "_____"))
    out = []
    for form in forms:
        pieces = mark.split(form)
        if len(pieces) != len(names) + 1:
            continue
        for shown in (canvas, moodle):
            out.append("".join(p + b for p, b in zip(pieces, [*shown, ""], strict=True)))
    return list(dict.fromkeys(out))


def _shown(column: str) -> str:
    """A column's name as a message quotes it: at most 60 characters."""
    return repr(column if len(column) <= 60 else column[:59] + "…")


def _question(bank: Bank, qid: str) -> AnyQuestion | None:
    try:
        return bank.question(qid)
    except KeyError:
        return None


class _Answers:
    """LMS answer cells as quizgym reads answers (Canvas joins multiple answers with ``,`` and
    escapes a comma of a choice's text as ``\\,``), with each slot's choice texts folded once."""

    def __init__(self, bank: Bank) -> None:
        self.bank = bank
        self._texts: dict[str, dict[str, str] | None] = {}

    def _choices(self, slot: str) -> dict[str, str] | None:
        """A multiple-answer slot's choice texts by their folded form (None: another kind)."""
        if slot not in self._texts:
            qid, _, part = slot.partition(".")
            options = choices_of(self.bank.question(qid), part or None)
            self._texts[slot] = (
                {_fold(c.text): c.text for c in options.choices}
                if options is not None and options.multiple
                else None
            )
        return self._texts[slot]

    def __call__(self, slot: str, text: str) -> str | None:
        """The answer of a cell (None: blank). Multiple answers whose every piece is a choice's
        text become those texts, one per line (a text may hold a comma, and the order a student
        saw, shuffled or not, does not matter; a line break in a text is read as a space);
        anything else is kept as written."""
        if not text.strip():
            return None
        texts = self._choices(slot)
        if texts is not None:
            pieces = [p.replace("\\,", ",").strip() for p in re.split(r"(?<!\\),", text)]
            if all(_fold(p) in texts for p in pieces):  # a text's own line breaks as spaces
                return "\n".join(" ".join(texts[_fold(p)].split()) for p in pieces)
        return text


class _Pairings:
    """Matching cells of an LMS export read back onto their items (see the module docs), each
    question's item and answer texts folded once."""

    def __init__(self, bank: Bank) -> None:
        self.bank = bank
        self._known: dict[str, tuple[PairingInteraction, dict[str, str], dict[str, str]]] = {}

    def _texts(self, qid: str) -> tuple[PairingInteraction, dict[str, str], dict[str, str]]:
        """The question's pairing, its item ids and its answers by their folded shown forms."""
        if qid not in self._known:
            pairing = pairing_of(self.bank.question(qid))
            assert pairing is not None
            items: dict[str, str] = {}
            for pair in pairing.items:
                for form in _shown_forms(pair.item):
                    items.setdefault(form, pair.id)
            answers: dict[str, str] = {}
            for text in pairing.answers:
                for form in _shown_forms(text):
                    answers.setdefault(form, text)
            self._known[qid] = (pairing, items, answers)
        return self._known[qid]

    def slots(self, qid: str) -> list[str]:
        """The item slots of a matching question, in bank order."""
        return [slot_id(qid, pair.id) for pair in self._texts(qid)[0].items]

    def canvas(self, qid: str, cell: str) -> list[tuple[str, str | None]]:
        """(slot, answer) of each item of a Canvas cell: ``item=>answer,…``."""
        pairing, items, answers = self._texts(qid)
        if not cell.strip():
            return [(slot, None) for slot in self.slots(qid)]
        out: dict[str, str | None] = {}
        for piece in re.split(r"(?<!\\),", cell):
            sides = re.split(r"(?<!\\)=>", piece.replace("\\,", ","))
            if len(sides) != 2:
                return self._whole(qid, cell)
            left, right = (side.replace("\\=>", "=>").strip() for side in sides)
            item = items.get(_fold(left))
            if item is None or item in out:
                return self._whole(qid, cell)
            out[item] = answers.get(_fold(right), right) if right else None
        return [(slot_id(qid, p.id), out.get(p.id)) for p in pairing.items]

    def moodle(self, qid: str, cell: str) -> list[tuple[str, str | None]]:
        """(slot, answer) of each item of a Moodle cell: ``item -> answer; …`` (the items
        answered, in the order shown); the known texts tell the pieces apart, so a text may
        hold ``;`` or ``->``."""
        pairing, items, answers = self._texts(qid)
        if is_blank(cell):
            return [(slot, None) for slot in self.slots(qid)]
        found = _known_pairs(_fold(cell), 0, items, answers)
        if found is None:  # texts the LMS changed: the pieces as written, items still by text
            found = []
            for piece in cell.split(";"):
                left, arrow, right = piece.partition("->")
                item = items.get(_fold(left))
                if not arrow or item is None:
                    return self._whole(qid, cell)
                found.append((item, answers.get(_fold(right), right.strip())))
        out = dict(found)
        if len(out) < len(found):  # an item named twice
            return self._whole(qid, cell)
        return [(slot_id(qid, p.id), out.get(p.id)) for p in pairing.items]

    def _whole(self, qid: str, cell: str) -> list[tuple[str, str | None]]:
        """A cell whose items cannot be told, given to each item (each is graded unreadable)."""
        return [(slot, UNSPLIT + cell) for slot in self.slots(qid)]


def _known_pairs(
    cell: str, at: int, items: dict[str, str], answers: dict[str, str]
) -> list[tuple[str, str]] | None:
    """A folded Moodle cell from ``at`` on as (item id, answer) pairs of known texts, or None."""
    if at >= len(cell):
        return []
    for form, item in items.items():
        if not cell.startswith(form + "->", at):
            continue
        start = at + len(form) + 2
        for text_form, text in answers.items():
            end = start + len(text_form)
            if cell.startswith(text_form, start) and (end == len(cell) or cell[end] == ";"):
                rest = _known_pairs(cell, end + 1, items, answers)
                if rest is not None:
                    return [(item, text), *rest]
    return None


class _Blanks:
    """Cloze cells of an LMS export read back onto their blanks (see the module docs), each
    question's choice texts folded once."""

    def __init__(self, bank: Bank) -> None:
        self.bank = bank
        self._known: dict[str, tuple[BlanksInteraction, list[dict[str, str]]]] = {}

    def _texts(self, qid: str) -> tuple[BlanksInteraction, list[dict[str, str]]]:
        """The question's blanks and, per blank in the text's order, its choices by their
        folded shown forms (none for a number or a word)."""
        if qid not in self._known:
            blanks = blanks_of(self.bank.question(qid))
            assert blanks is not None
            options = []
            for name in blanks.names:
                texts: dict[str, str] = {}
                for text in blanks.blank(name).choices:
                    for form in _shown_forms(text):
                        texts.setdefault(form, text)
                options.append(texts)
            self._known[qid] = (blanks, options)
        return self._known[qid]

    def slots(self, qid: str) -> list[str]:
        """The blank slots of a cloze, in the text's order."""
        return [slot_id(qid, name) for name in self._texts(qid)[0].names]

    def canvas(self, qid: str, cell: str) -> list[tuple[str, str | None]]:
        """(slot, answer) of each blank of a Canvas cell: the blanks' answers in the text's
        order joined by ``,`` (``\\,`` within one); a fill-in question writes every blank (an
        unanswered one empty), a dropdowns question only the chosen options, which their texts
        then place."""
        blanks, options = self._texts(qid)
        if not cell.strip():
            return [(slot, None) for slot in self.slots(qid)]
        pieces = [p.replace("\\,", ",").strip() for p in re.split(r"(?<!\\),", cell)]
        if len(pieces) < len(options) and all(options):  # dropdowns: the chosen ones only
            placed = _placed([_fold(p) for p in pieces], options)
            if placed is None:
                return self._whole(qid, cell)
            given: list[str | None] = [None] * len(options)
            for at, piece in zip(placed, pieces, strict=True):
                given[at] = piece
        elif len(pieces) == len(options):
            given = [p or None for p in pieces]
        else:
            return self._whole(qid, cell)
        return self._known_texts(qid, given)

    def moodle(self, qid: str, cell: str) -> list[tuple[str, str | None]]:
        """(slot, answer) of each blank of a Moodle cell: qtype_multianswer's ``part 1: …;
        part 2: …`` (every blank, numbered in the text's order; the word ``part`` as the site's
        language writes it). A cell that splits into its parts in more than one way, or not in
        order, cannot be told."""
        blanks, options = self._texts(qid)
        if is_blank(cell):
            return [(slot, None) for slot in self.slots(qid)]
        word = re.match(r"\s*([^\d:;]*?)\s*1\s*:", cell)
        if word is None:
            return self._whole(qid, cell)
        marks = [rf"{re.escape(word[1])}\s*{k}\s*:" for k in range(1, len(options) + 1)]
        split = [
            re.fullmatch(r"\s*" + r";\s*".join(f"{m}({run})" for m in marks), cell, re.DOTALL)
            for run in (".*?", ".*")  # the first and the last way it splits
        ]
        if split[0] is None or split[1] is None or split[0].groups() != split[1].groups():
            return self._whole(qid, cell)
        return self._known_texts(qid, [g.strip() or None for g in split[0].groups()])

    def _known_texts(self, qid: str, given: list[str | None]) -> list[tuple[str, str | None]]:
        """Each blank's answer, a choice's as its bank text when it reads as one."""
        _, options = self._texts(qid)
        return [
            (slot, texts.get(_fold(text), text) if text is not None else None)
            for slot, texts, text in zip(self.slots(qid), options, given, strict=True)
        ]

    def _whole(self, qid: str, cell: str) -> list[tuple[str, str | None]]:
        """A cell whose blanks cannot be told, given to each blank (each is graded unreadable)."""
        return [(slot, UNSPLIT + cell) for slot in self.slots(qid)]


def _placed(pieces: list[str], options: list[dict[str, str]]) -> list[int] | None:
    """Where folded choice texts stand among the blanks, in order, each among its blank's
    choices: the blanks' indices, or None unless exactly one way fits."""
    ways: list[list[int]] = []

    def place(k: int, start: int, taken: list[int]) -> None:
        if len(ways) > 1:
            return
        if k == len(pieces):
            ways.append(taken)
            return
        for at in range(start, len(options) - (len(pieces) - k) + 1):
            if pieces[k] in options[at]:
                place(k + 1, at + 1, [*taken, at])

    place(0, 0, [])
    return ways[0] if len(ways) == 1 else None


class _Wholes:
    """Cells that answer a question's several slots: a matching question's or a cloze's."""

    def __init__(self, bank: Bank) -> None:
        self.bank = bank
        self.pairings = _Pairings(bank)
        self.blanks = _Blanks(bank)

    def _of(self, qid: str) -> _Pairings | _Blanks:
        return self.pairings if pairing_of(self.bank.question(qid)) is not None else self.blanks

    def slots(self, qid: str) -> list[str]:
        """The slots one cell of the question answers."""
        return self._of(qid).slots(qid)

    def canvas(self, qid: str, cell: str) -> list[tuple[str, str | None]]:
        """(slot, answer) of each slot of a Canvas cell."""
        return self._of(qid).canvas(qid, cell)

    def moodle(self, qid: str, cell: str) -> list[tuple[str, str | None]]:
        """(slot, answer) of each slot of a Moodle cell."""
        return self._of(qid).moodle(qid, cell)


def _by_text(bank: Bank, answers: ClassAnswers, slot: str) -> None:
    """A choice slot read from an LMS export: its answers are choice texts, not letters."""
    qid, _, part = slot.partition(".")
    options = choices_of(bank.question(qid), part or None)
    if options is not None and options.lettered:
        answers.by_text.add(slot)


def read_canvas(
    bank: Bank,
    answers: ClassAnswers,
    source: str,
    header: list[str],
    rows: Iterable[Record],
    *,
    issued: Issued | None = None,
    header_line: int = 1,
) -> None:
    """Read a Canvas "Student Analysis" CSV (see the module docs)."""
    names = [h.casefold() for h in header]
    id_col = names.index("id")
    matcher = Matcher(bank, issued)
    columns: dict[str, list[tuple[int, int | None, int | None]]] = {}
    answer = _Answers(bank)
    joined = _Wholes(bank)
    wholes: set[str] = set()
    ambiguous: list[str] = []
    for index, name in enumerate(header):
        match = CANVAS_QUESTION.match(name)
        if not match:
            continue
        found = matcher.find(match.group(2))
        if isinstance(found, str):
            answers.ignore_column(source, header_line, canvas_column(name, found))
            if found.startswith(_SEVERAL):
                ambiguous.append(f"{_shown(name)} {found.removeprefix('its text ')}")
            continue
        points = index + 1 if index + 1 < len(header) and _POINTS.match(header[index + 1]) else None
        columns.setdefault(found.slot, []).append((index, points, found.version))
        if found.whole:
            wholes.add(found.slot)
        for slot in joined.slots(found.slot) if found.whole else [found.slot]:
            answers.mark_present(slot)
            _by_text(bank, answers, slot)
    if not columns:
        if ambiguous:  # say what is ambiguous, not that nothing matches
            raise SubmissionError(
                source,
                f"no question column of this Canvas export names one question of the bank: "
                f"{ambiguous[0]}; give those questions different texts, or grade with --issued "
                "FILE (the manifest of the export tells its items apart)",
                header_line,
            )
        raise SubmissionError(
            source, "no question column of this Canvas export matches the bank", header_line
        )
    width = len(header)
    for record in rows:
        row = record.cells or []
        chosen: dict[str, tuple[int, int | None]] = {}
        twice = None
        for slot, cols in columns.items():
            given = [
                (i, v)
                for i, p, v in cols
                if _cell(row, i).strip() or (p is not None and _cell(row, p).strip())
            ]
            if len(given) > 1:
                twice = items_of_one_slot(slot, len(given), given[0][0], given[1][0])
                break
            if given:
                chosen[slot] = given[0]
        at = _admit(
            answers,
            source,
            record,
            width,
            [id_col],
            problem=twice,
            summary=_CANVAS_SUMMARY,
            header_id=names[id_col],
            header_line=header_line,
        )
        if at is None:
            continue
        for slot, (index, version) in chosen.items():
            cell = _cell(row, index)
            read = joined.canvas(slot, cell) if slot in wholes else [(slot, answer(slot, cell))]
            for one, value in read:
                answers.mark_present(one)[at] = value
                if version is not None:
                    answers.set_version(one, at, version)


def read_moodle(
    bank: Bank,
    answers: ClassAnswers,
    source: str,
    header: list[str],
    rows: Iterable[Record],
    *,
    issued: Issued | None = None,
    header_line: int = 1,
) -> None:
    """Read a Moodle quiz "Responses" CSV (see the module docs).

    Raises:
        SubmissionError: no identity column; or no ``Question N`` columns and no manifest.
    """
    names = [h.casefold() for h in header]
    identity = [names.index(n) for n in _MOODLE_IDS if n in names]
    id_col = identity[0] if identity else None
    if id_col is None:
        raise SubmissionError(
            source,
            "Moodle responses export without an 'ID number' or 'Email address' column",
            header_line,
        )
    texts = {int(m[1]): k for k, h in enumerate(header) if (m := _MOODLE_QUESTION.match(h))}
    responses = {int(m[1]): k for k, h in enumerate(header) if (m := MOODLE_RESPONSE.match(h))}
    matcher = Matcher(bank, issued)
    answer = _Answers(bank)
    joined = _Wholes(bank)
    fixed: dict[int, Found] = {}  # Response N without Question N: from the manifest's slot order
    missing = [n for n in responses if n not in texts]
    if missing and issued is None:
        raise SubmissionError(
            source,
            "Moodle Responses export without 'Question N' columns: which question each response "
            "answers cannot be told; download the report with the question text shown, or grade "
            "with --issued FILE (the manifest of the export gives the order)",
            header_line,
        )
    if missing and issued is not None:
        order = _slot_order(issued)
        slots = set(bank.slot_ids())
        for n in missing:
            column = f"Response {n}"
            if n > len(order):
                answers.ignore_column(source, header_line, moodle_beyond(column, len(order)))
                continue
            slot, versions = order[n - 1]
            question = _question(bank, slot) if slot not in slots else None
            whole = question is not None and _whole(question)
            if slot not in slots and not whole:
                answers.ignore_column(source, header_line, moodle_cloze(column, slot))
            elif len(versions) > 1:
                answers.ignore_column(source, header_line, moodle_pool(column, slot))
            else:
                fixed[n] = Found(slot, next(iter(versions)), whole)
    data = list(rows)
    reported: set[tuple[int, str]] = set()
    width = len(header)
    mapped = bool(fixed)
    for record in data:
        row = record.cells or []
        filled: dict[str, int] = {}
        cells: list[tuple[Found, int]] = []
        twice = None
        for n, index in sorted(responses.items()):
            found: Found | str | None = fixed.get(n)
            if found is None and n in texts:
                text = _cell(row, texts[n])
                if not text.strip():
                    continue  # the student was not given slot N
                found = matcher.find(text)
            if found is None:
                continue
            if isinstance(found, str):
                if (n, found) not in reported:
                    reported.add((n, found))
                    answers.ignore_column(source, header_line, moodle_question(n, found))
                continue
            mapped = True
            if found.slot in filled:
                twice = responses_to_one_slot(found.slot, filled[found.slot], n)
                break
            filled[found.slot] = n
            cells.append((found, index))
        at = _admit(
            answers,
            source,
            record,
            width,
            identity,
            problem=twice,
            summary=_MOODLE_SUMMARY,
            header_id=names[identity[0]],
            header_line=header_line,
        )
        if at is None:
            continue
        for found, index in cells:
            cell = _cell(row, index)
            read = (
                joined.moodle(found.slot, cell)
                if found.whole
                else [(found.slot, answer(found.slot, cell))]
            )
            for slot, value in read:
                answers.mark_present(slot)[at] = value
                _by_text(bank, answers, slot)
                if found.version is not None:
                    answers.set_version(slot, at, found.version)
    if not mapped and responses:
        raise SubmissionError(
            source, "no response column of this Moodle export matches the bank", header_line
        )


def _slot_order(issued: Issued) -> list[tuple[str, set[int]]]:
    """The LMS's question slots in export order, each at its first item: (slot, versions); the
    items of a pool share one slot."""
    order: dict[str, set[int]] = {}
    for item in issued.items:
        order.setdefault(slot_id(item.question, item.part), set()).add(item.version)
    return list(order.items())


def _cell(row: Sequence[str], index: int) -> str:
    return row[index] if index < len(row) else ""


def _admit(
    answers: ClassAnswers,
    source: str,
    record: Record,
    width: int,
    identity: Sequence[int],
    *,
    problem: str | None,
    summary: frozenset[str],
    header_id: str,
    header_line: int,
) -> int | None:
    """A data row's student, admitted; None for a summary row or a rejected one (``problem``:
    a reason found already).

    Args:
        answers: the class.
        source: the file.
        record: the row.
        width: the header's cells.
        identity: the columns that name a student, the id first.
        problem: why the row is rejected, when that is known already.
        summary: the first cells of the LMS's summary rows (skipped when their identity cells
            are blank: a student named "Overall average" is graded).
        header_id: the header's id cell, casefolded (a row that repeats it is a second header).
        header_line: the header's line.
    """
    id_col = identity[0]
    line = record.start
    if record.cells is None:
        assert record.problem is not None
        first = record.first
        who = clean_id(first[id_col]) if id_col < len(first) else ""
        answers.reject(source, line, who, record.problem)
        return None
    row = record.cells
    student = clean_id(row[id_col]) if id_col < len(row) else ""
    if undecodable(row):
        answers.reject(source, line, student, UNDECODABLE)
        return None
    if row[0] in summary and all(k >= len(row) or not row[k].strip() for k in identity):
        answers.skip(source)
        return None
    problem = row_problem(row, width, size=record.size) or problem
    if problem is not None:
        answers.reject(source, line, student, problem)
        return None
    if strip_id(row[id_col]).lstrip("\ufeff").casefold() == header_id:
        answers.reject(source, line, "", second_header(header_line))
        return None
    return answers.admit(source, line, strip_id(row[id_col]), None)
