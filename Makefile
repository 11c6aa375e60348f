# Two commands on a fresh machine: `make demo` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.groundrl-installed

.PHONY: setup demo test lint bench clean

setup: $(STAMP)

# torch==2.13.0 goes in first (a CPU wheel on local disk); every later install runs under
# constraints-cpu.txt, so nothing can swap it for a multi-GB CUDA build.
$(STAMP): pyproject.toml constraints-cpu.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -c constraints-cpu.txt -e '.[train,serve,sim,dev]'
	touch $(STAMP)

demo: setup
	$(VENV)/bin/groundrl demo

test: setup
	OMP_NUM_THREADS=1 $(PY) -m pytest -q

lint: setup
	$(VENV)/bin/ruff check src tests bench

bench: setup
	$(PY) bench/rewards.py

clean:
	rm -rf $(VENV) runs .pytest_cache .ruff_cache
