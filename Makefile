# Two entry points a new user needs: `make demo` (the main job on the default
# tables) and `make test`. Both create .venv and install the package on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench nightly clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,notebooks]'
	@# pip compiles an installed package's modules, but not an editable one's: where
	@# PYTHONDONTWRITEBYTECODE is set, every process (each sweep worker) would compile
	@# sim's 60 modules again as it starts (about 50 ms); an edited module is recompiled
	$(BIN)/python -m compileall -q sim
	touch $(STAMP)

# the main job: the demo sweep on the default tables, then its HTML report
demo: $(STAMP)
	$(BIN)/sim sweep experiments/demo.toml --out runs/demo --replace-stale
	$(BIN)/sim report runs/demo --out reports/demo.html

test: $(STAMP)
	$(BIN)/ruff check sim tests tools
	$(BIN)/pytest -q
	NUMBA_DISABLE_JIT=1 $(BIN)/pytest -q -m nojit

lint: $(STAMP)
	$(BIN)/ruff check sim tests tools

# last night's run stays as runs/nightly-previous; the report's regression gate compares
# tonight with it and `make nightly` fails when a victory share moved (sim report --against
# exits 3);
# reports/nightly-history.parquet keeps every night's victory mix for the report's trend chart;
# NIGHTLY=FILE runs another experiment the same way (a planted regression, a trial)
NIGHTLY ?= experiments/nightly.toml
nightly: $(STAMP)
	@if [ -f runs/nightly/provenance.json ]; then rm -rf runs/nightly-previous && \
		mv runs/nightly runs/nightly-previous; fi
	$(BIN)/sim sweep $(NIGHTLY) --out runs/nightly --replace-stale --quiet
	$(BIN)/sim report runs/nightly --out reports/nightly.html \
		--history reports/nightly-history.parquet \
		$$(test -d runs/nightly-previous && echo --against runs/nightly-previous)

bench: $(STAMP)
	$(BIN)/sim bench territory

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
