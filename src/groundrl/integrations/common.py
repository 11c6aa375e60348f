"""Helpers every trainer adapter needs: completion text from any message format, and a
rubric from a recipe name or a ready rubric."""

from __future__ import annotations

from typing import Any

from groundrl.rubric import Rubric


def completion_text(completion: Any) -> str:
    """Text of a completion in TRL's standard (``str``) or conversational format
    (``[{"role": "assistant", "content": str | [{"type": "text", "text": …}, …]}]``);
    for a list of messages the last assistant message is used. Anything else becomes
    ``""`` so the rewards score it as malformed rather than crash."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, (list, tuple)):
        msgs = [m for m in completion if isinstance(m, dict)]
        assistant = [m for m in msgs if m.get("role", "assistant") == "assistant"] or msgs
        if not assistant:
            return ""
        content = assistant[-1].get("content", "")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "".join(
                p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
    return ""


def resolve_rubric(recipe_or_rubric: str | Rubric, **options: Any) -> Rubric:
    if isinstance(recipe_or_rubric, Rubric):
        if options:
            raise TypeError("options are only for recipe names; build the Rubric with them instead")
        return recipe_or_rubric
    from groundrl.recipes import get_recipe

    return get_recipe(recipe_or_rubric).rubric(**options)


def label_field(recipe_or_rubric: str | Rubric) -> str | None:
    if isinstance(recipe_or_rubric, Rubric):
        return None
    from groundrl.recipes import get_recipe

    return get_recipe(recipe_or_rubric).label_field
