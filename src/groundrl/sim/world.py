"""The headless household world: a scene of typed objects, one agent with one hand,
and ALFRED-style high-level skills. ``docs/sim-semantics.md`` lists every rule.

Reachability: every object lives at a *spot*, the top-level receptacle it sits in or on
(a fixture such as a Faucet belongs to its SinkBasin); the agent stands at the spot of
the object it last found and can interact with everything at that spot.

Speed: the state is a handful of dicts and sets keyed by instance id (no deep copies);
:meth:`Env.copy` copies only those, so a planner can branch cheaply.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from groundrl.sim.catalog import KNIVES, base_type, props
from groundrl.sim.skills import VERBS, Skill

OK = "Last action executed successfully."
#: Pieces one slicing makes (ALFRED makes 7-10; any number >= 2 gives the same goal
#: semantics, since pick-two-sliced counts at most two slices).
SLICES_PER_OBJECT = 3
_DEPTH = 64  # a parent chain longer than this would be a cycle (a bug); never loop forever
_OPEN_WORD = ("SinkBasin", "BathtubBasin", "GarbageCan", "LaundryHamper")


def invalid(why: str) -> str:
    return f"Last action is invalid. {why}"


@dataclass(slots=True)
class Obj:
    id: str
    type: str
    parent: str | None = None
    attrs: dict[str, str] = field(default_factory=dict)


class ObjJSON(TypedDict):
    """One object of :meth:`Scene.to_json` (``attrs`` only when it has some)."""

    id: str
    type: str
    parent: str | None
    attrs: NotRequired[dict[str, str]]


class SceneJSON(TypedDict):
    """:meth:`Scene.to_json`; :meth:`Scene.from_json` reads it back (``floorplan``,
    ``opened`` and ``on`` may be missing there)."""

    room: str
    floorplan: int | None
    objects: list[ObjJSON]
    opened: list[str]
    on: list[str]


class EnvStateJSON(TypedDict):
    """:meth:`Env.state_json`; :meth:`Env.load_state` reads it back (the keys marked
    ``NotRequired`` may be missing there)."""

    order: NotRequired[list[str]]
    types: dict[str, str]
    parent: dict[str, str | None]
    held: NotRequired[str | None]
    at: NotRequired[str | None]
    last_recep: NotRequired[str | None]
    opened: list[str]
    on: list[str]
    sliced: list[str]
    clean: list[str]
    hot: list[str]
    cool: list[str]
    steps: NotRequired[int]
    invalid_steps: NotRequired[int]


def _obj_json(o: Obj) -> ObjJSON:
    d: ObjJSON = {"id": o.id, "type": o.type, "parent": o.parent}
    if o.attrs:
        d["attrs"] = o.attrs
    return d


@dataclass
class Scene:
    """Initial state: a room and its objects (with parents and initial flags).

    ``room`` is ``kitchen`` / ``living_room`` / ``bedroom`` / ``bathroom``; ``opened``
    and ``on`` hold the ids that start open / switched on."""

    room: str
    objects: list[Obj]
    floorplan: int | None = None
    opened: set[str] = field(default_factory=set)
    on: set[str] = field(default_factory=set)

    def to_json(self) -> SceneJSON:
        return {
            "room": self.room,
            "floorplan": self.floorplan,
            "objects": [_obj_json(o) for o in self.objects],
            "opened": sorted(self.opened),
            "on": sorted(self.on),
        }

    @classmethod
    def from_json(cls, d: SceneJSON) -> Scene:
        objs = [Obj(o["id"], o["type"], o.get("parent"), dict(o.get("attrs") or {})) for o in d["objects"]]
        ids = {o.id for o in objs}
        if len(ids) != len(objs):
            raise ValueError("scene object ids must be unique")
        bad = [o.id for o in objs if o.parent is not None and o.parent not in ids]
        if bad:
            raise ValueError(f"objects {bad[:5]} have a parent that is not in the scene")
        return cls(d["room"], objs, d.get("floorplan"), set(d.get("opened", [])), set(d.get("on", [])))


@dataclass(frozen=True, slots=True)
class StepResult:
    ok: bool
    feedback: str
    done: bool


class Env:
    """One episode. ``step`` never raises: a bad action is an invalid step with a reason.

    The episode ends after ``max_steps`` steps or ``max_invalid`` invalid ones (EB-ALFRED:
    30 and 10), or as soon as ``goal(env)`` holds when a goal is given. ``auto_open``:
    put / pick up open a closed container on the way (for ALFWorld-style vocabularies
    such as Reinforced Reasoning's, which have no open/close actions).
    """

    __slots__ = (
        "scene", "static", "order", "type_of", "parent", "held", "opened", "on", "sliced", "clean", "hot",
        "cool", "at", "last_recep", "steps", "invalid_steps", "max_steps", "max_invalid", "goal",
        "done", "auto_open", "memo",
    )  # fmt: skip

    def __init__(
        self,
        scene: Scene,
        max_steps: int = 30,
        max_invalid: int = 10,
        goal: Callable[[Env], bool] | None = None,
        auto_open: bool = False,
    ) -> None:
        if max_steps < 1 or max_invalid < 1:
            raise ValueError("max_steps and max_invalid must be >= 1")
        self.auto_open = auto_open
        self.scene = scene
        self.static = {o.id: o for o in scene.objects}
        self.max_steps, self.max_invalid, self.goal = max_steps, max_invalid, goal
        # per-scene facts (descriptions' allowed instances, display names), shared by every
        # Env on this scene: a Scene is not to be changed once an Env runs on it
        self.memo: dict[Any, Any] = scene.__dict__.setdefault("_memo", {})
        self._reset_state()

    def reset(self) -> str:
        """Back to the scene's initial state; returns the observation."""
        self._reset_state()
        return self.observation()

    def _reset_state(self) -> None:
        s = self.scene
        self.order = [o.id for o in s.objects]
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
        self.steps = self.invalid_steps = 0
        self.done = False

    def copy(self) -> Env:
        """An independent copy of the live state (the scene and settings are shared)."""
        e = object.__new__(Env)
        e.scene, e.static, e.goal, e.memo = self.scene, self.static, self.goal, self.memo
        e.max_steps, e.max_invalid, e.auto_open = self.max_steps, self.max_invalid, self.auto_open
        e.order = self.order  # never mutated in place (slicing makes a new list)
        e.type_of, e.parent = dict(self.type_of), dict(self.parent)
        e.held, e.at, e.last_recep = self.held, self.at, self.last_recep
        e.opened, e.on, e.sliced = set(self.opened), set(self.on), set(self.sliced)
        e.clean, e.hot, e.cool = set(self.clean), set(self.hot), set(self.cool)
        e.steps, e.invalid_steps, e.done = self.steps, self.invalid_steps, self.done
        return e

    # -- queries ----------------------------------------------------------------

    def props(self, oid: str) -> dict[str, bool]:
        return props(self.type_of[oid])

    def attrs(self, oid: str) -> dict[str, str]:
        """Appearance attributes (colour, material, position); slices inherit them."""
        o = self.static.get(oid) or self.static.get(oid.split("_Slice_")[0])
        return o.attrs if o is not None else {}

    def spot(self, oid: str | None) -> str | None:
        """The top-level receptacle an object is at; a held object (and what it carries)
        is at the agent's spot."""
        for _ in range(_DEPTH):
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

    def ancestors(self, oid: str) -> list[str]:
        out: list[str] = []
        p = self.parent.get(oid)
        while p is not None and len(out) < _DEPTH:
            out.append(p)
            p = self.parent.get(p)
        return out

    _ancestors = ancestors  # kept for callers of the old private name

    def enclosing_closed(self, oid: str) -> str | None:
        """The innermost closed container around ``oid``, if any."""
        for p in self.ancestors(oid):
            if props(self.type_of[p])["openable"] and p not in self.opened:
                return p
        return None

    def descendants(self, oid: str) -> list[str]:
        return [i for i in self.order if oid in self.ancestors(i)]

    def name(self, oid: str | None) -> str:
        return self.type_of[oid] if oid else "nothing"

    # -- observation --------------------------------------------------------------

    def observation(self) -> str:
        """What the agent sees: every receptacle with its open / on state and what is
        visibly in or on it (not what is inside a closed container), where the agent
        stands, and what it holds. An object with appearance attributes is described
        by them ("yellow plastic small SprayBottle"); a type the scene holds several
        of is named by instance id (``Cabinet_2``), which every vocabulary accepts, and
        such an instance's place is given when it has one ("left", "bottom", "under
        the SinkBasin")."""
        parts = [f"You are in a {self.scene.room.replace('_', ' ')}."]
        items = []
        names = self._display_names()
        for i in self.order:
            if i == self.held:
                continue
            t = self.type_of[i]
            state = []
            if props(t)["openable"]:
                state.append("open" if i in self.opened else "closed")
            if props(t)["toggleable"] and i in self.on:
                state.append("on")
            p = self.parent[i]
            if p is None:
                if state or props(t)["receptacle"] or props(t)["toggleable"]:
                    items.append(names.get(i, t) + (f" ({', '.join(state)})" if state else ""))
                continue
            if self.enclosing_closed(i) is not None:
                continue
            pt = self.type_of[p]
            rel = "in" if props(pt)["openable"] or pt in _OPEN_WORD else "on"
            items.append(
                names.get(i, t)
                + (f" ({', '.join(state)})" if state else "")
                + f" {rel} the {names.get(p, pt)}"
            )
        if items:
            parts.append("You see: " + ", ".join(items) + ".")
        parts.append(
            f"You are next to the {names.get(self.at, self.name(self.at))}."
            if self.at
            else "You have not moved yet."
        )
        parts.append(
            f"You are holding the {names.get(self.held, self.name(self.held))}."
            if self.held
            else "Your hand is empty."
        )
        return " ".join(parts)

    def _display_names(self) -> dict[str, str]:
        """Per-instance names for the text state (only where they differ from the type)."""
        key = ("names", tuple(self.order), tuple(self.type_of[i] for i in self.order))
        got = self.memo.get(key)
        if got is not None:
            return got
        # lazy: import cycle: sim.refs imports this module, directly or through its package
        from groundrl.sim.refs import SceneFacts

        facts = self.memo.get("facts")
        if facts is None:
            facts = self.memo["facts"] = SceneFacts(self.scene.objects)
        count: dict[str, int] = {}
        for i in self.order:
            count[self.type_of[i]] = count.get(self.type_of[i], 0) + 1
        out = {}
        for i in self.order:
            t = self.type_of[i]
            base = i.split("_Slice_")[0]
            a = facts.attrs.get(base, {})
            looks = " ".join(a[k] for k in ("color", "material", "size", "shape") if k in a)
            several = count[t] > 1 and i not in self.sliced  # slices of one object are alike
            name = i if several else t
            where = [a[k] for k in ("side", "height") if k in a] if several else []
            if several and base in facts.type_of:
                where += _relations(facts, base)
            text = (looks + " " + name).strip() + (f" [{', '.join(where)}]" if where else "")
            if text != t:
                out[i] = text
        self.memo[key] = out
        return out

    def state_json(self) -> EnvStateJSON:
        """The live state as JSON (with :meth:`load_state` it restores an episode)."""
        return {
            "order": list(self.order),
            "types": dict(self.type_of),
            "parent": dict(self.parent),
            "held": self.held,
            "at": self.at,
            "last_recep": self.last_recep,
            "opened": sorted(self.opened),
            "on": sorted(self.on),
            "sliced": sorted(self.sliced),
            "clean": sorted(self.clean),
            "hot": sorted(self.hot),
            "cool": sorted(self.cool),
            "steps": self.steps,
            "invalid_steps": self.invalid_steps,
        }

    def load_state(self, d: EnvStateJSON) -> Env:
        """Restore a state written by :meth:`state_json` (same scene); returns ``self``."""
        self.order = list(d.get("order") or d["types"])
        self.type_of, self.parent = dict(d["types"]), dict(d["parent"])
        self.held, self.at, self.last_recep = d.get("held"), d.get("at"), d.get("last_recep")
        self.opened, self.on, self.sliced = set(d["opened"]), set(d["on"]), set(d["sliced"])
        self.clean, self.hot, self.cool = set(d["clean"]), set(d["hot"]), set(d["cool"])
        self.steps, self.invalid_steps = int(d.get("steps", 0)), int(d.get("invalid_steps", 0))
        self.done = self.steps >= self.max_steps or self.invalid_steps >= self.max_invalid
        return self

    # -- stepping -------------------------------------------------------------------

    def step(self, skill: Skill | None, why_unparsed: str = "") -> StepResult:
        """Run one skill (``None`` = a step that could not be parsed: invalid, with
        ``why_unparsed`` as the reason). An episode that is over answers with an
        invalid feedback and counts nothing."""
        if self.done:
            return StepResult(False, invalid("The episode is over."), True)
        self.steps += 1
        if skill is None:
            why = why_unparsed or "Unknown action."
        elif not isinstance(skill, Skill):
            why = f"Not a skill: {str(skill)[:60]!r}."
        elif skill.verb not in VERBS:
            why = f"Unknown skill {str(skill.verb)[:40]!r}."
        elif skill.target is not None and not isinstance(skill.target, str):
            why = f"Bad target {str(skill.target)[:40]!r}."
        else:
            why = getattr(self, "_" + skill.verb)(skill.target)
        if why:
            self.invalid_steps += 1
        if (
            self.steps >= self.max_steps
            or self.invalid_steps >= self.max_invalid
            or (self.goal is not None and self.goal(self))
        ):
            self.done = True
        return StepResult(not why, invalid(why) if why else OK, self.done)

    def _resolve(self, target: str | None) -> str | None:
        """An instance id stays; a type → the instance the agent is at, else the first
        reachable one (not in hand), else the first in scene order."""
        if target is None:
            return None
        if target in self.type_of:
            return target
        ids = self.ids_of_type(target)
        if not ids:
            return None
        if self.at is not None:
            if self.at in ids:
                return self.at
            for i in ids:
                if i != self.held and self.reachable(i):
                    return i
        return ids[0]

    def _missing(self, target: str | None, what: str) -> str:
        return f"There is no {target} here." if target else f"{what} what?"

    def _find(self, target: str | None) -> str:
        if target is None:
            return "Find what?"
        if target in self.type_of:
            oid = target
        else:
            ids = [i for i in self.ids_of_type(target) if i != self.held]
            if not ids:
                return (
                    f"The {target} is in your hand."
                    if self.ids_of_type(target)
                    else f"There is no {target} here."
                )
            if self.at in ids:  # "find" again: the next instance (cycling in scene order)
                oid = ids[(ids.index(self.at) + 1) % len(ids)]
            else:  # the nearest visible one: here, then not in a closed container, then any
                here = self.spot(self.at) if self.at is not None else None
                oid = min(
                    ids,
                    key=lambda i: (self.enclosing_closed(i) is not None, self.spot(i) != here, ids.index(i)),
                )
        if oid == self.held:
            return f"The {self.type_of[oid]} is in your hand."
        self.at = oid
        # "put down the object in hand" after finding a plain object puts it where that object is
        self.last_recep = oid if props(self.type_of[oid])["receptacle"] else self.parent.get(oid)
        return ""

    def _pickup(self, target: str | None) -> str:
        oid = self._resolve(target)
        if oid is None:
            return self._missing(target, "Pick up")
        t = self.type_of[oid]
        if oid == self.held:
            return f"You are already holding the {t}."
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
        if self.at == oid or (self.at is not None and oid in self.ancestors(self.at)):
            self.at = self.spot(oid)  # the agent stays where the object was
        self.held = oid
        self.parent[oid] = None
        return ""

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
        if rid == self.held or self.held in self.ancestors(rid):
            return f"The {rt} cannot go inside itself."
        if not self.reachable(rid):
            return f"You are not near the {rt}."
        closed = rid if props(rt)["openable"] and rid not in self.opened else self.enclosing_closed(rid)
        while closed is not None and self.auto_open:
            self.opened.add(closed)
            self.on.discard(closed)
            closed = rid if props(rt)["openable"] and rid not in self.opened else self.enclosing_closed(rid)
        if closed is not None:
            return (
                f"The {rt} is closed."
                if closed == rid
                else f"The {rt} is inside the closed {self.type_of[closed]}."
            )
        obj = self.held
        self.parent[obj] = rid
        self.held = None
        sink = (
            rid
            if rt == "SinkBasin"
            else next((a for a in self.ancestors(rid) if self.type_of[a] == "SinkBasin"), None)
        )
        if sink is not None and self._faucet_on(sink):
            self._apply(obj, "clean", include_root=True)
        return ""

    def _open(self, target: str | None) -> str:
        oid = self._resolve(target)
        if oid is None:
            return self._missing(target, "Open")
        t = self.type_of[oid]
        if not props(t)["openable"]:
            return f"The {t} cannot be opened."
        if not self.reachable(oid):
            return f"You are not near the {t}."
        if oid in self.opened:
            return f"The {t} is already open."
        if self.enclosing_closed(oid) is not None:
            return f"The {t} is inside a closed container."
        self.opened.add(oid)
        self.on.discard(oid)  # opening a running microwave stops it
        return ""

    def _close(self, target: str | None) -> str:
        oid = self._resolve(target)
        if oid is None:
            return self._missing(target, "Close")
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
            return self._missing(target, "Turn on")
        t = self.type_of[oid]
        if not props(t)["toggleable"]:
            return f"The {t} cannot be turned on."
        if not self.reachable(oid):
            return f"You are not near the {t}."
        if oid in self.on:
            return f"The {t} is already on."
        if self.enclosing_closed(oid) is not None:
            return f"The {t} is inside a closed container."
        if props(t)["openable"] and oid in self.opened:
            return f"The {t} is open; close it first."
        self.on.add(oid)
        if t == "Microwave":
            self._apply(oid, "hot")
        elif t == "Faucet":
            sink = next((a for a in self.ancestors(oid) if self.type_of[a] == "SinkBasin"), None)
            if sink is not None:
                self._apply(sink, "clean")
        return ""

    def _toggle_off(self, target: str | None) -> str:
        oid = self._resolve(target)
        if oid is None:
            return self._missing(target, "Turn off")
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
            return self._missing(target, "Slice")
        t = self.type_of[oid]
        if oid in self.sliced:
            return f"The {t} is already sliced."
        if not props(t)["sliceable"]:
            return f"The {t} cannot be sliced."
        if not self.reachable(oid):
            return f"You are not near the {t}."
        closed = self.enclosing_closed(oid)
        while closed is not None and self.auto_open:
            self.opened.add(closed)
            self.on.discard(closed)
            closed = self.enclosing_closed(oid)
        if closed is not None:
            return f"The {t} is inside the closed {self.type_of[closed]}."
        # the object becomes its first slice; the other slices lie where it lies
        st = t + "Sliced"
        pos = self.order.index(oid) + 1
        new = [f"{oid}_Slice_{k}" for k in range(2, SLICES_PER_OBJECT + 1)]
        self.order = [*self.order[:pos], *new, *self.order[pos:]]  # a new list: copies share the old one
        for i in (oid, *new):
            self.type_of[i] = st
            self.parent[i] = self.parent[oid]
            self.sliced.add(i)
            for flags in (self.clean, self.hot, self.cool):
                if oid in flags:
                    flags.add(i)
        return ""

    def _station(self, station: str) -> str | None:
        """The station instance at the agent's spot (a SinkBasin needs its Faucet)."""
        if self.at is None:
            return None
        here = self.spot(self.at)
        for i in self.ids_of_type(station):
            if self.spot(i) == here and (
                station != "SinkBasin" or any(self.type_of[d] == "Faucet" for d in self.descendants(i))
            ):
                return i
        return None

    def _macro(self, target: str | None, station: str, flag: str, verb: str) -> str:
        held_type = self.type_of[self.held] if self.held is not None else None
        # a type names the object in hand when that is one ("clean the Mug" while holding a Mug)
        oid = self.held if target is None or target == held_type else self._resolve(target)
        if self.held is None or oid != self.held:
            return f"You must hold the {target or 'object'} to {verb} it."
        t = self.type_of[oid]
        if not props(t)[{"clean": "cleanable", "hot": "heatable", "cool": "coolable"}[flag]]:
            return f"The {t} cannot be {verb}ed."
        if self._station(station) is None:
            extra = " with a Faucet" if station == "SinkBasin" else ""
            return f"You need to be at a {station}{extra} to {verb} the {t}."
        self._apply(oid, flag, include_root=True)
        return ""

    def _clean(self, target: str | None) -> str:
        return self._macro(target, "SinkBasin", "clean", "clean")

    def _heat(self, target: str | None) -> str:
        return self._macro(target, "Microwave", "hot", "heat")

    def _cool(self, target: str | None) -> str:
        return self._macro(target, "Fridge", "cool", "cool")

    def _faucet_on(self, sink: str) -> bool:
        return any(self.type_of[f] == "Faucet" and f in self.on for f in self.descendants(sink))

    def _apply(self, root: str, flag: str, include_root: bool = False) -> None:
        """Side effects on what is inside a running sink / microwave / closed fridge
        (and on ``root`` itself for an object put into a running sink)."""
        key = {"clean": "cleanable", "hot": "heatable", "cool": "coolable"}[flag]
        target = {"clean": self.clean, "hot": self.hot, "cool": self.cool}[flag]
        for i in [root, *self.descendants(root)] if include_root else self.descendants(root):
            if props(self.type_of[i])[key]:
                target.add(i)


def _relations(facts: Any, oid: str) -> list[str]:
    """Spatial relations of a top-level instance to the anchors in the scene."""
    # lazy: import cycle: sim.refs imports this module, directly or through its package
    from groundrl.sim.refs import ANCHORS

    out = []
    anchors = sorted({t for t in facts.type_of.values() if t in ANCHORS} - {facts.type_of[oid]})
    for rel, words in (
        ("under", "under"),
        ("above", "above"),
        ("left_of", "left of"),
        ("right_of", "right of"),
    ):
        for a in anchors:
            if facts.related(oid, rel, a, ()):
                out.append(f"{words} the {a}")
    return out


_VERBS = frozenset(VERBS)
