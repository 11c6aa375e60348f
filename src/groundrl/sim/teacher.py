"""An imperfect teacher for the planner demo, and a counter of its mistakes in traces.

The Reinforced Reasoning paper's SFT data are distilled from a strong but fallible
model (Gemini-2.0-flash, whose own EB-ALFRED success is 51.3 % [paper §3.2, Table 1]);
environment RL is what lifts the student past imitation [paper §4.3, Table 3]. A
perfect expert leaves RL nothing to teach, so the demo's teacher is the A* expert
(:func:`groundrl.sim.planner.expert_plan`, planning from the live state) with three
systematic mistakes. At the start of an episode each mistake becomes one of the
teacher's habits with a stated probability; a habit is then applied to every plan of
that episode it fits, re-plans included (a systematic error, not noise) [ours]:

* ``skip_open`` — leaves out the plan's first ``open the X``: the next pick-up from (or
  put-down into) that closed container fails;
* ``skip_switch`` — leaves out switching on the Faucet or the Microwave: the object is
  carried on, never rinsed or heated;
* ``stop_early`` — drops the plan's last step, one short of the goal.

Habits held in more than half the episodes are what a greedy student copies; the
rates below put two above one half and one below [ours: so the demo shows both what SFT
inherits and what it averages away].

:func:`replay` turns an episode (the task and the policy's text per turn) into a
:class:`Trace` of executed actions and feedback; :func:`count_mistakes` reads the same
three mistakes back from a trace, for the teacher's episodes and for the student's.

>>> from groundrl.sim.generate import generate_tasks
>>> task = generate_tasks(1, seed=0)[0]
>>> plan, made = teacher_plan(task, task.env(), {"stop_early"})
>>> made, len(plan) == len(expert_steps(task, task.env())) - 1
(('stop_early',), True)
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from groundrl.sim.planner import expert_plan
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import render_plan
from groundrl.sim.world import Env

MISTAKES: dict[str, str] = {
    "skip_open": "leaves out opening a closed container (the pick-up or put-down there fails)",
    "skip_switch": "leaves out switching on the Faucet or Microwave (the object is never rinsed or heated)",
    "stop_early": "stops one step early (drops the plan's last step)",
}
# per episode [ours]: two above 1/2 (a greedy student copies them), one below
DEFAULT_RATES: dict[str, float] = {"skip_open": 0.6, "skip_switch": 0.6, "stop_early": 0.3}
SWITCHED = ("Faucet", "Microwave")  # appliances that change the object (rinse, heat)
_APPLIANCE_SPOTS = ("Faucet", "SinkBasin", "Sink", "Microwave")


def check_rates(rates: Mapping[str, float]) -> dict[str, float]:
    """The rates as a dict, or a ``ValueError`` that names the bad key."""
    out = {}
    for k, v in rates.items():
        if k not in MISTAKES:
            raise ValueError(f"teacher mistake {k!r} is unknown: use one of {sorted(MISTAKES)}")
        if not isinstance(v, int | float) or not 0.0 <= float(v) <= 1.0:
            raise ValueError(f"teacher mistake rate {k}={v!r} must be a number in [0, 1]")
        out[k] = float(v)
    return out


def expert_steps(task: Task, state: Env) -> list[str]:
    """The expert's EB-ALFRED plan from ``state`` (a live episode), ``[]`` when none."""
    skills = expert_plan(task.goal, state)
    return render_plan(skills, "eb_alfred", state) if skills else []


def _fits(kind: str, plan: Sequence[str]) -> int | None:
    """The index of the step mistake ``kind`` removes from ``plan``, or ``None``."""
    if kind == "skip_open":
        return next((i for i, s in enumerate(plan) if s.startswith("open the ")), None)
    if kind == "skip_switch":
        return next((i for i, s in enumerate(plan) if s in {f"turn on the {a}" for a in SWITCHED}), None)
    return len(plan) - 1 if plan else None  # stop_early


def draw_habits(rng: random.Random, rates: Mapping[str, float] = DEFAULT_RATES) -> frozenset[str]:
    """The mistakes the teacher makes in one episode: each kind with its rate, one
    ``rng.random()`` per kind in :data:`MISTAKES` order (so one rate never shifts another
    kind's draw)."""
    return frozenset(k for k in MISTAKES if rng.random() < rates.get(k, 0.0))


