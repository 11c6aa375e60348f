# Two commands on a fresh machine: `make demo` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.groundrl-installed

.PHONY: setup demo test lint bench clean cluster-env cluster-env-verl09 test-cluster check-gpu-envs

setup: $(STAMP)

# torch==2.13.0 goes in first, with pip (a CPU wheel on local disk that only pip looks for);
# every later install runs under constraints-cpu.txt (torch==2.13.0 among its pins), so
# nothing can swap it for a multi-GB CUDA build. The rest goes in with uv (pinned in
# UV below, installed into the venv by pip): the same resolution as pip's here (pip freeze
# of both venvs compared equal, 2026-11-28) in seconds instead of minutes — measured on
# this 2-core machine: the main venv 5 s against 3.5 min, the cluster venv 11 s against
# 14.5 min (torch's wheel, 47 s, is the same in both).
UV      := uv==0.13.9
# uv installs no bytecode, and where PYTHONDONTWRITEBYTECODE is set (this machine's shells)
# Python never writes it either: every process then compiles transformers, TRL, Ray, …
# from source again (importing TRL's GRPOTrainer: 16.1 CPU-s against 9.5 with bytecode, and
# the suite starts dozens of such processes). So each venv is compiled once when built
# (1-2 CPU-min a venv; the packages' own test folders are left out, a quarter of that).
# compileall's exit status is ignored: torch ships a Python 3.12-only file
# (torch/testing/_internal/py312_intrinsics.py) that never compiles here.
define compile_venv
	$(1)/bin/python -m compileall -q -j 0 -x '/tests?/' $(1)/lib >/dev/null || true
endef
$(STAMP): pyproject.toml constraints-cpu.txt
	@echo "setting up $(VENV): torch 2.13.0 (CPU) with pip, then groundrl[train,serve,sim,dev] with uv (about 1 min, once)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet torch==2.13.0 '$(UV)'
	$(PY) -m uv pip install --python $(PY) --quiet -c constraints-cpu.txt -e '.[train,serve,sim,dev]'
	$(call compile_venv,$(VENV))
	$(PY) -m compileall -q -j 0 src >/dev/null  # groundrl itself (installed editable)
	touch $(STAMP)

# The real cluster packages (verl 0.8, Ray 2.60, OpenRLHF 0.11's agent module) in their
# own venv: verl pins numpy<2, which breaks the main venv's pyarrow/datasets. verl and
# OpenRLHF go in --no-deps (pip backtracks for many minutes over verl's loose pins;
# OpenRLHF's full install needs CUDA) beside the modules their reward/agent code imports.
# gymnasium: groundrl's household simulator (the verl agent loop plays it); datasets 4.8
# (--no-deps: its pins on fsspec / huggingface-hub trail transformers 5): verl's agent loop
# imports its RLHFDataset, which reads Parquet with it; cachetools: its LLM server client.
# With uv (above) it builds in about 1 min (pip: 14.5 min on the shared 2 cores, issue 39);
# tests/integrations/test_real_cluster_packages.py uses it and skips (saying so) without it.
CVENV  ?= .venv-cluster
CSTAMP := $(CVENV)/.groundrl-installed
cluster-env: $(CSTAMP)

# $(call cluster_venv,VENV,CONSTRAINTS OF THE MAIN INSTALL,CONSTRAINTS OF THE --no-deps INSTALL)
define cluster_venv
	$(PYTHON) -m venv $(1)
	$(1)/bin/python -m pip install --quiet torch==2.13.0 '$(UV)'
	$(1)/bin/python -m uv pip install --python $(1)/bin/python --quiet $(2) -e '.[serve,dev]' \
		'ray[serve,data]' transformers tensordict hydra-core codetiming dill pylatexenc numpy pyarrow pandas gymnasium cachetools
	$(1)/bin/python -m uv pip install --python $(1)/bin/python --quiet --no-deps -c $(3) verl openrlhf datasets multiprocess xxhash
	$(call compile_venv,$(1))
	touch $(1)/.groundrl-installed
