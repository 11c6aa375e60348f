"""Object names in plan steps → what they mean in a scene.

Resolution of an object name, first rule that applies: an instance id (``Apple_2``);
"it" / "the object in hand" → the held object; an exact type (case and spaces ignored);
a synonym (Counter → CounterTop, "bread slice" → BreadSliced, …); the sliced form when
only that exists (and back); a fuzzy match (rapidfuzz ratio ≥ 85) over the types present.
Every resolution says how it matched; a failure says why. Every vocabulary
(:mod:`groundrl.sim.vocabularies`) names objects through it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from groundrl.sim.catalog import LAMPS
from groundrl.sim.world import Env

SYNONYMS = {
    "counter": "CounterTop", "countertop": "CounterTop", "kitchen counter": "CounterTop", "table": "DiningTable",
    "dining table": "DiningTable", "refrigerator": "Fridge", "fridge": "Fridge", "sink": "SinkBasin", "basin": "SinkBasin",
    "bathtub": "BathtubBasin", "tub": "BathtubBasin", "cupboard": "Cabinet", "trash can": "GarbageCan", "trash": "GarbageCan",
    "bin": "GarbageCan", "garbage": "GarbageCan", "stove": "StoveBurner", "burner": "StoveBurner", "couch": "Sofa",
    "remote": "RemoteControl", "phone": "CellPhone", "towel": "HandTowel", "soap": "SoapBar", "sponge": "DishSponge",
    "tv": "Television", "television": "Television", "nightstand": "SideTable", "night stand": "SideTable",
    "keys": "KeyChain", "key": "KeyChain", "tap": "Faucet", "oven": "Microwave", "bottle": "SprayBottle",
    "toilet paper": "ToiletPaper", "alarm clock": "AlarmClock", "butter knife": "ButterKnife", "light": "FloorLamp",
}  # fmt: skip
_IT = {"it", "the object in hand", "object in hand", "the object", "object", "that", "this"}
_ID_RE = re.compile(r"^[A-Za-z]+_\d+(?:_Slice_\d+)?$", re.I)
_ARTICLE_RE = re.compile(r"^(?:the|a|an|some)\s+", re.I)
_SLICE_RE = re.compile(r"^(?:sliced\s+(\w+)|(\w+)\s+slices?|slices?\s+of\s+(\w+))$", re.I)


@dataclass(frozen=True)
class Resolution:
    """``target``: an instance id or a type present in the scene (``None`` when the name
    could not be resolved); ``how``: the rule that matched, or why nothing did."""

    target: str | None
    how: str


def _norm(s: str) -> str:
    return re.sub(r"[\s_\-]+", "", s).lower()


#: rapidfuzz ratio (0-100) a fuzzy match must reach.
FUZZY_THRESHOLD = 85


def resolve(name: Any, env: Env, prefer_sliced: bool = True) -> Resolution:
    """An object name → a type present in the scene (or an instance id / the held
    object). With ``prefer_sliced`` a base type that has slices in the scene resolves
    to the slices (EB-ALFRED prefers sliced objects once something was sliced);
    ``slice`` steps resolve with ``prefer_sliced=False``."""
    if not isinstance(name, str) or not name.strip():
        return Resolution(None, "no object named")
    raw = name.strip().strip(".'\"")
    if raw in env.type_of:
        return Resolution(raw, "instance id")
    if _ID_RE.match(raw):  # an instance id in another case ("cabinet_2", as lowercase vocabularies write it)
        low_id = raw.lower()
        for i in env.order:
            if i.lower() == low_id:
                return Resolution(i, "instance id")
    text = _ARTICLE_RE.sub("", raw).strip()
    low = text.lower()
    if low in _IT:
        return (
            Resolution(env.held, "the object in hand")
            if env.held
            else Resolution(None, f"{text!r} refers to the object in hand, but the hand is empty")
        )
    present = {env.type_of[i] for i in env.order}
    by_norm = {_norm(t): t for t in present}
    m = _SLICE_RE.match(low)
    if m:
        low = (m.group(1) or m.group(2) or m.group(3)) + "sliced"
    key = _norm(low)
    found: Resolution | None = None
    if key in by_norm:
        found = Resolution(by_norm[key], "type")
    if found is None:
        syn = SYNONYMS.get(low) or SYNONYMS.get(low.rstrip("s"))
        if syn == "FloorLamp" or low == "lamp":
            lamps = sorted(t for t in present if t in LAMPS)
            if lamps:
                found = Resolution(lamps[0], f"synonym {text!r} → {lamps[0]}")
        elif syn and syn in present:
            found = Resolution(syn, f"synonym {text!r} → {syn}")
    if found is None and key.endswith("s") and key[:-1] in by_norm:
        found = Resolution(by_norm[key[:-1]], "plural")
    if found is None and key + "sliced" in by_norm:
        found = Resolution(by_norm[key + "sliced"], "the sliced form (the object was sliced)")
    if found is None and key.endswith("sliced") and key[: -len("sliced")] in by_norm:
        return Resolution(None, f"the {by_norm[key[: -len('sliced')]]} is not sliced yet")
    if found is None and key.endswith("sliced"):
        return Resolution(None, f"no {text!r} in this scene")
    if found is None:
        # lazy: rapidfuzz loads only for fuzzy name matching
        from rapidfuzz import fuzz, process

        cands = [k for k in by_norm if not k.endswith("sliced")]
        best = process.extractOne(key, cands, scorer=fuzz.ratio) if cands else None
        if best and best[1] >= FUZZY_THRESHOLD:
            found = Resolution(by_norm[best[0]], f"fuzzy match {text!r} → {by_norm[best[0]]} ({best[1]:.0f})")
    if found is None:
        return Resolution(None, f"no {text!r} in this scene")
    t = found.target or ""
    if prefer_sliced and t + "Sliced" in present:
        return Resolution(t + "Sliced", f"{found.how}; the sliced {t} (something was sliced)")
    return found


__all__ = ["FUZZY_THRESHOLD", "SYNONYMS", "Resolution", "resolve"]
