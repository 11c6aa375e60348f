"""Simulator tasks → Reinforced-Reasoning JSON targets for a planner policy, with the
prompts of :mod:`groundrl.sim.episode_prompt`.

One global action map (EB-ALFRED action names over every object type the tasks use,
ids stable for a given type set) so action ids mean the same thing in every prompt —
the ``action_map`` the ``reinforced_planning`` format reward checks against.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

from groundrl.sim.episode_feedback import default_feedback_text
from groundrl.sim.episode_prompt import prompt
from groundrl.sim.planner import expert_plan
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import action_space, render_plan
from groundrl.sim.world import Obj, Scene


def global_action_map(tasks: Sequence[Task]) -> dict[int, str]:
    types = sorted({o.type for t in tasks for o in t.scene.objects})
    return action_space(Scene("any", [Obj(f"{t}_1", t) for t in types]))


def target(task: Task, amap: dict[int, str]) -> tuple[str, list[str]]:
    """The JSON completion (expert plan) and its list of action names (the gold)."""
    skills = expert_plan(task)
    if skills is None:
        raise ValueError(f"task {task.id} has no expert plan")
    names = render_plan(skills, "eb_alfred", task.scene)
    return plan_json(names, amap), names


def plan_json(names: Sequence[str], amap: dict[int, str]) -> str:
    """A Reinforced-Reasoning JSON completion holding ``names`` as its executable plan."""
    ids = {v: k for k, v in amap.items()}
    plan = [{"action_id": ids[n], "action_name": n} for n in names]
    obj = {
        "reasoning_and_reflection": "",
        "visual_state_description": "",
        "language_plan": "",
        "executable_plan": plan,
    }
    return " " + json.dumps(obj)


def records(tasks: Sequence[Task], amap: dict[int, str]) -> list[dict[str, Any]]:
    out = []
    for t in tasks:
        completion, gold = target(t, amap)
        out.append({"id": t.id, "prompt": prompt(t), "completion": completion, "gold": gold, "task": t})
    return out


class ReplanRecord(TypedDict):
    """A re-planning demonstration: the task's prompt, ``turns`` (``(first plan, feedback
    text)``), the expert's plan from there as the JSON completion (:func:`plan_json`)
    and as action names (``gold``)."""

    id: str
    prompt: str
    turns: list[tuple[str, str]]
    completion: str
    gold: list[str]
    task: Task


def replan_records(
    tasks: Sequence[Task],
    amap: dict[int, str],
    seed: int,
    feedback_text: Callable[[Mapping[str, Any], Mapping[str, Any]], str] | None = None,
) -> list[ReplanRecord]:
    """Re-planning demonstrations (EB-ALFRED's loop, one recovery turn).

    Per task: the expert plan with one step dropped (the step drawn with
    ``random.Random(seed)``) is run in :class:`~groundrl.sim.env.HouseholdEnv` until an
    action fails or the plan runs out; if the episode goes on, the record's context is
    the prompt, that first plan, and the environment's feedback
    (``feedback_text``, default :func:`groundrl.sim.episode_feedback.default_feedback_text`),
    and its target is the expert's plan from the state the first plan left. Tasks whose
    faulty plan still ends the episode (the dropped step did not matter) give none.
    Records carry ``turns``: ``[(first plan, feedback text)]``.
    """
    from groundrl.sim.env import HouseholdEnv  # lazy: gymnasium is the optional `sim` extra

    fb_text = feedback_text or default_feedback_text
    rng = random.Random(seed)
    out: list[ReplanRecord] = []
    if not tasks:
        return out
    env = HouseholdEnv(list(tasks), reward="plan")
    for t in tasks:
        _, gold = target(t, amap)
        k = rng.randrange(len(gold))
        first = plan_json(gold[:k] + gold[k + 1 :], amap)
        env.reset(options={"task": t})
        obs, _, terminated, truncated, info = env.step(first)
        if terminated or truncated or env.sim is None:
            continue
        skills = expert_plan(t.goal, env.sim)
        if not skills:
            continue
        names = render_plan(skills, "eb_alfred", env.sim)
        out.append(
            {
                "id": t.id,
                "prompt": prompt(t),
                "turns": [(first, fb_text(info, obs))],
                "completion": plan_json(names, amap),
                "gold": names,
                "task": t,
            }
        )
    return out
