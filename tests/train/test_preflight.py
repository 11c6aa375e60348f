"""``groundrl train --dry-run`` checks what the run will import and its batch geometry
before any stage runs (issue 35 item 3); a real run makes the same checks for its own
process count (WORLD_SIZE) before the first stage."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from groundrl.train.config import read_config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def nothing_optional(monkeypatch):
    """None of the GPU packages installed (as here and in CI), whatever this machine has."""
    from groundrl.train import preflight

    gpu = {"vllm", "flash_attn", "deepspeed", "bitsandbytes"}
    monkeypatch.setattr(preflight, "installed", lambda m: m not in gpu)


def _train(*args: str, env: dict[str, str] | None = None):
    from groundrl.cli.main import app

    return CliRunner().invoke(app, ["train", *args], env=env)


def test_a_gpu_preset_lists_every_missing_package_and_no_split_group(nothing_optional):
    res = _train(
        "--config", str(ROOT / "configs/gpu/eqa_rm.yaml"), "--dry-run",
        "--launch-config", str(ROOT / "configs/accelerate/deepspeed_zero3.yaml"),
    )  # fmt: skip
    assert res.exit_code == 2
    out = " ".join(res.output.split())
    assert "on 8 process(es)" in out  # the launch file's process count
    assert "[cgrpo] use_vllm: true needs vLLM, which is not installed" in out
    assert "[rft] attn_implementation: flash_attention_2 needs flash-attn" in out
    assert "[cgrpo] the DeepSpeed launch" in out and "pip install deepspeed" in out
    # the preset generates one whole group per GPU (steps_per_generation 8); a split group
    # is a finding (test_gpu_presets_geometry::test_the_check_sees_a_split_group)
    assert "C-GRPO needs whole prompt groups" not in out


def _cgrpo_config(tmp_path: Path, **grpo) -> Path:
    cfg = read_config(ROOT / "configs/cpu-tiny/eqa_rm_pipeline.yaml")
    cfg["data"] = str(ROOT / cfg["data"])
    cfg["output_dir"] = str(tmp_path / "run")
    cg = cfg["stages"][1]
    cg["grpo"].update(grpo)
    cfg["stages"] = [cg]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_geometry_per_rank_and_global(tmp_path):
    # G = 2, one row per device: on 1 process TRL's own (global) check fails; on 2 the global
    # batch is whole but each rank holds half a group, which C-GRPO cannot contrast
    path = _cgrpo_config(tmp_path, per_device_train_batch_size=1, gradient_accumulation_steps=1)
    one = _train("--config", str(path), "--dry-run")
    assert one.exit_code == 2 and "1 × 1 × 1 = 1 rows, not whole groups of num_generations 2" in one.output
    two = _train("--config", str(path), "--dry-run", "--num-processes", "2")
    assert two.exit_code == 2 and "on 2 process(es): C-GRPO needs whole prompt groups" in two.output
    assert "rows, not whole groups" not in two.output
    # two accumulation steps make one whole group per rank: clean on 1 and 2 processes
    fixed = _cgrpo_config(tmp_path, per_device_train_batch_size=1, gradient_accumulation_steps=2)
    for n in ("1", "2"):
        res = _train("--config", str(fixed), "--dry-run", "--num-processes", n)
        assert res.exit_code == 0, res.output


def test_online_filter_buffer_on_n_processes(tmp_path):
    from groundrl.train.config import build_train_config
    from groundrl.train.preflight import Launch, preflight

    cfg = read_config(ROOT / "configs/cpu-tiny/reinforced_planning.yaml")
    grpo = cfg["stages"][1]
    grpo["online_filter"]["buffer_groups"] = 2  # 2 groups × G 4 = 8 rows = 2 steps of 4 rows on 1 process
    tc = build_train_config(cfg)
    assert preflight(tc, Launch(1)) == []
    found = [str(f) for f in preflight(tc, Launch(3))]  # 12 rows per step: 8 is not whole steps
    assert len(found) == 1 and "[grpo] on 3 process(es): online_filter.buffer_groups = 2" in found[0]


def test_a_run_checks_its_own_launch_before_any_stage(tmp_path):
    path = _cgrpo_config(tmp_path, per_device_train_batch_size=1, gradient_accumulation_steps=1)
    res = _train("--config", str(path), env={"WORLD_SIZE": "2"})
    assert res.exit_code == 2 and "on 2 process(es): C-GRPO needs whole prompt groups" in res.output
    assert not (tmp_path / "run").exists()  # nothing ran, nothing was written
