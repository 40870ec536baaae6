# Two entry points a new user needs: `make demo` (the main job on the default
# tables) and `make test`. Both create .venv and install the package on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/sim demo

test: $(STAMP)
	$(BIN)/ruff check sim tests
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check sim tests

bench: $(STAMP)
	$(BIN)/sim bench territory

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
