"""Building plausible scenes for a goal: the room's receptacles and fixtures, the
objects the goal needs (and the tools: a knife to slice, a sink and faucet to clean, a
microwave to heat, a fridge to cool, a lamp to look), plus seeded distractors."""

from __future__ import annotations

import random
from collections import Counter

from groundrl.sim.catalog import (
    FIXTURES,
    LAMPS,
    OPENABLE,
    ROOM_FIXTURES,
    ROOM_OBJECTS,
    ROOM_RECEPTACLES,
    SURFACES,
)
from groundrl.sim.goals import Goal
from groundrl.sim.world import Obj, Scene

COLORS = ["red", "blue", "green", "yellow", "white", "black"]
MATERIALS = ["metal", "wooden", "plastic", "glass", "ceramic"]


class SceneBuilder:
    def __init__(self, room: str, rng: random.Random, floorplan: int | None = None) -> None:
        self.room, self.rng, self.floorplan = room, rng, floorplan
        self.objects: list[Obj] = []
        self.counts: Counter[str] = Counter()
        self.opened: set[str] = set()

    def add(self, t: str, parent: str | None = None, **attrs: str) -> str:
        self.counts[t] += 1
        oid = f"{t}_{self.counts[t]}"
        self.objects.append(Obj(oid, t, parent, dict(attrs)))
        return oid

    def first(self, t: str) -> str | None:
        return next((o.id for o in self.objects if o.type == t), None)

    def ensure(self, t: str) -> str:
        oid = self.first(t)
        if oid is not None:
            return oid
        if t in FIXTURES:
            return self.add(t, self.ensure(FIXTURES[t]))
        if t == "DeskLamp":
            return self.add(t, self.ensure("Desk" if self.room == "bedroom" else "SideTable"))
        return self.add(t)

    def surfaces(self, exclude: set[str] = frozenset()) -> list[str]:
        return [
            o.id
            for o in self.objects
            if o.parent is None
            and (o.type in SURFACES or o.type in ("Cabinet", "Drawer", "CounterTop"))
            and o.type not in exclude
        ]

    def place(self, t: str, exclude: set[str] = frozenset(), closed_ok: bool = True, **attrs: str) -> str:
        spots = self.surfaces(exclude)
        if not closed_ok:
            spots = [s for s in spots if self.type_of(s) not in OPENABLE]
        parent = self.rng.choice(spots) if spots else None
        return self.add(t, parent, **attrs)

    def type_of(self, oid: str) -> str:
        return next(o.type for o in self.objects if o.id == oid)

    def scene(self) -> Scene:
        return Scene(self.room, self.objects, self.floorplan, set(self.opened), set())


def build_scene(
    room: str,
    goal: Goal,
    rng: random.Random,
    floorplan: int | None = None,
    n_distractors: int = 4,
    n_instances: int = 1,
    attrs: list[dict[str, str]] | None = None,
) -> Scene:
    """A seeded scene of ``room`` in which ``goal`` is achievable."""
    b = SceneBuilder(room, rng, floorplan)
    for r in ROOM_RECEPTACLES.get(room, ROOM_RECEPTACLES["kitchen"]):
        if r not in ("Bowl", "Box", "Cup", "Mug", "Pan", "Plate", "Pot"):
            b.add(r)
    if not b.surfaces():
        b.add("CounterTop")
    for f in ROOM_FIXTURES.get(room, []):
        b.ensure(f)
    needed = [goal.recep]
    tt = goal.task_type
    needed += {
        "pick_clean_then_place_in_recep": ["SinkBasin", "Faucet"],
        "pick_heat_then_place_in_recep": ["Microwave"],
        "pick_cool_then_place_in_recep": ["Fridge"],
    }.get(tt, [])
    for t in needed:
        b.ensure(t)
    goal_recep_types = {goal.recep}
    if goal.sliced:
        b.place(rng.choice(["Knife", "ButterKnife"]), exclude=goal_recep_types, closed_ok=False)
    if goal.mrecep:
        b.place(goal.mrecep, exclude=goal_recep_types)
    count = max(n_instances, 2 if tt == "pick_two_obj_and_place" else 1)
    for k in range(count):
        a = attrs[k] if attrs and k < len(attrs) else {}
        b.place(
            goal.obj,
            exclude=goal_recep_types | ({"Fridge"} if tt == "pick_cool_then_place_in_recep" else set()),
            **a,
        )
    pool = [t for t in ROOM_OBJECTS.get(room, []) if t not in (goal.obj, goal.mrecep)]
    for t in rng.sample(pool, min(n_distractors, len(pool))):
        b.place(t)
    return b.scene()


def lamp_for(room: str, rng: random.Random) -> str:
    options = [t for t in ROOM_FIXTURES.get(room, []) if t in LAMPS] or ["FloorLamp"]
    return rng.choice(sorted(options))
