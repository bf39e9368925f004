# edge-carbon front door. Needs Python 3.11+ (3.11-3.13 are tested), make and git.
#   make run    build the warehouse from the shipped data and print a summary ending with the verdict;
#               WORKERS=N runs it on Dagster's multiprocess executor with N worker processes (default:
#               in one process); VERBOSE=1 prints Dagster's log (else in warehouse/.logs/)
#   make test   run the test suite, without the tests marked slow (full rebuilds at the default
#               run config); MARKERS=all runs every test (CI), MARKERS=slow only the slow ones;
#               EXTRAS=dev,capture also installs the capture extra; PYTEST_ARGS go to pytest;
#               TEST_WORKERS=N runs the tests in N processes (pytest-xdist; default 2, 0: in one process)
#   make dev    start the Dagster UI on http://127.0.0.1:3000
#   make bench  print the benchmark figures (BENCH_ARGS=--quick: a few minutes; --json PATH writes them;
#               --keep keeps the generated logs in bench/out/)

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check
EXTRAS ?= dev
# pytest -m for `make test`: empty keeps pyproject's default (-m 'not slow'); all = every test
MARKERS ?=
# pytest-xdist worker processes for `make test` (each builds its own session warehouse)
TEST_WORKERS ?= 2
DAGSTER_HOME ?= $(CURDIR)/.dagster_home
export DAGSTER_HOME

.PHONY: run test dev bench lint clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml constraints.txt | $(VENV)/bin/python
	$(PIP) install -q -c constraints.txt -e .
	@touch $@

$(VENV)/.installed-$(EXTRAS): $(VENV)/.installed
	$(PIP) install -q -c constraints.txt -e '.[$(EXTRAS)]'
	@touch $@

run: $(VENV)/.installed $(DAGSTER_HOME)/dagster.yaml
	$(VENV)/bin/edge-carbon run $(if $(WORKERS),--workers $(WORKERS)) $(if $(VERBOSE),--verbose)

test: $(VENV)/.installed-$(EXTRAS)
	$(PY) -m pytest -n $(TEST_WORKERS) $(if $(MARKERS),-m "$(if $(filter all,$(MARKERS)),slow or not slow,$(MARKERS))") $(PYTEST_ARGS)

lint: $(VENV)/.installed-$(EXTRAS)
	$(VENV)/bin/ruff check .

$(DAGSTER_HOME)/dagster.yaml: pipelines/dagster.yaml
	@mkdir -p $(DAGSTER_HOME)
	cp pipelines/dagster.yaml $@

dev: $(VENV)/.installed $(DAGSTER_HOME)/dagster.yaml
	$(VENV)/bin/dg dev -h 127.0.0.1 -p 3000

bench: $(VENV)/.installed-$(EXTRAS)
	$(PY) -m bench $(BENCH_ARGS)

clean:
	rm -rf warehouse dashboards/site .dagster_home bench/out
