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

import itertools
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from groundrl.parse.plans import extract_actions
from groundrl.parse.structured import parse_json_object
from groundrl.sim.catalog import LAMPS, base_type, props
from groundrl.sim.skills import Skill
from groundrl.sim.world import Env, Scene

#: The built-in vocabularies' names (:func:`vocab_names` also lists registered ones).
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
        verb = _REINFORCED[parts[0].lower()]
        if verb == "put":  # "put x" names the receptacle
            return Intent(s, "put", None, parts[1])
        return Intent(s, verb, parts[1])
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


def _head(step: str) -> str:
    return step.strip().split(None, 1)[0].lower() if step.strip() else ""


def _not_a_string(step: Any) -> Intent:
    return Intent(str(step), None, error="not an action string")


def _held_name(env: Env) -> str:
    return base_type(env.type_of[env.held]) if env.held else "nothing"


def _recep_name(s: Skill, env: Env, name: str) -> str:
    """The receptacle a ``put`` goes to: its target, else the receptacle last found."""
    return env.type_of[env.last_recep] if s.verb == "put" and s.target is None and env.last_recep else name


# how each vocabulary writes a skill's verb
_EB = {
    "find": "find a {t}",
    "pickup": "pick up the {t}",
    "put": "put down the object in hand",
    "open": "open the {t}",
    "close": "close the {t}",
    "toggle_on": "turn on the {t}",
    "toggle_off": "turn off the {t}",
    "slice": "slice the {t}",
}
_RR = {
    "find": "goto",
    "pickup": "pickup",
    "put": "put",
    "slice": "slice",
    "clean": "clean",
    "heat": "heat",
    "cool": "cool",
    "toggle_on": "toggle",
    "toggle_off": "toggle",
}
_HP = {
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
}
_EBR = {
    "find": "Navigate",
    "pickup": "Pick",
    "open": "Open",
    "close": "Close",
    "toggle_on": "Press",
    "toggle_off": "Press",
    "slice": "Cut",
    "clean": "Wash",
}


# ---------------------------------------------------------------------------
# the vocabularies as objects: detect / parse / render / format each
# ---------------------------------------------------------------------------


class Vocabulary:
    """An action vocabulary: how one of its steps is recognised (:meth:`detect`), read
    into an :class:`Intent` (:meth:`parse`), written from a skill (:meth:`render`), and
    how a list of steps is carried in a completion (:meth:`format`).

    Subclass it and :func:`register_vocabulary` an instance to add one. Attributes:
    ``name`` (the ``--vocab`` / ``vocab=`` value); ``detect_order`` (lower is asked
    first by :func:`detect_vocab`, for steps two vocabularies could both read);
    ``auto_open`` (the vocabulary has no open / close: the world opens containers on
    put / pick up, and the expert plans with clean / heat / cool macros);
    ``uses_action_ids`` (:meth:`render` needs the scene's enumerated
    :func:`action_space`, passed as ``action_ids``: name → id)."""

    name: str = ""
    detect_order: int = 100
    auto_open: bool = False
    uses_action_ids: bool = False

    def detect(self, step: Any) -> bool:
        """Whether ``step`` (one raw plan step) is written in this vocabulary."""
        return False

    def parse(self, step: Any) -> Intent:
        """One raw step → its intent (``verb=None`` plus ``error`` when unreadable)."""
        raise NotImplementedError

    def render(self, skill: Skill, env: Env, name: str, action_ids: dict[str, int]) -> Any:
        """``skill`` as one step of this vocabulary, naming its object ``name``, in the
        state ``env`` (before the skill runs). Raises ``ValueError`` when the vocabulary
        cannot express the skill."""
        raise ValueError(f"{self.name} cannot express {skill}")

    def format(self, steps: list[Any]) -> Any:
        """Steps as a completion carries them (default: the list itself)."""
        return steps

    def __repr__(self) -> str:
        return f"<vocabulary {self.name}>"


_EB_HEADS = frozenset({"find", "pick", "put", "open", "close", "turn", "slice"})


class EbAlfred(Vocabulary):
    """EB-ALFRED's action strings: "find a Apple", "pick up the Apple", "put down the
    object in hand", "open / close the Fridge", "turn on / off the DeskLamp", "slice the
    Apple"."""

    name = "eb_alfred"
    detect_order = 30

    def detect(self, step: Any) -> bool:
        if not isinstance(step, str):
            return False
        head = _head(step)
        if head not in _EB_HEADS or _eb_string(step).verb is None:
            return False
        return not (head == "put" and not step.lower().strip().startswith("put down"))

    def parse(self, step: Any) -> Intent:
        return _eb_string(step) if isinstance(step, str) else _not_a_string(step)

    def render(self, skill: Skill, env: Env, name: str, action_ids: dict[str, int]) -> Any:
        if skill.verb not in _EB or (skill.verb == "put" and skill.target is not None):
            raise ValueError(f"{self.name} cannot express {skill}")
        return _EB[skill.verb].format(t=name)


