#!/usr/bin/env bash
# `make test`'s pytest step: the suite as two pytest runs at once.
#
# The tests that drive the real cluster packages (tests/integrations/
# test_real_cluster_packages*.py: verl, Ray, OpenRLHF in .venv-cluster, about 4.5 min) spend
# much of their time waiting on driver subprocesses, Ray start-up and shutdown, so they run
# in a serial pytest process of their own beside the rest: no test shares a process with a
# test of the other half, so nothing one half leaves behind (threads, signal handlers)
# reaches the other. The rest runs under pytest-xdist on WORKERS processes (default 2), each
# test file whole on one worker. The cluster half's output follows the rest.
#
# Exit status: the first half's failure (pytest's own code), else the cluster half's.
set -uo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-.venv/bin/python}
export OMP_NUM_THREADS=1
export GROUNDRL_CLUSTER_PYTHON=${GROUNDRL_CLUSTER_PYTHON:-.venv-cluster/bin/python}
CLUSTER_TESTS=(tests/integrations/test_real_cluster_packages*.py)

log=$(mktemp)
base=$(mktemp -d)  # its own tmp_path root: the two halves never prune each other's folders
cluster=

stop_cluster() {  # the cluster half and everything it started (its own process group)
  if [ -n "$cluster" ] && kill -0 "$cluster" 2>/dev/null; then
    kill -TERM -- "-$cluster" 2>/dev/null || kill -TERM "$cluster" 2>/dev/null
    wait "$cluster" 2>/dev/null
  fi
}
trap 'stop_cluster; rm -rf "$log" "$base"' EXIT
# Ctrl-C reaches the first half (pytest stops and prints its summary), then this trap: the
# cluster half, started in the background, ignores SIGINT (as every background command of a
# script does) and would otherwise run on for minutes after the user stopped the suite.
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# the cluster half: its own process group (setsid, where there is one) so that stopping it
# stops its driver subprocesses too; no cache writes (the other half keeps .pytest_cache)
group=()
if command -v setsid >/dev/null 2>&1; then
  group=(setsid)
fi
# then the verl agent-loop and image-row tests again under verl 0.9.1 / transformers 5.9
# (the verl GPU environment's versions; .venv-cluster-verl09), when that venv is given
VERL09_TESTS=(tests/integrations/test_real_cluster_packages_verl_multiturn.py tests/integrations/test_real_cluster_packages_verl_images.py)
PY09=${GROUNDRL_CLUSTER_PYTHON_VERL09:-}
cluster_half() {
  "$PY" -m pytest -q -rs -p no:cacheprovider --basetemp "$base/t" "${CLUSTER_TESTS[@]}" || return $?
  [ -n "$PY09" ] || return 0
  echo
  echo "---- the same verl tests under verl 0.9 ($PY09) ----"
  "$PY09" -c 'import verl, sys; v = verl.__version__; print("verl", v); sys.exit(0 if v.startswith("0.9") else 3)' || return $?
  GROUNDRL_CLUSTER_PYTHON="$PY09" "$PY" -m pytest -q -rs -p no:cacheprovider --basetemp "$base/t9" "${VERL09_TESTS[@]}"
}
${group[@]+"${group[@]}"} bash -c "$(declare -p PY PY09 base CLUSTER_TESTS VERL09_TESTS); $(declare -f cluster_half); cluster_half" >"$log" 2>&1 &
cluster=$!

# the rest under pytest-xdist, WORKERS processes (tests/conftest.py deals whole files, the
# slow ones first; the files sharing one run_once training as one unit); WORKERS=0 runs it
# in this process, serially, as before
WORKERS=${WORKERS:-2}
xdist=()
if [ "$WORKERS" -gt 0 ]; then
  xdist=(-n "$WORKERS")
fi
"$PY" -m pytest -q -rs ${xdist[@]+"${xdist[@]}"} --ignore-glob='tests/integrations/test_real_cluster_packages*.py'
rest=$?

wait "$cluster"
cluster_rc=$?
cluster=
echo
echo "==================== the cluster-package tests (run alongside) ===================="
cat "$log"

if [ "$rest" -ne 0 ]; then
  exit "$rest"
fi
exit "$cluster_rc"
