# Two entry points (README quick start): `make demo` and `make test`.
# Each creates or refreshes .venv with Python 3.11 and installs what it needs,
# pinned to the tested set in constraints.txt (pyproject.toml keeps ranges).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PIP := $(BIN)/python -m pip install --quiet -c constraints.txt
export OPENBLAS_NUM_THREADS := 1
export OMP_NUM_THREADS := 1
export MKL_NUM_THREADS := 1

.PHONY: demo test lint docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml setup.py constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(PIP) -e ".[test,compare]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/pp-decomp demo --out demo-output

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .

# the tests also build it (warnings as errors); this writes the site to docs/_build/html
docs: $(STAMP)
	$(BIN)/sphinx-build -W -b html docs docs/_build/html

clean:
	rm -rf $(VENV) demo-output docs/_build docs/generated
