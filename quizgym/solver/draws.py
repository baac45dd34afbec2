"""A bank, a student, a seed and a question in; the question's stream of draws and its choice order
out."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

__all__ = [
    "ATTEMPT",
    "GAMMA",
    "MASK",
    "MIX1",
    "MIX2",
    "attempt_state",
    "choice_order",
    "draw_stream",
    "mix",
    "question_salt",
    "student_digest",
    "student_digests",
    "student_key",
]

MASK = (1 << 64) - 1
"""Draws are 64-bit: arithmetic is modulo 2**64."""
GAMMA = 0x9E3779B97F4A7C15
"""splitmix64's increment: draw k of a state is mix(state + (k+1)·GAMMA)."""
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
"""splitmix64's two finalizer multipliers (MIX1, MIX2)."""
ATTEMPT = 0xD1B54A32D192ED03  # another odd constant: attempt r starts from mix(state + r·δ)


def _hash64(*parts: object) -> int:
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def question_salt(bank: str, question: str) -> int:
    """The salt of a question's draws (xored into each student's key)."""
    return _hash64(bank, question, "question")


def student_digest(bank: str, student: str | None, seed: int | None) -> bytes:
    """SHA-256 of ``bank␟student␟seed`` (empty for None): the one definition of a student's key."""
    return hashlib.sha256(
        f"{bank}\x1f{student or ''}\x1f{'' if seed is None else seed}".encode()
    ).digest()


def student_digests(
    bank: str, students: Sequence[str | None], seeds: Sequence[int | None]
) -> bytes:
    """:func:`student_digest` of a whole class, one after another: its text inline, as a call
    per student would cost as much as its hash (``tests/test_grade_batch.py`` holds the two
    equal)."""
    sha, head = hashlib.sha256, f"{bank}\x1f"
    return b"".join(
        [
            sha(f"{head}{s or ''}\x1f{'' if d is None else d}".encode()).digest()
            for s, d in zip(students, seeds, strict=True)
        ]
    )


def student_key(bank: str, student: str | None, seed: int | None) -> int:
    """The 64-bit key of a student and seed in a bank."""
    return int.from_bytes(student_digest(bank, student, seed)[:8], "big")


def mix(z: int) -> int:
    """splitmix64's finalizer: one 64-bit state to one well-mixed 64-bit draw."""
    z = ((z ^ (z >> 30)) * MIX1) & MASK
    z = ((z ^ (z >> 27)) * MIX2) & MASK
    return z ^ (z >> 31)


def draw_stream(state: int, count: int) -> list[int]:
    """The first ``count`` draws of a state's splitmix64 stream."""
    return [mix((state + (k + 1) * GAMMA) & MASK) for k in range(count)]


def attempt_state(state: int, attempt: int) -> int:
    """The state of a question's draw at attempt ``attempt`` (0: the state itself)."""
    return state if not attempt else mix((state + attempt * ATTEMPT) & MASK)


def _shuffle(order: list[int], draws: list[int]) -> None:
    for position, i in enumerate(range(len(order) - 1, 0, -1)):
        j = draws[position] % (i + 1)
        order[i], order[j] = order[j], order[i]


def choice_order(state: int, *, params: int, choices: int, shuffled: bool) -> list[int]:
    """The order of a question's choices drawn from one state (after its ``params`` draws):
    ``order[k]`` is the bank index of the k-th choice shown.

    It is a module of its own, needing nothing but :mod:`hashlib`, because the drill's first prompt
    orders a question's choices with it before the expression language (mpmath) and the bank format
    (pydantic) are loaded.

    See :mod:`~quizgym.solver.variants` for the scheme: one SHA-256 per (bank, student, seed), xor a
    SHA-256 salt per question, then a splitmix64 stream.
    """
    order = list(range(choices))
    if shuffled and choices:
        _shuffle(order, draw_stream(state, params + choices - 1)[params:])
    return order
