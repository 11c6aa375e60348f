"""Planning rewards: Reinforced Reasoning JSON plans, the EmbodiedBrain format reward,
and EmbodiedBrain's planning precision / recall / F1.

All reward functions are total: any input gives a :class:`~groundrl.types.Score` with a
reason, never an exception.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

import numpy as np

from groundrl.parse.plans import (
    _NORM_CACHE,
    extract_actions,
    normalize_action_name,
    plan_lines,
    reinforced_plan_digest,
)
from groundrl.parse.structured import parse_literal_list
from groundrl.parse.tags import _close_re, _open_re
from groundrl.types import Score, finite_score

# ---------------------------------------------------------------------------
# Reinforced Reasoning for Embodied Planning
# ---------------------------------------------------------------------------


class ActionMap(dict):
    """A read-only ``{id: name}`` action map (what :func:`load_action_map` returns).

    A ``dict`` in every way that reads, plus ``pairs``: the set of ``(id,
    normalised name)`` it accepts, computed once, so :func:`reinforced_format` matches a
    step with one set lookup instead of a map lookup and a normalisation per step (the
    map term was a sixth of the reward's cost; issue 18). Being read-only is what makes
    that precomputation safe; a plain ``dict`` is still accepted everywhere and is
    matched step by step.
    """

    __slots__ = ("pairs",)

    def __init__(self, items: Mapping[int, str]) -> None:
        dict.__init__(self, items)
        self.pairs = frozenset((k, nn) for k, v in dict.items(self) if (nn := normalize_action_name(v)))

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("an ActionMap is read-only: build a new one with load_action_map({...})")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = __ior__ = _read_only

    def __reduce__(self) -> tuple[Any, ...]:  # pickling would otherwise call __setitem__
        return (ActionMap, (dict(self),))


def load_action_map(path_or_mapping: Any) -> ActionMap:
    """An ``{id: name}`` action map from a JSON file path or a mapping; keys become ints.
    Returns a read-only :class:`ActionMap`.

    Raises ``FileNotFoundError`` / ``ValueError`` with a message saying what is wrong.
    """
    if isinstance(path_or_mapping, Mapping):
        raw = path_or_mapping
        where = "action map"
    elif isinstance(path_or_mapping, (str, os.PathLike)):
        where = str(path_or_mapping)
        if not os.path.isfile(where):
            raise FileNotFoundError(f"action map file not found: {where}")
        try:
            with open(where, encoding="utf-8") as f:
                raw = json.load(f)
        except ValueError as e:
            raise ValueError(f"action map {where} is not valid JSON: {e}") from e
        if not isinstance(raw, dict):
            raise ValueError(
                f"action map {where} must be a JSON object {{id: name}}, got {type(raw).__name__}"
            )
    else:
        raise ValueError(f"action map must be a path or a mapping, got {type(path_or_mapping).__name__}")
    out: dict[int, str] = {}
    for k, v in raw.items():
        try:
            key = int(k)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{where}: key {k!r} is not an integer action id") from e
        if not isinstance(v, str):
            raise ValueError(f"{where}: action {k!r} must map to a string name, got {type(v).__name__}")
        out[key] = v
    return ActionMap(out)


def reinforced_format(
    completion: Any,
    action_map: Mapping[int, str] | Mapping[str, str] | None = None,
    lenient: bool = False,
) -> Score:
    """Format reward of Reinforced Reasoning for Embodied Planning (max 0.5).

    ``format = 0.125·[all four keys present] + 0.125·(valid steps / len(plan))
    + 0.25·(steps whose (action_id, action_name) is in the action map / len(plan))``

    The keys are ``reasoning_and_reflection, visual_state_description, language_plan,
    executable_plan``. A valid step is a dict with an ``int`` (not ``bool``)
    ``action_id`` and a ``str`` ``action_name``; only a valid step can match the map, and
    names are compared case-insensitively with whitespace collapsed. An empty or
    non-list ``executable_plan`` gives both step terms 0. The completion must be one JSON
    object (strict ``json.loads``; ``lenient=True`` also accepts a fenced block or an
    object in prose); unparseable → 0 with the reason.

    Our choices where the paper is silent: with no action map the map term is 0 and the
    reason says so (the maximum is then 0.25). ``action_map`` is best built with
    :func:`load_action_map` (int keys); a map with the ids as decimal strings (straight
    from ``json.load``) is also looked up correctly.
    """
    error, missing, n, aids, names = reinforced_plan_digest(completion, lenient)
    if error is not None:
        return Score("format", 0.0, error)
    keys = 0.0 if missing else 0.125
    reasons = ["missing key(s): " + ", ".join(missing)] if missing else []
    if n <= 0:
        reasons.append("executable_plan is empty" if n == 0 else "executable_plan is not a list")
        return Score("format", keys, "; ".join(reasons))
    n_valid = n - aids.count(None)
    matched = 0
    if action_map.__class__ is ActionMap:  # int ids, str names: one set lookup per step
        matched = sum(map(action_map.pairs.__contains__, zip(aids, names, strict=False)))
    elif action_map is not None:
        # a valid step matches when its normalised name is non-empty and equals the map's
        lookup = cast("Mapping[int | str, str]", action_map)  # int ids, or decimal strings from json
        get_name, norm, cget = lookup.get, normalize_action_name, _NORM_CACHE.get
        for aid, nn in zip(aids, names, strict=False):  # same length by construction
            if aid is not None and nn:
                ref = get_name(aid)
                if ref is None:  # a map read straight from JSON has string keys
                    ref = get_name(str(aid))
                if ref.__class__ is str:
                    if nn == (cget(ref) or norm(ref)):
                        matched += 1
                elif isinstance(ref, str) and nn == norm(ref):
                    matched += 1
    valid_term = 0.125 * n_valid / n
    if action_map is None:
        reasons.append("no action map: map term 0")
        map_term = 0.0
    else:
        map_term = 0.25 * matched / n
        if matched < n:
            reasons.append(f"{matched}/{n} steps match the action map")
    if n_valid < n:
        reasons.append(f"{n_valid}/{n} steps valid")
    return finite_score("format", keys + valid_term + map_term, "; ".join(reasons) if reasons else "")


def _gold_names_uncached(gold: Any) -> tuple[str, ...] | None:
    if isinstance(gold, str):
        parsed = parse_literal_list(gold)
        gold = parsed.value if parsed.ok else None
    if isinstance(gold, tuple):
        gold = list(gold)
    if not isinstance(gold, list):
        return None
    return tuple(normalize_action_name(g) if isinstance(g, str) else "\x00" for g in gold)


# A gold label is shared by every completion of its prompt (a GRPO group): parse each
# distinct label string once. Labels longer than this are parsed uncached.
_GOLD_CACHE_MAX_CHARS = 32_768


@lru_cache(maxsize=4096)
def _gold_names_cached(gold: str) -> tuple[str, ...] | None:
    return _gold_names_uncached(gold)


def reinforced_accuracy(completion: Any, gold: Any, lenient: bool = False) -> Score:
    """Prefix accuracy of Reinforced Reasoning for Embodied Planning (max 1).

    ``r = c(c+1) / (T(T+1))`` with ``c`` the length of the exact matching prefix of the
    predicted ``executable_plan`` names against the gold names and ``T = len(gold)``; if
    ``T == 1`` and more than one step was predicted, ``r -= 0.25`` (the paper's
    single-step penalty — so ``r`` is -0.25 when the one step is wrong and extra steps
    follow, and 0.75 when it is right). Names are compared case-insensitively with
    whitespace collapsed; a step that is not a dict with a string ``action_name`` is a
    mismatch at its position. ``gold`` is a list of names or its Python-literal string.
    Unparseable completion or empty / unusable gold → 0 with a reason. The completion is
    read first, as in the released code: an unparseable one is 0 with its own reason
    before the gold is parsed (a group's broken completions cost no gold parse).
    """
    error, _, n, _, pred = reinforced_plan_digest(completion, lenient)
    if error is not None:
        return Score("accuracy", 0.0, error)
    if type(gold) is str and len(gold) <= _GOLD_CACHE_MAX_CHARS:
        names = _gold_names_cached(gold)
    else:
        names = _gold_names_uncached(gold)
    if names is None:
        return Score("accuracy", 0.0, "gold is not a list of action names")
    if not names:
        return Score("accuracy", 0.0, "empty gold plan")
    if n < 0:
        return Score("accuracy", 0.0, "executable_plan is not a list")
    t = len(names)
    if pred[:t] == names:  # the whole gold is a prefix: one C-level comparison
        c = t
    else:
        c = 0
        for nn, g in zip(pred, names, strict=False):
            if nn != g:  # None (not a dict / not a str name) never equals a gold name
                break
            c += 1
    r = c * (c + 1) / (t * (t + 1))
    reason = "" if c == t else f"prefix {c}/{t}"
    if c == t and n > t > 1:  # full marks, and the reader should see why the extra steps cost nothing
        reason = f"whole gold plan matched ({t}/{t}); the {n - t} step(s) after it are not scored (prefix accuracy)"
    if t == 1 and n > 1:
        r -= 0.25
        reason = (reason + "; " if reason else "") + f"single-step gold, {n} steps predicted: -0.25"
    return finite_score("accuracy", r, reason)


# ---------------------------------------------------------------------------
# EmbodiedBrain format reward
# ---------------------------------------------------------------------------

DEFAULT_ATOMIC_ACTIONS: frozenset[str] = frozenset(
    [
        "HandShake", "Clap", "Wave", "Bow", "Dance", "Like", "Give a thumbs-up", "Stretch", "HandOver", "Catch",
        "Screw", "Unscrew", "Peel", "Stack", "Flip", "Heart sign", "Make a heart with hands", "Tear", "Pinch",
        "Search", "Scoop", "Cut", "Chop", "Sweep", "Stir", "Throw", "Slide", "Drag", "Shake", "Hammer", "Spread",
        "Pour", "Navigate", "Point", "Pick", "Place", "Pick and Place", "Fold", "UnFold", "Press", "Open", "Close",
        "Pull", "Push", "Insert", "Grasp and Release", "Grasp", "Release", "Lift", "Turn", "Twist", "Wash", "Rinse",
        "Beat", "Hang", "Follow", "Rotate in place",
    ]
)  # fmt: skip

_PLAN_TYPES = frozenset({"Navigate", "Manipulate"})


def _response_ok(text: str) -> bool:
    m = _open_re("response").search(text)
    return m is not None and _close_re("response").search(text, m.end()) is not None


def _action_item_score(item: Any, verbs: frozenset[str]) -> float:
    if not isinstance(item, (list, tuple)) or not item:
        return 0.0
    verb = item[0]
    if not isinstance(verb, str) or verb not in verbs:
        return 0.0
    return 1.0 if len(item) > 1 else 0.5


def embodied_format(
    completion: Any, atomic_actions: frozenset[str] | Sequence[str] = DEFAULT_ATOMIC_ACTIONS
) -> Score:
    """EmbodiedBrain's rule format reward:
    ``0.2·response_ok + 0.3·plan_types + 0.5·action_validity``.

    * ``response_ok``: a ``<response>`` occurs before a ``</response>`` (case-insensitive);
    * ``plan_types``: fraction of numbered lines ``\\d+\\.\\s*\\[(\\w+)\\]`` inside the first
      ``<plans>…</plans>`` whose type is exactly ``Navigate`` or ``Manipulate`` (no such
      lines or no tags → 0);
    * ``action_validity``: mean over the ``<actions>`` list (whitespace collapsed,
      ``ast.literal_eval``) of 1 for a non-empty list whose verb is in the atomic set and
      has an object, 0.5 for a valid verb with no object, else 0 (unparseable/empty → 0);
    * if both the plan-line count and the action count are > 0 and differ, the plan and
      action parts are halved.

    Verbs match the atomic set exactly (case-sensitive, as in the released code), so
    ``'pick'`` or ``'Find'`` score 0. Passing a single string as ``atomic_actions`` is a
    configuration error (``ValueError``).

    **Tuples differ from the released code** (our choice: the paper calls each action "a
    binary or ternary tuple" [EmbodiedBrain §3.1]): an item written ``('Pick', 'Apple')``
    scores like ``['Pick', 'Apple']``, and a top-level tuple (``(['Pick', 'Apple'],)``, or
    items with no outer brackets) is read as the list of its items. The released
    ``PlanningActionSetORM`` scores a tuple item 0 (it still counts in the mean) and a
    top-level tuple as no actions (action part 0, count 0). tests/test_released_differences.py
    shows both sides.
    """
    if isinstance(atomic_actions, str):
        raise ValueError("atomic_actions must be a collection of verbs, not one string")
    if not isinstance(completion, str):
        return Score("format", 0.0, f"completion is {type(completion).__name__}, not text")
    verbs = atomic_actions if isinstance(atomic_actions, frozenset) else frozenset(atomic_actions)
    response = 1.0 if _response_ok(completion) else 0.0
    types = plan_lines(completion) or []
    n_lines = len(types)
    plan = sum(1 for t in types if t in _PLAN_TYPES) / n_lines if n_lines else 0.0
    acts = extract_actions(completion)
    items = acts.value if acts.ok else []
    action = sum(_action_item_score(it, verbs) for it in items) / len(items) if items else 0.0
    halved = n_lines > 0 and len(items) > 0 and n_lines != len(items)
    if halved:
        plan, action = plan / 2, action / 2
    total = 0.2 * response + 0.3 * plan + 0.5 * action
    reason = f"response={response:g} plan_types={plan:.3g} action_validity={action:.3g}"
    if halved:
        reason += f" (halved: {n_lines} plan lines vs {len(items)} actions)"
    if not acts.ok:
        reason += f"; actions: {acts.error}"
    return Score("format", total, reason)


# ---------------------------------------------------------------------------
# EmbodiedBrain planning precision / recall / F1
# ---------------------------------------------------------------------------

DEFAULT_VERB_SYNONYMS: dict[str, str] = {
    "pick up": "pick",
    "pickup": "pick",
    "grasp": "pick",
    "take": "pick",
    "pick and place": "place",
    "put": "place",
    "put down": "place",
    "catch": "handover",
    "hand over": "handover",
    "give": "handover",
    "slide": "drag",
    "turn": "twist",
    "rotate": "twist",
    "chop": "cut",
    "slice": "cut",
    "rinse": "wash",
    "clean": "wash",
    # from the released EmbodiedBrain evaluation (eval_key_action_canonical_soft.py)
    "give a thumbs-up": "like",
    "make a heart with hands": "heart sign",
}
LOCOMOTION_VERBS: frozenset[str] = frozenset(
    {"find", "search", "navigate", "goto", "go to", "move to", "walk"}
)

Action = tuple[str, ...]
Matcher = Callable[[Action, Action], bool]


def _norm_object(s: str) -> str:
    key = s
    got = _OBJ_CACHE.get(key) if type(key) is str else None
    if got is not None:
        return got
    s = normalize_action_name(s)
    for article in ("the ", "a ", "an "):
        if s.startswith(article):
            s = s[len(article) :]
    if type(key) is str and len(key) <= 256:  # object names repeat: keep a bounded dict
        if len(_OBJ_CACHE) >= 16_384:
            _OBJ_CACHE.clear()
        _OBJ_CACHE[key] = s
    return s


_OBJ_CACHE: dict[str, str] = {}
_norm_object.cache_clear = _OBJ_CACHE.clear  # type: ignore[attr-defined]  # lru_cache's API on a plain function


def _canonical(items: Any, synonyms: Mapping[str, str] | None) -> tuple[list[Action], int]:
    """Canonical actions and the number of malformed (non-locomotion) items."""
    syn = DEFAULT_VERB_SYNONYMS if synonyms is None else synonyms
    out: list[Action] = []
    bad = 0
    for it in items if isinstance(items, list) else []:
        if not isinstance(it, (list, tuple)) or not it or not isinstance(it[0], str):
            bad += 1
            continue
        verb = normalize_action_name(it[0])
        verb = syn.get(verb, verb)
        if verb in LOCOMOTION_VERBS:
            continue
        if not all(isinstance(x, str) for x in it[1:]):
            bad += 1
            continue
        out.append((verb, *(_norm_object(x) for x in it[1:])))
    return out, bad


def canonical_actions(items: Any, synonyms: Mapping[str, str] | None = None) -> list[Action]:
    """Parsed ``<actions>`` items → canonical tuples ``(verb, obj, …)``: verbs
    case-folded, whitespace collapsed and mapped through ``synonyms``
    (:data:`DEFAULT_VERB_SYNONYMS` when ``None``; a given map replaces it), objects
    case-folded, whitespace collapsed, one leading article (the / a / an) dropped;
    items whose verb is in :data:`LOCOMOTION_VERBS` removed; items that are not
    non-empty lists of strings dropped. Plurals are kept (``apples`` ≠ ``apple``):
    stripping a trailing ``s`` would merge ``glass`` with ``glas``."""
    return _canonical(items, synonyms)[0]


def default_matcher(pred: Action, gold: Action) -> bool:
    """Canonical verb equal and normalised object names equal (targets included)."""
    return pred == gold


@dataclass(frozen=True)
class PlanningPRF:
    precision: float
    recall: float
    f1: float


_ZERO = PlanningPRF(0.0, 0.0, 0.0)  # identity marks "no predicted actions" for the reason
_TOO_LONG = PlanningPRF(0.0, 0.0, 0.0)  # identity marks "more predicted actions than the cap"
# Most canonical actions (per side) planning_scores compares; see its docstring.
MAX_PLAN_ACTIONS = 256


def _prf(score: float, n_pred: int, n_gold: int) -> PlanningPRF:
    p = score / n_pred if n_pred else 0.0
    r = score / n_gold if n_gold else 0.0
    return PlanningPRF(p, r, 2 * p * r / (p + r) if p + r > 0 else 0.0)


def _lcs(m: np.ndarray) -> int:
    n_p, n_g = m.shape
    prev = [0] * (n_g + 1)
    for i in range(n_p):
        cur = [0] * (n_g + 1)
        row = m[i]
        for j in range(n_g):
            cur[j + 1] = prev[j] + 1 if row[j] else max(prev[j + 1], cur[j])
        prev = cur
    return prev[n_g]


def _equality_scores(p: Sequence[Action], g: Sequence[Action]) -> tuple[int, int]:
    """(maximum matching, LCS length) of ``p`` against ``g`` when two actions match exactly
    when they are equal (the default matcher), in O(|p| + |g|) steps instead of the
    |p|×|g| matrix, a Hungarian call and a quadratic LCS (issue 30):

    * equality splits the match graph into complete bipartite blocks, one per distinct
      action, so the largest one-to-one matching is Σ_a min(#a in p, #a in g);
    * the LCS is the bit-parallel LCS length (Hyyrö 2004): one bit per gold position,
      ``V ← (V + U) | (V − U)`` with ``U = V & mask(action)`` per predicted action; the
      LCS is the number of zero bits of ``V``. Gold has at most :data:`MAX_PLAN_ACTIONS`
      actions, so ``V`` is a few machine words.

    tests/test_speed_equivalence.py checks both against the matrix reference.
    """
    masks: dict[Action, int] = {}
    for j, b in enumerate(g):
        masks[b] = masks.get(b, 0) | (1 << j)
    full = (1 << len(g)) - 1
    v = full
    left: dict[Action, int] = {a: mask.bit_count() for a, mask in masks.items()}  # gold copies unmatched
    quantity = 0
    get = masks.get
    for a in p:
        mask = get(a)
        if mask:
            if left[a]:
                left[a] -= 1
                quantity += 1
            u = v & mask
            v = ((v + u) | (v - u)) & full
    return quantity, len(g) - v.bit_count()


def _as_items(x: Any) -> Any:
    if isinstance(x, str):
        parsed = extract_actions(x)
        if not parsed.ok:
            parsed = parse_literal_list(x)
        return parsed.value if parsed.ok else None
    return x


def planning_scores(
    pred: Any, gold: Any, matcher: Matcher | None = None, synonyms: Mapping[str, str] | None = None
) -> dict[str, PlanningPRF] | None:
    """EmbodiedBrain's planning P/R/F1 over ``<actions>``, ``{"quantity": …, "order": …}``.

    ``pred`` / ``gold`` are completion texts with ``<actions>`` (or bare action-list
    literals) or parsed lists. Both sides go through :func:`canonical_actions`:

    * verbs case-folded and mapped through ``synonyms`` (default
      :data:`DEFAULT_VERB_SYNONYMS`: pick up / pickup / grasp / take → pick;
      pick and place / put / put down → place; catch / hand over / give → handover;
      slide → drag; turn / rotate → twist; chop / slice → cut; rinse / clean → wash;
      give a thumbs-up → like; make a heart with hands → heart sign);
    * locomotion (:data:`LOCOMOTION_VERBS`: find, search, navigate, and our additions
      goto, go to, move to, walk) dropped from both sides;
    * objects case-folded, whitespace collapsed, one leading article dropped, plurals
      kept.

    A pred×gold 0/1 matrix comes from ``matcher(pred_action, gold_action) -> bool``
    (default :func:`default_matcher`: canonical verb and all objects equal).
    **Quantity** = size of the maximum one-to-one matching
    (``scipy.optimize.linear_sum_assignment``); **order** = LCS length with the matrix
    as equality. ``P = score/|pred|``, ``R = score/|gold|``, ``F1 = 2PR/(P+R)`` (0 if
    P+R = 0).

    Our choices: a malformed predicted item (not a non-empty list of strings, e.g.
    ``['Pick', 1]`` or ``'Pick Apple'``) counts in ``|pred|`` and never matches, so
    junk lowers precision; malformed gold items are dropped. No predicted actions →
    all 0. No gold actions → ``None`` (undefined). **Tuples differ from the released
    evaluation** (as in :func:`embodied_format`, the paper's actions are tuples
    [EmbodiedBrain §3.1]): a tuple item is an action like a list, and a top-level tuple
    is the list of its items; the released ``canonicalize_actions`` skips tuple items
    (they count in neither |pred| nor |gold|) and ``extract_actions`` reads a top-level
    tuple as no actions.

    With the default matcher the same two numbers come without the matrix, in
    O(|pred| + |gold|) steps (:func:`_equality_scores`).

    **Cap** (our choice, to keep the cost bounded: with a custom matcher the matrix is
    |pred|×|gold| matcher calls plus an O(|pred|·|gold|) LCS; the cap applies to every
    matcher, so a score never depends on which one is used): more than :data:`MAX_PLAN_ACTIONS` canonical
    gold actions → ``None`` (undefined, like no gold); more than
    :data:`MAX_PLAN_ACTIONS` canonical predicted actions → all 0 without building the
    matrix. :func:`plan_f1` / :func:`plan_order_f1` say which in their reason. Real plans
    have tens of actions.
    """
    got = _planning_scores(pred, gold, matcher, synonyms)
    if isinstance(got, str):
        return None if got.startswith("gold") else {"quantity": _TOO_LONG, "order": _TOO_LONG}
    return got


def _planning_scores(
    pred: Any, gold: Any, matcher: Matcher | None, synonyms: Mapping[str, str] | None
) -> dict[str, PlanningPRF] | str | None:
    """:func:`planning_scores`, with a reason string instead of a result past the cap."""
    g: Sequence[Action]
    if synonyms is None and type(gold) is str and len(gold) <= _CACHE_MAX_PAIR_CHARS:
        g = _gold_actions(gold)  # a gold completion is shared by its group: parse it once
    else:
        g = canonical_actions(_as_items(gold), synonyms)
    if not g:
        return None
    if len(g) > MAX_PLAN_ACTIONS:
        return f"gold has {len(g)} actions, more than the cap of {MAX_PLAN_ACTIONS}: not scored"
    p, n_bad = _canonical(_as_items(pred), synonyms)
    if not p:
        return {"quantity": _ZERO, "order": _ZERO}
    if len(p) > MAX_PLAN_ACTIONS:
        return f"completion has {len(p)} actions, more than the cap of {MAX_PLAN_ACTIONS}: scored 0"
    if matcher is None:  # default_matcher is tuple equality: no matrix needed
        quantity, order = _equality_scores(p, g)
    else:
        # lazy: scipy.optimize loads only for the Hungarian matching
        from scipy.optimize import linear_sum_assignment

        m = np.array([[bool(matcher(a, b)) for b in g] for a in p], dtype=bool)
        rows, cols = linear_sum_assignment(m.astype(np.int8), maximize=True)
        quantity = int(m[rows, cols].sum())
        order = _lcs(m)  # malformed items are all-False rows: they change neither score
    n_pred = len(p) + n_bad
    return {"quantity": _prf(quantity, n_pred, len(g)), "order": _prf(order, n_pred, len(g))}


@lru_cache(maxsize=4096)
def _gold_actions(gold: str) -> tuple[Action, ...]:
    return tuple(canonical_actions(_as_items(gold), None))


# Cached pairs keep their texts alive; longer pairs are scored uncached.
_CACHE_MAX_PAIR_CHARS = 65_536


@lru_cache(maxsize=1024)
def _planning_scores_text(pred: str, gold: str) -> dict[str, PlanningPRF] | str | None:
    # plan_f1 and plan_order_f1 score the same (completion, gold) pair: compute once.
    return _planning_scores(pred, gold, None, None)


def _f1_part(name: str, key: str) -> Callable[..., Score]:
    def part(completion: Any, gold: Any, matcher: Matcher | None = None) -> Score:
        try:
            if (
                matcher is None
                and isinstance(completion, str)
                and isinstance(gold, str)
                and len(completion) + len(gold) <= _CACHE_MAX_PAIR_CHARS
            ):
                scores = _planning_scores_text(completion, gold)
            else:
                scores = _planning_scores(completion, gold, matcher, None)
        except Exception as e:  # a user-supplied matcher may fail; stay total
            return Score(name, 0.0, f"matcher failed: {type(e).__name__}: {e}")
        if scores is None:
            return Score(name, None, "gold has no (non-locomotion) actions")
        if isinstance(scores, str):  # past the cap: the gold's problem or the completion's
            return Score(name, None if scores.startswith("gold") else 0.0, scores)
        prf = scores[key]
        if prf is _ZERO:
            return Score(name, 0.0, "completion has no (non-locomotion) actions")
        return Score(name, prf.f1, f"P={prf.precision:.3f} R={prf.recall:.3f}")

    part.__name__ = name
    part.__doc__ = (
        f"EmbodiedBrain planning {key} F1 of ``<actions>`` against a gold completion (see planning_scores)."
    )
    return part


plan_f1 = _f1_part("plan_f1", "quantity")
plan_order_f1 = _f1_part("plan_order_f1", "order")
