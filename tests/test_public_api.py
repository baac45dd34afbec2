"""The public names users import are listed in one place, quizgym/__init__.py, and load lazily."""

from __future__ import annotations

import subprocess
import sys

import quizgym


def test_all_lists_exactly_the_lazy_names() -> None:
    assert set(quizgym.__all__) - {"__version__"} == set(quizgym._PUBLIC)


def test_every_public_name_resolves_to_the_object_it_names() -> None:
    for name in quizgym.__all__:
        value = getattr(quizgym, name)
        if name != "__version__":
            assert getattr(value, "__name__", name) == name, name


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        quizgym.no_such_name  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("quizgym.no_such_name should not exist")


def test_importing_quizgym_loads_no_heavy_library() -> None:
    code = (
        "import sys, quizgym\n"
        "print(sorted(m for m in ('sympy', 'numpy', 'pydantic', 'jinja2') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_readme_example_runs_from_the_top_level_names() -> None:
    from quizgym import grade_response, load_bank

    bank = load_bank("bert-mlm")
    verdict = grade_response(bank, bank.question("num-mlm-two"), "ln 10")
    assert (verdict.status.value, verdict.read_as) == ("correct", "ln(10) ≈ 2.302585")
