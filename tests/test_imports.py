"""What each quick command imports: held to a list, so start-up stays quick as the code grows.

Each command runs in a fresh process, as a user runs it; "warm" means the compiled-bank cache
holds the bank (one run before, in a cache folder of the test's own). A heavy library a command
does not need (sympy 0.3 s to import, numpy 0.1 s, pydantic, …) is a failure here, not a slower
start found months later. How long they take is measured by ``benchmarks/startup.py``, not here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = (
    "sympy",
    "mpmath",
    "numpy",
    "pyarrow",
    "jinja2",
    "pydantic",
    "yaml",
    "rich",
    "fsrs",
    "sqlite3",
    "Stemmer",
    "weasyprint",
    "pandas",
    "markdown_it",
    # the standard library's slower corners, which --help and solve do without
    "hashlib",
    "shutil",
    "tempfile",
    # parts of rich and of quizgym that only some screens draw (a table, a formula, the stats)
    "rich.table",
    "quizgym.richtext.tex",
    "latex2mathml",
    "quizgym.practice.stats",
)
"""The libraries (and modules, named in full) whose import a user waits for."""

PROBE = """
import atexit, os, sys, threading
heavy = {heavy!r}
def report(what="IMPORTED"):
    found = sorted(({{m.split('.')[0] for m in sys.modules}} | set(sys.modules)) & set(heavy))
    os.write(2, (what + " " + " ".join(found) + "\\n").encode())
atexit.register(report)
class Tee:  # what has been printed so far
    def __init__(self, stream):
        self.stream, self.seen = stream, []
    def write(self, text):
        self.seen.append(text)
        return self.stream.write(text)
    def __getattr__(self, name):
        return getattr(self.stream, name)
sys.stdout = Tee(sys.stdout)
start = threading.Thread.start
def started(thread):  # the drill loads in the background once its first prompt is shown
    if thread.name == "quizgym-drill-loader":
        shown = "".join(sys.stdout.seen)
        report("PROMPT" if shown.endswith(" > ") else "EARLY")
    start(thread)
