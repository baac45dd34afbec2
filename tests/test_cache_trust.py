"""A compiled-bank cache file is data: a forged one runs nothing, and a cache folder other users
can write to is neither read nor written."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from quizgym import places
from quizgym.cli import cli
from quizgym.solver import cache as store

BANK = """\
bank: forged
title: A bank whose cache file someone forged
questions:
  - id: speed
    type: numeric
    prompt: A car covers 120 km in 1.5 h. Its mean speed in km/h?
    answer: 120 / 1.5
  - id: sky
    type: true_false
    prompt: The sky is green.
    answer: false
"""

_SCRIPT = "import pathlib; pathlib.Path({marker!r}).write_text('ran')"
"""What the forged file asks for: a Python process that leaves a file behind."""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The cache switched on, in a folder of this test's own; no refusal said yet."""
    here = tmp_path / "cache"
    monkeypatch.delenv("QUIZGYM_CACHE", raising=False)
    monkeypatch.setenv("QUIZGYM_CACHE_DIR", str(here))
    monkeypatch.setattr(places, "_REFUSED", set(), raising=False)
    yield here


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every process started from here on (none is)."""
    calls: list[list[str]] = []

    def record(args: Any, *rest: object, **kwargs: object) -> None:
        calls.append([str(arg) for arg in args])
        raise OSError("no process may start in this test")

    monkeypatch.setattr(subprocess, "Popen", record)
    return calls


def _forged_forms(marker: Path) -> list[dict[str, Any]]:
    script = _SCRIPT.format(marker=str(marker))
    return [
        {"enum": "quizgym.grading.helper:WarmHelper", "value": script},
        {"dataclass": "quizgym.grading.helper:WarmHelper", "fields": {"script": script}},
        {"model": "quizgym.grading.helper:WarmHelper", "fields": {}, "set": []},
        {"enum": "quizgym.model:Bank", "value": script},  # a record, but no enum
        {"dataclass": "quizgym.not_a_module:Thing", "fields": {}},
    ]


def test_a_forged_value_builds_nothing_it_names(tmp_path: Path, started: list[list[str]]) -> None:
    marker = tmp_path / "ran"
    for form in _forged_forms(marker):
        with pytest.raises((ValueError, TypeError)):
            store.decode(form)
    assert started == []
    assert not marker.exists()


def test_a_forged_cache_file_runs_nothing_and_is_a_miss(
    folder: Path, tmp_path: Path, started: list[list[str]]
) -> None:
    bank = tmp_path / "forged.yaml"
    bank.write_text(BANK, encoding="utf-8")
    marker = tmp_path / "ran"
    forged = _forged_forms(marker)[0]
    # A file with the right key and a good digest: integrity, not authenticity.
    assert store.write(store.bank_key(bank.read_bytes()), {"bank": forged, "_keys": forged})
    out = tmp_path / "out.gift"
    run = CliRunner().invoke(cli, ["export", str(bank), "--to", "gift", "-o", str(out)])
    assert run.exit_code == 0, run.output
    assert not any(_SCRIPT.split(";")[0] in " ".join(call) for call in started)
    assert not marker.exists()
    assert "The sky is green." in out.read_text(encoding="utf-8")
    assert "80" in out.read_text(encoding="utf-8")  # the key, worked out again
    assert store.open_bank(bank).cached  # the export replaced the forged file with its own


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
@pytest.mark.parametrize("who", ["group", "others"])
def test_a_folder_others_can_write_is_not_used(
    folder: Path, tmp_path: Path, who: str, capsys: pytest.CaptureFixture[str]
) -> None:
    bank = tmp_path / "forged.yaml"
    bank.write_text(BANK, encoding="utf-8")
    store.save(store.open_bank(bank))
    kept = list(folder.glob("*.json"))
    assert len(kept) == 1 and store.open_bank(bank).cached
    folder.chmod(0o770 if who == "group" else 0o707)
    capsys.readouterr()
    for _ in range(3):
        book = store.open_bank(bank)
        assert not book.cached  # not read
        book.memo("test", 1, lambda: "new")
        assert store.save(book) is None  # nor written
    said = capsys.readouterr().err.splitlines()
    assert said == [
        f"quizgym: the cache folder {folder} is not used: other users can write to it, so what "
        f"it holds may not be quizgym's (chmod go-w it, or set QUIZGYM_CACHE_DIR to a folder "
        "of your own)"
    ]
    assert list(folder.glob("*.json")) == kept
    folder.chmod(0o700)
    assert store.open_bank(bank).cached


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_a_folder_another_user_owns_is_not_used(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bank = tmp_path / "forged.yaml"
    bank.write_text(BANK, encoding="utf-8")
    store.save(store.open_bank(bank))
    os.chown(folder, 65534, 65534)  # nobody's
    assert not store.open_bank(bank).cached
    assert "it belongs to another user" in capsys.readouterr().err


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_the_folder_quizgym_makes_is_the_users_alone(folder: Path, tmp_path: Path) -> None:
    bank = tmp_path / "forged.yaml"
    bank.write_text(BANK, encoding="utf-8")
    before = os.umask(0o002)  # a shared group's default: folders group-writable
    try:
        assert store.save(store.open_bank(bank)) is not None
    finally:
        os.umask(before)
    assert folder.stat().st_mode & 0o077 == 0
    assert store.open_bank(bank).cached
