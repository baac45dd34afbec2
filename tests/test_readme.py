"""The README is true: its console sessions and library example print what it shows."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
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
