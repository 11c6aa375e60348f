"""Tasks: a scene, an ALFRED goal, an instruction, and (when the source has one) a gold
plan. Three sources, all deterministic: EB-ALFRED ``splits.json``, ALFRED
``traj_data`` files, and the procedural generator (:mod:`groundrl.sim.generate`);
any of them round-trips through JSONL."""

from __future__ import annotations

import json
import random
import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from groundrl.io import read_jsonl
from groundrl.sim.catalog import ROOM_OBJECTS, ROOM_RECEPTACLES, room_of_floorplan
from groundrl.sim.goals import Goal, GoalJSON, progress, satisfied
from groundrl.sim.refs import ANCHORS, refs_from_instruction
from groundrl.sim.scenes import SceneBuilder, build_scene, describe_scene, lamp_for
from groundrl.sim.world import Env, Scene, SceneJSON


class TaskJSON(TypedDict):
    """:meth:`Task.to_json` (a line of a tasks JSONL file): ``gold_plan`` and
    ``gold_vocab`` when the task has a gold plan, ``meta`` when it has any."""

    id: str
    instruction: str
    subset: str
    task_type: str
    goal: GoalJSON
    scene: SceneJSON
    gold_plan: NotRequired[list[str]]
    gold_vocab: NotRequired[str | None]
    meta: NotRequired[dict[str, object]]


@dataclass
class Task:
    id: str
    instruction: str
    scene: Scene
    goal: Goal
    subset: str = "base"
    gold_plan: list[str] | None = None
    gold_vocab: str | None = None
    meta: dict[str, object] = field(default_factory=dict)  # the source's ids, passed through

    @property
    def task_type(self) -> str:
        return self.goal.task_type

    def env(self, max_steps: int = 30, max_invalid: int = 10) -> Env:
        return Env(
            self.scene, max_steps=max_steps, max_invalid=max_invalid, goal=lambda e: satisfied(self.goal, e)
        )

    def to_json(self) -> TaskJSON:
        out: TaskJSON = {
            "id": self.id,
            "instruction": self.instruction,
            "subset": self.subset,
            "task_type": self.task_type,
            "goal": self.goal.to_json(),
            "scene": self.scene.to_json(),
        }
        if self.gold_plan is not None:
            out["gold_plan"], out["gold_vocab"] = self.gold_plan, self.gold_vocab
        if self.meta:
            out["meta"] = self.meta
        return out

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Task:
        return cls(
            d["id"],
            d["instruction"],
            Scene.from_json(d["scene"]),
            Goal.from_json(d["goal"]),
            d.get("subset", "base"),
            d.get("gold_plan"),
            d.get("gold_vocab"),
            d.get("meta") or {},
        )


def task_progress(task: Task, env: Env) -> tuple[int, int]:
    return progress(task.goal, env)


def generate_tasks(n: int, seed: int = 0, subsets: Any = None, with_gold: bool = True) -> list[Task]:
    """Procedural tasks (see :func:`groundrl.sim.generate.generate_tasks`)."""
    # lazy: import cycle: sim.generate imports this module, directly or through its package
    from groundrl.sim.generate import generate_tasks as _generate  # generate imports this module

    return _generate(n, seed=seed, subsets=subsets, with_gold=with_gold)


# ---------------------------------------------------------------------------
# EB-ALFRED splits.json
# ---------------------------------------------------------------------------

_TASK_ID_RE = re.compile(r"^(?P<tt>[a-z_]+)-(?P<obj>\w+)-(?P<mrecep>\w+)-(?P<recep>\w+)-(?P<fp>\d+)")


def parse_task_id(task_id: str) -> tuple[Goal, int]:
    """``pick_heat_then_place_in_recep-AppleSliced-None-GarbageCan-11/trial_…`` → goal, floorplan."""
    m = _TASK_ID_RE.match(task_id)
    if m is None:
        raise ValueError(f"not an ALFRED task id: {task_id!r}")
    obj = m["obj"]
    sliced = obj.endswith("Sliced")
    goal = Goal(
        m["tt"],
        obj[: -len("Sliced")] if sliced else obj,
        m["recep"],
        None if m["mrecep"] == "None" else m["mrecep"],
        sliced,
    )
    return goal, int(m["fp"])


def _seed(*parts: Any) -> int:
    return zlib.crc32("|".join(map(str, parts)).encode())


class SplitRecord(TypedDict):
    """One record of an EB-ALFRED ``splits.json`` subset."""

    task: str  # the ALFRED task id (``pick_and_place_simple-Apple-None-Fridge-1/trial_…``)
    instruction: str
    repeat_idx: NotRequired[int]


def tasks_from_splits(data: Mapping[str, Sequence[SplitRecord]], limit: int | None = None) -> list[Task]:
    """One task per split record: the id's goal, a plausible scene of the floorplan's
    room type (seeded by the record), the split's real instruction, and the
    instruction's descriptions of its object / target / movable receptacle
    (:func:`groundrl.sim.refs.refs_from_instruction`) made part of the goal, with
    distractors in the scene that differ in what the description says
    (:func:`groundrl.sim.scenes.describe_scene`)."""
    out = []
    for subset, records in data.items():
        for k, r in enumerate(records):
            goal, fp = parse_task_id(r["task"])
            room = room_of_floorplan(fp)
            rng = random.Random(_seed(r["task"], r.get("repeat_idx", 0), subset))
            n_inst = 3 if subset in ("spatial", "visual_appearance") else 1
            scene = build_scene(room, goal, rng, floorplan=fp, n_instances=n_inst)
            refs = refs_from_instruction(
                r["instruction"], goal.obj, goal.recep, goal.mrecep, {o.type for o in scene.objects} | ANCHORS
            )
            goal = goal.with_refs(refs)
            scene, goal = describe_scene(
                scene, goal, random.Random(_seed(r["task"], r.get("repeat_idx", 0), subset, "looks"))
            )
            out.append(
                Task(
                    f"{subset}/{k}",
                    r["instruction"],
                    scene,
                    goal,
                    subset,
                    meta={"alfred_task": r["task"], "repeat_idx": r.get("repeat_idx", 0)},
                )
            )
            if limit is not None and len(out) >= limit:
                return out
    return out


