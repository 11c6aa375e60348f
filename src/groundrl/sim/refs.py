"""Referring descriptions: which instances an instruction means.

A :class:`Ref` picks instances of one type by what the instruction says about them:

* ``attrs`` — appearance attributes the instance must have, as ``(key, value)`` pairs
  (``("color", "yellow")``); a key given twice means either value ("the yellow and blue
  vases"). Keys: ``color``, ``material``, ``size``, ``shape``, and two read off the
  positions (below): ``side`` (``left`` / ``middle`` / ``right`` among the instances of
  its type) and ``height`` (``bottom`` / ``top``); the generator's ``position``
  (``on the left`` …) is matched like any other attribute;
* ``rel`` + ``anchor`` — a spatial relation to some instance of the anchor type
  (``left_of`` / ``right_of`` / ``under`` / ``above`` / ``next_to``, or ``from``: the
  instance starts in or on an anchor instance), ``anchor_attrs`` the anchor's own
  attributes ("from the *white* drawer").

Positions: a top-level object may carry ``attrs["pos"] = "x,level"`` (``x`` a column
along the room, ``level`` 0 low — under the counter, the floor —, 1 counter height, 2
high); anything inside or on it shares its position. Relations, between positions
``(x, l)`` of the instance and ``(ax, al)`` of an anchor instance:
``left_of`` x = ax − 1; ``right_of`` x = ax + 1; ``under`` x = ax and l < al;
``above`` x = ax and l > al; ``next_to`` |x − ax| = 1.

Everything a :class:`Ref` tests is fixed by the scene (objects are described where
they start), so the matching instance ids are computed once per scene
(:func:`allowed`). ``docs/sim-semantics.md`` lists every rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypedDict

from groundrl.sim.catalog import LAMPS, PICKUPABLE, RECEPTACLES, TOGGLEABLE

RELATIONS = ("left_of", "right_of", "under", "above", "next_to", "from")

COLORS = (
    "red", "blue", "green", "yellow", "white", "black", "brown", "silver", "purple", "gray", "orange",
    "pink", "gold",
)  # fmt: skip
MATERIALS = ("metal", "wooden", "plastic", "glass", "ceramic", "paper", "fabric")
SIZES = ("small", "large", "tall")
SHAPES = ("round", "square")
#: word → (attribute key, value)
ATTR_WORDS: dict[str, tuple[str, str]] = {
    **{c: ("color", c) for c in COLORS},
    "grey": ("color", "gray"),
    "golden": ("color", "gold"),
    **{m: ("material", m) for m in MATERIALS},
    "wood": ("material", "wooden"),
    "steel": ("material", "metal"),
    "metallic": ("material", "metal"),
    **{s: ("size", s) for s in SIZES},
    "big": ("size", "large"),
    "little": ("size", "small"),
    "tiny": ("size", "small"),
    **{s: ("shape", s) for s in SHAPES},
    "left": ("side", "left"),
    "right": ("side", "right"),
    "bottom": ("height", "bottom"),
    "lower": ("height", "bottom"),
    "top": ("height", "top"),
    "upper": ("height", "top"),
}
#: The attribute values the scene builder draws from for every object.
PALETTE = {"color": COLORS[:8], "material": MATERIALS[:5], "size": ("small", "large")}


class RefJSON(TypedDict, total=False):
    """:meth:`Ref.to_json`: each key only when the description has it (``anchor`` with
    ``rel``)."""

    attrs: list[list[str]]
    rel: str
    anchor: str | None
    anchor_attrs: list[list[str]]


@dataclass(frozen=True)
class Ref:
    attrs: tuple[tuple[str, str], ...] = ()
    rel: str | None = None
    anchor: str | None = None
    anchor_attrs: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.rel is not None and self.rel not in RELATIONS:
            raise ValueError(f"unknown relation {self.rel!r}; choose one of {RELATIONS}")
        if (self.rel is None) != (self.anchor is None):
            raise ValueError("a relation needs an anchor type and an anchor needs a relation")

    def __bool__(self) -> bool:
        return bool(self.attrs or self.rel)

    def to_json(self) -> RefJSON:
        d: RefJSON = {}
        if self.attrs:
            d["attrs"] = [list(p) for p in self.attrs]
        if self.rel:
            d["rel"], d["anchor"] = self.rel, self.anchor
        if self.anchor_attrs:
            d["anchor_attrs"] = [list(p) for p in self.anchor_attrs]
        return d

    @classmethod
    def from_json(cls, d: Any) -> Ref | None:
        if not d:
            return None
        if isinstance(d, Ref):
            return d

        def pairs(x: Any) -> tuple[tuple[str, str], ...]:
            if isinstance(x, dict):
                return tuple((str(k), str(v)) for k, v in x.items())
            return tuple((str(k), str(v)) for k, v in (x or []))

        return cls(pairs(d.get("attrs")), d.get("rel"), d.get("anchor"), pairs(d.get("anchor_attrs")))

    def describe(self) -> str:
        """Words for the description, e.g. ``yellow plastic, left of the SinkBasin``."""
        words = [v for _, v in self.attrs]
        out = " ".join(words)
        if self.rel:
            rel = {"left_of": "left of", "right_of": "right of", "next_to": "next to"}.get(self.rel, self.rel)
            anchor = " ".join([*(v for _, v in self.anchor_attrs), self.anchor or ""])
            out = f"{out}, {rel} the {anchor}" if out else f"{rel} the {anchor}"
        return out


# ---------------------------------------------------------------------------
# positions and per-instance attributes (derived ones included)
# ---------------------------------------------------------------------------


def _pos(s: str | None) -> tuple[int, int] | None:
    if not s:
        return None
    try:
        x, level = s.split(",")
        return int(x), int(level)
    except ValueError:
        return None


class SceneFacts:
    """Per-scene facts the descriptions test: each object's start position, its
    attributes with the derived ``side`` / ``height``, and its start ancestors."""

    __slots__ = ("ancestors", "attrs", "pos", "type_of")

    def __init__(self, objects: Iterable[Any]) -> None:
        objs = list(objects)
        self.type_of = {o.id: o.type for o in objs}
        parent = {o.id: o.parent for o in objs}
        own = {o.id: _pos(o.attrs.get("pos")) for o in objs}
        self.ancestors: dict[str, list[str]] = {}
        self.pos: dict[str, tuple[int, int] | None] = {}
        for o in objs:
            chain: list[str] = []
            p = parent.get(o.id)
            while p is not None and len(chain) < 64:
                chain.append(p)
                p = parent.get(p)
            self.ancestors[o.id] = chain
            top = chain[-1] if chain else o.id
            self.pos[o.id] = own.get(o.id) or own.get(top)
        self.attrs: dict[str, dict[str, str]] = {o.id: dict(o.attrs) for o in objs}
        by_type: dict[str, list[str]] = {}
        for o in objs:
            if self.pos[o.id] is not None:
                by_type.setdefault(o.type, []).append(o.id)
        for ids in by_type.values():
            for i in ids:
                level = self.pos[i][1]  # type: ignore[index]
                if level == 0:
                    self.attrs[i].setdefault("height", "bottom")
                elif level == 2:
                    self.attrs[i].setdefault("height", "top")
            xs = sorted({self.pos[i][0] for i in ids})  # type: ignore[index]
            if len(ids) < 2 or len(xs) < 2:
                continue
            for i in ids:
                x = self.pos[i][0]  # type: ignore[index]
                side = "left" if x == xs[0] else "right" if x == xs[-1] else "middle"
                self.attrs[i].setdefault("side", side)

    def has(self, oid: str, attrs: tuple[tuple[str, str], ...]) -> bool:
        mine = self.attrs.get(oid, {})
        want: dict[str, set[str]] = {}
        for k, v in attrs:
            want.setdefault(k, set()).add(v)
        return all(mine.get(k) in vs for k, vs in want.items())

    def related(self, oid: str, rel: str, anchor: str, anchor_attrs: tuple[tuple[str, str], ...]) -> bool:
        anchors = [
            a for a, t in self.type_of.items() if t == anchor and a != oid and self.has(a, anchor_attrs)
        ]
        if rel == "from":
            return any(a in self.ancestors.get(oid, ()) for a in anchors)
        p = self.pos.get(oid)
        if p is None:
            return False
        for a in anchors:
            q = self.pos.get(a)
            if q is None:
                continue
            if (
                (rel == "left_of" and p[0] == q[0] - 1)
                or (rel == "right_of" and p[0] == q[0] + 1)
                or (rel == "under" and p[0] == q[0] and p[1] < q[1])
                or (rel == "above" and p[0] == q[0] and p[1] > q[1])
                or (rel == "next_to" and abs(p[0] - q[0]) == 1)
            ):
                return True
        return False

    def matches(self, oid: str, ref: Ref | None) -> bool:
        if not ref:
            return True
        if not self.has(oid, ref.attrs):
            return False
        return ref.rel is None or self.related(oid, ref.rel, ref.anchor or "", ref.anchor_attrs)

    def allowed(self, t: str, ref: Ref | None) -> frozenset[str] | None:
        """Ids of type ``t`` that ``ref`` describes (``None``: no description, any)."""
        if not ref:
            return None
        return frozenset(i for i, ty in self.type_of.items() if ty == t and self.matches(i, ref))


# ---------------------------------------------------------------------------
# reading descriptions from an instruction
# ---------------------------------------------------------------------------

#: nouns → types (beyond the words of the type's own name)
NOUNS: dict[str, tuple[str, ...]] = {
    "table": ("DiningTable", "SideTable", "CoffeeTable", "Desk"), "counter": ("CounterTop",),
    "countertop": ("CounterTop",), "fridge": ("Fridge",), "refrigerator": ("Fridge",), "sink": ("SinkBasin",),
    "tub": ("BathtubBasin",), "bathtub": ("BathtubBasin",), "cupboard": ("Cabinet",), "bin": ("GarbageCan",),
    "trash": ("GarbageCan",), "stove": ("StoveBurner",), "couch": ("Sofa",), "nightstand": ("SideTable",),
    "bedside": ("SideTable",), "dresser": ("Dresser",), "chair": ("ArmChair",), "bench": ("Ottoman",),
    "lamp": tuple(sorted(LAMPS)), "light": tuple(sorted(LAMPS)), "tv": ("Television",),
    "television": ("Television",), "toaster": ("Toaster",), "coffee": ("CoffeeMachine",),
    "microwave": ("Microwave",), "toilet": ("Toilet",), "bed": ("Bed",), "shelf": ("Shelf",),
    "drawer": ("Drawer",), "cabinet": ("Cabinet",), "safe": ("Safe",),
    "bottle": ("SprayBottle", "SoapBottle", "WineBottle"), "spray": ("SprayBottle",), "cleaner": ("SprayBottle",),
    "lotion": ("SoapBottle",), "cushion": ("Pillow",), "rag": ("Cloth",), "jar": ("Vase",), "vessel": (),
    "container": (), "object": (), "thing": (), "item": (), "one": (), "knives": ("Knife", "ButterKnife"),
    "remote": ("RemoteControl",), "controller": ("RemoteControl",), "phone": ("CellPhone",), "keys": ("KeyChain",),
    "card": ("CreditCard",), "soap": ("SoapBar",), "sponge": ("DishSponge",), "glass": ("Cup",), "racquet": ("TennisRacket",),
}  # fmt: skip
ANCHORS = frozenset(
    ["SinkBasin", "StoveBurner", "Toaster", "CoffeeMachine", "Fridge", "Toilet", "Sofa", "Television", "Microwave",
     "Bed", "DeskLamp", "FloorLamp"]
)  # fmt: skip
_REL_RE = re.compile(
    r"\b(?:to the |on the )?(left|right) of (?:the |a |an )?(\w+)"
    r"|\b(under|underneath|below|beneath|above|over) (?:the |a |an )?(\w+)"
    r"|\b(next to|near|beside|in front of|by) (?:the |a |an )?(\w+)"
)
_REL = {
    "left": "left_of", "right": "right_of", "under": "under", "underneath": "under", "below": "under",
    "beneath": "under", "above": "above", "over": "above", "next to": "next_to", "near": "next_to",
    "beside": "next_to", "in front of": "next_to", "by": "next_to",
}  # fmt: skip
_DEST = {"on", "onto", "to", "in", "into", "at", "inside"}
_SRC = {"from", "off"}


def _split_camel(t: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Z][a-z]*|[a-z]+", t)]


def _singular(w: str) -> str:
    for suf, rep in (("ies", "y"), ("ves", "fe"), ("es", ""), ("s", "")):
        if w.endswith(suf) and len(w) > len(suf) + 2:
            return w[: -len(suf)] + rep
    return w


def noun_types(word: str) -> tuple[str, ...]:
    """Types a noun can name (``bottles`` → SprayBottle, SoapBottle, WineBottle)."""
    out: list[str] = []
    for w in dict.fromkeys((word, _singular(word), word.rstrip("s"))):
        out.extend(NOUNS.get(w, ()))
        out.extend(t for t in _KNOWN if w and (w == t.lower() or w == _split_camel(t)[-1]))
    return tuple(dict.fromkeys(out))


_KNOWN = sorted(PICKUPABLE | RECEPTACLES | TOGGLEABLE | {"Television", "Toaster"})


def _role_of(word: str, roles: dict[str, str]) -> str | None:
    """The goal role a noun names (``container`` / ``vessel``: the movable receptacle)."""
    ts = noun_types(word)
    for r in ("mrecep", "recep", "obj"):
        if r in roles and roles[r] in ts:
            return r
    if word in ("container", "vessel") and "mrecep" in roles:
        return "mrecep"
    return None


def _relations(
    toks: list[str], roles: dict[str, str], present: set[str]
) -> tuple[dict[str, tuple[str, str]], set[int]]:
    """The relation phrases: ``{role: (relation, anchor type)}`` and the token positions
    they use (not read as attributes afterwards)."""
    rels: dict[str, tuple[str, str]] = {}
    used: set[int] = set()
    low = " ".join(toks)
    for m in _REL_RE.finditer(low):
        word = m.group(1) or m.group(3) or m.group(5)
        noun = m.group(2) or m.group(4) or m.group(6)
        start = len(low[: m.start()].split())
        used.update(range(start, start + len(m.group(0).split())))
        anchors = [t for t in noun_types(noun) if t in ANCHORS and (not present or t in present)]
        if not anchors:
            continue
        role = next(
            (
                _role_of(toks[j], roles)
                for j in range(start - 1, max(-1, start - 5), -1)
                if _role_of(toks[j], roles)
            ),
            None,
        )
        role = role if role in ("recep", "mrecep") else "recep"
        if roles[role] in anchors:
            continue
        rels.setdefault(role, (_REL[word], anchors[0]))
    return rels, used


def _noun_after(
    toks: list[str], i: int, roles: dict[str, str], present: set[str]
) -> tuple[str | None, str | None]:
    """What the attribute word at ``i`` describes: ``(role, None)``, or ``(None, source
    receptacle type)`` after "from", or ``(None, None)`` when no noun follows in 4 words."""
    for j in range(i + 1, min(i + 5, len(toks))):
        w = toks[j]
        if w in ATTR_WORDS or w in ("and", "side", "handled", "colored", "coloured"):
            continue
        if w in _DEST or w in _SRC or w in ("with", "while", "that", "which"):
            break
        r = _role_of(w, roles)
        if r is not None:
            return r, None
        ts = [t for t in noun_types(w) if t in RECEPTACLES]
        if ts:
            prev = {toks[k] for k in range(max(0, i - 3), i)}
            if prev & _SRC:
                return None, next((t for t in ts if not present or t in present), ts[0])
            return "recep", None
        if noun_types(w) or w in NOUNS:
            return "obj", None
    return None, None


def refs_from_instruction(
    instruction: str, obj: str, recep: str, mrecep: str | None = None, present: Iterable[str] = ()
) -> dict[str, Ref]:
    """Descriptions an instruction gives of the goal's roles: ``{"obj": Ref, "recep":
    Ref, "mrecep": Ref}`` (roles it does not describe are left out).

    Attribute words (:data:`ATTR_WORDS`) attach to the first noun within four words
    after them: a role's noun → that role; another receptacle's noun → the object's
    source after "from" (``from the white drawer``), else the target; a generic or
    unknown noun (``object``, ``one``) → the object. Relation phrases (``left of the
    sink``, ``under the sink``, ``next to the toilet``) attach to the nearest role noun
    before them, else the target receptacle, when their anchor type is known and is
    not the role's own type. See ``docs/sim-semantics.md``."""
    toks = re.findall(r"[a-z]+", instruction.lower())
    roles = {"obj": obj, "recep": recep, **({"mrecep": mrecep} if mrecep else {})}
    present = set(present)
    attrs: dict[str, list[tuple[str, str]]] = {}
    source: tuple[str, list[tuple[str, str]]] | None = None
    # relation phrases first: their words are not attributes ("left of the sink")
    rels, used = _relations(toks, roles, present)
    for i, tok in enumerate(toks):
        if i in used or tok not in ATTR_WORDS:
            continue
        kv = ATTR_WORDS[tok]
        if i > 0 and (
            any(toks[i - 1] + tok == t.lower() for t in _KNOWN)  # "toilet paper", "counter top"
            or (kv[0] == "height" and noun_types(toks[i - 1]))  # "the stove top"
        ):
            continue
        if kv[0] in ("side", "height") and i + 1 < len(toks) and toks[i + 1] in ("of", "hand"):
            continue
        target, src_type = _noun_after(toks, i, roles, present)
        if src_type is not None:
            if source is None or source[0] == src_type:
                source = (src_type, [*(source[1] if source else []), kv])
            continue
        target = target or "obj"
        if kv[0] in ("side", "height") and target == "obj":
            continue  # "the left one" of a pickup is not a fixed place
        attrs.setdefault(target, []).append(kv)
    out: dict[str, Ref] = {}
    for role in roles:
        a = tuple(dict.fromkeys(attrs.get(role, [])))
        rel = rels.get(role)
        if role == "obj" and rel is None and source is not None:
            out[role] = Ref(a, "from", source[0], tuple(dict.fromkeys(source[1])))
        elif a or rel:
            out[role] = Ref(a, rel[0] if rel else None, rel[1] if rel else None)
    return out


__all__ = ["ANCHORS", "ATTR_WORDS", "PALETTE", "RELATIONS", "Ref", "SceneFacts", "refs_from_instruction"]
