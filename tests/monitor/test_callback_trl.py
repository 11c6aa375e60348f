"""The TRL callback in a real GRPOTrainer run (tiny random policy): rows in log.jsonl per step,
and ``stop_on_alarm`` ending training at the step the first alarm fires."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl")


def test_stop_on_alarm_ends_a_real_grpo_run(tmp_path):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from groundrl.demos.planner import build_policy
    from groundrl.monitor import MonitorConfig, monitor_callback

    prompts = [f"Instruction: put the apple {i} in the fridge\nPlan:" for i in range(8)]
    model, tok = build_policy(prompts, hidden=32, layers=1, seed=0)

    def judge(completions=None, **kw):  # a saturated judge: every completion gets 1
        return [1.0] * len(completions)

    def truth(completions=None, **kw):
        return [0.0] * len(completions)

    args = GRPOConfig(
        output_dir=str(tmp_path / "trainer"),
        use_cpu=True,
        bf16=False,
        max_steps=8,
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=6,
        beta=0.0,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        reward_weights=[1.0, 0.0],
        disable_tqdm=True,
    )
    trainer = GRPOTrainer(
        model=model,
        processing_class=tok,
        reward_funcs=[judge, truth],
        args=args,
        train_dataset=Dataset.from_list([{"prompt": p} for p in prompts]),
    )
    cfg = MonitorConfig.from_mapping(
        {
            "reward": "judge",
            "truth": "truth",
            "window": 2,
            "baseline_steps": 2,
            "min_samples": 4,
            "stop_on_alarm": True,
        }
    )
    trainer.add_callback(monitor_callback(cfg, tmp_path, "grpo", trainer))
    trainer.train()
    rows = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [1, 2, 3]
    # every group has equal rewards, so zero_std_groups = 1 >= 0.95 at the first step after the baseline
    assert [a["name"] for a in rows[2]["alarms"]] == ["zero_std_groups"]
    assert rows[2]["monitor/hack_share"] == 1.0 and rows[0]["alarms"] == []
    assert trainer.state.global_step == 3  # stopped at the alarm, not at max_steps 8