# ---------------------------------------------------------------------------
# ALFRED traj_data
# ---------------------------------------------------------------------------


def _canon(name: str) -> str:
    """``diningtable`` → ``DiningTable`` over every type we know."""
    # lazy: import cycle: sim.catalog imports this module, directly or through its package
    from groundrl.sim import catalog

    known = (
        set(catalog.PICKUPABLE) | set(catalog.RECEPTACLES) | set(catalog.TOGGLEABLE) | set(catalog.FIXTURES)
    )
    table = {t.lower(): t for t in known}
    base = name.lower().removesuffix("sliced")
    t = table.get(base, name[:1].upper() + name[1:])
    return t + "Sliced" if name.lower().endswith("sliced") else t


def task_from_traj(d: Mapping[str, Any], task_id: str) -> Task:
    """Scene + goal from ``pddl_params`` + the gold ``plan.high_pddl``. Where each object
    starts is read off the plan (``GotoLocation L`` then ``PickupObject O`` puts ``O`` on
    ``L``); the room's other receptacles and objects named in ``object_poses`` fill it."""
    p = d["pddl_params"]
    goal = Goal(
        d["task_type"],
        p["object_target"],
        p["parent_target"] or p.get("toggle_target") or "CounterTop",
        p.get("mrecep_target") or None,
        bool(p.get("object_sliced")),
    )
    fp = int(re.sub(r"\D", "", str(d.get("scene", {}).get("floor_plan", "1"))) or 1)
    room = room_of_floorplan(fp)
    b = SceneBuilder(room, random.Random(_seed(task_id)), fp)
    for r in ROOM_RECEPTACLES[room]:
        if r not in ("Bowl", "Box", "Cup", "Mug", "Pan", "Plate", "Pot"):
            b.add(r)
    if room in ("kitchen", "bathroom"):
        b.ensure("Faucet")
    actions = [a["discrete_action"] for a in d["plan"]["high_pddl"]]
    loc = None
    placed: set[str] = set()
    for a in actions:
        args = [_canon(x) for x in a.get("args", [])]
        if a["action"] == "GotoLocation" and args:
            loc = args[0]
        elif a["action"] == "PickupObject" and args and args[0] not in placed:
            obj = args[0].removesuffix("Sliced")
            placed.add(args[0])
            if loc and loc != obj and loc != args[0]:
                parent = b.ensure(loc)
                b.add(obj, parent)
            else:
                b.place(obj)
        elif a["action"] in ("HeatObject",):
            b.ensure("Microwave")
        elif a["action"] in ("CoolObject",):
            b.ensure("Fridge")
        elif a["action"] in ("CleanObject",):
            b.ensure("Faucet")
        for x in args:
            if (
                a["action"] in ("GotoLocation", "PutObject")
                and x not in placed
                and x.removesuffix("Sliced") not in {o.type for o in b.objects}
            ):
                b.ensure(x)
    b.ensure(goal.recep)
    names = {o["objectName"].split("_")[0] for o in d.get("scene", {}).get("object_poses", [])}
    for t in sorted(names & set(ROOM_OBJECTS[room]) - {o.type for o in b.objects})[:6]:
        b.place(t)
    gold = [" ".join([a["action"], *a.get("args", [])]) for a in actions if a["action"] != "NoOp"]
    instruction = (
        (d.get("turk_annotations", {}).get("anns") or [{}])[0].get("task_desc")
        or d.get("template", {}).get("task_desc")
        or ""
    )
    return Task(
        task_id,
        instruction,
        b.scene(),
        goal,
        d["task_type"],
        gold_plan=gold,
        gold_vocab="high_pddl",
        meta={"custom_task": d.get("custom_task", "")},
    )


# ---------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------


def load_tasks(path: str | Path, limit: int | None = None) -> list[Task]:
    """Tasks from an EB-ALFRED ``splits.json``, a directory of ALFRED ``traj_data`` JSON
    files, or a JSONL written by ``groundrl sim tasks``."""
    p = Path(path)
    if p.is_dir():
        files = sorted(p.glob("*.json"), key=lambda f: (len(f.stem), f.stem))
        if not files:
            raise ValueError(f"{p} holds no .json trajectory files")
        tasks = [task_from_traj(json.loads(f.read_text()), f.stem) for f in files]
        return tasks[:limit] if limit else tasks
    if not p.is_file():
        raise FileNotFoundError(f"task source not found: {p}")
    if p.suffix == ".jsonl":
        tasks = [Task.from_json(rec) for rec in read_jsonl(p)]
        return tasks[:limit] if limit else tasks
    data = json.loads(p.read_text())
    if isinstance(data, dict) and all(isinstance(v, list) for v in data.values()):
        return tasks_from_splits(data, limit)
    if isinstance(data, dict) and "plan" in data:
        return [task_from_traj(data, p.stem)]
    raise ValueError(f"{p}: not an EB-ALFRED splits.json, a traj_data file, or a tasks JSONL")


__all__ = [
    "Task",
    "generate_tasks",
    "lamp_for",
    "load_tasks",
    "parse_task_id",
    "progress",
    "task_from_traj",
    "task_progress",
    "tasks_from_splits",
]
