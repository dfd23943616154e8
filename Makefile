# The two commands a user needs: `make serve` and `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PORT ?= 5006
CHROMIUM ?= /usr/bin/chromium
APPS := $(wildcard apps/*.py)

NOTEBOOK_STAMP := $(VENV)/.notebook

DOCS_STAMP := $(VENV)/.docs

.PHONY: install serve notebook test test-fast chromium lint bench bench-guard clean docs docs-screens

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,dev]'
	$(VENV)/bin/explorer warm
	@touch $(STAMP)

install: $(STAMP)

## Install (if needed) and serve the explorer and the teaching pages on this machine only
## (http://localhost:$(PORT)/explorer); opens a browser when one exists. To share with a class:
## `.venv/bin/explorer serve --share` (password from EXPLORER_PASSWORD or --password-file).
serve: install
	$(VENV)/bin/explorer serve --port $(PORT) --show

## Install (if needed) JupyterLab and open the example notebook.
$(NOTEBOOK_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,dev,notebook]'
	@touch $(NOTEBOOK_STAMP)

notebook: $(NOTEBOOK_STAMP)
	$(VENV)/bin/jupyter lab $$([ "$$(id -u)" = 0 ] && echo --allow-root) examples/explorer.ipynb

## Install (if needed), including Debian's chromium for the browser tests, and run every test.
test: install chromium
	$(PY) -m pytest

## The suite without the real-browser tests (no chromium needed).
test-fast: install
	$(PY) -m pytest -m "not ui and not slow"

chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		echo "Installing Debian's chromium for the browser tests"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO="sudo"; \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; \
	fi
	@test -x $(CHROMIUM) || { echo "chromium is missing: install Debian's 'chromium' package"; exit 1; }

## Install (if needed) the docs extra and build the documentation site into docs/_build/html,
## offline, warnings as errors.
$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,dev,docs]'
	@touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	rm -rf docs/generated docs/_build
	$(VENV)/bin/sphinx-build -W --keep-going -q -b html docs docs/_build/html
	@echo "The site: docs/_build/html/index.html"

## Retake the site's screenshots (the explorer served locally, driven by chromium).
docs-screens: install chromium
	$(PY) docs/screens.py

lint: install
	$(VENV)/bin/ruff check .

## Every method timed in passes of Xᵀv against the budgets in benchmarks/budgets.json (under
## five minutes; fails naming a method over its budget).
bench-guard: install
	$(PY) benchmarks/bench_guard.py

bench: install
	@for f in benchmarks/bench_*.py; do echo "== $$f"; $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache test-artifacts docs/_build docs/generated
