"""Building plausible scenes for a goal: the room's receptacles and fixtures, the
objects the goal needs (and the tools: a knife to slice, a sink and faucet to clean, a
microwave to heat, a fridge to cool, a lamp to look), plus seeded distractors."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Set

from groundrl.sim.catalog import (
    FIXTURES,
    LAMPS,
    OPENABLE,
    PICKUPABLE,
    RECEPTACLES,
    ROOM_FIXTURES,
    ROOM_OBJECTS,
    ROOM_RECEPTACLES,
    SURFACES,
)
from groundrl.sim.goals import Goal
from groundrl.sim.refs import PALETTE, Ref, SceneFacts
from groundrl.sim.world import Obj, Scene

COLORS = ["red", "blue", "green", "yellow", "white", "black"]
MATERIALS = ["metal", "wooden", "plastic", "glass", "ceramic"]
#: Receptacles that sit low (under the counter, on the floor) and high; the rest at
#: counter height (``level`` 0 / 2 / 1 of a position, see :mod:`groundrl.sim.refs`).
LOW = frozenset({"Cabinet", "Drawer", "GarbageCan", "Safe", "LaundryHamper"})
HIGH = frozenset({"Shelf"})
#: Columns between neighbouring top-level objects: wide enough that no two are
#: "next to" each other unless a description asks for it.
SPACING = 4


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

    def surfaces(self, exclude: Set[str] = frozenset()) -> list[str]:
        return [
            o.id
            for o in self.objects
            if o.parent is None
            and (o.type in SURFACES or o.type in ("Cabinet", "Drawer", "CounterTop"))
            and o.type not in exclude
        ]

    def place(
        self,
        t: str,
        exclude: Set[str] = frozenset(),
        closed_ok: bool = True,
        attrs: Mapping[str, str] | None = None,
    ) -> str:
        spots = self.surfaces(exclude)
        if not closed_ok:
            spots = [s for s in spots if self.type_of(s) not in OPENABLE]
        parent = self.rng.choice(spots) if spots else None
        return self.add(t, parent, **(attrs or {}))

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
    spec = goal.type
    needed = [goal.recep, *spec.fixtures]
    for t in needed:
        b.ensure(t)
    goal_recep_types = {goal.recep}
    if goal.sliced:
        b.place(rng.choice(["Knife", "ButterKnife"]), exclude=goal_recep_types, closed_ok=False)
    if goal.mrecep:
        b.place(goal.mrecep, exclude=goal_recep_types)
    count = max(n_instances, spec.n_objects)
    for k in range(count):
        a = attrs[k] if attrs and k < len(attrs) else {}
        b.place(goal.obj, exclude=goal_recep_types | set(spec.avoid), attrs=a)
    pool = [t for t in ROOM_OBJECTS.get(room, []) if t not in (goal.obj, goal.mrecep)]
    for t in rng.sample(pool, min(n_distractors, len(pool))):
        b.place(t)
    return b.scene()


def lamp_for(room: str, rng: random.Random) -> str:
    options = [t for t in ROOM_FIXTURES.get(room, []) if t in LAMPS] or ["FloorLamp"]
    return rng.choice(sorted(options))


# ---------------------------------------------------------------------------
# attributes, positions, and distractors for described goals
# ---------------------------------------------------------------------------

_LOOKS = ("color", "material", "size", "shape")


def _level(t: str) -> int:
    return 0 if t in LOW else 2 if t in HIGH else 1


def _other(rng: random.Random, key: str, avoid: set[str]) -> str:
    pool = {"shape": ("round", "square")}.get(key) or PALETTE.get(key) or ("plain", "striped")
    rest = [v for v in pool if v not in avoid] or [f"not-{'-'.join(sorted(avoid))}"]
    return rng.choice(rest)


def describe_scene(scene: Scene, goal: Goal, rng: random.Random) -> tuple[Scene, Goal]:
    """Give every object appearance attributes and every top-level object a position,
    and — when ``goal`` carries descriptions (:class:`~groundrl.sim.refs.Ref`) — add
    distractor instances that differ in exactly what the description says, so only
    the described instances satisfy the goal. Descriptions the scene cannot realise
    are dropped from the returned goal (each kept one describes at least one instance,
    two for pick-two objects). ``rng`` is used only here: the scene's objects and
    parents are as given, apart from the added distractors."""
    b = SceneBuilder(scene.room, rng, scene.floorplan)
    b.objects = [Obj(o.id, o.type, o.parent, dict(o.attrs)) for o in scene.objects]
    b.counts.update(o.type for o in scene.objects)
    b.opened = set(scene.opened)
    roles = [
        ("obj", goal.obj, goal.obj_ref),
        ("recep", goal.recep, goal.recep_ref),
        ("mrecep", goal.mrecep, goal.mrecep_ref),
    ]
    targets = _described_instances(b, goal, roles, rng)  # 1. targets + distractors
    objs = {o.id: o for o in b.objects}
    # 2. positions: top-level objects spread out in scene order
    tops = [o for o in b.objects if o.parent is None]
    for col, o in enumerate(tops):
        o.attrs["pos"] = f"{col * SPACING},{_level(o.type)}"
    # 3. looks for every pickupable or receptacle
    for o in b.objects:
        if o.type in PICKUPABLE or o.type in RECEPTACLES:
            for key in ("color", "material", "size"):
                o.attrs.setdefault(key, rng.choice(PALETTE[key]))
    # 4. make each description true of its targets and false of the other instances
    far = len(tops) * SPACING + 2 * SPACING
    for role, t, ref in roles:
        if role not in targets or ref is None:
            continue
        want: dict[str, list[str]] = {}
        for k, v in ref.attrs:
            want.setdefault(k, []).append(v)
        chosen = targets[role]
        others = [o.id for o in b.objects if o.type == t and o.id not in chosen]
        _set_looks(objs, want, chosen, others, rng)
        _arrange(objs, want, chosen, others)
        if ref.rel == "from" and ref.anchor:
            _realise_source(b, objs, ref, chosen, others, rng)
            objs = {o.id: o for o in b.objects}
        elif ref.rel and ref.anchor and all(objs[i].parent is None for i in [*chosen, *others]):
            anchor = b.ensure(ref.anchor)
            objs = {o.id: o for o in b.objects}
            a = objs[anchor]
            if "pos" not in a.attrs:
                a.attrs["pos"] = f"{far},{_level(a.type)}"
                far += 2 * SPACING
            ax, al = _x(a), _lvl(a)
            for i in chosen:
                x, lv = {
                    "left_of": (ax - 1, 1),
                    "right_of": (ax + 1, 1),
                    "next_to": (ax + 1, 1),
                    "under": (ax, al - 1),
                    "above": (ax, al + 1),
                }[ref.rel]
                _set_pos(objs[i], x, lv)
            for i in others:  # far from every anchor instance
                _set_pos(objs[i], far, _lvl(objs[i]))
                far += 2 * SPACING
    out = b.scene()
    facts = SceneFacts(out.objects)
    need = {"obj": goal.type.n_objects, "recep": 1, "mrecep": 1}
    keep: dict[str, Ref | None] = {}
    for role, t, ref in roles:
        ok = facts.allowed(t, ref) if ref and t else None
        keep[role] = ref if ok is not None and len(ok) >= need[role] else None
    return out, goal.with_refs(keep)


Roles = list[tuple[str, str | None, Ref | None]]


def _described_instances(
    b: SceneBuilder, goal: Goal, roles: Roles, rng: random.Random
) -> dict[str, list[str]]:
    """Per described role: enough instances of its type (the targets + 2 distractors),
    added where missing, and the targets drawn among them."""
    targets: dict[str, list[str]] = {}
    for role, t, ref in roles:
        if not ref or t is None:
            continue
        n_match = goal.type.n_objects if role == "obj" else 1
        have = [o.id for o in b.objects if o.type == t]
        top = t not in PICKUPABLE  # receptacles, lamps, appliances stand on their own
        while len(have) < n_match + 2:
            if top:
                have.append(b.add(t))
            else:
                first = next(o for o in b.objects if o.id == have[0]) if have else None
                parent = first.parent if first is not None and rng.random() < 0.5 else None
                have.append(b.add(t, parent) if parent else b.place(t, exclude={goal.recep}))
        targets[role] = rng.sample(have, n_match)
    return targets


def _set_looks(
    objs: dict[str, Obj], want: dict[str, list[str]], chosen: list[str], others: list[str], rng: random.Random
) -> None:
    """The described looks on the targets (cycling the values), other looks on the rest."""
    for n, i in enumerate(chosen):
        for k, vs in want.items():
            if k in _LOOKS:
                objs[i].attrs[k] = vs[n % len(vs)]
    for i in others:
        for k, vs in want.items():
            if k in _LOOKS:
                objs[i].attrs[k] = _other(rng, k, set(vs))


def _arrange(objs: dict[str, Obj], want: dict[str, list[str]], chosen: list[str], others: list[str]) -> None:
    """A described side (left / right / middle) or height (bottom / top) made true of the
    top-level targets by swapping positions with the distractors."""
    top_ids = [i for i in [*chosen, *others] if objs[i].parent is None]
    if "side" in want and len(top_ids) == len(chosen) + len(others):
        side = want["side"][0]
        xs = sorted(_x(objs[i]) for i in top_ids)
        order = (
            chosen + others
            if side == "left"
            else others + chosen
            if side == "right"
            else others[:1] + chosen + others[1:]
        )
        for i, x in zip(order, xs, strict=True):
            _set_pos(objs[i], x, _lvl(objs[i]))
    if "height" in want:
        lv = 0 if want["height"][0] == "bottom" else 2
        for i in top_ids:
            _set_pos(objs[i], _x(objs[i]), lv if i in chosen else 1)


def _x(o: Obj) -> int:
    return int(o.attrs.get("pos", "0,1").split(",")[0])


def _lvl(o: Obj) -> int:
    return int(o.attrs.get("pos", "0,1").split(",")[1])


def _set_pos(o: Obj, x: int, level: int) -> None:
    o.attrs["pos"] = f"{x},{level}"


def _realise_source(
    b: SceneBuilder, objs: dict[str, Obj], ref: Ref, chosen: list[str], others: list[str], rng: random.Random
) -> None:
    """Put the chosen objects in/on an anchor instance with the anchor's attributes and
    the others in/on anchor instances without them."""
    anchor_t = ref.anchor or ""
    have = [o.id for o in b.objects if o.type == anchor_t and o.parent is None]
    while len(have) < 2:
        oid = b.add(anchor_t)
        b.objects[-1].attrs["pos"] = f"{len(b.objects) * SPACING + 100},{_level(anchor_t)}"
        for key in ("color", "material", "size"):
            b.objects[-1].attrs[key] = rng.choice(PALETTE[key])
        have.append(oid)
    byid = {o.id: o for o in b.objects}
    good, bad = have[0], have[1:]
    want: dict[str, list[str]] = {}
    for k, v in ref.anchor_attrs:
        want.setdefault(k, []).append(v)
    for k, vs in want.items():
        if k in _LOOKS:
            byid[good].attrs[k] = vs[0]
            for i in bad:
                byid[i].attrs[k] = _other(rng, k, set(vs))
    xs = sorted(_x(byid[i]) for i in have)
    if "side" in want:
        order = [good, *bad] if want["side"][0] == "left" else [*bad, good]
        for i, x in zip(order, xs, strict=True):
            _set_pos(byid[i], x, _lvl(byid[i]))
    if "height" in want:
        for i in have:
            _set_pos(byid[i], _x(byid[i]), (0 if want["height"][0] == "bottom" else 2) if i == good else 1)
    for i in chosen:
        byid[i].parent = good
    for n, i in enumerate(others):
        byid[i].parent = bad[n % len(bad)]
    if byid[good].type in OPENABLE:
        b.opened.discard(good)
