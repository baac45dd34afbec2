# Every target creates .venv if needed and installs into it; nothing is assumed to be on the
# machine beyond Python 3.11+. Outside tools the tests need (browsers, npm packages, …) are
# installed by the scripts in scripts/setup.d/, each of which does nothing when its tool is there.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
RUNTIME := $(VENV)/.installed
# pytest's workers (pytest-xdist): one per core, each test file on one worker (its module
# fixtures, a Dask cluster or a browser, are set up once); `make pytest WORKERS=0` runs the suite
# in one process.
WORKERS ?= auto

.PHONY: test lint types pytest practice serve setup clean venv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The drill needs only quizgym itself; the test suite needs the dev extras and outside tools.
$(RUNTIME): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUNTIME)

venv: $(STAMP)

setup: $(STAMP)
	@for script in scripts/setup.d/*.sh; do \
	  [ -e "$$script" ] || continue; \
	  echo "setup: $$script"; bash "$$script" || exit 1; \
	done

lint: $(STAMP)
	$(BIN)/ruff format --check quizgym tests benchmarks
	$(BIN)/ruff check quizgym tests benchmarks

types: $(STAMP)
	$(BIN)/mypy quizgym

pytest: setup
	$(BIN)/python -m pytest -q -n $(WORKERS) --dist loadfile

test: lint types pytest

practice: $(RUNTIME)
	$(BIN)/quizgym practice

# The web server on the bundled bank for a sample class of two, with a quiz on masking; it
# prints the teacher's link and a student's (Ctrl-C stops it; the data stays in quizgym-serve/).
$(VENV)/.installed-serve: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[serve]'
	touch $@

serve: $(VENV)/.installed-serve
	@mkdir -p quizgym-serve
	@[ -f quizgym-serve/roster.csv ] || printf 'student,name\nada,Ada Lovelace\nalan,Alan Turing\n' > quizgym-serve/roster.csv
	$(BIN)/quizgym serve bert-mlm --roster quizgym-serve/roster.csv --data quizgym-serve --quiz-tag masking --attempts 2

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache node_modules