def teacher_plan(
    task: Task, state: Env, habits: frozenset[str] | set[str]
) -> tuple[list[str], tuple[str, ...]]:
    """The expert plan from ``state`` with every mistake in ``habits`` that fits it
    applied. Returns the plan (EB-ALFRED step names) and the mistakes applied."""
    plan = expert_steps(task, state)
    drop, made = set(), []
    for kind in MISTAKES:
        i = _fits(kind, plan) if kind in habits else None
        if i is not None:
            drop.add(i)
            made.append(kind)
    return [s for i, s in enumerate(plan) if i not in drop], tuple(made)


class TeacherPolicy:
    """The teacher as a ``groundrl sim eval`` policy (see :mod:`groundrl.sim.policies`):
    it plans from the live episode (oracle access through ``reset``) with the episode's
    habits, drawn at ``reset`` from ``random.Random(f"{seed}:{task id}")``. ``made`` logs
    the mistakes applied to every plan of the current episode."""

    needs_image = False
    vocab = "eb_alfred"

    def __init__(self, rates: Mapping[str, float] | None = None, seed: int = 0) -> None:
        self.rates = check_rates(DEFAULT_RATES if rates is None else rates)
        self.seed = seed
        self.name = "teacher"
        self._task: Task | None = None
        self._env: Env | None = None
        self.habits: frozenset[str] = frozenset()
        self.made: list[tuple[str, ...]] = []

    def reset(self, task: Task, env: Env) -> None:
        self._task, self._env = task, env
        self.habits = draw_habits(random.Random(f"{self.seed}:{task.id}"), self.rates)
        self.made = []

    def plan(
        self, instruction: str, observation: str, image: Any, feedback_history: Sequence[Any]
    ) -> list[str]:
        if self._task is None or self._env is None:
            raise RuntimeError("TeacherPolicy.reset(task, env) must be called before plan()")
        plan, made = teacher_plan(self._task, self._env, self.habits)
        self.made.append(made)
        return plan


@dataclass
class Trace:
    """An episode as executed: every action run (as the environment labelled it) with its
    feedback, whether it succeeded, and how many expert steps were left at the end."""

    actions: list[str] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    success: bool = False
    remaining: int | None = None  # expert steps from the final state (None: no plan)


def replay(task: Task, texts: Sequence[str], **env_kwargs: Any) -> Trace:
    """Run an episode's turns (the policy's text per turn) again in
    :class:`~groundrl.sim.env.HouseholdEnv` and return its :class:`Trace`."""
    # lazy: sim.env brings gymnasium and numpy; loaded only when this runs
    from groundrl.sim.env import HouseholdEnv

    env_kwargs.setdefault("reward", "plan")
    env = HouseholdEnv([task], **env_kwargs)
    env.reset(options={"task": task})
    trace = Trace()
    for text in texts:
        _, _, term, trunc, info = env.step(text)
        trace.actions += [str(a) for a in info["actions"]]
        trace.feedback += list(info["feedback"])
        trace.success = bool(info["success"])
        if term or trunc:
            break
    assert env.sim is not None
    if not trace.success:
        skills = expert_plan(task.goal, env.sim)
        trace.remaining = len(skills) if skills is not None else None
    else:
        trace.remaining = 0
    return trace


def count_mistakes(trace: Trace) -> set[str]:
    """Which of the three mistakes an executed episode shows.

    * ``skip_open``: an action failed because its container was closed;
    * ``skip_switch``: the object was put down at a Faucet / SinkBasin / Microwave and
      picked up again with no successful ``turn on`` of the Faucet or Microwave between;
    * ``stop_early``: the episode failed one expert step short of the goal.

    >>> count_mistakes(Trace(["find a Fridge", "put down the object in hand"],
    ...     ["Last action executed successfully.", "Last action is invalid. The Fridge is closed."]))
    {'skip_open'}
    """
    found: set[str] = set()
    at, pending = "", False
    for action, fb in zip(trace.actions, trace.feedback, strict=False):
        ok = fb.startswith("Last action executed successfully")
        if not ok:
            if " closed" in fb:
                found.add("skip_open")
            continue
        if action.startswith("find a "):
            at = action.removeprefix("find a ")
        elif action == "put down the object in hand" and at in _APPLIANCE_SPOTS:
            pending = True
        elif action in {f"turn on the {a}" for a in SWITCHED}:
            pending = False
        elif action.startswith("pick up the ") and pending:
            found.add("skip_switch")
            pending = False
    if not trace.success and trace.remaining == 1:
        found.add("stop_early")
    return found


__all__ = [
    "DEFAULT_RATES",
    "MISTAKES",
    "TeacherPolicy",
    "Trace",
    "check_rates",
    "count_mistakes",
    "draw_habits",
    "expert_steps",
    "replay",
    "teacher_plan",
]
