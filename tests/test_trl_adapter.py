"""The TRL adapter through GRPOTrainer's own reward path on a tiny random model."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl")

from groundrl.integrations.trl import reward_funcs  # noqa: E402


@pytest.fixture
def tiny_lm(tiny_lm_dir):
    """The suite's tiny text-only Qwen2 (tests/conftest.py), by path."""
    return str(tiny_lm_dir)


def make_trainer(tiny_lm, tmp_path, recipe, columns, **options):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    funcs, weights = reward_funcs(recipe, **options)
    ds = Dataset.from_list([{"prompt": "Question:", **columns}] * 4)
    args = GRPOConfig(
        output_dir=str(tmp_path),
        use_cpu=True,
        bf16=False,
        num_generations=2,
        per_device_train_batch_size=2,
        max_completion_length=8,
        report_to=[],
        save_strategy="no",
        reward_weights=weights,
        logging_steps=1,
    )
    return GRPOTrainer(model=tiny_lm, reward_funcs=funcs, args=args, train_dataset=ds)


def test_calculate_rewards_eqa_rm(tiny_lm, tmp_path):
    trainer = make_trainer(tiny_lm, tmp_path, "eqa_rm", {"gt_score": 8})
    assert trainer.reward_func_names == ["accuracy", "format"]
    inputs = [{"prompt": "Question:", "gt_score": 8}, {"prompt": "Question:", "gt_score": 8}]
    completions = ["<critique>ok</critique><score>5</score>", "no tags"]
    rewards = trainer._calculate_rewards(inputs, ["Question:", "Question:"], completions, [[0], [0]])
    # accuracy 1 - (3/10)^2 and 0; format 1 and 0
    assert rewards.flatten().tolist() == pytest.approx([0.91, 1.0, 0.0, 0.0])


def test_calculate_rewards_gated_argos_and_none_parts(tiny_lm, tmp_path):
    trainer = make_trainer(tiny_lm, tmp_path, "argos", {"answer": "B"})
    assert trainer.reward_func_names == ["reward", "outcome", "grounding"]
    assert trainer.reward_weights.tolist() == [1.0, 0.0, 0.0]
    inputs = [{"prompt": "Question:", "answer": "B"}] * 2
    rewards = trainer._calculate_rewards(
        inputs, ["Question:", "Question:"], ["<answer>B</answer>", "<answer>C</answer>"], [[0], [0]]
    )
    r = rewards.tolist()
    assert r[0][:2] == [1.0, 1.0] and r[1][:2] == [0.0, 0.0]
    # grounding does not apply (no points, no frames): None → NaN, ignored by nansum
    assert all(v != v for v in (r[0][2], r[1][2]))


def test_grpo_step_runs_with_reinforced_planning(tiny_lm, tmp_path):
    amap = tmp_path / "map.json"
    amap.write_text(json.dumps({"0": "find a Apple"}))
    trainer = make_trainer(
        tiny_lm, tmp_path, "reinforced_planning", {"gold": ["find a Apple"]}, action_map=str(amap)
    )
    trainer.args.max_steps = 1
    trainer.train()
    logged = {k for entry in trainer.state.log_history for k in entry}
    assert {"rewards/format/mean", "rewards/accuracy/mean"} <= logged
