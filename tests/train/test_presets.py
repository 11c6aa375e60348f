"""The cpu-tiny presets of the three policy papers run end to end from the CLI and their
log.jsonl carries the named metrics (issue 13)."""

import json
from pathlib import Path

import pytest
import yaml

from groundrl.train.config import read_config

pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[2]


def _preset(name, tmp_path, **over):
    cfg = read_config(ROOT / f"configs/cpu-tiny/{name}.yaml")  # its data paths made absolute
    cfg["output_dir"] = str(tmp_path / "out")
    cfg.update(over)
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(cfg))
    return f


def _log(tmp_path):
    return [json.loads(line) for line in (tmp_path / "out" / "log.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_embodied_brain_preset_with_grm_judge(tmp_path, chat_server):
    from typer.testing import CliRunner

    from groundrl.cli.main import app

    chat_server.responder = lambda msgs, body: "<think>ok</think><score>0.5</score>"
    f = _preset("embodied_brain", tmp_path)
    args = [
        "train",
        "embodied_brain",
        "--config",
        str(f),
        "--judge-backend",
        "openai",
        "--judge-model",
        "grm",
    ]
    r = CliRunner().invoke(app, [*args, "--judge-url", chat_server.base_url])
    assert r.exit_code == 0, r.output
    logged = {k for row in _log(tmp_path) for k in row}
    assert {
        "step_grpo/hinted_frac",
        "step_grpo/hint_steps_mean",
        "rewards/grm/mean",
        "judge/grm/failed_frac",
    } <= logged
    assert {
        "rewards/spatial_mcq.accuracy/mean",
        "rewards/counting.accuracy/mean",
        "rewards/detection.iou/mean",
    } <= logged
    assert (tmp_path / "out" / "final").is_dir() and (tmp_path / "out" / "report.md").is_file()


@pytest.mark.slow
def test_argos_preset_filter_sft_grpo(run_once):
    # docs/training.md's training of this preset, run once for the suite (tests/conftest.py)
    r = run_once(run_once.TRAIN_ARGOS)
    assert r.returncode == 0, r.output
    out = r.folder / "runs" / "argos-try"
    # hand-worked: candidates 0, 2, 4 have a rollout with the right answer and both points inside (1.0);
    # 1, 3, 5 only a right answer with a point outside (0.5 < 0.7) or a wrong one
    assert "kept 3 of 6 samples" in r.output
    kept = (out / "curate" / "sft.jsonl").read_text().splitlines()
    assert len(kept) == 3
    rows = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    assert {row["stage"] for row in rows} == {"sft", "grpo"}
    assert any("rewards/verifier/mean" in row for row in rows if row["stage"] == "grpo")
    for stage in ("sft", "grpo"):
        assert (out / stage / "final").is_dir()
    report = (out / "report.md").read_text()
    assert "stage `curate` (verifier_filter)" in report and "- kept: 3" in report


# the reinforced_planning preset: tests/train/test_grpo_recipes.py::test_train_cli_with_bundled_cpu_config