threading.Thread.start = started
sys.argv = ["quizgym", *sys.argv[1:]]
from quizgym.cli import main
main()
"""

FIRST = Path(__file__).parent / "data" / "practice" / "first.yaml"
EXPORT = ["export", "bert-mlm", "--to", "qti12", "-o", "out.zip"]
COMMANDS: dict[str, tuple[list[str], set[str]]] = {
    "--help": (["--help"], set()),
    # plain arithmetic is shown from its exact fraction: neither mpmath nor sympy
    "solve a decimal": (["solve", "2.30"], set()),
    # one logarithm of a rational is formed, printed and valued as sympy would, without it
    # (and without mpmath: the logarithm is worked out with integers)
    "solve an exact form": (["solve", "ln 10"], set()),
    # a sum of different logarithms is tidied by sympy (logcombine)
    "solve a sum of logarithms": (
        ["solve", "ln 2 + ln 3"],
        {"mpmath", "sympy", "shutil", "tempfile"},
    ),
    # the cache is keyed by SHA-256 (and read without tempfile and shutil: nothing new to write)
    "check (warm)": (["check", "bert-mlm"], {"hashlib"}),
    # the bank's text as markdown (its parsed form costs as much to read back as to parse)
    # (the TeX reader: QTI 1.2 writes formulas as MathML)
    "export (warm)": (
        EXPORT,
        {
            "mpmath",
            "pydantic",
            "markdown_it",
            "hashlib",
            "shutil",
            "tempfile",
            "quizgym.richtext.tex",
        },
    ),
    # progress from the database (rich and its tables, fsrs, sqlite3): no bank is read, so no
    # pydantic
    "stats": (
        ["stats"],
        {"rich", "rich.table", "fsrs", "sqlite3", "quizgym.practice.stats"},
    ),
    # what is imported when the first prompt is on the screen (the drill is then loaded in the
    # background, once the prompt is up: the probe's "PROMPT" line): the terminal (rich), the
    # scheduler's cards and their store. The item comes from the bank's preview in the cache,
    # its text parsed already: no bank format, no answer engine, no markdown-it; and the cache
    # is read without what writes it (tempfile, shutil), a screen without a table or a formula
    # is drawn without rich's tables or the TeX reader. (hashlib: the preview is keyed by
    # SHA-256.)
    "practice (first prompt)": (
        ["practice", "--seed", "1"],
        {"rich", "fsrs", "sqlite3", "hashlib"},
    ),
    # a first item of two parts with units: the part's text (with its units) is parsed too
    "practice (first prompt, a part)": (
        ["practice", str(FIRST), "--tag", "parts", "--seed", "1"],
        {"rich", "fsrs", "sqlite3", "hashlib"},
    ),
    # a first item with a table and a formula: rich's tables, imported as the screen is drawn
    # (before the drill loads in the background); the formula as the preview keeps it, without
    # the TeX reader (and latex2mathml, 40 ms to import)
    "practice (first prompt, a table)": (
        ["practice", str(FIRST), "--tag", "table", "--seed", "1"],
        {"rich", "fsrs", "sqlite3", "hashlib", "rich.table"},
    ),
}


SHOWS = {
    "--help": "  solve     Evaluate an expression exactly as the grader reads it.\n",
    "solve a decimal": "read as: 2.30\nexact:   23/10\nvalue:   2.3\n",
    "solve an exact form": "read as: ln(10)\nexact:   ln 10\nvalue:   2.302585092994046\n",
    "solve a sum of logarithms": "exact:   ln 6\n",
    "check (warm)": "bert-mlm.yaml: bert-mlm, 70 questions, 1203 variants checked: ok\n",
    "export (warm)": (
        "wrote out.zip (qti12): 70 questions as 82 items; items recorded in out.zip.issued.json\n"
    ),
    "practice (first prompt)": "│ Answered 0 · right 0 · partly 0 · wrong 0 · time 0:00",
    "practice (first prompt, a part)": "(selected) Tokens selected [tokens]",
    "practice (first prompt, a table)": "│     −ln p_θ(xᵢ)",
    "stats": "│ all     │    70 │",  # the drill (run warming up) made the bank's rows
}
"""A piece of what each command prints when it has done its work."""


def _run(
    args: list[str], cwd: Path, env: dict[str, str], *, at: str = "IMPORTED"
) -> tuple[set[str], str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *args],
        cwd=cwd,
        env=env,
        input="q\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (done.stdout, done.stderr)  # each command here succeeds
    line = next((x for x in done.stderr.splitlines() if x.split()[0] in (at, "EARLY")), "")
    assert line.startswith(at), f"no {at} line: {done.stderr}"  # EARLY: loaded before shown
    return set(line.split()[1:]), done.stdout


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A working folder and an environment whose cache holds the bundled bank."""
    folder = tmp_path_factory.mktemp("imports")
    env = {
        **os.environ,
        "QUIZGYM_CACHE_DIR": str(folder / "cache"),
        "QUIZGYM_DB": str(folder / "progress.sqlite3"),
        "QUIZGYM_NOW": "2026-01-05T09:00:00+00:00",  # a frozen clock: the summary's time 0:00
        "TERM": "dumb",
        "NO_COLOR": "1",
    }
    env.pop("QUIZGYM_CACHE", None)
    for args, _ in COMMANDS.values():
        _run(args, folder, env)
    return folder, env


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_quick_command_imports_only_what_it_needs(
    name: str, warm: tuple[Path, dict[str, str]]
) -> None:
    folder, env = warm
    args, allowed = COMMANDS[name]
    at = "PROMPT" if name.startswith("practice (first prompt") else "IMPORTED"
    imported, out = _run(args, folder, env, at=at)
    assert imported <= allowed, f"{name} imports {sorted(imported - allowed)} too"
    assert SHOWS[name] in out, out  # it did its work: help, a value, a report, a file, a prompt


def test_the_first_run_does_the_work_with_sympy(tmp_path: Path) -> None:
    # Cold, check works every key out exactly: the cache saves time, never the work itself.
    env = {**os.environ, "QUIZGYM_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("QUIZGYM_CACHE", None)
    imported, out = _run(["check", "bert-mlm"], tmp_path, env)
    assert "sympy" in imported
    assert "bert-mlm, 70 questions" in out
    again, out_again = _run(["check", "bert-mlm"], tmp_path, env)
    assert "sympy" not in again and out_again == out


def test_a_heavy_library_is_imported_when_it_is_first_read() -> None:
    probe = (
        "import sys\n"
        "from quizgym import lazy\n"
        "before = 'sympy' in sys.modules\n"
        "two = lazy.sympy.Integer(4) / 2\n"
        "print(before, 'sympy' in sys.modules, lazy.sympy is sys.modules['sympy'], two)\n"
        "try:\n"
        "    lazy.pandas\n"
        "except AttributeError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout == ("False True True 2\nmodule 'quizgym.lazy' has no attribute 'pandas'\n")
