"""ALFRED goal conditions and progress.

Conditions follow ALFRED's ``goal_conditions_met`` (``alfred/env/tasks.py``), with
"in" meaning directly in/on (ALFRED's ``receptacleObjectIds``):

* pick_and_place_simple (1): some object in some target receptacle;
* look_at_obj_in_light (2): an object in hand; a lamp of the target type on and at the
  agent's spot (ALFRED: toggled and visible);
* pick_clean / heat / cool_then_place_in_recep (3): some object in the receptacle; some
  object clean / hot / cool; one object both;
* pick_two_obj_and_place (2): ``min(max over receptacle instances of the objects in it,
  2)`` — both in the *same* receptacle, as ALFRED counts;
* pick_and_place_with_movable_recep (3): an object in a movable receptacle; a movable
  receptacle in the target; one movable receptacle holding an object and in the target.

Sliced objects (``AppleSliced``): the object must be a slice, and one condition is added,
"some slice exists" — two for pick_two, which ALFRED scores as ``min(#slices, 2)``.
Progress rate = satisfied conditions / all conditions; success = all satisfied.

``Goal.obj_id`` (our addition) asks for one instance: only it (or its slices) counts as
the object. ``obj_ref`` / ``recep_ref`` / ``mrecep_ref`` (our addition, for instructions
that describe what they mean: "the yellow bottle", "the cabinet under the sink") are
:class:`~groundrl.sim.refs.Ref` descriptions: only instances they describe count for
that role (the object's slices count when the object does). The matching ids are
computed once per scene (:func:`allowed`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from groundrl.sim.refs import Ref, SceneFacts
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
STATE_OF = {
    "pick_clean_then_place_in_recep": "clean",
    "pick_heat_then_place_in_recep": "hot",
    "pick_cool_then_place_in_recep": "cool",
}
#: The station whose side effect (or macro) gives the state.
STATION_OF = {
    "pick_clean_then_place_in_recep": "SinkBasin",
    "pick_heat_then_place_in_recep": "Microwave",
    "pick_cool_then_place_in_recep": "Fridge",
}
_BASE_COUNT = {"pick_and_place_simple": 1, "look_at_obj_in_light": 2, "pick_two_obj_and_place": 2}


@dataclass(frozen=True)
class Goal:
    """``obj`` is the base object type (``Apple``); ``sliced`` asks for it sliced
    (ALFRED's ``AppleSliced``); ``recep`` is the target receptacle type (the lamp type
    for look-at-in-light); ``mrecep`` the movable receptacle type; ``obj_id`` one
    required instance (``None``: any instance of ``obj``)."""

    task_type: str
    obj: str
    recep: str
    mrecep: str | None = None
    sliced: bool = False
    obj_id: str | None = None
    obj_ref: Ref | None = None
    recep_ref: Ref | None = None
    mrecep_ref: Ref | None = None

    def __post_init__(self) -> None:
        if self.task_type not in TASK_TYPES:
            raise ValueError(f"unknown task type {self.task_type!r}; choose one of {TASK_TYPES}")
        if self.task_type == "pick_and_place_with_movable_recep" and not self.mrecep:
            raise ValueError("pick_and_place_with_movable_recep needs mrecep (the movable receptacle type)")
        for name in ("obj_ref", "recep_ref", "mrecep_ref"):  # empty descriptions are no description
            r = getattr(self, name)
            if r is not None and not r:
                object.__setattr__(self, name, None)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "task_type": self.task_type,
            "obj": self.obj,
            "recep": self.recep,
            "mrecep": self.mrecep,
            "sliced": self.sliced,
        }
        if self.obj_id is not None:
            d["obj_id"] = self.obj_id
        for name in ("obj_ref", "recep_ref", "mrecep_ref"):
            r = getattr(self, name)
            if r:
                d[name] = r.to_json()
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Goal:
        return cls(
            d["task_type"],
            d["obj"],
            d["recep"],
            d.get("mrecep"),
            bool(d.get("sliced", False)),
            d.get("obj_id"),
            Ref.from_json(d.get("obj_ref")),
            Ref.from_json(d.get("recep_ref")),
            Ref.from_json(d.get("mrecep_ref")),
        )

    @property
    def described(self) -> bool:
        """Whether the goal names particular instances (by id or description)."""
        return bool(self.obj_id or self.obj_ref or self.recep_ref or self.mrecep_ref)

    def blind(self) -> Goal:
        """The goal with every instance description dropped (the attribute-blind
        reading: any instance of each type will do)."""
        return replace(self, obj_id=None, obj_ref=None, recep_ref=None, mrecep_ref=None)

    @property
    def obj_type(self) -> str:
        """The type the placed object has at the end (``AppleSliced`` when sliced)."""
        return self.obj + "Sliced" if self.sliced else self.obj

    def n_conditions(self) -> int:
        base = _BASE_COUNT.get(self.task_type, 3)
        return base + ((2 if self.task_type == "pick_two_obj_and_place" else 1) if self.sliced else 0)


def _goal(x: Any) -> Goal:
    return x if isinstance(x, Goal) else x.goal


Allowed = tuple[frozenset[str] | None, frozenset[str] | None, frozenset[str] | None]
_NONE: Allowed = (None, None, None)


def allowed(goal: Goal, env: Env) -> Allowed:
    """The instance ids the goal's descriptions allow for its object, target and movable
    receptacle (``None``: any instance), computed once per scene and goal."""
    if not (goal.obj_ref or goal.recep_ref or goal.mrecep_ref):
        return _NONE
    memo = env.memo
    got = memo.get(goal)
    if got is None:
        facts = memo.get("facts")
        if facts is None:
            facts = memo["facts"] = SceneFacts(env.scene.objects)
        got = memo[goal] = (
            facts.allowed(goal.obj, goal.obj_ref),
            facts.allowed(goal.recep, goal.recep_ref),
            facts.allowed(goal.mrecep, goal.mrecep_ref) if goal.mrecep else None,
        )
    return got


def _inside(env: Env, oid: str, rtype: str, ok: frozenset[str] | None = None) -> bool:
    p = env.parent.get(oid)
    return p is not None and env.type_of[p] == rtype and (ok is None or p in ok)


def is_goal_obj(env: Env, goal: Goal, oid: str) -> bool:
    """Whether ``oid`` counts as the goal's object (a slice when the goal is sliced)."""
    t = env.type_of[oid]
    if goal.sliced:
        if t != goal.obj + "Sliced":
            return False
    elif t != goal.obj:
        return False
    if goal.obj_id is not None and not (oid == goal.obj_id or oid.startswith(goal.obj_id + "_Slice_")):
        return False
    if goal.obj_ref:
        ok = allowed(goal, env)[0]
        return ok is not None and oid.split("_Slice_")[0] in ok
    return True


