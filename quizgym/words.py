"""A free-text answer in; its words, Snowball stems, clauses, negations and phrase matches out."""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "CONJUNCTIONS",
    "DETERMINERS",
    "NEGATORS",
    "SCOPE_ENDS",
    "WINDOW",
    "Occurrence",
    "Phrase",
    "Word",
    "compile_phrase",
    "fold",
    "negator_of",
    "occurrences",
    "quote_span",
    "read_words",
    "stem",
]

NEGATORS = frozenset(
    {"not", "no", "never", "nothing", "none", "nobody", "noone", "nowhere", "neither", "nor"}
    | {"without"}
)
"""Words that deny what follows them (``n't`` is spelled out as ``not`` first)."""
NOT_NEGATING = {
    "not": frozenset({"only", "just", "merely", "simply", "least"}),
    "nothing": frozenset({"but"}),
    "no": frozenset({"doubt", "matter"}),
}
"""A negator followed by one of these words denies nothing (``not only bias``)."""
CONJUNCTIONS = frozenset(
    {"but", "however", "although", "though", "whereas", "while", "yet", "so", "because"}
    | {"since", "therefore", "thus", "hence", "instead", "rather", "unlike", "otherwise"}
    | {"when", "whenever", "where", "if", "unless", "which", "who", "whose"}
)
"""Words that open a new clause."""
SCOPE_ENDS = frozenset(
    {"during", "at", "in", "on", "after", "before", "until", "for", "within", "into", "across"}
    | {"over", "under", "throughout"}
)
"""Prepositions that end a negator's reach unless they follow it directly: in ``never appears
during fine-tuning`` only ``appears`` is denied, in ``not in the sample`` the sample is."""
SUBJECTS = frozenset(
    {"i", "we", "you", "he", "she", "it", "they", "this", "that", "these", "those", "there"}
)
"""After ``and``/``or``, a word that starts a clause of its own (``… and we lose …``)."""
BE = frozenset({"is", "are", "was", "were", "be", "been", "being"})
"""A phrase followed by one of these and a negator is denied: ``bias is not the reason``."""
ARTICLES = frozenset({"a", "an", "the"})
"""Optional in a phrase."""
DETERMINERS = ARTICLES | frozenset(
    {"one", "this", "that", "these", "those", "its", "their", "our", "his", "her", "my", "your"}
)
"""Words of an answer that may stand between two words of a phrase."""
WINDOW = 6
"""How many words before a phrase, in its clause, a negator reaches."""
_STARTS = SUBJECTS | DETERMINERS

_IRREGULAR_NOT = {
    "can't": "can",
    "cannot": "can",
    "cant": "can",
    "won't": "will",
    "wont": "will",
    "shan't": "shall",
    "ain't": "is",
}
_BARE_NT = frozenset(
    {"dont", "doesnt", "didnt", "isnt", "arent", "wasnt", "werent", "hasnt", "havent", "hadnt"}
    | {"couldnt", "shouldnt", "wouldnt", "mustnt", "neednt", "mightnt"}
)
_TOKEN = re.compile(r"\w+(?:'\w+)*")
# A clause boundary in the text between two words; the first character of the next word is
# included so that "0.5" (no space after the point) is not a boundary.
_BOUNDARY = re.compile(r"[;!?]|[.:,](?=\s|$)|\s[-\u2013\u2014]+\s")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})


@dataclass(frozen=True, kw_only=True)
class Word:
    """One word of a text, as read."""

    text: str
    """The word folded (``degrees``); a contraction gives two words (``does``, ``not``)."""
    stem: str
    """Its Snowball stem (``degre``)."""
    start: int
    """Where the word typed starts in the original text (both halves of a contraction share
    the span of ``doesn't``)."""
    end: int
    clause: int
    """The number of its clause, from 0."""
    negator: bool
    """It denies what follows (``not``, but not the ``not`` of ``not only``)."""


@dataclass(frozen=True, kw_only=True)
class Phrase:
    """A rubric phrase compiled to stems: a sequence of slots, each a choice of stem sequences.

    ``lose a degree of freedom`` with the synonyms ``{lose: [use up]}`` is
    ``(((lose,), (use, up)), ((degre,),), ((of,),), ((freedom,),))``.
    """

    text: str
    slots: tuple[tuple[tuple[str, ...], ...], ...]


