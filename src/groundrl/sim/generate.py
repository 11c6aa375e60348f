"""Procedural tasks in the six EB-ALFRED subsets' styles, seeded and checked solvable.

* base — a plain request ("Put a mug in the cabinet.");
* common_sense — the object named by its use ("something to drink coffee from");
* complex_instruction — the request buried in chatter or a condition;
* spatial — several instances, the one meant named by where it is;
* visual_appearance — several instances with colour / material attributes, named by them;
* long_horizon — sub-goals chained: the object sliced and heated / cooled / cleaned,
  or carried in a movable receptacle.

Every task is solved by the expert planner at generation; a draw that is not solvable is
redrawn (with the next seed), so every generated task is solvable by construction.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from groundrl.sim.catalog import (
    MOVABLE_RECEPTACLES,
    ROOM_OBJECTS,
    ROOM_RECEPTACLES,
    SLICEABLE,
)
from groundrl.sim.goals import Goal
from groundrl.sim.planner import expert_plan
from groundrl.sim.scenes import COLORS, MATERIALS, build_scene, lamp_for
from groundrl.sim.task_types import TaskType, get_task_type, task_type_names
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import render_plan

SUBSETS = ("base", "common_sense", "complex_instruction", "spatial", "visual_appearance", "long_horizon")

USES = {
    "Apple": "a fruit that keeps the doctor away", "Mug": "something to drink coffee from", "Cup": "something to drink water from",
    "Knife": "something sharp for cutting", "ButterKnife": "something for spreading butter", "Ladle": "something for serving soup",
    "Spatula": "something for flipping pancakes", "Bread": "what you make a sandwich with", "Potato": "what fries are made from",
    "Tomato": "the red fruit in a salad", "Lettuce": "the leafy green in a salad", "Egg": "what an omelette is made from",
    "Book": "something to read", "RemoteControl": "what changes the TV channel", "KeyChain": "what holds your keys",
    "CreditCard": "what you pay with", "Pillow": "something soft to rest your head on", "AlarmClock": "what wakes you up",
    "CellPhone": "what you call people with", "SoapBar": "what you wash your hands with", "SprayBottle": "a bottle that sprays cleaner",
    "ToiletPaper": "a roll for the bathroom", "HandTowel": "what you dry your hands with", "Cloth": "a rag for wiping",
    "Pen": "something to write with", "Pencil": "something to sketch with", "Newspaper": "today's news on paper",
    "Watch": "what tells time on your wrist", "Vase": "what holds flowers", "WateringCan": "what waters plants",
    "Plate": "what you serve dinner on", "Bowl": "what you eat cereal from", "Pot": "what you boil soup in", "Pan": "what you fry eggs in",
    "DishSponge": "what scrubs dishes", "Spoon": "what you stir tea with", "Fork": "what you eat pasta with", "Kettle": "what boils water",
}  # fmt: skip
CHATTER = [
    "Although there's a {d} nearby, {req}",
    "If you have a moment after checking the {d}, {req}",
    "My guests arrive soon and the {d} can wait; {req}",
    "Before anything else, and ignoring the {d}, {req}",
]
#: the task types the long_horizon subset draws from, in the order seeds were drawn with
LONG_HORIZON_TYPES = (
    "pick_and_place_with_movable_recep",
    "pick_heat_then_place_in_recep",
    "pick_cool_then_place_in_recep",
    "pick_clean_then_place_in_recep",
)
#: every task draws these types' rooms first, whatever its own type, in this order
#: [ours: how the generator has always drawn, so that a seed keeps its tasks]
ROOMS_DRAWN_FOR_EVERY_TASK = ("pick_clean_then_place_in_recep", "look_at_obj_in_light")
ANY_ROOM = ("kitchen", "living_room", "bedroom", "bathroom")


def _prep(r: str) -> str:
    return (
        "in"
        if r
        in (
            "Fridge",
            "Cabinet",
            "Drawer",
            "Microwave",
            "GarbageCan",
            "SinkBasin",
            "BathtubBasin",
            "Safe",
            "Box",
            "LaundryHamper",
        )
        else "on"
    )


def _draw_room(rng: random.Random, spec: TaskType) -> str:
    drawn = {name: rng.choice(get_task_type(name).rooms or ANY_ROOM) for name in ROOMS_DRAWN_FOR_EVERY_TASK}
    if spec.name in drawn:
        return drawn[spec.name]
    rooms = spec.rooms or ANY_ROOM
    return rooms[0] if len(rooms) == 1 else rng.choice(rooms)


def _draw_goal(rng: random.Random, subset: str) -> tuple[str, Goal]:
    tt = rng.choice(LONG_HORIZON_TYPES) if subset == "long_horizon" else rng.choice(task_type_names())
    spec = get_task_type(tt)
    room = _draw_room(rng, spec)
    objs = [o for o in ROOM_OBJECTS[room] if o not in MOVABLE_RECEPTACLES or not spec.movable_recep]
    if spec.objects:
        objs = [o for o in objs if o in spec.objects]
    sliced = subset == "long_horizon" and spec.sliceable
    if sliced:
        objs = [o for o in objs if o in SLICEABLE] or objs
        sliced = any(o in SLICEABLE for o in objs)
    obj = rng.choice(objs)
    receps = [
        r
        for r in ROOM_RECEPTACLES[room]
        if r not in MOVABLE_RECEPTACLES and r not in ("Microwave",) and r not in spec.avoid
    ]
    recep = lamp_for(room, rng) if spec.lamp else rng.choice(receps)
    mrecep = (
        rng.choice(sorted(MOVABLE_RECEPTACLES - {"Box"} if room == "kitchen" else {"Box", "Bowl", "Plate"}))
        if spec.movable_recep
        else None
    )
    return room, Goal(tt, obj, recep, mrecep, sliced)


def _instruction(goal: Goal, subset: str, rng: random.Random, attrs: list[dict[str, str]]) -> str:
    o = ("sliced " if goal.sliced else "") + goal.obj
    if subset == "common_sense":
        o = USES.get(goal.obj, f"the thing called {goal.obj}")
        o = o[2:] if o.startswith("a ") else o
    elif subset == "visual_appearance" and attrs:
        a = attrs[0]
        o = f"{a['color']} {a['material']} {goal.obj}"
    elif subset == "spatial" and attrs:
        o = f"{goal.obj} {attrs[0]['position']}"
    req = goal.type.instruction.format(o=o, r=goal.recep, m=goal.mrecep, prep=_prep(goal.recep))
    if goal.sliced:
        req = "slice a " + goal.obj + ", then " + req.replace("sliced " + goal.obj, goal.obj + " slice")
    for wrong, right in (("a something", "something"), ("a what", "what"), ("a the ", "the ")):
        req = req.replace(wrong, right)
    if subset in ("spatial", "visual_appearance"):
        req = req.replace(f"a {o}", f"the {o}", 1)
    if subset == "complex_instruction":
        d = rng.choice([x for x in ROOM_OBJECTS["kitchen"] + ROOM_OBJECTS["living_room"] if x != goal.obj])
        return rng.choice(CHATTER).format(d=d, req=req) + "."
    return req[0].upper() + req[1:] + "."


def generate_tasks(
    n: int, seed: int = 0, subsets: Sequence[str] | None = None, with_gold: bool = True
) -> list[Task]:
    """``n`` tasks cycling through ``subsets`` (default all six), each solvable, with
    its expert plan as gold (EB-ALFRED vocabulary) and per-vocabulary gold in ``meta``."""
    subsets = list(subsets or SUBSETS)
    bad = [s for s in subsets if s not in SUBSETS]
    if bad:
        raise ValueError(f"unknown subset(s) {bad}; choose from {SUBSETS}")
    if n < 0:
        raise ValueError("n must be ≥ 0")
    tasks = []
    for i in range(n):
        subset = subsets[i % len(subsets)]
        for attempt in range(50):
            rng = random.Random(seed * 1_000_003 + i * 101 + attempt)
            room, goal = _draw_goal(rng, subset)
            attrs: list[dict[str, str]] = []
            if subset in ("spatial", "visual_appearance"):
                cols = rng.sample(COLORS, 3)
                mats = rng.sample(MATERIALS, 3)
                attrs = [
                    {"color": c, "material": m, "position": p}
                    for c, m, p in zip(
                        cols, mats, ["on the left", "in the middle", "on the right"], strict=True
                    )
                ]
            scene = build_scene(room, goal, rng, n_instances=3 if attrs else 1, attrs=attrs)
            plan = expert_plan(goal, scene, max_nodes=50_000)
            if plan is None:
                continue
            task = Task(f"gen-{seed}-{i:05d}", _instruction(goal, subset, rng, attrs), scene, goal, subset)
            if with_gold:
                task.gold_plan, task.gold_vocab = render_plan(plan, "eb_alfred", scene), "eb_alfred"
            tasks.append(task)
            break
        else:  # pragma: no cover - the draws above always include solvable ones
            raise RuntimeError(f"could not draw a solvable task for index {i}")
    return tasks
