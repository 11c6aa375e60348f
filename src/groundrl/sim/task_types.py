"""ALFRED's task types as objects, registered in one table.

A :class:`TaskType` holds everything the simulator needs to know about one kind of
task: its goal conditions (ALFRED's ``goal_conditions_met``, ``alfred/env/tasks.py``;
see :mod:`groundrl.sim.goals`), how the generator draws and words one (rooms, usable
objects, the instruction template), what a scene must hold, and the facts the expert
planner's moves and heuristic read (the station that changes the object, the appliance
switched on there, a lamp to switch on, a movable receptacle, how many objects). The
seven ALFRED types are registered here; :func:`register_task_type` adds one (installed
packages through the ``groundrl.task_types`` entry-point group, each naming a
:class:`TaskType` or a module that registers its own), and every surface (goals,
generator, scenes, planner, PDDL export, reports) reads it from the table, so a new type
made of these behaviours is one object.

>>> get_task_type("pick_heat_then_place_in_recep").station
'Microwave'
>>> [t.name for t in task_types() if t.n_objects == 2]
['pick_two_obj_and_place']
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from groundrl.registry import Registry
from groundrl.sim.catalog import CLEANABLE, COOLABLE, HEATABLE
from groundrl.sim.world import Env

if TYPE_CHECKING:
    from groundrl.sim.goals import Goal

Ids = frozenset[str] | None
#: ``(goal, env, goal objects, allowed target ids, allowed movable-receptacle ids)`` →
#: each of the type's own conditions (the slice conditions are added by ``goals``)
Conditions = Callable[["Goal", Env, list[str], Ids, Ids], list[bool]]


def inside(env: Env, oid: str, rtype: str, ok: Ids = None) -> bool:
    """Whether ``oid`` is directly in/on a receptacle of type ``rtype`` (one of ``ok``)."""
    p = env.parent.get(oid)
    return p is not None and env.type_of[p] == rtype and (ok is None or p in ok)


@dataclass(frozen=True)
class TaskType:
    """One task type. ``instruction`` is a template with ``{o}`` (the object), ``{r}``
    (the target), ``{m}`` (the movable receptacle) and ``{prep}`` ("in" / "on")."""

    name: str
    instruction: str
    label: str  # short name on charts
    goal_conditions: Conditions
    n_conditions: int  # how many goal_conditions returns (before the slice conditions)
    n_objects: int = 1  # instances of the object the goal needs (in one receptacle)
    state: str | None = None  # the state the object must reach: "clean", "hot" or "cool"
    macro: str | None = None  # the skill that gives it at the station (macro vocabularies)
    station: str | None = None  # where that happens (its side effect, or the macro)
    switch: str | None = None  # the appliance switched on at the station, if any
    switch_on_parent: bool = False  # the object sits in the switch's parent (a faucet's basin)
    fixtures: tuple[str, ...] = ()  # what a scene must hold besides the target
    rooms: tuple[str, ...] | None = None  # rooms a generated task is set in (None: any)
    objects: frozenset[str] | None = None  # object types it can ask for (None: any in the room)
    avoid: frozenset[str] = frozenset()  # the object neither starts in nor is taken to these
    lamp: bool = False  # the target is a lamp switched on with the object in hand
    movable_recep: bool = False  # the object goes in a movable receptacle (``Goal.mrecep``)
    sliceable: bool = True  # a long-horizon draw may ask for the object sliced
    pddl: bool = False  # the test oracle tests/sim/pddl_oracle.py can export and validate its goal


def _placed(goal: Goal, env: Env, objs: list[str], rok: Ids, mok: Ids) -> list[bool]:
    return [any(inside(env, o, goal.recep, rok) for o in objs)]


def _looked_at_in_light(goal: Goal, env: Env, objs: list[str], rok: Ids, mok: Ids) -> list[bool]:
    lit = any(
        i in env.on and env.reachable(i) and (rok is None or i in rok) for i in env.ids_of_type(goal.recep)
    )
    return [env.held is not None and env.held in objs, lit]


def _changed_then_placed(goal: Goal, env: Env, objs: list[str], rok: Ids, mok: Ids) -> list[bool]:
    flag = getattr(env, get_task_type(goal.task_type).state or "")  # env.clean / env.hot / env.cool
    return [
        any(inside(env, o, goal.recep, rok) for o in objs),
        any(o in flag for o in objs),
        any(o in flag and inside(env, o, goal.recep, rok) for o in objs),
    ]


def _two_placed(goal: Goal, env: Env, objs: list[str], rok: Ids, mok: Ids) -> list[bool]:
    # ALFRED counts the best receptacle instance: both objects in the *same* one
    per_recep: dict[str, int] = {}
    for o in objs:
        p = env.parent.get(o)
        if p is not None and env.type_of[p] == goal.recep and (rok is None or p in rok):
            per_recep[p] = per_recep.get(p, 0) + 1
    n = max(per_recep.values(), default=0)
    return [n >= 1, n >= 2]


def _in_movable_recep(goal: Goal, env: Env, objs: list[str], rok: Ids, mok: Ids) -> list[bool]:
    mt = goal.mrecep or ""
    m = [i for i in env.ids_of_type(mt) if mok is None or i in mok]
    return [
        any(inside(env, o, mt, mok) for o in objs),
        any(inside(env, i, goal.recep, rok) for i in m),
        any(inside(env, o, mt, mok) and inside(env, env.parent[o] or "", goal.recep, rok) for o in objs),
    ]


ENTRY_POINT_GROUP = "groundrl.task_types"


#: The task-type registry (:class:`groundrl.registry.Registry`); the functions below
#: are its long-standing names.
TASK_TYPES: Registry[TaskType] = Registry(
    "task type",
    group=ENTRY_POINT_GROUP,
    name_of=lambda t: t.name,
    item_type=TaskType,
    log=logging.getLogger("groundrl.sim"),
)


def register_task_type(task_type: TaskType, *, replace: bool = False) -> TaskType:
    """Add ``task_type`` to the table; returns it. The rules of every registry
    (:mod:`groundrl.registry`): a built-in name raises, another task type under a taken
    name raises unless ``replace=True``, the same object again is a no-op."""
    if not isinstance(task_type, TaskType) or not task_type.name:
        raise TypeError("register_task_type takes a named TaskType")
    return TASK_TYPES.register(task_type, replace=replace)


def unregister_task_type(name: str) -> None:
    """Remove a registered task type (a built-in cannot be removed)."""
    TASK_TYPES.unregister(name)


def get_task_type(name: str) -> TaskType:
    """The registered task type called ``name``; ``ValueError`` naming the closest and
    the choices."""
    return TASK_TYPES.get(name)


def task_types() -> tuple[TaskType, ...]:
    """Every registered task type, the built-ins first in ALFRED's order."""
    return tuple(t for _, t in TASK_TYPES.items())