class EbAlfredJson(EbAlfred):
    """An EB-ALFRED ``executable_plan``: ``{action_id, action_name}`` objects over the
    scene's enumerated actions (:func:`action_space`); the names read as ``eb_alfred``."""

    name = "eb_alfred_json"
    detect_order = 20
    uses_action_ids = True

    def detect(self, step: Any) -> bool:
        return isinstance(step, dict) and ("action_name" in step or "action_id" in step)

    def render(self, skill: Skill, env: Env, name: str, action_ids: dict[str, int]) -> Any:
        text = super().render(skill, env, name, action_ids)
        return {"action_id": action_ids.get(text, -1), "action_name": text}


class Reinforced(Vocabulary):
    """Reinforced Reasoning's (ALFWorld-style) actions: "goto x", "pickup x", "put x"
    (x the receptacle), "clean / heat / cool x", "slice x", "toggle x"; no open / close."""

    name = "reinforced"
    detect_order = 40
    auto_open = True

    def detect(self, step: Any) -> bool:
        return isinstance(step, str) and _head(step) in _REINFORCED

    def parse(self, step: Any) -> Intent:
        return _reinforced_string(step) if isinstance(step, str) else _not_a_string(step)

    def render(self, skill: Skill, env: Env, name: str, action_ids: dict[str, int]) -> Any:
        if skill.verb not in _RR:
            raise ValueError(f"reinforced vocabulary cannot express {skill} (plan with macros=True)")
        arg = (
            _recep_name(skill, env, name)
            if skill.verb == "put"
            else (name if skill.target else _held_name(env))
        )
        return f"{_RR[skill.verb]} {str(arg).lower()}"


class EmbodiedBrain(Vocabulary):
    """EmbodiedBrain's ``<actions>[['Find','Knife'], ['Pick','Knife'], ['Cut','Bread'],
    ['Place','Knife','Counter'], …]</actions>``; a verb acting on an object not at hand
    walks there first."""

    name = "embodied_brain"
    detect_order = 25

    def detect(self, step: Any) -> bool:
        return isinstance(step, (list, tuple))

    def parse(self, step: Any) -> Intent:
        return _eb_brain(step)

    def render(self, skill: Skill, env: Env, name: str, action_ids: dict[str, int]) -> Any:
        if skill.verb == "put":
            return ["Place", _held_name(env), str(_recep_name(skill, env, name))]
        if skill.verb not in _EBR:
            raise ValueError(f"embodied_brain cannot express {skill}")
        return [_EBR[skill.verb], str(name if skill.target else _held_name(env))]

    def format(self, steps: list[Any]) -> Any:
        return f"<actions>{steps!r}</actions>"


class HighPddl(Vocabulary):
    """ALFRED's high-level PDDL actions: GotoLocation / PickupObject / PutObject /
    OpenObject / CloseObject / ToggleObject / SliceObject / CleanObject / HeatObject /
    CoolObject, as strings ("PickupObject apple") or ALFRED's ``discrete_action`` dicts."""

    name = "high_pddl"
    detect_order = 10

    @staticmethod
    def is_action_dict(step: Any) -> bool:
        """An ALFRED action dict (read as ``high_pddl`` whatever the plan's vocabulary)."""
        return isinstance(step, dict) and ("discrete_action" in step or "action" in step)

    def detect(self, step: Any) -> bool:
        if isinstance(step, dict):
            return "discrete_action" in step or ("action" in step and "args" in step)
        return isinstance(step, str) and _head(step) in _PDDL

    def parse(self, step: Any) -> Intent:
        if self.is_action_dict(step):
            d = step.get("discrete_action", step)
            return _pddl(str(d.get("action", "")), d.get("args", []), json.dumps(step))
        if isinstance(step, str):
            parts = step.split()
            return _pddl(parts[0], parts[1:], step) if parts else Intent(step, None, error="empty step")
        return Intent(str(step), None, error="not a high_pddl action")

    def render(self, skill: Skill, env: Env, name: str, action_ids: dict[str, int]) -> Any:
        if skill.verb == "put":
            return f"PutObject {_held_name(env).lower()} {str(_recep_name(skill, env, name)).lower()}"
        return f"{_HP[skill.verb]} {str(name if skill.target else _held_name(env)).lower()}"


