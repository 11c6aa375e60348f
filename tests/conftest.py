"""Test-wide settings: one torch thread (2-thread CPU steps were 18-70x slower here),
offline hub, and the path to the shared external data (tests skip when it is absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

try:  # torch is an optional extra; set one thread only when it is installed
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    pass

EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "external"


@pytest.fixture(scope="session")
def external_data() -> Path:
    """``../shared/data/external``; skips the test when the folder is not there."""
    if not EXTERNAL.is_dir():
        pytest.skip(f"external data not present at {EXTERNAL}")
    return EXTERNAL