def task_type_names() -> tuple[str, ...]:
    return tuple(TASK_TYPES.names())


BUILTIN = (
    TaskType("pick_and_place_simple", "put a {o} {prep} the {r}", "pick & place", _placed, 1, pddl=True),
    TaskType(
        "look_at_obj_in_light",
        "examine a {o} under the {r}",
        "look at in light",
        _looked_at_in_light,
        2,
        rooms=("bedroom", "living_room"),
        lamp=True,
        pddl=True,
    ),
    TaskType(
        "pick_clean_then_place_in_recep",
        "rinse off a {o} and put it {prep} the {r}",
        "clean & place",
        _changed_then_placed,
        3,
        state="clean",
        macro="clean",
        station="SinkBasin",
        switch="Faucet",
        switch_on_parent=True,
        fixtures=("SinkBasin", "Faucet"),
        rooms=("kitchen", "bathroom"),
        objects=CLEANABLE,
    ),
    TaskType(
        "pick_heat_then_place_in_recep",
        "heat a {o} and put it {prep} the {r}",
        "heat & place",
        _changed_then_placed,
        3,
        state="hot",
        macro="heat",
        station="Microwave",
        switch="Microwave",
        fixtures=("Microwave",),
        rooms=("kitchen",),
        objects=HEATABLE,
    ),
    TaskType(
        "pick_cool_then_place_in_recep",
        "chill a {o} and put it {prep} the {r}",
        "cool & place",
        _changed_then_placed,
        3,
        state="cool",
        macro="cool",
        station="Fridge",
        fixtures=("Fridge",),
        rooms=("kitchen",),
        objects=COOLABLE,
        avoid=frozenset({"Fridge"}),  # an object in the fridge is cool already
    ),
    TaskType(
        "pick_two_obj_and_place",
        "put two {o}s {prep} the {r}",
        "two objects",
        _two_placed,
        2,
        n_objects=2,
        pddl=True,
    ),
    TaskType(
        "pick_and_place_with_movable_recep",
        "put a {o} in a {m} and move it to the {r}",
        "movable recep.",
        _in_movable_recep,
        3,
        movable_recep=True,
        sliceable=False,
    ),
)
for _t in BUILTIN:
    TASK_TYPES.builtin(_t)
del _t
BUILTIN_NAMES = tuple(t.name for t in BUILTIN)

__all__ = [
    "BUILTIN",
    "BUILTIN_NAMES",
    "ENTRY_POINT_GROUP",
    "TASK_TYPES",
    "TaskType",
    "get_task_type",
    "inside",
    "register_task_type",
    "task_type_names",
    "task_types",
    "unregister_task_type",
]
