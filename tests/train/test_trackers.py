"""Issue 39 item 3: `report_to: [tensorboard]` (every configs/gpu preset) works with the
train extra installed, and the dry run names a tracker that is not installed."""

import importlib.util
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.train import stages
from groundrl.train.config import build_train_config, read_config
from groundrl.train.preflight import missing_reporters

ROOT = Path(__file__).resolve().parents[2]
RR_DATA = str(ROOT / "configs/data/reinforced_planning.jsonl")


def _cfg(tmp_path, report_to):
    return {
        "recipe": "reinforced_planning",
        "model": "tiny",
        "data": RR_DATA,
        "output_dir": str(tmp_path / "o"),
        "grpo": {
            "max_steps": 1,
            "num_generations": 2,
            "per_device_train_batch_size": 2,
            "report_to": report_to,
        },
    }


def test_every_gpu_preset_tracker_is_installed_by_the_train_extra():
    """The presets' trackers are in pyproject's train extra (and so in this .venv)."""
    import tomllib

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["train"]
    for f in sorted((ROOT / "configs/gpu").glob("*.yaml")):
        tc = build_train_config(read_config(f))  # its paths resolved against the preset
        names = {n for st in tc.stages for n in (st.args.get("report_to") or [])}
        for name in names:
            assert any(dep.startswith(name) for dep in extra), (f.name, name)
        assert missing_reporters(tc) == [], f.name


@pytest.mark.slow
def test_a_tiny_run_reporting_to_tensorboard_writes_event_files(tmp_path):
    stages.run_config(None, build_train_config(_cfg(tmp_path, ["tensorboard"])), echo=lambda m: None)
    events = list((tmp_path / "o").rglob("events.out.tfevents.*"))
    assert events and events[0].stat().st_size > 0


@pytest.mark.skipif(importlib.util.find_spec("wandb") is not None, reason="wandb is installed here")
def test_dry_run_names_a_tracker_that_is_not_installed(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(_cfg(tmp_path, ["wandb"])))
    r = CliRunner().invoke(app, ["train", "--config", str(f), "--dry-run"])
    assert r.exit_code == 2, r.output
    assert "report_to names wandb, which is not installed" in r.output
    assert "groundrl[wandb]" in r.output
    # a real run stops at the same check, before a model loads
    r = CliRunner().invoke(app, ["train", "--config", str(f)])
    assert r.exit_code == 2 and "wandb, which is not installed" in r.output, r.output
    assert not (tmp_path / "o" / "tiny-model").exists()
