"""The headless household world: a scene of typed objects, one agent with one hand,
and ALFRED-style high-level skills. See ``docs/sim-semantics.md`` for every rule.

Reachability: every object lives at a *spot*, the top-level receptacle it sits in or on
(a fixture such as a Faucet belongs to its SinkBasin); the agent stands at the spot of
the object it last found, and can interact with everything at that spot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from groundrl.sim.catalog import KNIVES, LAMPS, base_type, props
from groundrl.sim.skills import Skill

OK = "Last action executed successfully."


def invalid(why: str) -> str:
    return f"Last action is invalid. {why}"


@dataclass(slots=True)
class Obj:
    id: str
    type: str
    parent: str | None = None
    attrs: dict[str, str] = field(default_factory=dict)


@dataclass
class Scene:
    """Initial state: a room and its objects (with parents and initial flags)."""

    room: str
    objects: list[Obj]
    floorplan: int | None = None
    opened: set[str] = field(default_factory=set)
    on: set[str] = field(default_factory=set)

    def to_json(self) -> dict[str, Any]:
        return {
            "room": self.room,
            "floorplan": self.floorplan,
            "objects": [
                {"id": o.id, "type": o.type, "parent": o.parent, **({"attrs": o.attrs} if o.attrs else {})}
                for o in self.objects
            ],
            "opened": sorted(self.opened),
            "on": sorted(self.on),
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Scene:
        objs = [Obj(o["id"], o["type"], o.get("parent"), dict(o.get("attrs") or {})) for o in d["objects"]]
        return cls(d["room"], objs, d.get("floorplan"), set(d.get("opened", [])), set(d.get("on", [])))

    def ids_of(self, t: str) -> list[str]:
        return [o.id for o in self.objects if o.type == t]


@dataclass(frozen=True, slots=True)
class StepResult:
    ok: bool
    feedback: str
    done: bool


class Env:
    """One episode. ``step`` never raises: a bad action is an invalid step with a reason.

    The episode ends after ``max_steps`` steps or ``max_invalid`` invalid ones (EB-ALFRED:
    30 and 10), or when ``goal(env)`` is true if a goal is given.
    """

    __slots__ = (
        "scene", "order", "static", "type_of", "parent", "held", "opened", "on", "sliced", "clean", "hot", "cool",
        "at", "last_recep", "visited", "steps", "invalid_steps", "max_steps", "max_invalid", "goal", "done", "auto_open",
    )  # fmt: skip

    def __init__(
        self,
        scene: Scene,
        max_steps: int = 30,
        max_invalid: int = 10,
        goal: Callable[[Env], bool] | None = None,
        auto_open: bool = False,
    ) -> None:
        # auto_open: put / pick up open a closed container on the way (ALFWorld-style
        # vocabularies such as Reinforced Reasoning's have no open/close actions).
        self.auto_open = auto_open
        self.scene = scene
        self.order = [o.id for o in scene.objects]
        self.static = {o.id: o for o in scene.objects}
        self.max_steps, self.max_invalid, self.goal = max_steps, max_invalid, goal
        self.reset()

    def reset(self) -> str:
        s = self.scene
        self.type_of = {o.id: o.type for o in s.objects}
        self.parent = {o.id: o.parent for o in s.objects}
        self.held: str | None = None
        self.opened, self.on = set(s.opened), set(s.on)
        self.sliced: set[str] = set()
        self.clean: set[str] = set()
        self.hot: set[str] = set()
        self.cool: set[str] = set()
        self.at: str | None = None
        self.last_recep: str | None = None
        self.visited: dict[str, list[str]] = {}
        self.steps = self.invalid_steps = 0
        self.done = False
        return self.observation()

    def copy(self) -> Env:
        e = object.__new__(Env)
        e.scene, e.order, e.static = self.scene, self.order, self.static
        e.max_steps, e.max_invalid, e.goal, e.auto_open = (
            self.max_steps,
            self.max_invalid,
            self.goal,
            self.auto_open,
        )
        e.type_of, e.parent = dict(self.type_of), dict(self.parent)
        e.held = self.held
        e.opened, e.on, e.sliced = set(self.opened), set(self.on), set(self.sliced)
        e.clean, e.hot, e.cool = set(self.clean), set(self.hot), set(self.cool)
        e.at, e.last_recep = self.at, self.last_recep
        e.visited = {k: list(v) for k, v in self.visited.items()}
        e.steps, e.invalid_steps, e.done = self.steps, self.invalid_steps, self.done
        return e

    # -- queries ----------------------------------------------------------------

    def props(self, oid: str) -> dict[str, bool]:
        return props(self.type_of[oid])

    def spot(self, oid: str | None) -> str | None:
        """The top-level receptacle an object is at; a held object (and what it carries)
        is at the agent's spot. The agent's own position never lies inside the held
        object (``_pickup`` moves it to the spot first)."""
        for _ in range(64):  # a parent cycle would be a bug; never loop forever
            if oid is None:
                return None
            if oid == self.held:
                oid = self.at
                if oid == self.held:
                    return None
                continue
            p = self.parent.get(oid)
            if p is None:
                return oid
            oid = p
        return oid

    def reachable(self, oid: str) -> bool:
        return self.at is not None and (oid == self.held or self.spot(oid) == self.spot(self.at))

    def ids_of_type(self, t: str) -> list[str]:
        return [i for i in self.order if self.type_of[i] == t]

    def enclosing_closed(self, oid: str) -> str | None:
        p = self.parent.get(oid)
        while p is not None:
            if props(self.type_of[p])["openable"] and p not in self.opened:
                return p
            p = self.parent.get(p)
        return None

    def descendants(self, oid: str) -> list[str]:
        out = []
        for i in self.order:
            p = self.parent.get(i)
            while p is not None:
                if p == oid:
                    out.append(i)
                    break
                p = self.parent.get(p)
        return out

    def name(self, oid: str | None) -> str:
        return self.type_of[oid] if oid else "nothing"

    # -- observation --------------------------------------------------------------

    def observation(self) -> str:
        parts = [f"You are in a {self.scene.room.replace('_', ' ')}."]
        items = []
        for i in self.order:
            p = self.parent[i]
            if p is not None and i != self.held:
                rel = (
                    "in"
                    if props(self.type_of[p])["openable"]
                    or self.type_of[p] in ("SinkBasin", "BathtubBasin", "GarbageCan")
                    else "on"
                )
                items.append(f"{self.type_of[i]} {rel} the {self.type_of[p]}")
        if items:
            parts.append("You see: " + ", ".join(items) + ".")
        parts.append(f"You are next to the {self.name(self.at)}." if self.at else "You have not moved yet.")
        parts.append(f"You are holding the {self.name(self.held)}." if self.held else "Your hand is empty.")
        return " ".join(parts)

    def state_json(self) -> dict[str, Any]:
        return {
            "types": dict(self.type_of),
            "parent": dict(self.parent),
            "held": self.held,
            "at": self.at,
            "opened": sorted(self.opened),
            "on": sorted(self.on),
            "sliced": sorted(self.sliced),
            "clean": sorted(self.clean),
            "hot": sorted(self.hot),
            "cool": sorted(self.cool),
            "steps": self.steps,
            "invalid_steps": self.invalid_steps,
        }

    # -- stepping -------------------------------------------------------------------

    def step(self, skill: Skill | None, why_unparsed: str = "") -> StepResult:
        """Run one skill (``None`` = a step that could not be parsed: invalid, with
        ``why_unparsed`` as the reason)."""
        if self.done:
            return StepResult(False, invalid("The episode is over."), True)
        self.steps += 1
        if skill is None:
            why = why_unparsed or "Unknown action."
        else:
            handler = getattr(self, "_" + skill.verb, None) if skill.verb in _VERBS else None
            why = handler(skill.target) if handler else f"Unknown skill {skill.verb!r}."
        if why:
            self.invalid_steps += 1
            fb = invalid(why)
        else:
            fb = OK
        if (
            self.steps >= self.max_steps
            or self.invalid_steps >= self.max_invalid
            or (self.goal is not None and self.goal(self))
        ):
            self.done = True
        return StepResult(not why, fb, self.done)

    def _resolve(self, target: str | None, prefer_reachable: bool = True) -> str | None:
        if target is None:
            return None
        if target in self.type_of:
            return target
        ids = self.ids_of_type(target)
        if not ids:
            return None
        if prefer_reachable:
            near = [i for i in ids if i == self.at] or [
                i for i in ids if i != self.held and self.reachable(i)
            ]
            if near:
                return near[0]
        return ids[0]

    def _find(self, target: str | None) -> str:
        if target is None:
            return "Find what?"
        if target in self.type_of:
            oid = target
        else:
            ids = [i for i in self.ids_of_type(target) if i != self.held]
            if not ids:
                return (
                    f"There is no {target} here."
                    if not self.ids_of_type(target)
                    else f"The {target} is in your hand."
                )
            seen = self.visited.setdefault(target, [])
            fresh = [i for i in ids if i not in seen]
            if not fresh:  # every instance visited: start over (EB-ALFRED cycles)
                seen.clear()
                fresh = ids
            oid = fresh[0]
            seen.append(oid)
        if oid == self.held:
            return f"The {self.type_of[oid]} is in your hand."
        self.at = oid
        if props(self.type_of[oid])["receptacle"]:
            self.last_recep = oid
        elif self.parent.get(oid) is not None:
            # "put down the object in hand" after finding an object puts it where that object is
            self.last_recep = self.parent[oid]
        return ""

    def _pickup(self, target: str | None) -> str:
        oid = self._resolve(target)
        if oid is None:
            return f"There is no {target} here." if target else "Pick up what?"
        t = self.type_of[oid]
        if self.held is not None:
            return f"You are already holding the {self.type_of[self.held]}."
        if not props(t)["pickupable"]:
            return f"The {t} cannot be picked up."
        if not self.reachable(oid):
            return f"You are not near the {t}."
        closed = self.enclosing_closed(oid)
        while closed is not None and self.auto_open:
            self.opened.add(closed)
            self.on.discard(closed)
            closed = self.enclosing_closed(oid)
        if closed is not None:
            return f"The {t} is inside the closed {self.type_of[closed]}."
        if self.at == oid or (self.at is not None and oid in self._ancestors(self.at)):
            self.at = self.spot(oid)  # the agent stays where the object was
        self.held = oid
        self.parent[oid] = None
        return ""

    def _ancestors(self, oid: str) -> list[str]:
        out, p = [], self.parent.get(oid)
        while p is not None and len(out) < 64:
            out.append(p)
            p = self.parent.get(p)
        return out

    def _put(self, target: str | None) -> str:
        if self.held is None:
            return "You are not holding anything."
        rid = self._resolve(target) if target is not None else self.last_recep
        if rid is None:
            return (
                f"There is no {target} here."
                if target
                else "There is no receptacle to put it on; find one first."
            )
        rt = self.type_of[rid]
        if not props(rt)["receptacle"]:
            return f"The {rt} is not a receptacle."
        if rid == self.held or rid in self.descendants(self.held):
            return f"The {rt} cannot go inside itself."
        if not self.reachable(rid):
            return f"You are not near the {rt}."
        if props(rt)["openable"] and rid not in self.opened:
            if not self.auto_open:
                return f"The {rt} is closed."
            self.opened.add(rid)
            self.on.discard(rid)
        obj = self.held
        self.parent[obj] = rid
        self.held = None
        self.at = self.at if self.at != obj else rid
        if rt == "SinkBasin" and any(
            f in self.on and self.parent.get(f) == rid for f in self.ids_of_type("Faucet")
        ):
            self._apply(rid, "clean")
        if rt == "Microwave" and rid in self.on:
            self._apply(rid, "hot")
        return ""

    def _open(self, target: str | None) -> str:
        oid = self._resolve(target)
        if oid is None:
            return f"There is no {target} here." if target else "Open what?"
        t = self.type_of[oid]
        if not props(t)["openable"]:
            return f"The {t} cannot be opened."
        if not self.reachable(oid):
            return f"You are not near the {t}."
        if oid in self.opened:
            return f"The {t} is already open."
        self.opened.add(oid)
        self.on.discard(oid)  # opening a running microwave stops it
        return ""

    def _close(self, target: str | None) -> str:
        oid = self._resolve(target)
        if oid is None:
            return f"There is no {target} here." if target else "Close what?"
        t = self.type_of[oid]
        if not props(t)["openable"]:
            return f"The {t} cannot be closed."
        if not self.reachable(oid):
            return f"You are not near the {t}."
        if oid not in self.opened:
            return f"The {t} is already closed."
        self.opened.discard(oid)
        if t == "Fridge":
            self._apply(oid, "cool")
        return ""

    def _toggle_on(self, target: str | None) -> str:
        oid = self._resolve(target)
        if oid is None:
            return f"There is no {target} here." if target else "Turn on what?"
        t = self.type_of[oid]
        if not props(t)["toggleable"]:
            return f"The {t} cannot be turned on."
        if not self.reachable(oid):
            return f"You are not near the {t}."
        if oid in self.on:
            return f"The {t} is already on."
        if t == "Microwave" and oid in self.opened:
            return "The Microwave is open; close it first."
        self.on.add(oid)
        if t == "Microwave":
            self._apply(oid, "hot")
        elif t == "Faucet" and self.parent.get(oid) is not None:
            self._apply(self.parent[oid], "clean")
        return ""

    def _toggle_off(self, target: str | None) -> str:
        oid = self._resolve(target)
        if oid is None:
            return f"There is no {target} here." if target else "Turn off what?"
        t = self.type_of[oid]
        if not props(t)["toggleable"]:
            return f"The {t} cannot be turned off."
        if not self.reachable(oid):
            return f"You are not near the {t}."
        if oid not in self.on:
            return f"The {t} is already off."
        self.on.discard(oid)
        return ""

    def _slice(self, target: str | None) -> str:
        if self.held is None or base_type(self.type_of[self.held]) not in KNIVES:
            return "You need to hold a knife to slice."
        oid = self._resolve(target)
        if oid is None:
            return f"There is no {target} here." if target else "Slice what?"
        t = self.type_of[oid]
        if oid in self.sliced:
            return f"The {t} is already sliced."
        if not props(t)["sliceable"]:
            return f"The {t} cannot be sliced."
        if not self.reachable(oid):
            return f"You are not near the {t}."
        if self.enclosing_closed(oid) is not None:
            return f"The {t} is inside a closed container."
        self.sliced.add(oid)
        self.type_of[oid] = t + "Sliced"
        return ""

    def _macro(self, target: str | None, station: str, flag: str, verb: str) -> str:
        oid = self.held if target is None else self._resolve(target)
        if oid is None or oid != self.held:
            return f"You must hold the {target or 'object'} to {verb} it."
        t = self.type_of[oid]
        if not self.props(oid)[flag + "able" if flag != "hot" else "heatable"]:
            return f"The {t} cannot be {verb}ed."
        if self.at is None or self.type_of[self.spot(self.at)] != station:
            return f"You need to be at the {station} to {verb} the {t}."
        {"clean": self.clean, "hot": self.hot, "cool": self.cool}[flag].add(oid)
        return ""

    def _clean(self, target: str | None) -> str:
        return self._macro(target, "SinkBasin", "clean", "clean")

    def _heat(self, target: str | None) -> str:
        return self._macro(target, "Microwave", "hot", "heat")

    def _cool(self, target: str | None) -> str:
        return self._macro(target, "Fridge", "cool", "cool")

    def _apply(self, container: str, flag: str) -> None:
        """Side effects: what is inside a running sink / microwave / closed fridge."""
        key = {"clean": "cleanable", "hot": "heatable", "cool": "coolable"}[flag]
        target = {"clean": self.clean, "hot": self.hot, "cool": self.cool}[flag]
        for i in self.descendants(container):
            if props(self.type_of[i])[key]:
                target.add(i)

    def lamp_on_here(self) -> bool:
        return any(i in self.on and self.reachable(i) for t in LAMPS for i in self.ids_of_type(t))


_VERBS = frozenset(
    {"find", "pickup", "put", "open", "close", "toggle_on", "toggle_off", "slice", "clean", "heat", "cool"}
)
