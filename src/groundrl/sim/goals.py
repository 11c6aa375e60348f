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

Each type's conditions are its :class:`~groundrl.sim.task_types.TaskType`'s
``goal_conditions`` (the table in :mod:`groundrl.sim.task_types`).

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

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, NotRequired, TypedDict

from groundrl.sim.refs import Ref, RefJSON, SceneFacts
from groundrl.sim.task_types import BUILTIN_NAMES, TaskType, get_task_type, task_type_names
from groundrl.sim.world import Env

#: The built-in (ALFRED) task types; :func:`~groundrl.sim.task_types.task_type_names`
#: also lists registered ones.
TASK_TYPES = BUILTIN_NAMES


class GoalJSON(TypedDict):
    """:meth:`Goal.to_json`; :meth:`Goal.from_json` reads it back (``mrecep`` and
    ``sliced`` may be missing there)."""

    task_type: str
    obj: str
    recep: str
    mrecep: str | None
    sliced: bool
    obj_id: NotRequired[str]
    obj_ref: NotRequired[RefJSON]
    recep_ref: NotRequired[RefJSON]
    mrecep_ref: NotRequired[RefJSON]


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
        if self.task_type not in task_type_names():
            raise ValueError(f"unknown task type {self.task_type!r}; choose one of {task_type_names()}")
        if get_task_type(self.task_type).movable_recep and not self.mrecep:
            raise ValueError(f"{self.task_type} needs mrecep (the movable receptacle type)")
        for name in ("obj_ref", "recep_ref", "mrecep_ref"):  # empty descriptions are no description
            r = getattr(self, name)
            if r is not None and not r:
                object.__setattr__(self, name, None)

    def with_refs(self, refs: Mapping[str, Ref | None]) -> Goal:
        """This goal with the descriptions ``refs`` gives by role (``obj`` / ``recep`` /
        ``mrecep``) in place of its own; a role ``refs`` does not name keeps its own."""
        unknown = set(refs) - {"obj", "recep", "mrecep"}
        if unknown:
            raise ValueError(f"refs are keyed by role (obj, recep, mrecep), got {sorted(unknown)}")
        return replace(
            self,
            obj_ref=refs.get("obj", self.obj_ref),
            recep_ref=refs.get("recep", self.recep_ref),
            mrecep_ref=refs.get("mrecep", self.mrecep_ref),
        )

    def to_json(self) -> GoalJSON:
        d: GoalJSON = {
            "task_type": self.task_type,
            "obj": self.obj,
            "recep": self.recep,
            "mrecep": self.mrecep,
            "sliced": self.sliced,
        }
        if self.obj_id is not None:
            d["obj_id"] = self.obj_id
        if self.obj_ref:
            d["obj_ref"] = self.obj_ref.to_json()
        if self.recep_ref:
            d["recep_ref"] = self.recep_ref.to_json()
        if self.mrecep_ref:
            d["mrecep_ref"] = self.mrecep_ref.to_json()
        return d

    @classmethod
    def from_json(cls, d: GoalJSON) -> Goal:
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
    def type(self) -> TaskType:
        """The goal's :class:`~groundrl.sim.task_types.TaskType`."""
        return get_task_type(self.task_type)

    def n_conditions(self) -> int:
        spec = self.type
        return spec.n_conditions + (spec.n_objects if self.sliced else 0)


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
    spec = goal.type
    conds = spec.goal_conditions(goal, env, objs, rok, mok)
    if goal.sliced:  # one slice condition per object the type needs (ALFRED: min(#slices, 2))
        n_slices = sum(1 for i in env.order if is_goal_obj(env, goal, i))
        conds.extend(n_slices >= k for k in range(1, spec.n_objects + 1))
    return conds


def progress(task_or_goal: Any, env: Env) -> tuple[int, int]:
    """(satisfied, total) goal conditions for a :class:`Goal` or anything with ``.goal``
    (a :class:`~groundrl.sim.tasks.Task`)."""
    c = conditions(_goal(task_or_goal), env)
    return sum(c), len(c)


def satisfied(task_or_goal: Any, env: Env) -> bool:
    return all(conditions(_goal(task_or_goal), env))
