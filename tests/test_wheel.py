"""A plain (non-editable) install of the wheel finds its bundled banks and templates."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_installed_wheel_checks_the_bundled_bank_from_elsewhere(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
        text=True,
    )
    wheel = next(dist.glob("quizgym-*.whl"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(wheel)], check=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # Only the wheel: no checkout on the import path (a developer's PYTHONPATH) to fall back on.
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    result = subprocess.run(
        [str(env_dir / "bin" / "quizgym"), "check"],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "bert-mlm" in result.stdout
    assert str(ROOT) not in result.stdout
    located = subprocess.run(
        [
            str(python),
            "-c",
            "from quizgym.resources import resource_dir; "
            "print(resource_dir('banks')); print(resource_dir('templates'))",
        ],
        cwd=elsewhere,
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    for line in located.stdout.splitlines():
        assert "site-packages" in line and line.endswith(("_data/banks", "_data/templates"))
