"""Action vocabularies: text ↔ skills, with an object-resolution layer.

Vocabularies (``VOCABS``):

* ``eb_alfred`` — "find a Apple", "pick up the Apple", "put down the object in hand",
  "open the Fridge", "close the Fridge", "turn on the DeskLamp", "turn off …",
  "slice the Apple";
* ``eb_alfred_json`` — an EB-ALFRED ``executable_plan`` of ``{action_id, action_name}``
  over the scene's enumerated action list (:func:`action_space`);
* ``reinforced`` — "goto x", "pickup x", "put x", "clean x", "heat x", "cool x",
  "slice x", "toggle x" (ALFWorld-style: no open/close; put / pick up open containers);
* ``embodied_brain`` — ``<actions>[['Find','Knife'], ['Pick','Knife'], ['Cut','Bread'],
  ['Place','Knife','Counter'], …]``; a verb acting on an object not at hand walks
  there first (their plans omit navigation), which costs a step;
* ``high_pddl`` — ALFRED's GotoLocation / PickupObject / PutObject / OpenObject /
  CloseObject / ToggleObject / SliceObject / CleanObject / HeatObject / CoolObject.

Resolution of an object name, first rule that applies: an instance id (``Apple_2``);
"it" / "the object in hand" → the held object; an exact type (case and spaces ignored);
a synonym (Counter → CounterTop, "bread slice" → BreadSliced, …); the sliced form when
only that exists (and back); a fuzzy match (rapidfuzz ratio ≥ 85) over the types present.
Every resolution says how it matched; a failure says why.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from groundrl.parse.plans import extract_actions
from groundrl.parse.structured import parse_json_object
from groundrl.sim.catalog import LAMPS, base_type, props
from groundrl.sim.skills import Skill
from groundrl.sim.world import Env, Scene

VOCABS = ("eb_alfred", "eb_alfred_json", "reinforced", "embodied_brain", "high_pddl")

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
_ARTICLE_RE = re.compile(r"^(?:the|a|an|some)\s+", re.I)
_SLICE_RE = re.compile(r"^(?:sliced\s+(\w+)|(\w+)\s+slices?|slices?\s+of\s+(\w+))$", re.I)


@dataclass(frozen=True)
class Resolution:
    target: str | None
    how: str


def _norm(s: str) -> str:
    return re.sub(r"[\s_\-]+", "", s).lower()


def resolve(name: Any, env: Env) -> Resolution:
    """An object name → a type present in the scene (or an instance id / the held object)."""
    if not isinstance(name, str) or not name.strip():
        return Resolution(None, "no object named")
    raw = name.strip().strip(".'\"")
    if raw in env.type_of:
        return Resolution(raw, "instance id")
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
    if key in by_norm:
        return Resolution(by_norm[key], "type")
    syn = SYNONYMS.get(low) or SYNONYMS.get(low.rstrip("s"))
    if syn == "FloorLamp" or low == "lamp":
        lamps = [t for t in present if t in LAMPS]
        if lamps:
            return Resolution(sorted(lamps)[0], f"synonym {text!r}")
    if syn and syn in present:
        return Resolution(syn, f"synonym {text!r} → {syn}")
    if key.endswith("s") and key[:-1] in by_norm:
        return Resolution(by_norm[key[:-1]], "plural")
    if key + "sliced" in by_norm:
        return Resolution(by_norm[key + "sliced"], "the sliced form (the object was sliced)")
    if key.endswith("sliced") and key[: -len("sliced")] in by_norm:
        return Resolution(None, f"the {by_norm[key[: -len('sliced')]]} is not sliced yet")
    from rapidfuzz import fuzz, process

    best = process.extractOne(key, list(by_norm), scorer=fuzz.ratio)
    if best and best[1] >= 85:
        return Resolution(by_norm[best[0]], f"fuzzy match {text!r} → {by_norm[best[0]]} ({best[1]:.0f})")
    return Resolution(None, f"no {text!r} in this scene")


# ---------------------------------------------------------------------------
# parsing each vocabulary into (verb, object, target) intents
# ---------------------------------------------------------------------------

_EB_PATTERNS = [
    (re.compile(r"^find (?:a |an |the )?(.+)$", re.I), "find"),
    (re.compile(r"^pick up (?:the |a |an )?(.+)$", re.I), "pickup"),
    (re.compile(r"^put down (?:the )?object in hand$", re.I), "put"),
    (re.compile(r"^put down (?:the )?(.+)$", re.I), "put"),
    (re.compile(r"^open (?:the |a )?(.+)$", re.I), "open"),
    (re.compile(r"^close (?:the |a )?(.+)$", re.I), "close"),
    (re.compile(r"^turn on (?:the |a )?(.+)$", re.I), "toggle_on"),
    (re.compile(r"^turn off (?:the |a )?(.+)$", re.I), "toggle_off"),
    (re.compile(r"^slice (?:the |a )?(.+)$", re.I), "slice"),
]
_REINFORCED = {
    "goto": "find",
    "pickup": "pickup",
    "put": "put",
    "clean": "clean",
    "heat": "heat",
    "cool": "cool",
    "slice": "slice",
    "toggle": "toggle",
}
_PDDL = {
    "gotolocation": "find", "pickupobject": "pickup", "putobject": "put", "openobject": "open", "closeobject": "close",
    "toggleobject": "toggle", "sliceobject": "slice", "cleanobject": "clean", "heatobject": "heat", "coolobject": "cool", "noop": "noop",
}  # fmt: skip
_EB_VERBS = {
    "find": "find", "navigate": "find", "search": "find", "go to": "find", "goto": "find", "move to": "find",
    "pick": "pickup", "pick up": "pickup", "grasp": "pickup", "lift": "pickup", "take": "pickup",
    "place": "put", "put": "put", "insert": "put", "release": "put", "pick and place": "put", "put down": "put",
    "open": "open", "close": "close", "pull": "open", "push": "close",
    "turn on": "toggle_on", "turn off": "toggle_off", "switch on": "toggle_on", "switch off": "toggle_off", "press": "toggle", "turn": "toggle",
    "cut": "slice", "chop": "slice", "slice": "slice", "wash": "clean", "rinse": "clean", "clean": "clean",
    "heat": "heat", "cool": "cool",
}  # fmt: skip


@dataclass(frozen=True)
class Intent:
    """One parsed step before resolution: ``verb`` (a skill verb, ``toggle`` meaning
    "switch", or ``noop``), the object named, an optional target receptacle, and whether
    the step walks to its object first (EmbodiedBrain)."""

    raw: str
    verb: str | None
    obj: str | None = None
    target: str | None = None
    walk: bool = False
    error: str = ""


def _eb_string(s: str) -> Intent:
    t = " ".join(s.split())
    for rx, verb in _EB_PATTERNS:
        m = rx.match(t)
        if m:
            return Intent(s, verb, m.group(1) if m.groups() else None)
    return Intent(s, None, error=f"not an EB-ALFRED action: {s[:60]!r}")


def _reinforced_string(s: str) -> Intent:
    parts = s.strip().split(None, 1)
    if len(parts) == 2 and parts[0].lower() in _REINFORCED:
        return Intent(s, _REINFORCED[parts[0].lower()], parts[1])
    return Intent(s, None, error=f"not a Reinforced-Reasoning action: {s[:60]!r}")


def _pddl(action: str, args: Sequence[Any], raw: str) -> Intent:
    verb = _PDDL.get(action.lower())
    if verb is None:
        return Intent(raw, None, error=f"not an ALFRED high_pddl action: {action!r}")
    args = [str(a) for a in args]
    if verb == "put":
        return Intent(raw, "put", args[0] if args else None, args[1] if len(args) > 1 else None)
    return Intent(raw, verb, args[0] if args else None)


def _eb_brain(item: Any) -> Intent:
    raw = json.dumps(item) if not isinstance(item, str) else item
    if not isinstance(item, (list, tuple)) or not item or not all(isinstance(x, str) for x in item):
        return Intent(raw, None, error=f"not an action list item: {raw[:60]}")
    verb = _EB_VERBS.get(" ".join(item[0].lower().split()))
    if verb is None:
        return Intent(raw, None, error=f"verb {item[0]!r} has no household skill")
    obj = item[1] if len(item) > 1 else None
    target = item[2] if len(item) > 2 else None
    return Intent(raw, verb, obj, target, walk=verb != "find")


def detect_vocab(step: Any) -> str | None:
    if isinstance(step, dict):
        if "discrete_action" in step or ("action" in step and "args" in step):
            return "high_pddl"
        if "action_name" in step or "action_id" in step:
            return "eb_alfred_json"
        return None
    if isinstance(step, (list, tuple)):
        return "embodied_brain"
    if not isinstance(step, str):
        return None
    head = step.strip().split(None, 1)[0].lower() if step.strip() else ""
    if head in _PDDL:
        return "high_pddl"
    if _eb_string(step).verb is not None and head in (
        "find",
        "pick",
        "put",
        "open",
        "close",
        "turn",
        "slice",
    ):
        if head == "put" and not step.lower().strip().startswith("put down"):
            return "reinforced"
        return "eb_alfred"
    if head in _REINFORCED:
        return "reinforced"
    return None


_NUM_RE = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s*")


def split_plan(
    plan: Any, vocab: str = "auto", action_map: dict[int, str] | None = None
) -> tuple[list[Any], str | None, str]:
    """A plan (text, list, or parsed JSON) → its raw steps, the vocabulary, and an error."""
    steps: list[Any]
    if isinstance(plan, str):
        text = plan
        if "<actions>" in text.lower():
            acts = extract_actions(text)
            if not acts.ok:
                return [], "embodied_brain", f"<actions> unreadable: {acts.error}"
            steps, found = acts.value, "embodied_brain"
            return steps, found if vocab == "auto" else vocab, ""
        obj = parse_json_object(text, lenient=True) if "{" in text else None
        if obj is not None and obj.ok and isinstance(obj.value.get("executable_plan"), list):
            plan = obj.value["executable_plan"]
        else:
            steps = [_NUM_RE.sub("", ln).strip() for ln in text.splitlines() if _NUM_RE.sub("", ln).strip()]
            plan = steps
    if isinstance(plan, dict) and isinstance(plan.get("executable_plan"), list):
        plan = plan["executable_plan"]
    if not isinstance(plan, list):
        return [], None, f"cannot read a plan from {type(plan).__name__}"
    steps = []
    for s in plan:
        if isinstance(s, dict) and ("action_name" in s or "action_id" in s):
            name = s.get("action_name")
            if not isinstance(name, str) and action_map is not None and isinstance(s.get("action_id"), int):
                name = action_map.get(s["action_id"])
            steps.append(name if isinstance(name, str) else s)
        else:
            steps.append(s)
    if vocab != "auto":
        return steps, vocab, ""
    votes = [detect_vocab(s) for s in steps]
    known = [v for v in votes if v]
    return steps, (max(set(known), key=known.count) if known else None), ""


def to_intent(step: Any, vocab: str | None) -> Intent:
    v = vocab or detect_vocab(step)
    if isinstance(step, dict) and ("discrete_action" in step or "action" in step):
        d = step.get("discrete_action", step)
        return _pddl(str(d.get("action", "")), d.get("args", []), json.dumps(step))
    if v in ("eb_alfred", "eb_alfred_json"):
        return (
            _eb_string(step)
            if isinstance(step, str)
            else Intent(str(step), None, error="not an action string")
        )
    if v == "reinforced":
        return (
            _reinforced_string(step)
            if isinstance(step, str)
            else Intent(str(step), None, error="not an action string")
        )
    if v == "high_pddl":
        if isinstance(step, str):
            parts = step.split()
            return _pddl(parts[0], parts[1:], step) if parts else Intent(step, None, error="empty step")
        return Intent(str(step), None, error="not a high_pddl action")
    if v == "embodied_brain":
        return _eb_brain(step)
    return Intent(str(step)[:80], None, error=f"unrecognised action {str(step)[:60]!r}")


def intent_to_skills(intent: Intent, env: Env) -> tuple[list[Skill], str]:
    """Resolve an intent against the current state; ``([], reason)`` when it cannot be."""
    if intent.verb is None:
        return [], intent.error or "unrecognised action"
    if intent.verb == "noop":
        return [], "noop"
    verb = intent.verb
    if verb == "put":
        tgt = intent.target
        if tgt is None and intent.obj is not None and env.held is not None:
            r = resolve(intent.obj, env)
            # "put x" (Reinforced) names the receptacle; "put down the X" names the object
            if (
                r.target is not None
                and r.target != env.held
                and r.target != env.type_of.get(env.held)
                and props(env.type_of.get(r.target, r.target))["receptacle"]
            ):
                tgt = intent.obj
        if tgt is None:
            return [Skill("put")], ""
        r = resolve(tgt, env)
        if r.target is None:
            return [], r.how
        pre = [Skill("find", r.target)] if intent.walk and not _reachable_type(env, r.target) else []
        return [*pre, Skill("put", r.target)], ""
    if verb in ("clean", "heat", "cool") and intent.obj is None:
        return [Skill(verb)], ""
    r = resolve(intent.obj, env)
    if r.target is None:
        return [], r.how
    t = r.target
    if verb == "toggle":
        ids = [t] if t in env.type_of else [i for i in env.ids_of_type(t)]
        on = any(i in env.on and (env.reachable(i) or i == t) for i in ids)
        verb = "toggle_off" if on else "toggle_on"
    pre = []
    if intent.walk and verb not in ("find", "clean", "heat", "cool") and not _reachable_type(env, t):
        pre = [Skill("find", t)]
    if verb in ("clean", "heat", "cool") and intent.walk:
        station = {"clean": "SinkBasin", "heat": "Microwave", "cool": "Fridge"}[verb]
        if env.at is None or env.type_of[env.spot(env.at)] != station:
            pre = [Skill("find", station)] if env.ids_of_type(station) else []
    return [*pre, Skill(verb, t)], ""


def _reachable_type(env: Env, t: str) -> bool:
    if t in env.type_of:
        return env.reachable(t)
    return any(env.reachable(i) for i in env.ids_of_type(t))


# ---------------------------------------------------------------------------
# the EB-ALFRED action space and rendering skills into a vocabulary
# ---------------------------------------------------------------------------


def action_space(scene: Scene) -> dict[int, str]:
    """EB-ALFRED-style enumerated actions for a scene: every "find a T", then "pick up
    the T" for pickupables, "put down the object in hand", open/close, turn on/off and
    slice where they apply (sliced forms included), types in sorted order. JSON-export it
    as ``--action-map`` for the reinforced_planning rewards."""
    types = sorted(
        {o.type for o in scene.objects}
        | {o.type + "Sliced" for o in scene.objects if props(o.type)["sliceable"]}
    )
    names = [f"find a {t}" for t in types]
    names += [f"pick up the {t}" for t in types if props(t)["pickupable"]]
    names.append("put down the object in hand")
    names += [f"{v} the {t}" for v in ("open", "close") for t in types if props(t)["openable"]]
    names += [f"turn {v} the {t}" for v in ("on", "off") for t in types if props(t)["toggleable"]]
    names += [f"slice the {t}" for t in types if props(t)["sliceable"]]
    return dict(enumerate(names))


def render_plan(skills: Sequence[Skill], vocab: str, scene: Scene) -> list[Any]:
    """Skills → steps of ``vocab`` (replaying them to name put targets). Raises
    ``ValueError`` for a skill the vocabulary cannot express."""
    env = Env(scene, max_steps=10**6, max_invalid=10**6, auto_open=vocab == "reinforced")
    amap = {v: k for k, v in action_space(scene).items()} if vocab == "eb_alfred_json" else {}
    out: list[Any] = []
    for s in skills:
        t = s.target
        held_type = env.type_of[env.held] if env.held else None
        recep = env.type_of[env.last_recep] if s.verb == "put" and s.target is None and env.last_recep else t
        if vocab in ("eb_alfred", "eb_alfred_json"):
            text = {
                "find": f"find a {t}",
                "pickup": f"pick up the {t}",
                "put": "put down the object in hand",
                "open": f"open the {t}",
                "close": f"close the {t}",
                "toggle_on": f"turn on the {t}",
                "toggle_off": f"turn off the {t}",
                "slice": f"slice the {t}",
            }.get(s.verb)
            if text is None:
                raise ValueError(f"{vocab} cannot express {s}")
            out.append(
                {"action_id": amap.get(text, -1), "action_name": text} if vocab == "eb_alfred_json" else text
            )
        elif vocab == "reinforced":
            word = {
                "find": "goto",
                "pickup": "pickup",
                "put": "put",
                "slice": "slice",
                "clean": "clean",
                "heat": "heat",
                "cool": "cool",
                "toggle_on": "toggle",
                "toggle_off": "toggle",
            }.get(s.verb)
            if word is None:
                raise ValueError(f"reinforced vocabulary cannot express {s} (plan with macros=True)")
            arg = recep if s.verb == "put" else (t or held_type)
            out.append(f"{word} {str(arg).lower()}")
        elif vocab == "high_pddl":
            if s.verb == "put":
                out.append(f"PutObject {str(held_type).lower()} {str(recep).lower()}")
            else:
                name = {
                    "find": "GotoLocation",
                    "pickup": "PickupObject",
                    "open": "OpenObject",
                    "close": "CloseObject",
                    "toggle_on": "ToggleObject",
                    "toggle_off": "ToggleObject",
                    "slice": "SliceObject",
                    "clean": "CleanObject",
                    "heat": "HeatObject",
                    "cool": "CoolObject",
                }[s.verb]
                out.append(f"{name} {str(t or held_type).lower()}")
        elif vocab == "embodied_brain":
            if s.verb == "put":
                out.append(["Place", str(held_type), str(recep)])
            else:
                verb = {
                    "find": "Navigate",
                    "pickup": "Pick",
                    "open": "Open",
                    "close": "Close",
                    "toggle_on": "Press",
                    "toggle_off": "Press",
                    "slice": "Cut",
                    "clean": "Wash",
                }.get(s.verb)
                if verb is None:
                    raise ValueError(f"embodied_brain cannot express {s}")
                out.append([verb, str(t or held_type)])
        else:
            raise ValueError(f"unknown vocabulary {vocab!r}; choose one of {VOCABS}")
        res = env.step(Skill(s.verb, s.target) if s.verb != "put" else Skill("put", s.target))
        if not res.ok:
            raise ValueError(f"skill {s} is invalid when replayed: {res.feedback}")
    return out


def format_plan(steps: list[Any], vocab: str) -> Any:
    """Steps as a completion would carry them: ``<actions>[…]</actions>`` for
    EmbodiedBrain, a list for the JSON form, otherwise the list of strings."""
    if vocab == "embodied_brain":
        return f"<actions>{steps!r}</actions>"
    return steps


__all__ = [
    "VOCABS",
    "Intent",
    "Resolution",
    "action_space",
    "base_type",
    "detect_vocab",
    "format_plan",
    "intent_to_skills",
    "render_plan",
    "resolve",
    "split_plan",
    "to_intent",
]
