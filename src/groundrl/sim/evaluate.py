"""EB-ALFRED's evaluation loop: the policy plans, steps run until one fails, then it
re-plans from the current state with the feedback, up to the step budget."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from groundrl.sim.execute import run_steps
from groundrl.sim.goals import progress, satisfied
from groundrl.sim.policies import Policy
from groundrl.sim.tasks import Task


def run_episode(
    task: Task, policy: Policy, max_steps: int = 30, max_invalid: int = 10, max_replans: int = 10
) -> dict[str, Any]:
    env = task.env(max_steps, max_invalid)
    feedback: list[str] = []
    for _ in range(max_replans + 1):
        if env.done or satisfied(task.goal, env):
            break
        plan = policy.plan(task, env, feedback)
        if not plan:
            break
        fb, _, err, _ = run_steps(env, task, plan, stop_on_failure=True)
        feedback.extend(fb or ([f"Last action is invalid. {err}"] if err else []))
        if err and not fb:
            break
    done, total = progress(task.goal, env)
    return {
        "id": task.id,
        "subset": task.subset,
        "task_type": task.task_type,
        "success": done == total,
        "progress": done / total if total else 0.0,
        "env_steps": env.steps,
        "invalid_steps": env.invalid_steps,
        "feedback": feedback[-3:],
    }


def summarise(results: Sequence[dict[str, Any]], by: str = "subset") -> dict[str, Any]:
    def agg(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
        n = len(rows)
        return {
            "n_tasks": n,
            "success_rate": sum(r["success"] for r in rows) / n if n else 0.0,
            "progress_rate": sum(r["progress"] for r in rows) / n if n else 0.0,
            "env_steps": sum(r["env_steps"] for r in rows) / n if n else 0.0,
        }

    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        groups[r[by]].append(r)
    return {**agg(results), "by_subset": {k: agg(v) for k, v in sorted(groups.items())}, "grouped_by": by}


def evaluate(
    tasks: Iterable[Task],
    policy: Policy,
    max_steps: int = 30,
    max_invalid: int = 10,
    progress_bar: bool = False,
) -> list[dict[str, Any]]:
    tasks = list(tasks)
    it: Iterable[Task] = tasks
    if progress_bar:
        from tqdm import tqdm

        it = tqdm(tasks, desc=f"sim eval ({policy.name})", unit="task")
    return [run_episode(t, policy, max_steps, max_invalid) for t in it]
