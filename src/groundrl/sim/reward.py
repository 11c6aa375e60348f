"""Plans as rewards: execute a completion's plan from the sample's initial state and score
what it achieved — an executable reward none of the papers had.

``sim = progress_rate + success_bonus · [success]`` (defaults: bonus 1.0, so 0 … 2).
``task`` is a :class:`~groundrl.sim.tasks.Task` or its JSON dict (a dataset column).
"""

from __future__ import annotations

from typing import Any

from groundrl.sim.execute import execute
from groundrl.types import Score


def sim_reward(
    completion: Any, task: Any, *, success_bonus: float = 1.0, vocab: str = "auto", max_steps: int = 30
) -> Score:
    if task is None:
        return Score("sim", None, "no task in the sample")
    if not isinstance(completion, str) or not completion.strip():
        return Score("sim", 0.0, "empty completion")
    r = execute(task, completion, vocab=vocab, max_steps=max_steps)
    if r.error and r.steps == 0:
        return Score("sim", 0.0, r.error)
    value = r.progress + (success_bonus if r.success else 0.0)
    return Score(
        "sim",
        value,
        f"progress {r.progress:.2f}, success {r.success}, {r.steps} steps ({r.invalid_steps} invalid)",
    )
