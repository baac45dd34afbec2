"""Helper processes: a second Python that runs quizgym's own code while this one works.

Hashing a class's draw keys (:mod:`quizgym.grading.keys`) and counting a file's records
(:mod:`quizgym.grading.early`) are Python, which no thread can share with the grader. On a
machine with a core to spare, each may run in a helper process: the same interpreter, with the
same import path, isolated from the environment (``-I``) and from site packages' start-up hooks
(``-S``). A helper is never needed: whatever starts one does the work itself when it cannot
start, fails or answers anything it cannot check.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import IO

__all__ = ["KEYS_HELPER", "WarmHelper", "cores", "helper_command", "may_help"]

KEYS_HELPER = (
    "import json, pickle, sys\n"
    "sys.path[:0] = json.loads(sys.argv[1])\n"
    "from quizgym.solver.draws import student_digests\n"
    "form, bank = json.loads(sys.stdin.buffer.readline())\n"
    "data = sys.stdin.buffer.read()\n"
    "if form == 'lines':\n"
    "    students = data.decode('utf-8', 'surrogatepass').split('\\n')\n"
    "    seeds = [None] * len(students)\n"
    "else:\n"
    "    bank, students, seeds = pickle.loads(data)\n"
    "sys.stdout.buffer.write(student_digests(bank, students, seeds))\n"
)
"""The helper of :mod:`quizgym.grading.keys`: the digests of the students it is sent. Its
input is one line, how the rest is sent and the bank (JSON), then the rest: the ids one a line
when none has a seed or a line break, else the bank, ids and seeds pickled. It may be started
before its input is known (:class:`WarmHelper`: ``quizgym grade`` starts one for a large
class while it imports the grader)."""


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def may_help() -> bool:
    """Whether a helper process is worth starting here: this process may run on more than one
    core, and its interpreter can start another (an application's executable is no Python)."""
    return bool(sys.executable) and not getattr(sys, "frozen", False) and cores() > 1


def helper_command(script: str, *arguments: str) -> list[str]:
    """The command that runs ``script`` in a helper, ``sys.argv[1]`` its import path (this
    process's) and the ``arguments`` after it."""
    return [sys.executable, "-I", "-S", "-c", script, json.dumps(sys.path), *arguments]


class WarmHelper:
    """A helper process started before its work is known: its interpreter starts and imports
    what its script imports first while this process does other things, then waits for its
    input on stdin (:mod:`quizgym.grading.keys`'s helper reads its whole input from there).

    Its answer goes to a temporary file, read at once when the helper has ended. It is taken
    once (:meth:`take`); one never taken is stopped by :meth:`close`.
    """

    def __init__(self, script: str) -> None:
        self._answer: IO[bytes] | None = tempfile.TemporaryFile()  # noqa: SIM115 - close()
        try:
            self._process: subprocess.Popen[bytes] | None = subprocess.Popen(
                helper_command(script),
                stdin=subprocess.PIPE,
                stdout=self._answer,
                stderr=subprocess.DEVNULL,
            )
        except BaseException:
            self._answer.close()
            raise
        self.script = script

    def take(self, script: str) -> tuple[subprocess.Popen[bytes], IO[bytes]] | None:
        """The helper and its answer's file, if it runs ``script``, is still alive and was not
        taken before; whoever takes it ends it and closes the file."""
        process, answer = self._process, self._answer
        if process is None or answer is None or script != self.script or process.poll() is not None:
            return None
        self._process = self._answer = None
        return process, answer

    def close(self) -> None:
        """Stop the helper if it was never taken."""
        process, answer = self._process, self._answer
        self._process = self._answer = None
        if process is not None:
            process.kill()
            process.communicate()
        if answer is not None:
            answer.close()
