"""The README is true: its console sessions and library example print what it shows."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from quizgym.cli import cli

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
# Commands whose README output is a plain transcript (no terminal UI, no files written).
TRANSCRIBED = {"check", "solve", "export"}


def console_examples() -> list[tuple[str, str]]:
    examples = []
    for block in re.findall(r"```console\n(.*?)```", README, flags=re.DOTALL):
        parts = re.split(r"^\$ ", block, flags=re.MULTILINE)
        for part in parts[1:]:
            command, _, output = part.partition("\n")
            words = shlex.split(command)
            if words[:1] == ["quizgym"] and words[1] in TRANSCRIBED and ">" not in command:
                examples.append((command, output))
    return examples


EXAMPLES = console_examples()


def test_there_are_examples_to_check() -> None:
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize(("command", "output"), EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_console_example(
    command: str, output: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    writes_files = shlex.split(command)[1] == "export"
    monkeypatch.chdir(tmp_path if writes_files else ROOT)
    result = CliRunner().invoke(cli, shlex.split(command)[1:])
    assert result.stderr + result.stdout == output or result.stdout + result.stderr == output


def test_library_example() -> None:
    code = re.search(r"## Library\n\n```python\n(.*?)```", README, flags=re.DOTALL)
    assert code is not None
    source = code.group(1)
    expected = [
        line.removeprefix("# ").split("  ")[0].rstrip()
        for line in source.splitlines()
        if line.startswith("# ")
    ]
    out = io.StringIO()
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        with contextlib.redirect_stdout(out):
            exec(compile(source, "README.md", "exec"), {})  # noqa: S102 (our own README)
    finally:
        os.chdir(cwd)
    assert out.getvalue().splitlines() == expected


def grade_loop() -> list[tuple[str, str]]:
    """The console sessions of the README's `quizgym grade` section that grade
    ``tests/data/issued`` (the review loop, on ``class.csv``, is run by tests/test_review.py),
    as (command, output)."""
    section = README.split("### `quizgym grade`", 1)[1].split("\n### ", 1)[0]
    examples = []
    for block in re.findall(r"```console\n(.*?)```", section, flags=re.DOTALL):
        if "class.csv" in block:
            continue
        for part in re.split(r"^\$ ", block, flags=re.MULTILINE)[1:]:
            command, _, output = part.partition("\n")
            examples.append((command, output))
    return examples


def test_the_grade_loop_prints_what_the_readme_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Run in a copy of tests/data/issued, as the README asks, in the order shown.
    folder = tmp_path / "issued"
    shutil.copytree(ROOT / "tests" / "data" / "issued", folder)
    monkeypatch.chdir(folder)
    loop = grade_loop()
    assert [c.split()[0] for c, _ in loop] == ["quizgym", "quizgym", "head", "quizgym", "quizgym"]
    for command, output in loop:
        words = shlex.split(command)
        if words[0] == "head":
            lines = Path(words[2]).read_text(encoding="utf-8").splitlines(keepends=True)
            assert "".join(lines[: int(words[1][1:])]) == output, command
            continue
        result = CliRunner().invoke(cli, words[1:])
        shown = result.stderr + result.stdout
        assert shown == output or result.stdout + result.stderr == output, command
