"""A slot's free-text answers in, groups of similar answers out, so that a teacher reads one answer
per group."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from quizgym.errors import QuizgymError
from quizgym.words import fold, negator_of, read_words

__all__ = ["METHODS", "STOP_WORDS", "THRESHOLDS", "Method", "group_answers"]

Method = Literal["stems", "wordllama"]
METHODS: tuple[Method, ...] = ("stems", "wordllama")
THRESHOLDS: dict[Method, float] = {"stems": 0.35, "wordllama": 0.6}
"""The least average similarity at which an answer joins a group, per method."""
INSTALL = 'grouping answers with wordllama needs it installed: pip install "quizgym[similar]"'

STOP_WORDS = frozenset(
    {"a", "an", "the", "and", "or", "but", "if", "then", "so", "because", "as", "than", "that"}
    | {"this", "these", "those", "of", "to", "in", "on", "at", "by", "for", "with", "from"}
    | {"into", "onto", "about", "it", "its", "is", "are", "was", "were", "be", "been", "being"}
    | {"am", "do", "does", "did", "have", "has", "had", "i", "we", "you", "he", "she", "they"}
    | {"me", "us", "him", "her", "them", "my", "our", "your", "his", "their", "there", "here"}
    | {"which", "who", "whom", "whose", "what", "when", "where", "why", "how", "will", "would"}
    | {"can", "could", "shall", "should", "may", "might", "must", "also", "just", "very", "too"}
)
"""Function words left out of an answer's stems (negators are not among them)."""

FloatArray = npt.NDArray[np.float64]


