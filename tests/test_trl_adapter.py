"""The TRL adapter through GRPOTrainer's own reward path on a tiny random model, observed
through TRL's public surface: scripted completions come in through ``rollout_func`` and the
scores go out through ``TrainerCallback.on_log``."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("trl")

from groundrl.integrations.trl import reward_funcs  # noqa: E402


@pytest.fixture
def tiny_lm(tiny_lm_dir):
    """The suite's tiny text-only Qwen2 (tests/conftest.py), by path."""
    return str(tiny_lm_dir)


def make_trainer(tiny_lm, tmp_path, recipe, columns, rollout_func=None, callbacks=None, **options):
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
    return GRPOTrainer(
        model=tiny_lm,
        reward_funcs=funcs,
        args=args,
        train_dataset=ds,
        rollout_func=rollout_func,
        callbacks=callbacks,
    )


class Scripted:
    """A TRL ``rollout_func`` (public API) answering the i-th prompt of a step with
    ``texts[i]``: the completions GRPOTrainer's own reward path then scores are known."""

    def __init__(self, texts):
        self.texts = texts

    def __call__(self, prompts, trainer):
        tok = trainer.processing_class
        ids = [tok(t, add_special_tokens=False)["input_ids"] for t in self.texts]
        # the trainer decodes these back to text before scoring: the round trip is exact
        assert tok.batch_decode(ids, skip_special_tokens=True) == self.texts
        assert len(prompts) == len(self.texts)
        return {
            "prompt_ids": [tok(p)["input_ids"] for p in prompts],
            "completion_ids": ids,
            "logprobs": None,
        }


def one_step_logs(trainer):
    """Train one step; the metrics row TRL hands to ``TrainerCallback.on_log``."""
    trainer.args.max_steps = 1
    trainer.train()
    return next(row for row in trainer.logs if "reward" in row)


def log_recorder():
    from transformers import TrainerCallback

    class Record(TrainerCallback):
        rows: list = []

        def on_log(self, args, state, control, logs=None, **kwargs):
            self.rows.append(dict(logs or {}))

    return Record()


def scripted_trainer(tiny_lm, tmp_path, recipe, columns, texts):
    rec = log_recorder()
    rec.rows = []
    trainer = make_trainer(tiny_lm, tmp_path, recipe, columns, rollout_func=Scripted(texts), callbacks=[rec])
    trainer.logs = rec.rows
    return trainer


def test_grpo_reward_path_scores_eqa_rm(tiny_lm, tmp_path):
    texts = ["<critique>ok</critique><score>5</score>", "no tags"]
    trainer = scripted_trainer(tiny_lm, tmp_path, "eqa_rm", {"gt_score": 8}, texts)
    assert trainer.reward_func_names == ["accuracy", "format"]
    logs = one_step_logs(trainer)
    # per completion: accuracy 1 - (3/10)^2 = 0.91 and 0; format 1 and 0. TRL logs each
    # function's mean and (unbiased) std over the two: a pair {a, b} is mean (a+b)/2, std |a-b|/√2
    assert logs["rewards/accuracy/mean"] == pytest.approx(0.455)
    assert logs["rewards/accuracy/std"] == pytest.approx(0.91 / 2**0.5)
    assert logs["rewards/format/mean"] == pytest.approx(0.5)
    assert logs["rewards/format/std"] == pytest.approx(2**-0.5)


def test_grpo_reward_path_gated_argos_and_none_parts(tiny_lm, tmp_path):
    texts = ["<answer>B</answer>", "<answer>C</answer>"]
    trainer = scripted_trainer(tiny_lm, tmp_path, "argos", {"answer": "B"}, texts)
    assert trainer.reward_func_names == ["reward", "outcome", "grounding"]
    assert trainer.reward_weights.tolist() == [1.0, 0.0, 0.0]
    logs = one_step_logs(trainer)
    # reward and outcome: 1 for B, 0 for C
    for name in ("reward", "outcome"):
        assert logs[f"rewards/{name}/mean"] == pytest.approx(0.5)
        assert logs[f"rewards/{name}/std"] == pytest.approx(2**-0.5)
    # grounding does not apply (no points, no frames): None -> NaN for both completions, a
    # step mean with no value (TRL logs it as None)...
    assert logs["rewards/grounding/mean"] is None
    # ...ignored by the weighted nansum: the total is 1 and 0, not NaN
    assert logs["reward"] == pytest.approx(0.5) and logs["reward_std"] == pytest.approx(2**-0.5)


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