@dataclass(frozen=True, kw_only=True)
class Occurrence:
    """Where a phrase occurs in a text's words."""

    first: int
    """Index of its first word."""
    last: int
    """Index of its last word."""
    negator: int | None
    """Index of the word that denies it, if any."""

    @property
    def negated(self) -> bool:
        """A negator denies it."""
        return self.negator is not None


_LOCAL = threading.local()


def _stemmer() -> Any:
    # PyStemmer's stemmer objects keep a cache and are not safe to share between threads: one
    # per thread, made on first use (so importing this module loads no C extension).
    found = getattr(_LOCAL, "stemmer", None)
    if found is None:
        import Stemmer

        found = _LOCAL.stemmer = Stemmer.Stemmer("english")
    return found


@functools.lru_cache(maxsize=16384)
def stem(word: str) -> str:
    """The Snowball English stem of one folded word (``degrees`` → ``degre``)."""
    return str(_stemmer().stemWord(word))


def fold(text: str) -> str:
    """Text as words are read from it: NFKC, case-folded, straight apostrophes."""
    return unicodedata.normalize("NFKC", text).casefold().translate(_APOSTROPHES)


def _folded(text: str) -> tuple[str, list[int] | None]:
    """The folded text and, when folding changed its length (``ß`` → ``ss``, ligatures), the
    index in the original text of each folded character, so that quotes come from the
    original."""
    folded = fold(text)
    if len(folded) == len(text):
        return folded, None
    pieces, origin = [], []
    for i, character in enumerate(text):
        piece = fold(character)
        pieces.append(piece)
        origin.extend([i] * len(piece))
    return "".join(pieces), origin


def _spelled(token: str) -> tuple[str, ...]:
    """A token with its contraction spelled out: ``doesn't`` → ``does``, ``not``."""
    if token in _IRREGULAR_NOT:
        return (_IRREGULAR_NOT[token], "not")
    if token.endswith("n't") and len(token) > 3:
        return (token[:-3], "not")
    if token in _BARE_NT:
        return (token[:-2], "not")
    return (token,)


