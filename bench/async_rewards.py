"""Async reward scoring (EmbodiedBrain): how much TRL's reward step shrinks when
judge-backed parts run as async reward functions.

Two judge parts that each take a fixed 300 ms per batch, beside a rule part, scored
through ``GRPOTrainer._calculate_rewards`` on a tiny model: sync adapters (TRL calls
them one after another) vs async adapters (TRL gathers them). Run:
``.venv/bin/python bench/async_rewards.py``.
"""

from __future__ import annotations

import os
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

DELAY = 0.3


def slow_judge(completions, samples):
    time.sleep(DELAY)
    return [0.5] * len(completions)


def main() -> None:
    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from groundrl.demos.planner import build_policy
    from groundrl.integrations.trl import reward_funcs
    from groundrl.rewards.planning import reinforced_format
    from groundrl.rubric import Part, Rubric

    torch.set_num_threads(1)
    model, tok = build_policy(["find a Apple pick up the Apple"] * 20, 32, 1, 0)
    rubric = Rubric(
        [
            Part("format", reinforced_format),
            Part("judge_a", slow_judge, batched=True),
            Part("judge_b", slow_judge, batched=True),
        ]
    )
    times = {}
    for mode in (False, True):
        funcs, weights = reward_funcs(rubric, async_judges=mode)
        args = GRPOConfig(
            output_dir=tempfile.mkdtemp(),
            use_cpu=True,
            num_generations=4,
            per_device_train_batch_size=4,
            max_completion_length=8,
            report_to=[],
            save_strategy="no",
            reward_weights=weights,
        )
        trainer = GRPOTrainer(
            model=model,
            processing_class=tok,
            reward_funcs=funcs,
            args=args,
            train_dataset=Dataset.from_list([{"prompt": "go"}] * 8),
        )
        inputs = [{"prompt": "go"}] * 8
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            trainer._calculate_rewards(inputs, ["go"] * 8, ["{}"] * 8, [[0]] * 8)
            best = min(best, time.perf_counter() - t)
        times["async" if mode else "sync"] = best
    print(
        f"reward step with two {DELAY * 1000:.0f} ms judges + a rule part (TRL _calculate_rewards, 8 completions):"
    )
    print(f"  sync adapters : {times['sync'] * 1000:7.0f} ms")
    print(
        f"  async adapters: {times['async'] * 1000:7.0f} ms   saved {(times['sync'] - times['async']) * 1000:.0f} ms ({times['sync'] / times['async']:.2f}x)"
    )


if __name__ == "__main__":
    main()
