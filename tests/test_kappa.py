"""Cohen's κ between the rubric's suggested scores and a teacher's, against hand-computed values."""

from __future__ import annotations

import pytest

from quizgym.analysis import cohens_kappa


def _pairs(table: list[list[int]], scores: list[float]) -> tuple[list[float], list[float]]:
    """Two raters' scores from a table of counts: row = first rater's score, column = second's."""
    first, second = [], []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            first += [scores[i]] * count
            second += [scores[j]] * count
    return first, second


def test_two_categories() -> None:
    # 50 answers: both full marks 20, rubric full / teacher none 5, the other way 10, both none
    # 15. p_o = 35/50 = 0.7; the rubric gives full marks to 25/50, the teacher to 30/50, so
    # p_e = 0.5·0.6 + 0.5·0.4 = 0.5 and κ = (0.7 − 0.5) / (1 − 0.5) = 0.4.
    rubric, teacher = _pairs([[15, 10], [5, 20]], [0.0, 1.0])
    assert cohens_kappa(rubric, teacher) == pytest.approx(0.4)
    # With two categories the linear weights are the unweighted ones.
    assert cohens_kappa(rubric, teacher, weights="linear") == pytest.approx(0.4)


# 10 answers scored 0, 1 or 2 points:       teacher 0  1  2
TABLE = [[2, 1, 0], [1, 3, 1], [0, 1, 1]]  # rubric 0: 2  1  0;  1: 1  3  1;  2: 0  1  1


def test_three_ordered_categories_unweighted() -> None:
    # p_o = (2 + 3 + 1)/10 = 0.6; both raters' marginals are 3, 5, 2 of 10, so
    # p_e = 0.09 + 0.25 + 0.04 = 0.38 and κ = 0.22 / 0.62 = 11/31.
    rubric, teacher = _pairs(TABLE, [0.0, 1.0, 2.0])
    assert cohens_kappa(rubric, teacher) == pytest.approx(11 / 31)


def test_three_ordered_categories_linearly_weighted() -> None:
    # w = |i − j| / 2. Observed: Σ w·o = 0.5·(1 + 1 + 1 + 1)/10 = 0.2. Expected counts r_i c_j / n
    # are [[0.9, 1.5, 0.6], [1.5, 2.5, 1.0], [0.6, 1.0, 0.4]]: Σ w·e = (0.5·5 + 1·1.2)/10 = 0.37.
    # κ_w = 1 − 0.2/0.37 = 17/37: one point apart counts as half a disagreement.
    rubric, teacher = _pairs(TABLE, [0.0, 1.0, 2.0])
    assert cohens_kappa(rubric, teacher, weights="linear") == pytest.approx(17 / 37)


def test_a_category_nobody_gave_still_stands_between_the_others() -> None:
    # The same table with the scores 0, 1 and 3 given and 2 possible: the categories are 0, 1,
    # 2, 3, so w = |i − j| / 3 over the positions 0, 1, 3. Observed: 1 apart twice (w = 1/3),
    # 1 to 3 twice (w = 2/3): Σ w·o = 2/10. Expected: (1.5 + 1.5)/3 + (1.0 + 1.0)·2/3
    # + (0.6 + 0.6)·1 = 53/15, so Σ w·e = 53/150 and κ_w = 1 − (1/5)/(53/150) = 23/53.
    rubric, teacher = _pairs(TABLE, [0.0, 1.0, 3.0])
    assert cohens_kappa(rubric, teacher, weights="linear", categories=[0, 1, 2, 3]) == (
        pytest.approx(23 / 53)
    )
    # Unweighted κ does not care which categories exist.
    assert cohens_kappa(rubric, teacher, categories=[0, 1, 2, 3]) == pytest.approx(11 / 31)


def test_perfect_agreement_chance_and_worse() -> None:
    assert cohens_kappa([0, 1, 2, 2], [0, 1, 2, 2]) == pytest.approx(1.0)
    assert cohens_kappa(*_pairs([[0, 5], [5, 0]], [0.0, 1.0])) == pytest.approx(-1.0)
    # Independent raters: every cell is its marginals' product, so κ = 0.
    assert cohens_kappa(*_pairs([[1, 1], [1, 1]], [0.0, 1.0])) == pytest.approx(0.0)


def test_undefined_when_there_is_nothing_to_agree_on() -> None:
    assert cohens_kappa([], []) is None
    assert cohens_kappa([2, 2, 2], [2, 2, 2]) is None  # one category: chance agrees fully
    assert cohens_kappa([1, 1], [1, 1], categories=[0, 1]) is None


@pytest.mark.parametrize(
    ("first", "second", "kwargs", "message"),
    [
        ([0, 1], [0], {}, "the raters scored 2 and 1 answers"),
        ([0, 1], [0, 2], {"categories": [0, 1]}, r"scores \[2\] are not among the categories"),
        ([0, 1], [0, 1], {"weights": "quadratic"}, "weights must be 'none' or 'linear'"),
    ],
)
def test_bad_input_is_refused(
    first: list[float], second: list[float], kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        cohens_kappa(first, second, **kwargs)  # type: ignore[arg-type]
