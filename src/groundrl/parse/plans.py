"""Plans in model output: Reinforced-Reasoning JSON plans and EmbodiedBrain
``<plans>``/``<actions>`` sections."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, NamedTuple

from groundrl.parse.result import Parsed, fail
from groundrl.parse.structured import (
    parse_json_object,
    parse_literal_list,
    parse_stripped_object,
    scan_object_detail,
)
from groundrl.parse.tags import find_tag

REINFORCED_PLAN_KEYS: tuple[str, ...] = (
    "reasoning_and_reflection",
    "visual_state_description",
    "language_plan",
    "executable_plan",
)

# The released pattern is ``\d+\.\s*\[(\w+)\]``; tried at every digit of a run of n
# digits with no "." after it, it rescans the rest of the run: n²/2 steps (a 100 KB digit
# run took 47 s; issue 30). A match can only start where a digit run starts (a match
# from inside a run would have to end the same run with the same "."), so the
# lookbehind skips the other starts and findall returns the same list.
_PLAN_LINE_RE = re.compile(r"(?<!\d)\d+\.\s*\[(\w+)\]")
# The cache keeps its keys (the texts) alive: longer texts are parsed uncached so that
# 4096 adversarial megabyte completions cannot pin gigabytes. ~8k tokens is far above
# a real plan, so ordinary completions are always cached.
_CACHE_MAX_CHARS = 32_768


@lru_cache(maxsize=4096)
def _parse_plan_cached(text: str, lenient: bool) -> Parsed:
    return parse_json_object(text, lenient=lenient)


def parse_reinforced_plan(text: Any, lenient: bool = False) -> Parsed:
    """The completion's JSON object (strict by default, see
    :func:`groundrl.parse.structured.parse_json_object`).

    Results are cached on ``(text, lenient)`` (the last 4096 texts up to 32,768
    characters). **The returned dict is shared between callers: treat it as
    read-only** (copy it before changing it). The rewards read
    :func:`reinforced_plan_digest` instead, which keeps no decoded JSON.
    """
    if not isinstance(text, str):
        return fail(f"completion is {type(text).__name__}, not text")
    if len(text) > _CACHE_MAX_CHARS:
        return parse_json_object(text, lenient=bool(lenient))
    return _parse_plan_cached(text, bool(lenient))


parse_reinforced_plan.cache_clear = _parse_plan_cached.cache_clear  # type: ignore[attr-defined]  # lru_cache's API on a plain function


# Action names repeat (an action map has a few hundred); a bounded dict keeps each one's
# normal form. Only short plain ``str`` keys are kept, and the dict is emptied when full,
# so neither memory nor a hostile ``__hash__`` can grow it.
_NORM_CACHE: dict[str, str] = {}
_NORM_CACHE_MAX = 16_384
_NORM_KEY_MAX_CHARS = 256


def normalize_action_name(s: Any) -> str:
    """Case-folded, whitespace-collapsed, stripped action name ("" for non-strings).

    Equal to ``re.sub(r"\\s+", " ", s).strip().casefold()`` (``str.split()`` and the
    regex ``\\s`` agree on what whitespace is), computed without a regex and kept for
    names seen before.

    >>> normalize_action_name("  Pick UP\\tthe  Apple ")
    'pick up the apple'
    """
    if not isinstance(s, str):
        return ""
    r = _NORM_CACHE.get(s) if type(s) is str else None
    if r is None:
        r = " ".join(s.split()).casefold()
        if type(s) is str and len(s) <= _NORM_KEY_MAX_CHARS:
            if len(_NORM_CACHE) >= _NORM_CACHE_MAX:
                _NORM_CACHE.clear()
            _NORM_CACHE[s] = r
    return r


normalize_action_name.cache_clear = _NORM_CACHE.clear  # type: ignore[attr-defined]  # lru_cache's API on a plain function


_PLAN_KEY_SET = frozenset(REINFORCED_PLAN_KEYS)


class PlanDigest(NamedTuple):
    """What the Reinforced Reasoning rewards read from one completion, kept without the
    decoded JSON (see :func:`reinforced_plan_digest`).

    ``error``: why the completion is not one JSON object (``None`` when it is);
    ``missing``: the required keys it lacks, in :data:`REINFORCED_PLAN_KEYS` order;
    ``n``: ``len(executable_plan)``, ``-1`` when that is not a list; per step,
    ``aids`` holds the ``action_id`` of a *valid* step (a dict with an ``int``, not
    ``bool``, ``action_id`` and a ``str`` ``action_name``) and ``None`` otherwise, and
    ``names`` the :func:`normalize_action_name` of its ``action_name`` when that is a
    ``str`` (``None`` otherwise, or when the step is not a dict).
    """

    error: str | None
    missing: tuple[str, ...] = ()
    n: int = 0
    aids: tuple[int | None, ...] = ()
    names: tuple[str | None, ...] = ()


_new_digest = tuple.__new__


try:  # orjson decodes the same documents to the same values twice as fast; optional
    import orjson

    _fast_loads: Callable[[str], Any] | None = orjson.loads
except ImportError:  # pragma: no cover - orjson is a dependency, but stay importable
    _fast_loads = None

# Fewer "{" + "[" than this bounds the nesting well below both decoders' depth limits
# (orjson 1024, json the recursion limit), so neither fails where the other succeeds.
_FAST_MAX_OPENS = 512


def _fast_object(stripped: str) -> dict[str, Any] | None:
    """``json.loads(stripped)`` by orjson when that is certainly the same value, else None.

    orjson accepts a subset of what ``json.loads`` accepts (no NaN / Infinity, no lone
    surrogates, no numbers beyond a float) and decodes it to equal values, except that an
    integer beyond 64 bits becomes a float: :func:`_digest` re-reads such a plan with
    ``json`` (only ``action_id`` can be one that matters). Anything orjson refuses goes to
    the exact path, so every error message is ``json``'s own.
    """
    if _fast_loads is None or stripped[:1] != "{" or stripped[-1:] != "}":
        return None  # not an object (a truncated one, say): json's path gives the reason
    if stripped.count("{") + stripped.count("[") >= _FAST_MAX_OPENS:
        return None
    try:
        return _fast_loads(stripped)
    except ValueError:  # orjson.JSONDecodeError is a json.JSONDecodeError
        return None


def _digest(text: str, lenient: bool, fast: bool = True) -> PlanDigest:
    stripped = text.strip()
    plan_obj = _fast_object(stripped) if fast else None
    if plan_obj is not None:
        error = None
    else:
        plan_obj, error = scan_object_detail(stripped)  # the common case: a plain JSON object
        fast = False
    if plan_obj is None:
        if not stripped:
            return PlanDigest("empty completion")
        obj = parse_stripped_object(stripped, lenient, None, error)
        plan_obj = obj.value
        if plan_obj is None:
            return PlanDigest(obj.error)
    missing = (
        ()
        if plan_obj.keys() >= _PLAN_KEY_SET
        else tuple(k for k in REINFORCED_PLAN_KEYS if k not in plan_obj)
    )
    plan = plan_obj.get("executable_plan")
    if not isinstance(plan, list):
        return PlanDigest(None, missing, -1)
    # JSON gives exact str / int / bool, so ``type(x) is int`` is "an int, not a bool"
    # here and every str may use the normaliser's dict.
    # One plain loop: a third faster than comprehensions over (id, name) pairs, which
    # build a tuple per step (measured on bench/rewards.py's corpus, issue 18).
    norm, cget = normalize_action_name, _NORM_CACHE.get
    names: list[str | None] = []
    aids: list[int | None] = []
    add_name, add_aid = names.append, aids.append
    for st in plan:
        if type(st) is dict:
            x = st.get("action_name")
            if type(x) is str:
                add_name(cget(x) or norm(x))
                aid = st.get("action_id")
                if type(aid) is not int:
                    if fast and type(aid) is float:  # maybe an integer beyond 64 bits
                        return _digest(text, lenient, fast=False)
                    aid = None
                add_aid(aid)
                continue
        add_name(None)
        add_aid(None)
    return _new_digest(PlanDigest, (None, missing, len(plan), tuple(aids), tuple(names)))  # = PlanDigest(...)


# (text -> digest) for strict [0] and lenient [1] parsing, in two generations of plain
# dicts: new entries go to the young one; when it holds _DIGESTS_MAX it becomes the old
# one and the previous old one is dropped. So the last 2048-4096 texts are kept, with
# O(1) work per call (evicting the oldest key of one dict one at a time would rescan
# its deleted slots on every call), and a batch scored part by part still finds its
# completions.
_DIGESTS: tuple[list[dict[str, PlanDigest]], list[dict[str, PlanDigest]]] = ([{}, {}], [{}, {}])
_DIGESTS_MAX = 2048


def _digest_cache_clear() -> None:
    for gens in _DIGESTS:
        gens[0] = {}
        gens[1] = {}


def reinforced_plan_digest(text: Any, lenient: bool = False) -> PlanDigest:
    """The completion's plan as the Reinforced Reasoning format and accuracy rewards read
    it (a :class:`PlanDigest`), parsed as :func:`parse_reinforced_plan` parses.

    Cached on ``(text, lenient)`` (the last 2048 to 4096 texts up to 32,768 characters
    each) so the two rewards of one completion cost one ``json.loads``. Only the digest
    is kept — tuples of strings and ints — not the decoded JSON, whose many small
    containers would cost the garbage collector more than the parse itself.

    >>> d = reinforced_plan_digest('{"executable_plan": [{"action_id": 1, "action_name": " Open  Fridge"}]}')
    >>> d.n, d.aids, d.names, len(d.missing)
    (1, (1,), ('open fridge',), 3)
    """
    gens = _DIGESTS[1 if lenient else 0]
    if type(text) is str:
        d = gens[0].get(text)
        if d is None:
            d = gens[1].get(text)
        if d is not None:
            return d
    elif not isinstance(text, str):
        return PlanDigest(f"completion is {type(text).__name__}, not text")
    d = _digest(text, bool(lenient))
    if type(text) is str and len(text) <= _CACHE_MAX_CHARS:
        young = gens[0]
        if len(young) >= _DIGESTS_MAX:
            gens[1] = young
            gens[0] = young = {}
        young[text] = d
    return d


reinforced_plan_digest.cache_clear = _digest_cache_clear  # type: ignore[attr-defined]  # lru_cache's API on a plain function


def extract_actions(text: Any) -> Parsed:
    """The list inside the first ``<actions>…</actions>`` pair, whitespace collapsed and
    parsed with ``ast.literal_eval`` (never ``eval``). Items are returned as written."""
    if not isinstance(text, str):
        return fail(f"completion is {type(text).__name__}, not text")
    inner = find_tag(text, "actions")
    if inner is None:
        return fail("no <actions>…</actions>")
    return parse_literal_list(inner, collapse_whitespace=True)


def plan_lines(text: Any) -> list[str] | None:
    """The ``[Type]`` of each numbered line ``\\d+\\.\\s*\\[(\\w+)\\]`` inside the first
    ``<plans>…</plans>``; ``None`` when there is no such pair."""
    if not isinstance(text, str):
        return None
    inner = find_tag(text, "plans", strip=False)
    if inner is None:
        return None
    return _PLAN_LINE_RE.findall(inner)
