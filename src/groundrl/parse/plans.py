"""Plans in model output: Reinforced-Reasoning JSON plans and EmbodiedBrain
``<plans>``/``<actions>`` sections."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from groundrl.parse.result import Parsed, fail
from groundrl.parse.structured import parse_json_object, parse_literal_list
from groundrl.parse.tags import find_tag

REINFORCED_PLAN_KEYS: tuple[str, ...] = (
    "reasoning_and_reflection",
    "visual_state_description",
    "language_plan",
    "executable_plan",
)

_PLAN_LINE_RE = re.compile(r"\d+\.\s*\[(\w+)\]")
_WS_RE = re.compile(r"\s+")
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
    characters) so the format and accuracy parts of one completion cost one
    ``json.loads``. **The returned dict is shared between callers: treat it as
    read-only** (copy it before changing it).
    """
    if not isinstance(text, str):
        return fail(f"completion is {type(text).__name__}, not text")
    if len(text) > _CACHE_MAX_CHARS:
        return parse_json_object(text, lenient=bool(lenient))
    return _parse_plan_cached(text, bool(lenient))


parse_reinforced_plan.cache_clear = _parse_plan_cached.cache_clear  # type: ignore[attr-defined]


def normalize_action_name(s: Any) -> str:
    """Case-folded, whitespace-collapsed, stripped action name ("" for non-strings)."""
    if not isinstance(s, str):
        return ""
    return _WS_RE.sub(" ", s).strip().casefold()


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
