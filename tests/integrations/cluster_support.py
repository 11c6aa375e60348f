"""Shared by the tests that drive the real cluster packages (verl 0.8, Ray 2.60,
OpenRLHF 0.11's agent module) in their own environment, `.venv-cluster` (built by
`make cluster-env`: verl pins numpy<2, which breaks our pyarrow/datasets).

Test files that use it are named ``test_real_cluster_packages*.py``: `.ci/run` fails
when any test in such a file is skipped."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PY = Path(os.environ.get("GROUNDRL_CLUSTER_PYTHON", ROOT / ".venv-cluster" / "bin" / "python"))
DRIVERS = Path(__file__).parent / "cluster"

needs_cluster_env = pytest.mark.skipif(
    not PY.exists(), reason=f"no cluster environment at {PY}: run `make cluster-env` (verl, Ray, OpenRLHF)"
)


def drive(script: str, *args: str, timeout: int = 240) -> dict:
    """Run ``tests/integrations/cluster/<script>`` in the cluster environment and return
    the JSON object on its last stdout line."""
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "RAY_USAGE_STATS_ENABLED": "0",
        "PYTHONPATH": str(ROOT / "src"),
    }
    env.pop("GROUNDRL_RECIPE", None)
    with _one_driver_at_a_time():
        r = subprocess.run(
            [str(PY), str(DRIVERS / script), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=ROOT,
        )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def _one_driver_at_a_time():
    """Under pytest-xdist (a developer's ``pytest -n 2``) the workers of one run take turns:
    each driver starts its own local Ray instance on ``num_cpus=2``, and two at once on a
    2-core machine starve each other (Ray Serve's proxy then misses its fixed 60 s start
    timeout). Without xdist there is one process and no lock."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run:
        yield
        return
    path = Path(tempfile.gettempdir()) / f"groundrl-cluster-drivers-{run}.lock"
    with path.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
