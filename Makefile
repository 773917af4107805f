# doc-scraper developer commands. `make run` and `make test` work on a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: venv run test lint fmt typecheck check bench eval clean

# venv: create the virtual environment and install the package with test and dev tools
venv: $(STAMP)
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,dev]'
	touch $(STAMP)

# run: serve the bundled example docs site on loopback, crawl it, show llms.txt and search it
run: venv
	$(BIN)/python examples/demo.py

# test: the whole suite (unit + loopback end-to-end), no network
test: venv
	$(BIN)/python -m pytest -q

# lint: ruff + mypy
lint: venv
	$(BIN)/ruff check doc_scraper tests benchmarks examples
	$(BIN)/mypy

# fmt: format the code
fmt: venv
	$(BIN)/ruff format doc_scraper tests benchmarks
	$(BIN)/ruff check --fix doc_scraper tests benchmarks

# typecheck: mypy --strict on the package
typecheck: venv
	$(BIN)/mypy

# check: lint, typecheck and test
check: lint test

# bench: speed and memory beside baselines (uses ../shared/corpus when present)
bench: venv
	$(BIN)/python -m pip install --quiet -e '.[bench,semantic]'
	$(BIN)/python benchmarks/run_all.py

# eval: extraction and search quality against the shared corpus
eval: venv
	$(BIN)/python benchmarks/eval_quality.py

# clean: remove the venv, caches and demo output
clean:
	rm -rf $(VENV) .run .pytest_cache .mypy_cache .ruff_cache build *.egg-info