log = logging.getLogger("groundrl.sim")
_REGISTRY: dict[str, Vocabulary] = {}


def register_vocabulary(vocab: Vocabulary, *, replace: bool = False) -> Vocabulary:
    """Add ``vocab`` to the registry under ``vocab.name`` (``replace=True`` to
    override one); returns it. Every simulator surface (environment, ``execute``,
    ``sim_reward``, the evaluation loop, ``render_plan``) looks vocabularies up here."""
    if not isinstance(vocab, Vocabulary) or not vocab.name:
        raise TypeError("register_vocabulary takes a named Vocabulary instance")
    if vocab.name == "auto":
        raise ValueError("'auto' is reserved: it means 'detect the vocabulary'")
    if vocab.name in _REGISTRY and not replace:
        raise ValueError(f"vocabulary {vocab.name!r} is already registered (pass replace=True)")
    _REGISTRY[vocab.name] = vocab
    _DETECT_ORDER[:] = sorted(_REGISTRY.values(), key=lambda v: v.detect_order)
    return vocab


_DETECT_ORDER: list[Vocabulary] = []


def unregister_vocabulary(name: str) -> None:
    """Remove a registered vocabulary (a built-in cannot be removed)."""
    if name in VOCABS:
        raise ValueError(f"{name!r} is built in")
    _REGISTRY.pop(name, None)
    _DETECT_ORDER[:] = sorted(_REGISTRY.values(), key=lambda v: v.detect_order)


ENTRY_POINT_GROUP = "groundrl.vocabularies"
_plugins_loaded = False


def _registry() -> dict[str, Vocabulary]:
    """The registry, with the vocabularies of installed packages added on first use: each
    entry point of the ``groundrl.vocabularies`` group names a :class:`Vocabulary` object
    (registered here) or a module that registers its own on import."""
    global _plugins_loaded
    if not _plugins_loaded:
        _plugins_loaded = True
        from importlib.metadata import entry_points

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            try:
                obj = ep.load()
            except Exception as e:  # a broken plugin must not break the built-in vocabularies
                log.warning("vocabulary plugin %s failed to load: %s", ep.name, e)
                continue
            if isinstance(obj, Vocabulary) and obj.name not in _REGISTRY:
                register_vocabulary(obj)
    return _REGISTRY


def vocab_names() -> tuple[str, ...]:
    """Every registered vocabulary's name (the built-ins first, in :data:`VOCABS` order)."""
    return tuple(_registry())


