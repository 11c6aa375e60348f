"""Issue 39 item 2: a stage's `eval:` block scores greedy answers to held-out prompts with
the recipe's rubric every N steps, logs them beside the training rows (with n and a 95%
CI) and pictures them in curves.png; TRL's eval_strategy without data fails at load."""

import json
from pathlib import Path

import pytest

from groundrl.train import runlog, stages
from groundrl.train.config import ConfigError, build_train_config, check_paths
from groundrl.train.curves import panels
from groundrl.train.evaluation import EvalConfig

ROOT = Path(__file__).resolve().parents[2]
RR_DATA = ROOT / "configs/data/reinforced_planning.jsonl"


def _base(tmp_path, **over):
    cfg = {
        "recipe": "reinforced_planning",
        "model": "tiny",
        "data": str(RR_DATA),
        "output_dir": str(tmp_path / "o"),
    }
    return {**cfg, **over}


def test_eval_strategy_without_an_eval_block_fails_at_load_naming_it(tmp_path):
    with pytest.raises(ConfigError, match=r"grpo.eval_strategy 'steps'.*`eval:` block"):
        build_train_config(_base(tmp_path, grpo={"eval_strategy": "steps"}))


@pytest.mark.parametrize(
    ("block", "words"),
    [
        ({"every": 2}, "eval.data"),
        ({"data": "x.jsonl"}, "eval.every"),
        ({"data": "x.jsonl", "every": 0}, "eval.every must be an integer ≥ 1"),
        ({"data": "x.jsonl", "every": 1, "n": 3}, "unknown key 'n'"),
    ],
)
def test_bad_eval_blocks_name_the_key(tmp_path, block, words):
    with pytest.raises(ConfigError, match=words):
        build_train_config(_base(tmp_path, eval=block))


def test_a_missing_eval_file_is_a_path_error(tmp_path):
    tc = build_train_config(_base(tmp_path, eval={"data": str(tmp_path / "none.jsonl"), "every": 1}))
    with pytest.raises(ConfigError, match="eval.data .*none.jsonl not found"):
        check_paths(tc)


def test_eval_panel_is_drawn_from_eval_rows():
    rows = [
        {"stage": "grpo", "step": 1, "loss": 0.1},
        {"stage": "grpo", "step": 2, "eval/reward": 0.5, "eval/reward_ci_lo": 0.2, "eval/reward_ci_hi": 0.8},
    ]
    titles = [p[0] for p in panels(rows)]
    assert "held-out eval (greedy; 95% CI)" in titles


@pytest.mark.slow
def test_a_stage_logs_eval_metrics_at_every_nth_step_on_the_held_out_file(tmp_path):
    """Held out: the last 3 prompts of the RR data (training reads the first 4). Greedy
    answers are scored by the recipe's rubric; n is the held-out count; the row is at
    steps 2 and 4 of 4."""
    lines = RR_DATA.read_text().splitlines()
    train, held = tmp_path / "train.jsonl", tmp_path / "held.jsonl"
    train.write_text("\n".join(lines[:4]) + "\n")
    held.write_text("\n".join(lines[-3:]) + "\n")
    assert len(lines) >= 7
    cfg = _base(
        tmp_path,
        data=str(train),
        eval={"data": str(held), "every": 2, "max_new_tokens": 8},
        grpo={"max_steps": 4, "num_generations": 2, "per_device_train_batch_size": 2},
    )
    tc = build_train_config(cfg)
    assert tc.stages[0].blocks["eval"] == EvalConfig(data=str(held), every=2, max_new_tokens=8)
    stages.run_config(None, tc, echo=lambda m: None)
    out = tmp_path / "o"
    rows = runlog.read_log(out / "log.jsonl")
    ev = [r for r in rows if "eval/reward" in r]
    assert [r["step"] for r in ev] == [2, 4]
    parts = {k for k in ev[0] if k.startswith("eval/")}
    assert {"eval/n", "eval/reward_ci_lo", "eval/reward_ci_hi", "eval/format"} <= parts, parts
    for r in ev:
        assert r["eval/n"] == 3 and r["stage"] == "grpo"
        assert r["eval/reward_ci_lo"] <= r["eval/reward"] <= r["eval/reward_ci_hi"]
    # training rows are still there, one per step
    assert [r["step"] for r in rows if "loss" in r and "train_runtime" not in r] == [1, 2, 3, 4]
    assert (out / "curves.png").stat().st_size > 0
    assert "`eval/reward`" in (out / "report.md").read_text()
    json.dumps(ev)  # plain JSON values
