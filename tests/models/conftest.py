"""The real-model fixture for tests: SmolLM2-135M-Instruct converted once by the same code
as ``groundrl models get`` (into ``$GROUNDRL_CACHE`` or ``~/.cache/groundrl``). Where it
cannot be built the real-model tests skip, saying why — except under CI (the environment
variable ``CI`` set), where a missing fixture is an error, so CI never passes by skipping."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

NAME = "smollm2-135m-instruct"


@pytest.fixture(scope="session")
def smollm2() -> Path:
    from groundrl.models.fixtures import FixtureError, get_model

    try:
        return get_model(NAME)
    except (FixtureError, ImportError, OSError) as e:
        msg = f"the real-model fixture {NAME} could not be built ({type(e).__name__}: {e})"
        if os.environ.get("CI"):
            pytest.fail(
                f"{msg}; CI needs it: run `groundrl models get {NAME}` with the package index reachable"
            )
        pytest.skip(f"{msg}; run `groundrl models get {NAME}` once with the package index reachable")
