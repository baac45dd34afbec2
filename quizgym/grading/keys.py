"""A large class's draw keys, hashed by a second process while this one grades.

Each student's versions are drawn from a SHA-256 of the bank, their id and their seed
(:func:`quizgym.solver.draws.student_digests`). For 200,000 students that is about 0.1 s of
Python, one short hash at a time, which no thread can share: hashlib holds the GIL for inputs
this short. On a machine with more than one core, the grader hands a large class's ids to a
helper Python process that runs the same function, grades the slots whose questions do not
vary meanwhile, and takes the keys when the first slot that varies needs them.

The helper is never trusted blindly and never needed: it runs quizgym's own code from the same
interpreter and import path, its answer must have one digest per student, and if it cannot be
started, fails, is killed or answers anything else, the keys are hashed here, as always.
``tests/test_grade_batch.py`` holds the two ways equal.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from quizgym.solver.variants import keys_of, student_keys

__all__ = ["HELPER_STUDENTS", "LaterKeys"]

HELPER_STUDENTS = 50_000
"""The smallest class whose keys a helper process hashes (starting one costs more than
hashing fewer students here)."""

_DIGEST = 32

_HELPER = (
    "import json, pickle, sys\n"
    "sys.path[:0] = json.loads(sys.argv[1])\n"
    "from quizgym.solver.draws import student_digests\n"
    "bank, students, seeds = pickle.load(sys.stdin.buffer)\n"
    "sys.stdout.buffer.write(student_digests(bank, students, seeds))\n"
)
"""The helper: the digests of the students it is sent (the bank, their ids and seeds)."""


class LaterKeys:
    """The draw keys of a class (:func:`quizgym.solver.student_keys`), worked out meanwhile by a
    helper process when the class is large and the machine has cores to spare."""

    def __init__(
        self, bank: str, students: Sequence[str | None], seeds: Sequence[int | None]
    ) -> None:
        self._bank, self._students, self._seeds = bank, students, seeds
        self._digests: bytes | None = None
        self._thread: threading.Thread | None = None
        self._helper: subprocess.Popen[bytes]
        if len(students) >= HELPER_STUDENTS and _spare_cores() and sys.executable:
            self._start()

    def _start(self) -> None:
        payload = pickle.dumps(
            (self._bank, list(self._students), list(self._seeds)), pickle.HIGHEST_PROTOCOL
        )
        command = [sys.executable, "-I", "-S", "-c", _HELPER, json.dumps(sys.path)]
        try:
            helper = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
            )
        except OSError:  # no helper: the keys are hashed here
            return
        expected = _DIGEST * len(self._students)

        def talk() -> None:  # the pipes' waits do not hold the GIL
            try:
                out, _ = helper.communicate(payload)
            except BaseException:  # noqa: BLE001 - any failure: the keys are hashed here
                helper.kill()
                helper.wait()
                return
            if helper.returncode == 0 and len(out) == expected:
                self._digests = out

        self._helper = helper
        self._thread = threading.Thread(target=talk, name="quizgym-keys", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop the helper if it is still at work (the keys are not wanted): no process or
        thread outlives the grading that started it."""
        if self._thread is not None and self._thread.is_alive():
            self._helper.kill()
            self._thread.join()

    @property
    def helped(self) -> bool:
        """Whether a helper process is (or was) hashing the keys."""
        return self._thread is not None

    def result(self) -> npt.NDArray[np.uint64]:
        """The keys, one per student (waiting for the helper, if one is hashing them)."""
        if self._thread is not None:
            self._thread.join()
        if self._digests is None:
            return student_keys(self._bank, self._students, self._seeds)
        return keys_of(self._digests)


def _spare_cores() -> bool:
    """Whether this process may run on more than one core."""
    try:
        return len(os.sched_getaffinity(0)) > 1
    except (AttributeError, OSError):  # not Linux
        return (os.cpu_count() or 1) > 1