endef

$(CSTAMP): pyproject.toml constraints-cpu.txt constraints-cluster.txt
	$(call cluster_venv,$(CVENV),-c constraints-cpu.txt -c constraints-cluster.txt,constraints-cluster.txt)

# The same with verl 0.9.1 and transformers 5.9 (the verl GPU environment's versions):
# scripts/run_tests.sh runs the verl agent-loop and image-row tests against it too.
C9VENV  ?= .venv-cluster-verl09
C9STAMP := $(C9VENV)/.groundrl-installed
cluster-env-verl09: $(C9STAMP)

$(C9STAMP): pyproject.toml constraints-cpu.txt constraints-cluster-verl09.txt
	$(call cluster_venv,$(C9VENV),-c constraints-cluster-verl09.txt,constraints-cluster-verl09.txt)

test-cluster: setup cluster-env
	OMP_NUM_THREADS=1 GROUNDRL_CLUSTER_PYTHON=$(CVENV)/bin/python $(PY) -m pytest -q -rs tests/integrations/test_real_cluster_packages*.py

demo: setup
	$(VENV)/bin/groundrl demo

# The suite includes the real cluster packages' tests (issue 14), so `make test` builds
# their environment too (the two venvs are built side by side; the cluster one takes the
# longest, above; skipped tests say why when it is missing). scripts/run_tests.sh then runs the
# cluster-package tests (mostly waiting on Ray and driver subprocesses) in a serial pytest
# process beside the rest, which runs on two pytest-xdist workers, each test file whole on
# one worker (tests/conftest.py: slow files first, the files sharing one run_once training
# together); WORKERS=0 runs the rest serially. Measured here (2026-11-28, load ≈ 2-4, one
# other engineer working): 14:06 wall for all 2,202 tests, the main half 13:59 (serial it
# took 20:18 at load ≈ 2). An earlier -n 2 (7533f8a) dealt single tests and failed twice
# in CI on state earlier tests left behind (an ignored SIGINT, since restored by its test;
# a forked score worker, since spawned when threads exist); whole files keep each file's
# own order.
test:
	$(MAKE) -j2 setup cluster-env cluster-env-verl09
	PY=$(PY) GROUNDRL_CLUSTER_PYTHON=$(CVENV)/bin/python GROUNDRL_CLUSTER_PYTHON_VERL09=$(C9VENV)/bin/python scripts/run_tests.sh

# ruff's lint and its formatter, and the package's types (mypy, settings in pyproject's
# [tool.mypy]: 0 errors) (issue 23 item 6); .ci/run runs it after the tests.
lint: setup
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/mypy

bench: setup
	$(PY) bench/rewards.py

clean:
	rm -rf $(VENV) $(CVENV) $(C9VENV) runs .pytest_cache .ruff_cache

# GPU environments (issue 35 item 1), one per trainer path, pinned in envs/gpu-*.txt by
# scripts/gpu_envs.py against each trainer's own declared dependencies. On a CUDA machine:
# `make gpu-env-trl` (TRL + vLLM), `make gpu-env-verl` (verl 0.9.1 + its vLLM) or
# `make gpu-env-openrlhf` (OpenRLHF 0.11.2 + its pins) builds .venv-gpu-NAME. CI runs
# `make check-gpu-envs`: each lock file must still resolve for linux x86_64 / Python 3.11
# (uv, index metadata only: seconds).
gpu-env-%: envs/gpu-%.txt
	$(PYTHON) -m venv .venv-gpu-$*
	.venv-gpu-$*/bin/python scripts/gpu_envs.py install $*

check-gpu-envs: setup
	$(PY) -m uv --version >/dev/null 2>&1 || $(PY) -m pip install --quiet '$(UV)'
	$(PY) scripts/gpu_envs.py check