def goal_objs(env: Env, goal: Goal) -> list[str]:
    return [i for i in env.order if is_goal_obj(env, goal, i)]


def conditions(goal: Goal, env: Env) -> list[bool]:
    """Each goal condition, satisfied or not, in a fixed order (the slice
    condition(s) last)."""
    objs = goal_objs(env, goal)
    _, rok, mok = allowed(goal, env)
    conds: list[bool] = []
    tt = goal.task_type
    if tt == "pick_and_place_simple":
        conds.append(any(_inside(env, o, goal.recep, rok) for o in objs))
    elif tt == "look_at_obj_in_light":
        conds.append(env.held is not None and env.held in objs)
        conds.append(
            any(
                i in env.on and env.reachable(i) and (rok is None or i in rok)
                for i in env.ids_of_type(goal.recep)
            )
        )
    elif tt in STATE_OF:
        flag = {"clean": env.clean, "hot": env.hot, "cool": env.cool}[STATE_OF[tt]]
        conds.append(any(_inside(env, o, goal.recep, rok) for o in objs))
        conds.append(any(o in flag for o in objs))
        conds.append(any(o in flag and _inside(env, o, goal.recep, rok) for o in objs))
    elif tt == "pick_two_obj_and_place":
        per_recep: dict[str, int] = {}
        for o in objs:
            p = env.parent.get(o)
            if p is not None and env.type_of[p] == goal.recep and (rok is None or p in rok):
                per_recep[p] = per_recep.get(p, 0) + 1
        n = max(per_recep.values(), default=0)
        conds.extend([n >= 1, n >= 2])
    else:  # movable receptacle
        mt = goal.mrecep or ""
        m = [i for i in env.ids_of_type(mt) if mok is None or i in mok]
        conds.append(any(_inside(env, o, mt, mok) for o in objs))
        conds.append(any(_inside(env, i, goal.recep, rok) for i in m))
        conds.append(
            any(_inside(env, o, mt, mok) and _inside(env, env.parent[o], goal.recep, rok) for o in objs)
        )
    if goal.sliced:
        n_slices = sum(1 for i in env.order if is_goal_obj(env, goal, i))
        conds.append(n_slices >= 1)
        if tt == "pick_two_obj_and_place":
            conds.append(n_slices >= 2)
    return conds


def progress(task_or_goal: Any, env: Env) -> tuple[int, int]:
    """(satisfied, total) goal conditions for a :class:`Goal` or anything with ``.goal``
    (a :class:`~groundrl.sim.tasks.Task`)."""
    c = conditions(_goal(task_or_goal), env)
    return sum(c), len(c)


def satisfied(task_or_goal: Any, env: Env) -> bool:
    return all(conditions(_goal(task_or_goal), env))
