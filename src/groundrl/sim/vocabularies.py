"""The built-in action vocabularies as objects: how each recognises a step
(``detect``), reads it into an :class:`Intent` (``parse``) and writes a skill
(``render``); :class:`Vocabulary` is the base class a new one subclasses. The registry
that makes them reachable by name is :mod:`groundrl.sim.vocab_registry`.

* ``eb_alfred`` — "find a Apple", "pick up the Apple", "put down the object in hand",
  "open the Fridge", "close the Fridge", "turn on the DeskLamp", "turn off …",
  "slice the Apple";
* ``eb_alfred_json`` — an EB-ALFRED ``executable_plan`` of ``{action_id, action_name}``
  over the scene's enumerated action list (:func:`groundrl.sim.vocab.action_space`);
* ``reinforced`` — "goto x", "pickup x", "put x", "clean x", "heat x", "cool x",
  "slice x", "toggle x" (ALFWorld-style: no open/close; put / pick up open containers);
* ``embodied_brain`` — ``<actions>[['Find','Knife'], ['Pick','Knife'], ['Cut','Bread'],
  ['Place','Knife','Counter'], …]``; a verb acting on an object not at hand walks
  there first (their plans omit navigation), which costs a step;
* ``high_pddl`` — ALFRED's GotoLocation / PickupObject / PutObject / OpenObject /
  CloseObject / ToggleObject / SliceObject / CleanObject / HeatObject / CoolObject.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from groundrl.parse.plans import extract_actions
from groundrl.parse.structured import parse_json_object
from groundrl.sim.catalog import base_type
from groundrl.sim.skills import Skill
from groundrl.sim.world import Env

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


_FLAT_OBJ_RE = re.compile(r"\{[^{}]{0,400}\}")


def _action_objects(text: str) -> list[dict[str, object]]:
    """Every flat ``{…}`` in ``text`` that decodes to an object with ``action_name`` or
    ``action_id`` (bounded: at most 1,000); the steps' resolver reads inside them."""
    out: list[dict[str, object]] = []
    for m in itertools.islice(_FLAT_OBJ_RE.finditer(text), 1000):
        frag = m.group(0)
        if "action_" not in frag:
            continue
        obj = parse_json_object(frag)
        if obj.ok and ("action_name" in obj.value or "action_id" in obj.value):
            out.append(obj.value)
    return out


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
    :func:`action_space`, passed as ``action_ids``: name → id); ``split_order`` (lower
    is asked first by :meth:`split`, for a completion two plan formats could both read)."""

    name: str = ""
    detect_order: int = 100
    split_order: int = 100
    auto_open: bool = False
    uses_action_ids: bool = False

    def split(self, plan: Any) -> tuple[list[Any], str | None, str] | None:
        """A whole plan (completion text, or already-parsed JSON) in this vocabulary's
        own plan format → ``(raw steps, vocabulary name or None to detect it from the
        steps, error)``; ``None`` when ``plan`` is not in its format (default: no format
        of its own; the generic readers — a list, one step per line — apply). Total: a
        plan in its format it cannot read is an error, never an exception."""
        return None

    def owns(self, step: Any) -> bool:
        """Whether ``step`` is a form only this vocabulary writes, so it is read here
        whatever vocabulary the plan declares (default: none)."""
        return False

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

    split_order = 20

    def detect(self, step: Any) -> bool:
        return isinstance(step, dict) and ("action_name" in step or "action_id" in step)

    def split(self, plan: Any) -> tuple[list[Any], str | None, str] | None:
        """``{"executable_plan": [...]}`` (text or parsed), or, in text that is not one
        JSON object (EB-ALFRED's own examples miss commas), its flat action objects; the
        steps' vocabulary is detected (Reinforced Reasoning writes the same JSON)."""
        if isinstance(plan, dict) and isinstance(plan.get("executable_plan"), list):
            return plan["executable_plan"], None, ""
        if not isinstance(plan, str) or "{" not in plan:
            return None
        obj = parse_json_object(plan, lenient=True)
        if obj.ok and isinstance(obj.value.get("executable_plan"), list):
            return obj.value["executable_plan"], None, ""
        items = _action_objects(plan)
        return (items, None, "") if items else None

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
    split_order = 10  # an <actions> block wins over JSON elsewhere in the completion

    def split(self, plan: Any) -> tuple[list[Any], str | None, str] | None:
        if not isinstance(plan, str) or "<actions>" not in plan.lower():
            return None
        acts = extract_actions(plan)
        if not acts.ok:
            return [], self.name, f"<actions> unreadable: {acts.error}"
        return acts.value, self.name, ""

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

    def owns(self, step: Any) -> bool:
        return self.is_action_dict(step)

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


__all__ = ["EbAlfred", "EbAlfredJson", "EmbodiedBrain", "HighPddl", "Intent", "Reinforced", "Vocabulary"]