@functools.lru_cache(maxsize=8192)
def read_words(text: str) -> tuple[Word, ...]:
    """The words of a text with their stems, clauses and negators (see the module's rules).

    Rubric criteria (``answers.py``) and the grouping of similar answers (``similar.py``) read text
    through this module, so both see the same words. The rules, stated once:

    - **Words.** Text is NFKC-normalised and case-folded, curly apostrophes become ``'``; a word is
      a run of letters, digits or ``_``, with inner apostrophes (``other's``, ``doesn't``).
      Everything else separates words, so ``fine-tuning`` is two words, as is ``n-1``.
    - **Contractions** are spelled out: ``doesn't`` and ``doesnt`` read ``does not``, ``can't`` and
      ``cannot`` ``can not``, ``won't`` ``will not``.
    - **Stems**: the Snowball English stemmer (PyStemmer), so ``degrees`` and ``degree`` are both
      ``degre`` and ``mismatches`` is ``mismatch``. Regular endings only: ``lost`` is not ``lose``
      (a rubric names such forms as synonyms).
    - **Clauses** end at ``. ; : ! ? ,`` (a ``.``, ``:`` or ``,`` only when a space or the end
      follows, so ``0.5`` and ``1,000`` stay whole), at a dash between spaces, before the
      conjunctions of :data:`CONJUNCTIONS` (``but``, ``so``, ``because``, ``when``, ``if``,
      ``which`` …), and before ``and``/``or`` when a pronoun or determiner follows (``… and we lose
      …``, ``… and the maximum …``). A negator right before such a conjunction goes with the clause
      it opens: in ``not because of size`` the ``not`` denies ``because of size``.
    - **Negators** are :data:`NEGATORS` (``not``, ``no``, ``never``, ``nothing``, ``without``,
      ``neither``, ``nor`` … and every ``n't``), except in ``not only``, ``not just``, ``not
      merely``, ``not simply``, ``not least``, ``nothing but``, ``no doubt`` and ``no matter``.
    - **A denied occurrence** of a phrase has a negator among the :data:`WINDOW` words before it in
      its clause (``it has nothing to do with bias``, ``not because of size``, ``would not learn
      representations``), with no preposition of :data:`SCOPE_ENDS` between them unless that follows
      the negator directly (``never appears during fine-tuning`` does not deny fine-tuning; ``not in
      the sample`` denies the sample). Or a denial follows it: ``bias is not (the reason)``, ``bias
      has nothing (to do with it)``, ``size has no (effect)``, ``size does not matter``, ``size
      plays no (role)``. A negator that is one of the phrase's own words (a phrase ``never
      appears``) denies nothing; the rubric (``answers.py``) also keeps it from denying the phrases
      after it (``it never appears downstream``).
    - **Phrases** match as sequences of stems inside one clause, not as bags of words: their
      articles (``a``, ``an``, ``the``) are optional, and a determiner of the answer
      (:data:`DETERMINERS`) may stand between two of their words, so ``lose a degree of freedom``
      matches ``we lose one degree of freedom`` but not ``freedom to lose a degree``.

    Args:
        text: any text, e.g. a student's answer or a rubric phrase.

    Returns:
        Its words in order.
    """
    folded, origin = _folded(text)
    raw: list[tuple[str, int, int, bool]] = []  # (word, start, end, a boundary before it)
    previous_end = 0
    for match in _TOKEN.finditer(folded):
        gap = folded[previous_end : match.start() + 1]
        boundary = bool(raw) and _BOUNDARY.search(gap) is not None
        start, end = match.start(), match.end()
        if origin is not None:
            start, end = origin[start], origin[end - 1] + 1
        for n, piece in enumerate(_spelled(match.group())):
            raw.append((piece, start, end, boundary and n == 0))
        previous_end = match.end()
    texts = [w for w, _, _, _ in raw]
    negators = [
        w in NEGATORS and not (i + 1 < len(texts) and texts[i + 1] in NOT_NEGATING.get(w, ()))
        for i, w in enumerate(texts)
    ]
    clauses: list[int] = []
    clause = 0
    for i, (w, _, _, boundary) in enumerate(raw):
        opens = boundary or w in CONJUNCTIONS
        if w in {"and", "or"} and i + 1 < len(texts) and texts[i + 1] in _STARTS:
            opens = True
        if opens and clauses and clauses[-1] == clause:
            # "not because of size": the negator goes with the clause the conjunction opens
            # (and when it opened its own clause, the conjunction simply joins it).
            alone = i == 1 or clauses[-2] != clause
            if boundary or not negators[i - 1]:
                clause += 1
            elif not alone:
                clause += 1
                clauses[-1] = clause
        clauses.append(clause)
    return tuple(
        Word(text=w, stem=stem(w), start=s, end=e, clause=c, negator=n)
        for (w, s, e, _), c, n in zip(raw, clauses, negators, strict=True)
    )


def _stems(text: str) -> tuple[str, ...]:
    """A phrase's stems without its articles (unless it is nothing but articles)."""
    words = [w.stem for w in read_words(text)]
    content = [s for s in words if s not in ARTICLES]
    return tuple(content or words)


def compile_phrase(text: str, synonyms: Mapping[str, Sequence[str]] | None = None) -> Phrase:
    """A rubric phrase as stems, with the synonyms of its words as alternatives.

    Args:
        text: the phrase, e.g. ``lose a degree of freedom``.
        synonyms: words or phrases of it, each with alternatives: ``{lose: [use up, lost]}``.
            Where two keys start at one word, the longer wins.

    Returns:
        The compiled phrase.
    """
    stems = _stems(text)
    keys = sorted(
        (
            (_stems(key), tuple(_stems(a) for a in alternatives))
            for key, alternatives in (synonyms or {}).items()
        ),
        key=lambda pair: -len(pair[0]),
    )
    slots: list[tuple[tuple[str, ...], ...]] = []
    i = 0
    while i < len(stems):
        for key, alternatives in keys:
            if key and stems[i : i + len(key)] == key:
                choices = dict.fromkeys((key, *alternatives))  # ordered, without repeats
                slots.append(tuple(sorted(choices, key=len, reverse=True)))
                i += len(key)
                break
        else:
            slots.append(((stems[i],),))
            i += 1
    return Phrase(text=text, slots=tuple(slots))


