"""A large class's draw keys, hashed by a second process while this one grades.

Each student's versions are drawn from a SHA-256 of the bank, their id and their seed
(:func:`quizgym.solver.draws.student_digests`). For 200,000 students that is about 0.1 s of
Python, one short hash at a time, which no thread can share: hashlib holds the GIL for inputs
this short. On a machine with more than one core, the grader hands a large class's ids to a
helper Python process that runs the same function, grades the slots whose questions do not
vary meanwhile, and takes the keys when the first slot that varies needs them.

The helper is never trusted blindly, never waited for and never needed: it runs quizgym's own
code from the same interpreter and import path; its answer must have one digest per student and
agree with this process's own digests of the students it hashed meanwhile and of three others;
and if it cannot be started, fails, is killed, is late or answers anything else, the keys are
hashed here, as always. ``tests/test_grade_batch.py`` holds the two ways equal.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import threading
from collections.abc import Sequence
from typing import IO, cast

import numpy as np
import numpy.typing as npt

from quizgym.grading.helper import KEYS_HELPER, WarmHelper, may_help
from quizgym.solver.draws import student_digest, student_digests
from quizgym.solver.variants import keys_of, student_keys

__all__ = ["HELPER_STUDENTS", "LaterKeys"]

HELPER_STUDENTS = 50_000
"""The smallest class whose keys a helper process hashes (starting one costs more than
hashing fewer students here)."""

_DIGEST = 32
_BLOCK = 10_000
"""Students hashed here at a time while the helper works."""

_HELPER = KEYS_HELPER
"""The helper's script (:data:`quizgym.grading.helper.KEYS_HELPER`)."""


def _payload(
    bank: str, students: Sequence[str | None], seeds: Sequence[int | None]
) -> tuple[str, bytes]:
    """What the helper is sent, and how: a class's ids one a line take 2 ms to put together,
    pickling them 25 ms."""
    if list(seeds).count(None) == len(seeds) and None not in students:
        joined = "\n".join(cast(Sequence[str], students))
        if joined.count("\n") == len(students) - 1 and students:
            return "lines", joined.encode("utf-8", "surrogatepass")
    return "pickle", pickle.dumps((bank, list(students), list(seeds)), pickle.HIGHEST_PROTOCOL)


class LaterKeys:
    """The draw keys of a class (:func:`quizgym.solver.student_keys`), worked out meanwhile by a
    helper process when the class is large and the machine has cores to spare."""

    def __init__(
        self,
        bank: str,
        students: Sequence[str | None],
        seeds: Sequence[int | None],
        *,
        warm: WarmHelper | None = None,
    ) -> None:
        """``warm``: a helper started ahead, taken if it runs this module's helper and lives."""
        if len(students) != len(seeds):
            raise ValueError(f"{len(students)} students but {len(seeds)} seeds")
        self._bank, self._students, self._seeds = bank, students, seeds
        self._keys: npt.NDArray[np.uint64] | None = None
        self._thread: threading.Thread | None = None
        self._helper: subprocess.Popen[bytes]
        self._answer: IO[bytes]
        self._taken = False
        if len(students) >= HELPER_STUDENTS and may_help():
            self._start(warm)

    def _start(self, warm: WarmHelper | None) -> None:
        try:
            form, payload = _payload(self._bank, self._students, self._seeds)
            payload = json.dumps([form, self._bank]).encode() + b"\n" + payload
            started = warm.take(_HELPER) if warm is not None else None
            if started is None:  # a helper of its own, started now as one ahead would be
                own = WarmHelper(_HELPER)
                started = own.take(_HELPER)
                if started is None:  # it ended at once
                    own.close()
                    return
        except Exception:  # noqa: BLE001 - no helper (none can start here): hashed here
            return
        # Its answer goes to a file, read at once: through a pipe, the thread reading it would
        # need the GIL for every 64 KiB, while this process grades.
        helper, self._answer = started

        def talk() -> None:  # one write, one wait: neither holds the GIL
            try:
                assert helper.stdin is not None
                with helper.stdin:
                    helper.stdin.write(payload)
                helper.wait()
            except BaseException:  # noqa: BLE001 - any failure: the keys are hashed here
                helper.kill()
                helper.wait()

        self._helper = helper
        self._thread = threading.Thread(target=talk, name="quizgym-keys", daemon=True)
        self._thread.start()

    def _read_answer(self) -> bytes | None:
        """The helper's digests, if it ended well with one for each student."""
        if self._helper.returncode != 0:
            return None
        self._answer.seek(0)
        answer = self._answer.read(_DIGEST * len(self._students) + 1)
        return answer if len(answer) == _DIGEST * len(self._students) else None

    def _stop(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            self._helper.kill()
            self._thread.join()

    def close(self) -> None:
        """Stop the helper if it is still at work (the keys are not wanted), and let its answer
        go: no process, thread or file outlives the grading that started it."""
        if self._thread is not None:
            self._stop()
            self._answer.close()

    @property
    def helped(self) -> bool:
        """Whether a helper process was started to hash the keys."""
        return self._thread is not None

    @property
    def answered(self) -> bool:
        """Whether the keys :meth:`result` gave are the helper's."""
        return self._taken

    def result(self) -> npt.NDArray[np.uint64]:
        """The keys, one per student.

        Never waits for the helper: while it works, this process hashes the students itself, a
        block at a time, and takes the helper's answer once it has come (its digests of the
        students hashed here, and of the first, middle and last of the others, must be this
        process's own); otherwise the helper is stopped. At worst the keys cost what they cost
        without a helper, plus its start (its input put together, the process started).
        """
        if self._keys is None:
            self._keys = self._worked_out()
        return self._keys

    def _worked_out(self) -> npt.NDArray[np.uint64]:
        bank, students, seeds = self._bank, self._students, self._seeds
        if self._thread is None:
            return student_keys(bank, students, seeds)
        blocks: list[bytes] = []
        done = 0
        while done < len(students) and self._thread.is_alive():
            end = min(done + _BLOCK, len(students))
            blocks.append(student_digests(bank, students[done:end], seeds[done:end]))
            done = end
        self._stop()  # the helper has answered, or is no longer needed
        mine = b"".join(blocks)
        theirs = self._read_answer()
        self.close()
        if done < len(students) and theirs is not None and theirs[: len(mine)] == mine:
            spot = [done, (done + len(students)) // 2, len(students) - 1]
            if all(
                theirs[_DIGEST * k : _DIGEST * (k + 1)]
                == student_digest(bank, students[k], seeds[k])
                for k in spot
            ):
                self._taken = True
                return keys_of(theirs)
        rest = student_digests(bank, students[done:], seeds[done:]) if done < len(students) else b""
        return keys_of(mine + rest)
