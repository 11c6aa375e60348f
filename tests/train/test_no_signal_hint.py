"""The NO LEARNING SIGNAL hint fits the run (issue 39 item 6): a tiny-model stage that an
earlier stage already trained is not told to "start from an SFT checkpoint"."""

from __future__ import annotations

import io
from pathlib import Path

from groundrl.train.config import load_train_config
from groundrl.train.progress import ProgressWatch, trained_before

ROOT = Path(__file__).resolve().parents[2]


def _silent_stage(**kw) -> str:
    lines: list[str] = []
    w = ProgressWatch("grpo", echo=lines.append, stream=io.StringIO(), tiny=True, **kw)
    w.begin(total=2)
    for step in (1, 2):
        w.log(step, {"loss": 0.0, "grad_norm": 0.0, "reward": 0.0, "reward_std": 0.0})
    w.end()
    return lines[-1]


def test_the_hint_names_the_stage_that_already_trained_the_model():
    first = _silent_stage()
    assert "NO LEARNING SIGNAL" in first and "start from an SFT checkpoint" in first
    after = _silent_stage(trained_by="sft")
    assert "NO LEARNING SIGNAL" in after and "start from an SFT checkpoint" not in after
    assert "though stage sft trained it first" in after and "give stage sft more to learn from" in after


def test_trained_before_is_the_last_earlier_stage_with_a_trainer():
    cfg = load_train_config(ROOT / "configs" / "cpu-tiny" / "reinforced_planning.yaml")
    assert [s.name for s in cfg.stages] == ["sft", "grpo"]
    assert trained_before(cfg.stages, "sft") is None
    assert trained_before(cfg.stages, "grpo") == "sft"
    assert trained_before(cfg.stages, "nope") is None
