"""Shared fixtures and the rule for tests that need an outside tool."""

from __future__ import annotations

import atexit
import importlib
import os
import shutil
import tempfile
from typing import Any

import pytest
from hypothesis import settings

# Hypothesis's per-example deadline turns a busy machine into failures; tests that promise a
# speed (hostile input refused within 50 ms) measure it themselves.
settings.register_profile("quizgym", deadline=None)
settings.load_profile("quizgym")

# The compiled-bank cache is off for the suite (in this process and the commands it starts), so
# each test computes what it checks and nothing lands in the user's cache folder; the tests of
# the cache itself (test_cache.py) switch it on in a folder of their own. Should one forget
# that folder, it still gets one of this process's own (pytest-xdist runs several at once), never
# the user's.
os.environ["QUIZGYM_CACHE"] = "off"
os.environ["QUIZGYM_CACHE_DIR"] = tempfile.mkdtemp(prefix="quizgym-test-cache-")
atexit.register(shutil.rmtree, os.environ["QUIZGYM_CACHE_DIR"], ignore_errors=True)

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Debian's Chromium, headless as root on a machine without network (playwright's launch adds
``--headless``): without the background-networking flags it tries to reach Google's hosts."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", default=False, help="update goldens")


@pytest.fixture
def update_goldens(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-goldens"))


def require_tool(name: str) -> str:
    """Return the path of an outside tool; skip without it on a laptop, fail under CI=true."""
    path = shutil.which(name)
    if path is None:
        message = f"{name} is not installed (make test installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


def require_module(name: str) -> Any:
    """Import a Python package a test needs; skip without it on a laptop, fail under CI=true."""
    try:
        return importlib.import_module(name)
    except ImportError:
        message = f"the Python package {name} is not installed (make test installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
