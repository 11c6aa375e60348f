"""Action vocabularies: plans as text ↔ skills.

This module reads and writes whole plans: :func:`split_plan` (a plan → its raw steps
and vocabulary), :func:`to_intent` / :func:`resolve_intent` (a step → skills in a
state), :func:`parse_plan`, :func:`render_plan` / :func:`format_plan` (skills → a plan
in any vocabulary) and :func:`action_space` (EB-ALFRED's enumerated actions). The
pieces it builds on live by concern, and every public name stays importable from here:

* :mod:`groundrl.sim.vocabularies` — the five built-in vocabularies (``eb_alfred``,
  ``eb_alfred_json``, ``reinforced``, ``embodied_brain``, ``high_pddl``), the
  :class:`Vocabulary` base class and :class:`Intent`;
* :mod:`groundrl.sim.vocab_registry` — registration by name, the
  ``groundrl.vocabularies`` entry points, detection of a step's vocabulary;
* :mod:`groundrl.sim.object_names` — object names → instance ids or types in a scene
  (ids, "it", types, synonyms, sliced forms, fuzzy matches).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from groundrl.sim.catalog import base_type, props
from groundrl.sim.object_names import FUZZY_THRESHOLD, SYNONYMS, Resolution, resolve
from groundrl.sim.skills import Skill
from groundrl.sim.vocab_registry import (
    ENTRY_POINT_GROUP,
    VOCABS,
    VOCABULARIES,
    detect_vocab,
    find_vocab,
    get_vocab,
    in_detect_order,
    opens_containers,
    register_vocabulary,
    unregister_vocabulary,
    vocab_names,
)
from groundrl.sim.vocabularies import (
    EbAlfred,
    EbAlfredJson,
    EmbodiedBrain,
    HighPddl,
    Intent,
    Reinforced,
    Vocabulary,
)
from groundrl.sim.world import Env, Scene

_NUM_RE = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s*")


def _own_format(plan: Any) -> tuple[list[Any], str | None, str] | None:
    """The first registered vocabulary (in ``split_order``) whose own plan format
    ``plan`` is in: its :meth:`Vocabulary.split`; ``None`` when none claims it."""
    for v in sorted(in_detect_order(), key=lambda v: v.split_order):
        got = v.split(plan)
        if got is not None:
            return got
    return None


def _lines(text: str) -> list[str]:
    """One step per non-empty line, list numbering / bullets removed."""
    return [t for ln in text.splitlines() if (t := _NUM_RE.sub("", ln).strip())]


def split_plan(
    plan: Any, vocab: str = "auto", action_map: dict[int, str] | None = None
) -> tuple[list[Any], str | None, str]:
    """A plan (text, list, or parsed JSON) → its raw steps, the vocabulary, and an error.
    A vocabulary's own plan format (``<actions>…``, ``executable_plan`` JSON, a plugin's)
    is read by that vocabulary's :meth:`~Vocabulary.split`; otherwise a list is its steps
    and text is one step per line."""
    if vocab != "auto" and vocab not in VOCABULARIES:
        return [], None, f"unknown vocabulary {vocab!r}; choose one of {vocab_names()}"
    own = _own_format(plan) if isinstance(plan, (str, dict)) else None
    if own is not None:
        plan, found, err = own
        if err or found is not None:
            return plan, found if err or vocab == "auto" else vocab, err
    elif isinstance(plan, str):
        plan = _lines(plan)
    if not isinstance(plan, list):
        return [], None, f"cannot read a plan from {type(plan).__name__}"
    steps = [_step_name(s, action_map) for s in plan]
    if vocab != "auto":
        return steps, vocab, ""
    votes = [detect_vocab(s) for s in steps]
    known = [v for v in votes if v]
    # the most common vocabulary; ties go to the first registered (deterministic)
    names = vocab_names()
    best = max(names, key=lambda v: (known.count(v), -names.index(v))) if known else None
    return steps, best, ""


def _step_name(s: Any, action_map: dict[int, str] | None) -> Any:
    """An ``{action_id, action_name}`` object → its action name (looked up by id in
    ``action_map`` when the name is missing); any other step as it is."""
    if isinstance(s, dict) and ("action_name" in s or "action_id" in s):
        name = s.get("action_name")
        if not isinstance(name, str) and action_map is not None and isinstance(s.get("action_id"), int):
            name = action_map.get(s["action_id"])
        return name if isinstance(name, str) else s
    return s


def to_intent(step: Any, vocab: str | None) -> Intent:
    """One raw step → its intent, read by ``vocab`` (detected when ``None``). A step
    a vocabulary :meth:`~Vocabulary.owns` (an ALFRED action dict: ``high_pddl``) is read
    by it whatever ``vocab`` says."""
    owner = next((v for v in in_detect_order() if v.owns(step)), None)
    voc = owner or find_vocab(vocab or detect_vocab(step))
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
        here = env.spot(env.at)  # None also when the agent's spot is the object in hand
        if here is None or env.type_of[here] != station:
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
    if vocab != "auto" and vocab not in VOCABULARIES:
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
    v = find_vocab(vocab)
    return v.format(steps) if v is not None else steps


__all__ = [
    "ENTRY_POINT_GROUP",
    "SYNONYMS",
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
