"""ALFRED goal conditions and progress.

Counts follow ALFRED: pick-and-place 1; look-at-in-light 2; two objects 2;
clean / heat / cool 3; movable receptacle 3; +1 when the object must be sliced.
Progress rate = satisfied conditions / all conditions; success = all satisfied.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from groundrl.sim.catalog import base_type
from groundrl.sim.world import Env

TASK_TYPES = (
    "pick_and_place_simple",
    "look_at_obj_in_light",
    "pick_clean_then_place_in_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_two_obj_and_place",
    "pick_and_place_with_movable_recep",
)
_STATE = {
    "pick_clean_then_place_in_recep": "clean",
    "pick_heat_then_place_in_recep": "hot",
    "pick_cool_then_place_in_recep": "cool",
}


@dataclass(frozen=True)
class Goal:
    """``obj`` is the base object type (``Apple``); ``sliced`` asks for it sliced
    (ALFRED's ``AppleSliced``); ``recep`` is the target receptacle type (the lamp type
    for look-at-in-light); ``mrecep`` the movable receptacle type."""

    task_type: str
    obj: str
    recep: str
    mrecep: str | None = None
    sliced: bool = False

    def __post_init__(self) -> None:
        if self.task_type not in TASK_TYPES:
            raise ValueError(f"unknown task type {self.task_type!r}; choose one of {TASK_TYPES}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Goal:
        return cls(d["task_type"], d["obj"], d["recep"], d.get("mrecep"), bool(d.get("sliced", False)))

    @property
    def obj_type(self) -> str:
        """The type the placed object has at the end (``AppleSliced`` when sliced)."""
        return self.obj + "Sliced" if self.sliced else self.obj

    def n_conditions(self) -> int:
        base = {"pick_and_place_simple": 1, "look_at_obj_in_light": 2, "pick_two_obj_and_place": 2}.get(
            self.task_type, 3
        )
        return base + (1 if self.sliced else 0)


def _inside(env: Env, oid: str, rtype: str) -> bool:
    p = env.parent.get(oid)
    return p is not None and env.type_of[p] == rtype


def _objs(env: Env, goal: Goal) -> list[str]:
    return [
        i for i in env.order if base_type(env.type_of[i]) == goal.obj and (not goal.sliced or i in env.sliced)
    ]


def conditions(goal: Goal, env: Env) -> list[bool]:
    """Each goal condition, satisfied or not, in a fixed order."""
    objs = _objs(env, goal)
    conds: list[bool] = []
    tt = goal.task_type
    if tt == "pick_and_place_simple":
        conds.append(any(_inside(env, o, goal.recep) for o in objs))
    elif tt == "look_at_obj_in_light":
        conds.append(env.held is not None and env.held in objs)
        conds.append(any(i in env.on and env.reachable(i) for i in env.ids_of_type(goal.recep)))
    elif tt in _STATE:
        flag = {"clean": env.clean, "hot": env.hot, "cool": env.cool}[_STATE[tt]]
        conds.append(any(o in flag for o in objs))
        conds.append(any(_inside(env, o, goal.recep) for o in objs))
        conds.append(any(o in flag and _inside(env, o, goal.recep) for o in objs))
    elif tt == "pick_two_obj_and_place":
        n = sum(1 for o in objs if _inside(env, o, goal.recep))
        conds.extend([n >= 1, n >= 2])
    else:  # movable receptacle
        m = [i for i in env.order if env.type_of[i] == goal.mrecep]
        conds.append(any(_inside(env, o, goal.mrecep) for o in objs))
        conds.append(any(_inside(env, i, goal.recep) for i in m))
        conds.append(
            any(_inside(env, o, goal.mrecep) and _inside(env, env.parent[o], goal.recep) for o in objs)
        )
    if goal.sliced:
        conds.append(any(base_type(env.type_of[i]) == goal.obj and i in env.sliced for i in env.order))
    return conds


def progress(goal: Goal, env: Env) -> tuple[int, int]:
    c = conditions(goal, env)
    return sum(c), len(c)


def satisfied(goal: Goal, env: Env) -> bool:
    return all(conditions(goal, env))
