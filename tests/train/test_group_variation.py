"""A reward part constant within every GRPO group contributes no gradient: it is measured
per step (rewards/<part>/groups_varying) and named at the end of the stage (issue 38)."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest
import yaml

from groundrl.train.config import read_config
from groundrl.train.group_variation import groups_varying, part_variation
from groundrl.train.progress import ProgressWatch

ROOT = Path(__file__).resolve().parents[2]


def test_share_of_groups_that_vary():
    # groups of 3: (1,1,1) flat, (0,1,1) varies, (nan,2,2) flat on its finite values, (5,nan,nan) undefined
    vals = [1, 1, 1, 0, 1, 1, float("nan"), 2, 2, 5, float("nan"), float("nan")]
    assert groups_varying(vals, 3) == pytest.approx(1 / 3)
    assert groups_varying([0.5] * 8, 4) == 0.0
    assert groups_varying([1, 2], 1) is None  # a group of one has no advantage to move
    # a batch-level term: different across groups, equal inside each (EQA-RM's contrastive boost)
    assert part_variation({"contrastive": [0.3, 0.3, 0.0, 0.0], "accuracy": [1, 0, 1, 1]}, 2) == {
        "rewards/contrastive/groups_varying": 0.0,
        "rewards/accuracy/groups_varying": 0.5,
    }


def _step(step: int, **parts: float) -> dict:
    row = {"loss": 0.1, "grad_norm": 0.4, "reward": 0.5, "reward_std": 0.2, "step": step}
    row.update({f"rewards/{k}/groups_varying": v for k, v in parts.items()})
    return row


def test_a_weighted_part_that_never_varies_inside_a_group_is_named():
    lines: list[str] = []
    w = ProgressWatch("cgrpo", echo=lines.append, stream=io.StringIO())
    w.part_weights = {"accuracy": 1.0, "contrastive": 1.0, "format_metric": 0.0}
    w.begin(total=3)
    for step, acc in ((1, 0.5), (2, 0.0), (3, 0.25)):
        w.log(step, _step(step, accuracy=acc, contrastive=0.0, format_metric=0.0))
    w.end()
    msg = w.summary()["constant reward parts"]
    assert "contrastive" in msg and "accuracy" not in msg and "format_metric" not in msg
    assert lines[-1] == f"[cgrpo] warning: {msg}"
    # varying in one step is enough not to be flagged
    w2 = ProgressWatch("grpo", echo=lambda s: None, stream=io.StringIO())
    w2.begin(total=2)
    w2.log(1, _step(1, contrastive=0.0))
    w2.log(2, _step(2, contrastive=0.5))
    assert "constant reward parts" not in w2.summary()


def test_a_training_run_logs_the_share_per_part(tmp_path):
    pytest.importorskip("trl")
    from typer.testing import CliRunner

    from groundrl.cli.main import app

    cfg = read_config(ROOT / "configs/cpu-tiny/eqa_rm.yaml")
    cfg["data"] = str(ROOT / cfg["data"])
    cfg["output_dir"] = str(tmp_path / "run")
    cfg["grpo"].update(max_steps=1, max_completion_length=4)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    res = CliRunner().invoke(app, ["train", "--config", str(path)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]
    step = next(r for r in rows if "loss" in r)
    parts = [k.split("/")[1] for k in step if k.startswith("rewards/") and k.endswith("/mean")]
    assert parts
    for name in parts:  # every reward function TRL logged has its share, a number in [0, 1]
        share = step[f"rewards/{name}/groups_varying"]
        assert isinstance(share, float) and math.isfinite(share) and 0.0 <= share <= 1.0