def get_vocab(name: str) -> Vocabulary:
    """The registered vocabulary called ``name``; ``ValueError`` naming the choices."""
    try:
        return _registry()[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown vocabulary {name!r}; choose one of {vocab_names()}") from None


def opens_containers(vocab: str | None) -> bool:
    """Whether plans in ``vocab`` run with containers opening themselves (a vocabulary
    without open / close); ``False`` for ``None`` or an unknown name."""
    v = _registry().get(vocab) if isinstance(vocab, str) else None
    return bool(v and v.auto_open)


for _v in (EbAlfred(), EbAlfredJson(), Reinforced(), EmbodiedBrain(), HighPddl()):
    register_vocabulary(_v)
del _v


def detect_vocab(step: Any) -> str | None:
    """The vocabulary one raw step is written in (registered vocabularies asked in
    ``detect_order``), or ``None``."""
    _registry()  # plugins join the detection order
    for v in _DETECT_ORDER:
        if v.detect(step):
            return v.name
    return None


_NUM_RE = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s*")
_FLAT_OBJ_RE = re.compile(r"\{[^{}]{0,400}\}")


def _action_objects(text: str) -> list[dict[str, Any]]:
    """Every flat ``{…}`` in ``text`` that decodes to an object with ``action_name`` or
    ``action_id`` (bounded: at most 1,000)."""
    out = []
    for m in itertools.islice(_FLAT_OBJ_RE.finditer(text), 1000):
        frag = m.group(0)
        if "action_" not in frag:
            continue
        obj = parse_json_object(frag)
        if obj.ok and ("action_name" in obj.value or "action_id" in obj.value):
            out.append(obj.value)
    return out


def split_plan(
    plan: Any, vocab: str = "auto", action_map: dict[int, str] | None = None
) -> tuple[list[Any], str | None, str]:
    """A plan (text, list, or parsed JSON) → its raw steps, the vocabulary, and an error."""
    if vocab != "auto" and vocab not in _registry():
        return [], None, f"unknown vocabulary {vocab!r}; choose one of {vocab_names()}"
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
        elif "{" in text and (
            items := _action_objects(text)
        ):  # not one JSON object (EB-ALFRED's own examples miss commas): its action objects
            plan = items
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
    # the most common vocabulary; ties go to the first registered (deterministic)
    names = vocab_names()
    best = max(names, key=lambda v: (known.count(v), -names.index(v))) if known else None
    return steps, best, ""


def to_intent(step: Any, vocab: str | None) -> Intent:
    """One raw step → its intent, read by ``vocab`` (detected when ``None``). An ALFRED
    action dict is read as ``high_pddl`` whatever ``vocab`` says."""
    if HighPddl.is_action_dict(step):
        return _registry()["high_pddl"].parse(step)
    v = vocab or detect_vocab(step)
    voc = _registry().get(v) if isinstance(v, str) else None
    if voc is None:
        return Intent(str(step)[:80], None, error=f"unrecognised action {str(step)[:60]!r}")
    return voc.parse(step)


def intent_to_skills(intent: Intent, env: Env) -> tuple[list[Skill], str]:
    """Resolve an intent against the current state: ``(skills, "")``, ``([], "noop")``
    for a no-op, or ``([], reason)`` when it cannot be resolved."""
    skills, why, _ = resolve_intent(intent, env)
    return skills, why


def resolve_intent(intent: Intent, env: Env) -> tuple[list[Skill], str, str]:
    """Like :func:`intent_to_skills`, plus how the object name was resolved."""
    if intent.verb is None:
        return [], intent.error or "unrecognised action", ""
    if intent.verb == "noop":
        return [], "noop", ""
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
            return [Skill("put")], "", "the receptacle most recently found"
        r = resolve(tgt, env)
        if r.target is None:
            return [], r.how, ""
        pre = [Skill("find", r.target)] if intent.walk and not _reachable_type(env, r.target) else []
        return [*pre, Skill("put", r.target)], "", r.how
    if verb in ("clean", "heat", "cool") and intent.obj is None:
        return [Skill(verb)], "", "the object in hand"
    r = resolve(intent.obj, env, prefer_sliced=verb != "slice")
    if r.target is None:
        return [], r.how, ""
    t = r.target
    if verb == "toggle":
        ids = [t] if t in env.type_of else env.ids_of_type(t)
        on = any(i in env.on and (env.reachable(i) or i == t) for i in ids)
        verb = "toggle_off" if on else "toggle_on"
    pre = []
    if intent.walk and verb not in ("find", "clean", "heat", "cool") and not _reachable_type(env, t):
        pre = [Skill("find", t)]
    if verb in ("clean", "heat", "cool") and intent.walk:
        station = {"clean": "SinkBasin", "heat": "Microwave", "cool": "Fridge"}[verb]
        if env.at is None or env.type_of[env.spot(env.at)] != station:
            pre = [Skill("find", station)] if env.ids_of_type(station) else []
    return [*pre, Skill(verb, t)], "", r.how


@dataclass(frozen=True)
class ParsedStep:
    """One step of a plan: the raw step, the skill it maps to (``None`` when it cannot
    be read or resolved), and ``reason`` — how the object was resolved, or why the step
    failed. ``pre`` holds implied steps run first (EmbodiedBrain's walk to the object)."""

    raw: Any
    skill: Skill | None
    reason: str
    pre: tuple[Skill, ...] = ()
    vocab: str | None = None

    @property
    def ok(self) -> bool:
        return self.skill is not None


def parse_plan(
    plan: Any, env: Env | Scene, vocab: str = "auto", action_map: dict[int, str] | None = None
) -> list[ParsedStep]:
    """Read a plan (text, list, ``<actions>`` block or ``executable_plan`` JSON) into
    skills, resolving object names against ``env`` (a live env or a scene's start).
    Context ("it", "put down", sliced names) is bound by replaying the steps on a copy,
    so ``env`` is not changed; steps that fail there still parse. Never raises: an
    unreadable plan gives one step with ``skill=None`` and the reason."""
    try:
        sim = _replay_env(env)
    except Exception as e:  # bad state from a caller: report, never raise
        return [ParsedStep(_short(plan), None, f"cannot read the state: {type(e).__name__}")]
    if vocab != "auto" and vocab not in _registry():
        return [
            ParsedStep(_short(plan), None, f"unknown vocabulary {vocab!r}; choose one of {vocab_names()}")
        ]
    try:
        steps, found, err = split_plan(plan, vocab, action_map)
    except Exception as e:  # pragma: no cover - split_plan is total; belt and braces
        steps, found, err = [], None, f"{type(e).__name__}"
    if err:
        return [ParsedStep(_short(plan), None, err, vocab=found)]
    out = []
    for raw in steps:
        intent = to_intent(raw, found)
        skills, why, how = resolve_intent(intent, sim)
        if why == "noop":
            continue
        if not skills:
            out.append(ParsedStep(raw, None, why, vocab=found))
            continue
        out.append(ParsedStep(raw, skills[-1], how, tuple(skills[:-1]), found))
        for sk in skills:
            sim.step(sk)
    return out


def _replay_env(env: Env | Scene) -> Env:
    sim = env.copy() if isinstance(env, Env) else Env(env)
    sim.max_steps = sim.max_invalid = 10**9
    sim.steps = sim.invalid_steps = 0
    sim.done, sim.goal = False, None
    return sim


def _short(x: Any) -> str:
    return (x if isinstance(x, str) else repr(x))[:200]


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
    slice where they apply (sliced forms included), types in sorted order, then "find a
    <id>" for every instance of a type the scene holds several of. JSON-export it
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
    # a type with several instances: "find a Cabinet_2" goes to that one (appended, so
    # the ids above do not depend on how many instances a scene has)
    count: dict[str, int] = {}
    for o in scene.objects:
        count[o.type] = count.get(o.type, 0) + 1
    names += [f"find a {o.id}" for o in sorted(scene.objects, key=lambda o: o.id) if count[o.type] > 1]
    return dict(enumerate(names))


def _replayed(env: Env, step: Any, vocab: str) -> Env | None:
    """The state after running ``step`` through the vocabulary, or ``None`` if it fails."""
    e = env.copy()
    raw = step["action_name"] if isinstance(step, dict) and "action_name" in step else step
    skills, _, _ = resolve_intent(to_intent(raw, vocab), e)
    if not skills or not all(e.step(k).ok for k in skills):
        return None
    return e


def _same(a: Env, b: Env) -> bool:
    return (a.held, a.at, a.last_recep, a.parent, a.opened, a.on, a.sliced, a.clean, a.hot, a.cool) == (
        b.held, b.at, b.last_recep, b.parent, b.opened, b.on, b.sliced, b.clean, b.hot, b.cool,
    )  # fmt: skip


def render_plan(skills: Sequence[Skill], vocab: str, scene: Scene | Env) -> list[Any]:
    """Skills → steps of ``vocab``, from ``scene``'s start (or a live env's state).

    Each step is replayed through the vocabulary's own parser and resolver and must
    reach the same state as the skill, so a rendered plan executes exactly like the
    skills. Sliced objects are named by their base type ("pick up the Apple"), as
    EB-ALFRED does, wherever that resolves to the same object. Raises ``ValueError``
    for a skill the vocabulary cannot express or that is invalid when replayed."""
    voc = get_vocab(vocab)
    env = _replay_env(scene)
    env.auto_open = env.auto_open or voc.auto_open
    amap = {v: k for k, v in action_space(env.scene).items()} if voc.uses_action_ids else {}
    out: list[Any] = []
    for s in skills:
        t = s.target or ""
        voc.render(s, env, t, amap)  # raises if the vocabulary cannot express it
        direct = env.copy()
        res = direct.step(s)
        if not res.ok:
            raise ValueError(f"skill {s} is invalid when replayed: {res.feedback}")
        names = [base_type(t), t] if base_type(t) != t else [t]
        for name in names:
            step = voc.render(s, env, name, amap)
            e = _replayed(env, step, vocab)
            if e is not None and _same(e, direct):
                break
        else:
            raise ValueError(f"{vocab} cannot express {s} here: {step!r} does the wrong thing")
        out.append(step)
        env = direct
    return out


def format_plan(steps: list[Any], vocab: str) -> Any:
    """Steps as a completion would carry them: ``<actions>[…]</actions>`` for
    EmbodiedBrain, a list for the JSON form, otherwise the list of strings."""
    v = _registry().get(vocab)
    return v.format(steps) if v is not None else steps


__all__ = [
    "VOCABS",
    "FUZZY_THRESHOLD",
    "EbAlfred",
    "EbAlfredJson",
    "EmbodiedBrain",
    "HighPddl",
    "Intent",
    "ParsedStep",
    "Reinforced",
    "Resolution",
    "Vocabulary",
    "action_space",
    "base_type",
    "detect_vocab",
    "format_plan",
    "get_vocab",
    "opens_containers",
    "register_vocabulary",
    "vocab_names",
    "intent_to_skills",
    "parse_plan",
    "render_plan",
    "resolve",
    "resolve_intent",
    "split_plan",
    "to_intent",
    "unregister_vocabulary",
]
