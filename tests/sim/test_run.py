"""groundrl.sim.run: the simulator jobs behind `groundrl sim` (hand-worked values)."""

import pytest

from groundrl.sim.generate import generate_tasks
from groundrl.sim.run import check_policy_tasks, eval_config, export_record, run_evaluation, select_tasks


def test_select_tasks_filters_then_caps_per_subset_then_limits():
    tasks = generate_tasks(12, seed=0)  # the six subsets, cycled twice
    assert [t.subset for t in tasks[:6]] == [t.subset for t in tasks[6:]]
    assert select_tasks(tasks) == tasks
    assert select_tasks(tasks, ["spatial"]) == [tasks[3], tasks[9]]
    assert select_tasks(tasks, ["spatial", "base"], per_subset=1) == [tasks[0], tasks[3]]
    assert select_tasks(tasks, per_subset=1, limit=2) == tasks[:2]
    by_type = select_tasks(tasks, [tasks[0].task_type])
    assert tasks[0] in by_type and all(t.task_type == tasks[0].task_type for t in by_type)


def test_check_policy_tasks():
    tasks = generate_tasks(2, seed=0)
    check_policy_tasks("gold", tasks, "x.jsonl")  # generated tasks carry the expert's plan
    with pytest.raises(ValueError, match="no tasks to evaluate in x.jsonl"):
        check_policy_tasks("expert", [], "x.jsonl")
    for t in tasks:
        t.gold_plan = None
    with pytest.raises(ValueError, match="carry no gold plan"):
        check_policy_tasks("gold", tasks, "x.jsonl")


class Closing:
    name, vocab = "closing", "eb_alfred"

    def __init__(self):
        self.closed = 0

    def plan(self, instruction, observation, image, feedback_history):
        return []  # the empty plan ends the episode

    def close(self):
        self.closed += 1


def test_run_evaluation_closes_the_policy_and_keeps_the_config():
    tasks = generate_tasks(3, seed=1)
    pol = Closing()
    metrics, results = run_evaluation(tasks, pol, max_steps=5, config={"policy": "closing"})
    assert pol.closed == 1 and len(results) == 3
    assert metrics["n_tasks"] == 3 and metrics["success_rate"] == 0.0
    assert metrics["config"] == {"policy": "closing"} and "tasks_without_plan" not in metrics
    assert [r.end for r in results] == ["empty plan"] * 3


def test_eval_config_keeps_only_what_the_policy_uses():
    common = dict(
        tasks="t.jsonl", policy_name="p", max_steps=30, max_invalid=10, seed=3, random_length=5,
        plans="plans.jsonl", judge_backend="openai", judge_model="m", image=True, keep=(), per_subset=None,
        limit=None,
    )  # fmt: skip
    base = {"tasks": "t.jsonl", "policy": "p", "max_steps": 30, "max_invalid": 10}
    assert eval_config(policy="expert", **common) == base
    assert eval_config(policy="random", **common) == {**base, "seed": 3, "random_length": 5}
    assert eval_config(policy="file", **common) == {**base, "plans": "plans.jsonl"}
    model = eval_config(policy="model", **{**common, "keep": ("base",), "limit": 2})
    assert model == {
        **base, "judge_backend": "openai", "judge_model": "m", "image": True, "subsets": ["base"], "limit": 2,
    }  # fmt: skip
    # the model's tokens per answer are recorded where the CLI resolved them
    assert eval_config(policy="model", **common, max_tokens=256)["max_tokens"] == 256
    assert "max_tokens" not in eval_config(policy="expert", **common, max_tokens=256)


def test_export_record_has_a_gold_plan_per_vocabulary():
    from groundrl.sim.vocab import VOCABS

    rec = export_record(generate_tasks(1, seed=0)[0])
    assert set(rec["gold_plans"]) == set(VOCABS)
    assert rec["gold_plan"] == rec["gold_plans"]["eb_alfred"]
    assert rec["gold_plans"]["embodied_brain"].startswith("<actions>")
    assert all(isinstance(v, str) for v in rec["action_map"].values())
