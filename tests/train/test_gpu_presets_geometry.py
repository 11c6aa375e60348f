"""Every configs/gpu preset is for one node of 8 GPUs: on 8 processes each GRPO-family stage's
generation batch must be whole groups, and per process too where the stage works on whole
groups (C-GRPO, the online filter). The EQA-RM preset once had 1 × 1 × 8 — one group split
over eight GPUs — which C-GRPO refuses at start (issue 35)."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundrl.train.config import load_train_config
from groundrl.train.preflight import Launch, preflight

ROOT = Path(__file__).resolve().parents[2]
GPU_PRESETS = sorted((ROOT / "configs" / "gpu").glob("*.yaml"))


@pytest.mark.parametrize("path", GPU_PRESETS, ids=lambda p: p.stem)
def test_gpu_preset_batches_fit_8_processes(path):
    findings = preflight(load_train_config(path), Launch(num_processes=8))
    geometry = [f"{f}" for f in findings if "process(es)" in f.problem]
    assert not geometry, "\n".join(geometry)


def test_the_check_sees_a_split_group(tmp_path):
    """The 1 × 1 × 8 layout the EQA-RM preset had is a finding, so the test above can fail."""
    text = (ROOT / "configs" / "gpu" / "eqa_rm.yaml").read_text(encoding="utf-8")
    assert "      steps_per_generation: 8" in text
    old = tmp_path / "eqa_rm.yaml"
    old.write_text(
        text.replace("      steps_per_generation: 8", "      steps_per_generation: 1"), encoding="utf-8"
    )
    bad = [f for f in preflight(load_train_config(old), Launch(num_processes=8)) if "whole" in f.problem]
    assert bad and "C-GRPO" in bad[0].problem
