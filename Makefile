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

# two test processes (pytest-xdist), each test file kept in one of them (its module
# fixtures' sweeps run once): the suite took 15.4 min on one core of a quiet 2-core VM
test: $(STAMP)
	$(BIN)/ruff check sim tests tools
	$(BIN)/pytest -q -n 2 --dist loadfile
	NUMBA_DISABLE_JIT=1 $(BIN)/pytest -q -m nojit -n 2 --dist loadfile

lint: $(STAMP)
	$(BIN)/ruff check sim tests tools

# last night's run stays as runs/nightly-previous; the report's regression gate compares
# tonight with it (sim report --against: a sequential test that grows both runs by blocks
# until every victory share is decided or the [gate] budget is spent), and last night's
# code is checked out beside it (runs/nightly-previous.code, when it was a clean commit
# other than tonight's), so the gate can grow that run with the code that made it
# (PYTHONSAFEPATH: `python -m` would put this checkout's sim/ first otherwise).
# The gate's exit status becomes reports/nightly.status: 0 "pass" ("none" on a first night,
# with nothing to gate against); 4 "inconclusive" (the
# budget ran out: not a failure, `make nightly` succeeds and says so); 3 "fail" (a share
# moved beyond its margin, or a variant is missing): `make nightly` fails; "error" when the
# report itself could not be made (bad input: exit 2). A variant renamed since last night
# (the same `set` and seats' AI, as `skills = [0, 1]` renames NAME to NAME.skill-0) is
# gated under its new name; a new variant's first night is "none", not a failure; one
# gone under every name fails (docs/statistics.md).
# reports/nightly-history.parquet keeps every night's victory mix for the report's trend chart;
# NIGHTLY=FILE runs another experiment the same way (a planted regression, a trial)
NIGHTLY ?= experiments/nightly.toml
PREVIOUS := runs/nightly-previous
nightly: $(STAMP)
	@rm -f reports/nightly.status
	@if [ -f runs/nightly/provenance.json ]; then rm -rf $(PREVIOUS) && \
		mv runs/nightly $(PREVIOUS); fi
	@rm -rf $(PREVIOUS).code && git worktree prune; \
	commit=$$($(BIN)/python -c "import json; c = json.load(open('$(PREVIOUS)/provenance.json'))\
	['code_version']; print('' if c.get('dirty') else c.get('commit', ''))" 2>/dev/null); \
	if [ -n "$$commit" ] && [ "$$commit" != "$$(git rev-parse HEAD)" ]; then \
		git worktree add --detach --quiet $(PREVIOUS).code $$commit; fi
	$(BIN)/sim sweep $(NIGHTLY) --out runs/nightly --replace-stale --quiet
	@set --; \
	if [ -d $(PREVIOUS) ]; then set -- --against $(PREVIOUS); fi; \
	if [ -d $(PREVIOUS).code ]; then set -- "$$@" --against-sim \
		"env PYTHONSAFEPATH=1 PYTHONPATH=$(abspath $(PREVIOUS).code) $(abspath $(BIN))/python -m sim.cli"; fi; \
	status=0; $(BIN)/sim report runs/nightly --out reports/nightly.html \
		--history reports/nightly-history.parquet "$$@" || status=$$?; \
	case $$status in \
		0) if [ -d $(PREVIOUS) ]; then echo pass; else echo none; fi > reports/nightly.status ;; \
		4) echo inconclusive > reports/nightly.status; \
		   echo "nightly: INCONCLUSIVE: the gate's match budget ran out before every share" \
		        "was decided (reports/nightly.html; reports/nightly.status)" ;; \
		3) echo fail > reports/nightly.status; exit 3 ;; \
		*) mkdir -p reports; echo error > reports/nightly.status; exit $$status ;; \
	esac

bench: $(STAMP)
	$(BIN)/sim bench territory

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
