"""The planner demo's success-filtered SFT baseline (issue 38 item 1): it plays GRPO's budget of
simulator-scored episodes, and only the turns of successful episodes reach its fine-tuning.
A scripted policy writes the expert plan for half the tasks and an empty plan for the rest,
so which episodes succeed is known before the run."""

from __future__ import annotations

import pytest

pytest.importorskip("trl")
pytest.importorskip("gymnasium")

from groundrl.demos.filtered_sft import filtered_sft, round_sizes  # noqa: E402
from groundrl.demos.planner import DemoConfig, build_policy, split_tasks  # noqa: E402
from groundrl.train.planning_data import global_action_map, prompt, target  # noqa: E402


def test_only_successful_episodes_reach_the_fine_tuning_and_the_budget_is_grpos():
    cfg = DemoConfig.quick(n_train=12, grpo_steps=3, grpo_batch=8, num_generations=4, fsft_rounds=2)
    tasks, train, _ = split_tasks(cfg)
    amap = global_action_map(tasks)
    solvable = {t.id for t in train[::2]}  # the policy knows every other task's plan
    plans = {prompt(t): target(t, amap)[0] for t in train}
    model, tokenizer = build_policy(list(plans.values()), hidden=32, layers=1, seed=0)

    played: list[str] = []

    def generate(model, tokenizer, contexts, max_new_tokens, trainer=None):
        out = []
        for ids in contexts:
            text = tokenizer.decode(ids, skip_special_tokens=True)
            p = next(p for p in plans if text.startswith(p))
            played.append(p)
            task = next(t for t in train if prompt(t) == p)
            plan = plans[p] if task.id in solvable else "{}"
            out.append(tokenizer.encode(plan, add_special_tokens=False) + [tokenizer.eos_token_id])
        return out

    seen: list[list[dict]] = []

    def train_fn(model, tokenizer, recs, settings, log):
        seen.append(list(recs))
        return []

    res = filtered_sft(
        model, tokenizer, train, cfg, log=lambda *_: None, train_fn=train_fn, generate_fn=generate
    )
    assert res["episodes"] == cfg.grpo_steps * cfg.grpo_batch == sum(round_sizes(24, 2, 4))
    assert [r["episodes"] for r in res["rounds"]] == [12, 12]
    assert 0 < res["kept"] < res["episodes"]
    fine_tuned = [r for recs in seen for r in recs]
    assert len(fine_tuned) == res["records"] > 0
    # every record is a solvable task's turn with its expert plan as the target
    assert {r["task"].id for r in fine_tuned} <= solvable
    assert all(r["completion"] == plans[r["prompt"]] for r in fine_tuned)
    # the unsolvable tasks were played (and failed), and none of their turns was kept
    assert {t.id for t in train if prompt(t) in played} - solvable


def test_round_sizes_split_the_budget_in_whole_groups():
    assert round_sizes(3200, 4, 8) == [800] * 4
    assert sum(round_sizes(48, 5, 4)) == 48 and all(n % 4 == 0 for n in round_sizes(48, 5, 4))