def _features(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """An answer's content stems (denied ones marked ``¬``) and its denied stems alone."""
    words = read_words(text)
    stems, denied = set(), set()
    for i, word in enumerate(words):
        if word.negator or word.text in STOP_WORDS:
            continue
        if negator_of(words, i, i, after=False) is None:
            stems.add(word.stem)
        else:
            stems.add("¬" + word.stem)
            denied.add(word.stem)
    return frozenset(stems), frozenset(denied)


def _agree(denied: frozenset[str], other: frozenset[str]) -> bool:
    """Two answers may share a group: neither denies anything, or they deny something alike."""
    return denied == other or bool(denied & other)


class _Jaccard:
    """The Jaccard index of one answer's stem set with each earlier one's, from postings (the
    answers each stem occurs in), so memory stays linear in the number of answers."""

    def __init__(self, sets: Sequence[frozenset[str]]) -> None:
        postings: dict[str, list[int]] = {}
        for u, stems in enumerate(sets):
            for stem in stems:
                postings.setdefault(stem, []).append(u)
        self.sets = sets
        self.postings = {stem: np.array(ids, dtype=np.int64) for stem, ids in postings.items()}
        self.sizes = np.array([len(stems) for stems in sets], dtype=np.float64)

    def row(self, u: int) -> FloatArray:
        """Similarity of answer ``u`` with answers ``0…u-1`` (0 where both sets are empty)."""
        lists = [self.postings[stem] for stem in self.sets[u]]
        earlier = [ids[: int(np.searchsorted(ids, u))] for ids in lists]
        hits = np.concatenate(earlier) if earlier else np.zeros(0, dtype=np.int64)
        shared = np.bincount(hits, minlength=u)[:u].astype(np.float64)
        union = self.sizes[u] + self.sizes[:u] - shared
        similarity: FloatArray = np.divide(shared, union, out=np.zeros(u), where=union > 0)
        return similarity


@functools.cache
def _wordllama() -> Any:
    try:
        import wordllama
    except ImportError as error:
        raise QuizgymError(INSTALL) from error
    # The wheel holds the weights in weights/ and the tokenizer in tokenizers/; load() looks for
    # <cache_dir>/weights and <cache_dir>/tokenizers, so the package folder as cache_dir finds
    # both, and disable_download=True makes a missing file an error instead of a download.
    return wordllama.WordLlama.load(
        cache_dir=Path(wordllama.__file__).parent, disable_download=True
    )


class _Cosine:
    """The cosine similarity of one answer's WordLlama embedding with each earlier one's."""

    BLOCK = 256
    """Rows computed at once: one matrix product per block instead of one pass per row."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.vectors = np.asarray(_wordllama().embed(list(texts), norm=True), dtype=np.float32)
        self.start, self.block = 0, np.zeros((0, 0), dtype=np.float32)

    def row(self, u: int) -> FloatArray:
        """Similarity of answer ``u`` with answers ``0…u-1``."""
        if not self.start <= u < self.start + len(self.block):
            self.start = u
            end = min(u + self.BLOCK, len(self.vectors))
            self.block = self.vectors[u:end] @ self.vectors[:end].T
        return self.block[u - self.start, :u].astype(np.float64)


def group_answers(
    texts: Sequence[str],
    *,
    method: Method = "stems",
    threshold: float | None = None,
    counts: Sequence[int] | None = None,
) -> list[list[int]]:
    """Group answers that say the same thing, most common group first.

    Two ways to compare two answers:

    - ``stems`` (the default; offline, nothing to install): each answer becomes the set of its
      content stems (``quizgym.words``: Snowball stems, without the function words of
      :data:`STOP_WORDS`), a stem within the reach of a negator before it marked as denied (``not
      biased`` gives ``¬bias``, not ``bias``; in ``correlation is not causation`` only causation is
      denied). Two answers are as similar as the Jaccard index of their sets, the stems they share
      over the stems either has: ``we lose one degree of freedom`` and ``one degree of freedom is
      lost`` share ``degre``, ``freedom`` of {lose, degre, freedom, lost}: 0.5.
    - ``wordllama`` (``pip install "quizgym[similar]"``): the cosine of the answers' WordLlama
      embeddings (the 16 MB ``l2_supercat`` model that ships inside the wordllama wheel, loaded from
      the installed package with downloads switched off: nothing is fetched, ever). It sees
      paraphrases the stems miss (``uses up`` ~ ``loses``).

    Either way the grouping is the same, and deterministic: answers equal once case and spaces are
    folded are one answer; the distinct answers, most common first (ties: the first typed), each
    join the group whose answers they resemble most on average, when that average reaches the
    threshold (:data:`THRESHOLDS`), and otherwise start a group. **An answer that denies something
    never shares a group with one that does not, nor with one that denies something else**: two
    answers of a group deny nothing, or deny at least one stem alike (``not causation`` and ``does
    not imply causation``). The embeddings need that guard: they put "we do not lose a degree of
    freedom" closer to "we lose one degree of freedom" than a correct paraphrase ("one degree of
    freedom is lost when the mean is estimated"). So grouping orders a teacher's work and never
    awards points.

    Args:
        texts: the answers, e.g. every student's answer to one question.
        method: ``stems`` (Jaccard index of content stems; offline, no extra dependency) or
            ``wordllama`` (cosine of embeddings; ``pip install "quizgym[similar]"``).
        threshold: the least average similarity at which an answer joins a group (default
            per method: :data:`THRESHOLDS`).
        counts: how many students gave each text (default: one each): the groups are those
            of each text repeated as often, without repeating it.

    Returns:
        Groups of indices into ``texts``; every index is in exactly one group. Groups come
        largest first (ties: the one with the earliest answer); in a group, the most common
        answer's indices come first, then the next most common, each in the order given.

    Raises:
        QuizgymError: ``wordllama`` asked for but not installed, or an unknown method.
    """
    if method not in METHODS:
        raise QuizgymError(f"no grouping method {method!r}: use one of {', '.join(METHODS)}")
    limit = THRESHOLDS[method] if threshold is None else threshold
    by_text: dict[str, list[int]] = {}
    folded: dict[str, str] = {}  # a class types the same answer many times: fold each once
    for index, text in enumerate(texts):
        plain = folded.get(text)
        if plain is None:
            plain = folded[text] = " ".join(fold(text).split())
        by_text.setdefault(plain, []).append(index)
    if counts is None:
        weight: Callable[[list[int]], int] = len
    else:
        if len(counts) != len(texts):
            raise ValueError(f"{len(counts)} counts for {len(texts)} texts")
        given = list(counts)

        def weight(indices: list[int]) -> int:
            return sum(given[i] for i in indices)

    # Distinct answers, most common first, then in the order they were first typed.
    distinct = sorted(by_text.items(), key=lambda item: (-weight(item[1]), item[1][0]))
    if not distinct:
        return []
    features = [_features(text) for text, _ in distinct]
    similar: _Jaccard | _Cosine = (
        _Jaccard([stems for stems, _ in features])
        if method == "stems"
        else _Cosine([texts[indices[0]] for _, indices in distinct])
    )
    group = np.full(len(distinct), -1)
    sizes: list[int] = []
    denials: list[set[frozenset[str]]] = []  # per group: what its answers deny
    for u, (_, denied) in enumerate(features):
        if sizes:
            totals = np.bincount(group[:u], weights=similar.row(u), minlength=len(sizes))
            average = totals / np.array(sizes)
            # The most similar group first (the first of equals: the earlier group) of those
            # close enough whose every answer denies what this one denies.
            for best in np.lexsort((np.arange(len(sizes)), -average)):
                if average[best] < limit:
                    break
                if all(_agree(denied, other) for other in denials[best]):
                    group[u] = best
                    sizes[best] += 1
                    denials[best].add(denied)
                    break
            if group[u] >= 0:
                continue
        group[u] = len(sizes)
        sizes.append(1)
        denials.append({denied})
    groups: list[list[int]] = [[] for _ in sizes]
    for u, (_, indices) in enumerate(distinct):
        groups[group[u]].extend(indices)
    return sorted(groups, key=lambda members: (-weight(members), min(members)))