def _match_choice(
    choice: tuple[str, ...], words: Sequence[Word], at: int, *, clause: int, first: bool
) -> int:
    """Match one choice of a slot from word ``at`` inside a clause; the index after it, or -1.

    Determiners of the text may stand before each stem but the phrase's very first one.
    """
    j = at
    for n, wanted in enumerate(choice):
        if not (first and n == 0):
            while (
                j < len(words)
                and words[j].clause == clause
                and words[j].stem != wanted
                and words[j].text in DETERMINERS
            ):
                j += 1
        if j >= len(words) or words[j].clause != clause or words[j].stem != wanted:
            return -1
        j += 1
    return j


def _match_slots(phrase: Phrase, words: Sequence[Word], at: int, *, clause: int, slot: int) -> int:
    """Match the slots from ``slot`` on, from word ``at``; the index after the last, or -1."""
    if slot == len(phrase.slots):
        return at
    for choice in phrase.slots[slot]:
        end = _match_choice(choice, words, at, clause=clause, first=slot == 0)
        if end > 0:
            rest = _match_slots(phrase, words, end, clause=clause, slot=slot + 1)
            if rest > 0:
                return rest
    return -1


def negator_of(
    words: Sequence[Word],
    first: int,
    last: int,
    *,
    after: bool = True,
    ignore: Collection[int] = (),
) -> int | None:
    """The word that denies the words ``first…last`` of a text, if any (the module's rules).

    Args:
        words: the text's words.
        first: the index of the first word.
        last: the index of the last word.
        after: look for a denial after them too (``bias is not the reason``).
        ignore: indices of negators that deny nothing here (they belong to a phrase).

    Returns:
        The index of the negator, or None.
    """
    clause = words[first].clause
    for i in range(first - 1, max(first - WINDOW, 0) - 1, -1):
        if words[i].clause != clause:
            break
        if words[i].negator and i not in ignore:
            return i
        if words[i].text in SCOPE_ENDS:
            before = i - 1
            if before >= 0 and words[before].clause == clause and words[before].negator:
                return None if before in ignore else before
            break
    denial = _denied_after(words, last + 1, clause) if after else None
    return None if denial in ignore else denial


def _denied_after(words: Sequence[Word], at: int, clause: int) -> int | None:
    """The negator of a denial right after a phrase: ``… is not``, ``… has nothing to do``,
    ``… has no effect``, ``… does not matter``, ``… plays no role``."""
    following = [w for w in words[at : at + 3] if w.clause == clause]
    texts = [w.text for w in following] + ["", "", ""]
    if texts[0] in BE and following[1:2] and following[1].negator:
        return at + 1
    if texts[0] in {"has", "have", "had"} and texts[1] in {"nothing", "no"}:
        return at + 1
    if texts[0] in {"do", "does", "did"} and texts[1] == "not" and texts[2].startswith("matter"):
        return at + 1
    if texts[0] in {"play", "plays", "played"} and texts[1] == "no":
        return at + 1
    return None


def occurrences(
    phrase: Phrase, words: Sequence[Word], *, ignore: Collection[int] = ()
) -> list[Occurrence]:
    """Every place a phrase occurs in a text's words, each with the negator that denies it.

    Args:
        phrase: the compiled phrase.
        words: the text's words (:func:`read_words`).
        ignore: indices of negators that deny nothing (the own negators of phrases found).

    Returns:
        The occurrences, in the order of the text; they do not overlap.
    """
    found: list[Occurrence] = []
    if not phrase.slots:
        return found
    i = 0
    while i < len(words):
        end = _match_slots(phrase, words, i, clause=words[i].clause, slot=0)
        if end > 0:
            negator = negator_of(words, i, end - 1, ignore=ignore)
            found.append(Occurrence(first=i, last=end - 1, negator=negator))
            i = end
        else:
            i += 1
    return found


def quote_span(words: Sequence[Word], occurrence: Occurrence) -> tuple[int, int]:
    """Where an occurrence stands in the original text, with the negator that denies it.

    Args:
        words: the text's words.
        occurrence: an occurrence of a phrase in them.

    Returns:
        Its start and end offsets: ``text[start:end]`` is ``lose one degree of freedom``, or
        ``nothing to do with bias`` for a denied ``bias``.
    """
    first, last = occurrence.first, occurrence.last
    if occurrence.negator is not None:
        first, last = min(first, occurrence.negator), max(last, occurrence.negator)
    return words[first].start, words[last].end
