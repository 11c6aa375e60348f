"""Reinforced Reasoning SFT data from simulator tasks.

Per task: the expert plan (:func:`groundrl.sim.planner.expert_plan`, EB-ALFRED action
names) is **executed** in :class:`~groundrl.sim.env.HouseholdEnv`; only plans that succeed
are kept. The target is the paper's JSON::

    {"reasoning_and_reflection": …, "visual_state_description": …,
     "language_plan": "1. …\\n2. …", "executable_plan": [{"action_id": id, "action_name": name}, …]}

with ids from the one global action map of the task set
(:func:`groundrl.train.planning_data.global_action_map`). ``visual_state_description`` is
the simulator's text observation of the state the plan starts from. The reasoning text is
distilled from a teacher (any judge backend, e.g. an OpenAI-compatible server) when one is
given; without one, or when a call fails, it is a template naming the goal and the plan
(our choice; counted as ``template_reasoning``).

``per_step=True`` decomposes each successful trajectory into T records (the paper's
per-step decomposition, :mod:`groundrl.curate.decompose`): record t starts from the state
after the first t actions (executed), lists them as done, and targets the remaining
T − t actions.

The prompt (:func:`planner_prompt`) lists the action vocabulary with its ids, one
``id: name`` per line, as EB-ALFRED's planner prompt does, then the instruction, the scene
and the JSON keys to answer with: the format reward checks each step's
``(action_id, action_name)`` against this map [RR §3.3, Eq. 9], so the policy must be
shown it, not made to memorise it. ``list_actions=False`` keeps the short prompt
(instruction and scene only) for tiny smoke runs.

Records: ``{id, prompt, target, gold}`` — ``groundrl sft`` / an ``sft`` stage read
``prompt`` and ``target``; ``gold`` (the action names) is the GRPO gold of the recipe.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from groundrl.judges import SamplingParams
from groundrl.sim.episode_prompt import prompt
from groundrl.train.planning_data import global_action_map, target

if TYPE_CHECKING:  # types only: the environment needs the optional sim extra
    from groundrl.sim.env import Observation, StepInfo

KEYS = ("reasoning_and_reflection", "visual_state_description", "language_plan", "executable_plan")


ANSWER_FORMAT = (
    "Answer with one JSON object with the keys reasoning_and_reflection, visual_state_description, "
    'language_plan and executable_plan, the last a list of {"action_id": int, "action_name": str} steps '
    "taken from the action list above."
)


def planner_prompt(task: Any, amap: dict[int, str], list_actions: bool = True) -> str:
    """The planner's prompt: the action list (``id: name``, EB-ALFRED style), the
    instruction and scene, the answer format, ending in ``Plan:``."""
    if not list_actions:
        return prompt(task)
    actions = "\n".join(f"{k}: {v}" for k, v in sorted(amap.items()))
    head = f"Available actions (id: name), the only ones you may use:\n{actions}\n{ANSWER_FORMAT}"
    return f"{head}\n{prompt(task)}"


def plan_target(names: Sequence[str], amap: dict[int, str], reasoning: str, state: str) -> str:
    """The paper's JSON completion for ``names``."""
    ids = {v: k for k, v in amap.items()}
    obj = {
        "reasoning_and_reflection": reasoning,
        "visual_state_description": state,
        "language_plan": "\n".join(f"{i + 1}. {n}" for i, n in enumerate(names)),
        "executable_plan": [{"action_id": ids[n], "action_name": n} for n in names],
    }
    return json.dumps(obj)


def template_reasoning(instruction: str, names: Sequence[str]) -> str:
    if not names:
        return f"The goal '{instruction}' already holds."
    if len(names) == 1:
        return f"To {instruction.rstrip('.').lower()}, one action is needed: {names[0]}."
    return (
        f"To {instruction.rstrip('.').lower()}, I first {names[0]}, then continue step by step "
        f"and finish with {names[-1]} ({len(names)} actions)."
    )


def _teacher_reasoning(backend: Any, instruction: str, state: str, names: Sequence[str]) -> str | None:
    text = (
        "You are a household robot. Explain briefly, in the first person, why this plan achieves the "
        f"instruction.\nInstruction: {instruction}\nState: {state}\nPlan:\n"
        + "\n".join(f"{i + 1}. {n}" for i, n in enumerate(names))
    )
    g = backend.generate([[{"role": "user", "content": text}]], SamplingParams(max_tokens=256))[0]
    return g.text.strip() if g.ok and g.text and g.text.strip() else None


class RRSFTRecord(TypedDict):
    """One SFT record of :func:`rr_sft_records` (the module doc's form)."""

    id: str  # the task id (``<id>/step<t>`` per step)
    prompt: str
    target: str  # the JSON answer with the KEYS
    gold: list[str]  # the remaining plan's action names: the recipe's GRPO gold


def rr_sft_records(
    tasks: Sequence[Any],
    teacher: Any = None,
    per_step: bool = False,
    amap: dict[int, str] | None = None,
    list_actions: bool = True,
) -> tuple[list[RRSFTRecord], dict[int, str], Counter]:
    """``(records, action_map, counts)`` — see the module docstring. ``counts``:
    ``tasks``, ``kept_tasks``, ``no_expert_plan``, ``failed_execution``, ``records``,
    ``teacher_reasoning``, ``template_reasoning``."""
    # lazy: gymnasium (the optional sim extra) loads only when an episode runs
    from groundrl.sim.env import HouseholdEnv

    amap = amap if amap is not None else global_action_map(tasks)
    counts: Counter = Counter(tasks=len(tasks))
    out: list[RRSFTRecord] = []
    if not tasks:
        return out, amap, counts
    env = HouseholdEnv(list(tasks), reward="plan", max_steps=200)
    ids = {v: k for k, v in amap.items()}

    def run(task: Any, names: Sequence[str]) -> tuple[Observation, StepInfo]:
        obs, info = env.reset(options={"task": task})
        if names:
            plan = json.dumps({"executable_plan": [{"action_id": ids[n], "action_name": n} for n in names]})
            obs, _, _, _, info = env.step(plan)
        return obs, info

    for task in tasks:
        try:
            _, names = target(task, amap)
        except ValueError:
            counts["no_expert_plan"] += 1
            continue
        _, info = run(task, names)
        if not info.get("success"):
            counts["failed_execution"] += 1
            continue
        counts["kept_tasks"] += 1
        starts = range(len(names)) if per_step else [0]
        for t in starts:
            obs, _ = run(task, names[:t])
            state = str(obs.get("text", ""))
            rest = list(names[t:])
            reasoning = (
                _teacher_reasoning(teacher, task.instruction, state, rest) if teacher is not None else None
            )
            counts["teacher_reasoning" if reasoning else "template_reasoning"] += 1
            p = planner_prompt(task, amap, list_actions)
            if t:
                done = "\n".join(f"{i + 1}. {n}" for i, n in enumerate(names[:t]))
                p = f"{p.removesuffix('Plan:').rstrip()}\nDone so far:\n{done}\nNow: {state}\nRemaining plan:"
            out.append(
                {
                    "id": f"{task.id}/step{t}" if per_step else task.id,
                    "prompt": p,
                    "target": plan_target(
                        rest, amap, reasoning or template_reasoning(task.instruction, rest), state
                    ),
                    "gold": rest,
                }
            )
    counts["records"] = len(out)
    return out, amap, counts
