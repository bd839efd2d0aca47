# Two entry points (README quick start): `make demo` and `make test`.
# Each creates or refreshes .venv with a supported Python (3.12 or 3.13) and
# installs what it needs, pinned to the tested set in constraints.txt
# (pyproject.toml keeps ranges): the demo the package alone, the tests the
# test extra. `make test-compare` adds the compare extra (BoTorch, and with it
# torch: several GB) and runs the tests marked `compare`, which `make test`
# leaves out.
#
# The Python: PYTHON if given (a path or command), else the first of python3.12,
# python3.13 on PATH that runs, else pyenv's newest 3.12 or 3.13; PY=3.13 looks
# for 3.13 only (`make test PY=3.13`).
SUPPORTED := 3.12 3.13
WANTED := $(or $(PY),$(SUPPORTED))
# the first Python of the versions $(1) that runs: on the PATH, else pyenv's newest
find_python = $(shell \
	for v in $(1); do \
		p=$$(command -v python$$v) && $$p -c '' 2>/dev/null && { echo $$p; exit 0; }; \
	done; \
	root=$$(pyenv root 2>/dev/null || echo $${PYENV_ROOT:-$$HOME/.pyenv}); \
	for v in $(1); do \
		p=$$(ls -d $$root/versions/$$v.*/bin/python$$v 2>/dev/null | sort -V | tail -1); \
		[ -n "$$p" ] && { echo $$p; exit 0; }; \
	done)
ifeq ($(origin PYTHON),undefined)
PYTHON := $(call find_python,$(WANTED))
endif
# the lower bounds have wheels for Python 3.12 (not all for 3.13)
ifeq ($(origin LOWER_PYTHON),undefined)
LOWER_PYTHON := $(call find_python,3.12)
endif
PYVER := $(if $(PYTHON),$(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])'))
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip install --quiet -c constraints.txt
export OPENBLAS_NUM_THREADS := 1
export OMP_NUM_THREADS := 1
export MKL_NUM_THREADS := 1

.PHONY: demo test test-compare test-lower lint docs clean venv

# (re)creates .venv when it is missing or made by another Python than $(PYTHON)
venv:
	@if [ -z "$(PYTHON)" ]; then \
		echo "make: no Python $(WANTED) found; pass PYTHON=/path/to/python3.12"; \
		exit 1; fi
	@want=$(PYVER); \
	case " $(SUPPORTED) " in *" $$want "*) ;; *) \
		echo "make: $(PYTHON) is Python $$want; pp_decomp supports $(SUPPORTED)"; exit 1;; esac; \
	have=$$($(BIN)/python -c 'import sys, pip; print("%d.%d" % sys.version_info[:2])' 2>/dev/null); \
	if [ "$$have" != "$$want" ]; then \
		echo "make: creating $(VENV) with $(PYTHON) (Python $$want)"; \
		rm -rf $(VENV) && $(PYTHON) -m venv $(VENV) && \
		$(BIN)/python -m pip install --quiet --upgrade pip || { rm -rf $(VENV); exit 1; }; \
	else echo "make: using $(VENV) (Python $$have, from $(PYTHON))"; fi

$(VENV)/.installed-demo-$(PYVER): pyproject.toml setup.py constraints.txt | venv
	$(PIP) -e .
	touch $@

$(VENV)/.installed-test-$(PYVER): pyproject.toml setup.py constraints.txt | venv
	$(PIP) -e ".[test]"
	touch $@ $(VENV)/.installed-demo-$(PYVER)

$(VENV)/.installed-compare-$(PYVER): $(VENV)/.installed-test-$(PYVER)
	$(PIP) -e ".[test,compare]"
	touch $@

demo: venv $(VENV)/.installed-demo-$(PYVER)
	$(BIN)/pp-decomp demo --out demo-output

# one pytest worker per core (pytest-xdist), each test file kept on one worker so that a
# file's module-scoped fixtures are built once; TEST_WORKERS=0 runs in this process
TEST_WORKERS ?= auto
test: venv $(VENV)/.installed-test-$(PYVER)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -m "not compare" -n $(TEST_WORKERS) --dist loadfile

# the side-by-side tests against BoTorch (the compare extra)
test-compare: venv $(VENV)/.installed-compare-$(PYVER)
	$(BIN)/python -m pytest -q -m compare -n $(TEST_WORKERS) --dist loadfile

# the smoke tests on the declared lower bounds (lower-bounds.txt), in their own venv,
# from a regular (not editable) install
LOWER := .venv-lower
test-lower:
	@[ -n "$(LOWER_PYTHON)" ] || { echo "make: test-lower needs Python 3.12 (LOWER_PYTHON=...)"; exit 1; }
	rm -rf $(LOWER)
	$(LOWER_PYTHON) -m venv $(LOWER)
	$(LOWER)/bin/python -m pip install --quiet --upgrade pip
	$(LOWER)/bin/python -m pip install --quiet -c lower-bounds.txt . pytest
	$(LOWER)/bin/python -m pip list 2>/dev/null | grep -iE '^(pymc|pytensor|arviz|nutpie|numba|numpy|xarray) '
	cd tests && ../$(LOWER)/bin/pytest -q -m smoke -p no:cacheprovider --rootdir=.. test_smoke.py

lint: venv $(VENV)/.installed-test-$(PYVER)
	$(BIN)/ruff check .

# the tests also build it (warnings as errors); this writes the site to docs/_build/html
docs: venv $(VENV)/.installed-test-$(PYVER)
	$(BIN)/sphinx-build -W -b html docs docs/_build/html

clean:
	rm -rf $(VENV) $(LOWER) demo-output docs/_build docs/generated
