"""Simulator tasks → prompts and Reinforced-Reasoning JSON targets for a planner policy.

One global action map (EB-ALFRED action names over every object type the tasks use,
ids stable for a given type set) so action ids mean the same thing in every prompt —
the ``action_map`` the ``reinforced_planning`` format reward checks against.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from groundrl.sim.planner import expert_plan
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import action_space, render_plan
from groundrl.sim.world import Obj, Scene

TOOLS = ("Knife", "ButterKnife", "SinkBasin", "Faucet", "Microwave", "Fridge", "DeskLamp", "FloorLamp")


def global_action_map(tasks: Sequence[Task]) -> dict[int, str]:
    types = sorted({o.type for t in tasks for o in t.scene.objects})
    return action_space(Scene("any", [Obj(f"{t}_1", t) for t in types]))


def observation(task: Task) -> str:
    """Where the objects the instruction needs are (and the tools), as one line."""
    words = set(task.instruction.replace(".", " ").replace(",", " ").split())
    keep = {task.goal.obj, task.goal.recep, task.goal.mrecep, *TOOLS} | words
    env = task.env()
    parts = []
    for o in task.scene.objects:
        if o.type not in keep or o.parent is None:
            continue
        p = task.scene.objects[[x.id for x in task.scene.objects].index(o.parent)].type
        closed = " (closed)" if env.props(o.parent)["openable"] else ""
        parts.append(f"{o.type} in {p}{closed}")
    return "; ".join(parts)


def prompt(task: Task) -> str:
    return f"Instruction: {task.instruction}\nScene: {observation(task)}\nPlan:"


def target(task: Task, amap: dict[int, str]) -> tuple[str, list[str]]:
    """The JSON completion (expert plan) and its list of action names (the gold)."""
    skills = expert_plan(task)
    if skills is None:
        raise ValueError(f"task {task.id} has no expert plan")
    names = render_plan(skills, "eb_alfred", task.scene)
    ids = {v: k for k, v in amap.items()}
    plan = [{"action_id": ids[n], "action_name": n} for n in names]
    obj = {
        "reasoning_and_reflection": "",
        "visual_state_description": "",
        "language_plan": "",
        "executable_plan": plan,
    }
    return " " + json.dumps(obj), names


def records(tasks: Sequence[Task], amap: dict[int, str]) -> list[dict[str, Any]]:
    out = []
    for t in tasks:
        completion, gold = target(t, amap)
        out.append({"id": t.id, "prompt": prompt(t), "completion": completion, "gold": gold, "task": t})
    return out
