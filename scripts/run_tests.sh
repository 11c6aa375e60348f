#!/usr/bin/env bash
# `make test`'s pytest step: the suite as two pytest processes at once, each serial.
#
# The tests that drive the real cluster packages (tests/integrations/
# test_real_cluster_packages*.py: verl, Ray, OpenRLHF in .venv-cluster, about 4.5 min) spend
# much of their time waiting on driver subprocesses, Ray start-up and shutdown, so they run
# in a process of their own beside the rest (about 8.5 min). Two separate processes, not
# pytest-xdist: no test shares a process with a test of the other half, so nothing one
# half leaves behind (threads, signal handlers) reaches the other; each half keeps the
# serial order it has in a one-process run. The cluster half's output follows the rest.
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
trap 'rm -rf "$log" "$base"' EXIT

# the cluster half: no cache writes (the other half keeps .pytest_cache)
"$PY" -m pytest -q -rs -p no:cacheprovider --basetemp "$base/t" "${CLUSTER_TESTS[@]}" >"$log" 2>&1 &
cluster=$!

"$PY" -m pytest -q -rs --ignore-glob='tests/integrations/test_real_cluster_packages*.py'
rest=$?

wait "$cluster"
cluster_rc=$?
echo
echo "==================== the cluster-package tests (run alongside) ===================="
cat "$log"

if [ "$rest" -ne 0 ]; then
  exit "$rest"
fi
exit "$cluster_rc"
