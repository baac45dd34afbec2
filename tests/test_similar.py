"""Answers grouped by similarity: paraphrases together, a denial apart, offline, deterministic."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import require_module
from hypothesis import given, settings
from hypothesis import strategies as st

from quizgym import similar
from quizgym.errors import QuizgymError
from quizgym.similar import group_answers

# Why does the sample variance divide by n − 1? A class's answers, by what they say.
ANSWERS = [
    "Because we lose one degree of freedom by estimating the mean.",  # 0 degree of freedom
    "Estimating the mean from the sample loses a degree of freedom.",  # 1 degree of freedom
    "we lose a degree of freedom when we estimate the sample mean",  # 2 degree of freedom
    "One degree of freedom is lost when the mean is estimated.",  # 3 degree of freedom
    "We do not lose a degree of freedom by estimating the mean.",  # 4 the denial
    "It makes the variance estimate unbiased.",  # 5 unbiased
    "Dividing by n - 1 gives an unbiased estimate of the variance.",  # 6 unbiased
    "so that the sample variance is an unbiased estimator",  # 7 unbiased
    "It has nothing to do with bias.",  # 8
    "because n is small",  # 9
    "I don't know",  # 10 don't know
    "dont know",  # 11 don't know
    "Because we lose one degree of freedom by estimating the mean.",  # 12 = 0
    "we LOSE a degree of freedom  when we estimate the sample mean",  # 13 = 2, case and spaces
]
GROUPS = [[0, 12, 2, 13, 1, 3], [5, 6, 7], [10, 11], [4], [8], [9]]

# Why can't r = 0.8 between ice cream sales and drownings show that one causes the other?
CORRELATION = [
    "Correlation is not causation.",  # 0
    "correlation does not imply causation",  # 1
    "Correlation doesn't prove causation",  # 2
    "A third variable, temperature, causes both.",  # 3
    "Summer heat drives both ice cream sales and swimming.",  # 4
    "Hot weather increases both ice cream sales and swimming",  # 5
    "Ice cream causes drowning.",  # 6
    "They are correlated so one causes the other.",  # 7
    "Because of the weather: in summer people swim more and eat more ice cream.",  # 8
    "the temperature is a confounding third variable",  # 9
]


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No network: the hub told to stay offline and every socket connection refused."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"a network connection was attempted: {args!r}")

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    similar._wordllama.cache_clear()  # load the model again, under the guard
    yield
    similar._wordllama.cache_clear()


def test_paraphrases_group_together_and_the_denial_stays_apart(offline: None) -> None:
    assert group_answers(ANSWERS) == GROUPS


def test_other_answers_group_by_what_they_say(offline: None) -> None:
    assert group_answers(CORRELATION) == [[0, 1, 2], [3, 9], [4, 5], [6], [7], [8]]


def test_wordllama_groups_paraphrases_the_stems_miss_without_the_network(offline: None) -> None:
    require_module("wordllama")
    assert group_answers(ANSWERS, method="wordllama") == GROUPS
    # "Because of the weather: in summer …" says what 4 and 5 say in other words.
    assert group_answers(CORRELATION, method="wordllama") == [
        [0, 1, 2],
        [4, 5, 8],
        [3, 9],
        [6],
        [7],
    ]


def test_the_embeddings_alone_would_put_the_denial_with_the_paraphrases(offline: None) -> None:
    # Why the denial guard exists: the denial is closer to the first answer than a paraphrase.
    require_module("wordllama")
    vectors = similar._wordllama().embed([ANSWERS[0], ANSWERS[3], ANSWERS[4]], norm=True)
    paraphrase, denial = vectors[1] @ vectors[0], vectors[2] @ vectors[0]
    assert denial > paraphrase + 0.1
    assert group_answers([ANSWERS[0], ANSWERS[4]], method="wordllama", threshold=0.0) == [
        [0],
        [1],
    ]


def test_answers_that_deny_different_things_never_share_a_group() -> None:
    texts = ["it is not biased", "it is biased, not because of size", "it is not biased at all"]
    assert group_answers(texts, threshold=0.0) == [[0, 2], [1]]


def test_a_threshold_of_one_groups_only_the_same_stems() -> None:
    texts = ["we lose a degree of freedom", "We lose degrees of freedom!", "we lose freedom"]
    assert group_answers(texts, threshold=1.0) == [[0, 1], [2]]


def test_blank_and_empty_answers_are_one_group_and_no_answers_no_group() -> None:
    assert group_answers(["", "  ", "ok", "\t"]) == [[0, 1, 3], [2]]
    assert group_answers([]) == []


def test_the_grouping_is_the_same_in_every_process() -> None:
    # Each process hashes strings with another seed: a grouping that followed set or dict order
    # of texts would differ between them.
    texts = ANSWERS + CORRELATION
    code = (
        "import json, sys\nfrom quizgym.similar import group_answers\n"
        "print(json.dumps(group_answers(json.load(sys.stdin))))"
    )
    runs = []
    for seed in ("0", "1", "4242"):
        done = subprocess.run(
            [sys.executable, "-c", code],
            input=json.dumps(texts),
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        runs.append(json.loads(done.stdout))
    assert runs[0] == runs[1] == runs[2] == group_answers(texts)
    assert sorted(i for g in runs[0] for i in g) == list(range(len(texts)))


def test_an_unknown_method_is_refused() -> None:
    with pytest.raises(QuizgymError, match="no grouping method 'bert': use one of stems, word"):
        group_answers(["a"], method="bert")  # type: ignore[arg-type]


def test_without_the_extra_wordllama_asks_to_be_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "wordllama", None)  # import wordllama raises ImportError
    similar._wordllama.cache_clear()
    try:
        with pytest.raises(QuizgymError) as error:
            group_answers(["a", "b"], method="wordllama")
    finally:
        similar._wordllama.cache_clear()
    assert str(error.value) == (
        'grouping answers with wordllama needs it installed: pip install "quizgym[similar]"'
    )


def test_the_stems_method_loads_no_embedding_model() -> None:
    code = (
        "import sys; from quizgym.similar import group_answers; "
        "group_answers(['we lose a df', 'a df is lost']); "
        "print(sorted(m for m in ('wordllama', 'tokenizers', 'safetensors') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"


@settings(max_examples=80, deadline=None)
@given(
    picks=st.lists(st.integers(min_value=0, max_value=len(ANSWERS) + 2), max_size=12),
    counts=st.lists(st.integers(min_value=1, max_value=6), min_size=12, max_size=12),
)
def test_counts_group_as_the_texts_repeated_would(picks: list[int], counts: list[int]) -> None:
    """Each text weighing as many students as gave it groups as the texts given that often:
    the same groups, in the same order, every text in one."""
    pool = [*ANSWERS, "it is not biased", "We lose degrees of freedom!", ""]
    texts = [pool[p] for p in picks]
    counts = counts[: len(texts)]
    repeated = [t for t, n in zip(texts, counts, strict=True) for _ in range(n)]
    owner = [i for i, n in enumerate(counts) for _ in range(n)]
    expected = [list(dict.fromkeys(owner[m] for m in group)) for group in group_answers(repeated)]
    got = group_answers(texts, counts=counts)
    assert got == expected
    assert sorted(i for g in got for i in g) == list(range(len(texts)))
