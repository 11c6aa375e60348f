"""A rubric from a recipe name: options merged and checked, the judge handed over, the
part deadline of the worker's environment applied. Every surface that takes a recipe by
name (the trainer adapters, the train stages, the Ray Data scorer) resolves it here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from groundrl.recipes import OptionError, get_recipe, recipe_names
from groundrl.rubric import Rubric, env_part_timeout


def merge_options(
    recipe_options: Mapping[str, Any] | None, judge: Any, options: Mapping[str, Any]
) -> dict[str, Any]:
    """``recipe_options=`` and ``**options`` together (a key in both must agree), plus
    ``judge=`` as the ``judge`` option."""
    if recipe_options is not None and not isinstance(recipe_options, Mapping):
        raise TypeError(f"recipe_options must be a mapping, got {type(recipe_options).__name__}")
    merged = dict(recipe_options or {})
    for key, value in options.items():
        if key in merged and merged[key] is not value and merged[key] != value:
            raise ValueError(f"option {key!r} given twice with different values")
        merged[key] = value
    if judge is not None:
        if "judge" in merged:
            raise ValueError("judge given twice (judge= and in the options)")
        merged["judge"] = judge
    return merged


def resolve_rubric(
    recipe_or_rubric: str | Rubric,
    recipe_options: Mapping[str, Any] | None = None,
    judge: Any = None,
    **options: Any,
) -> Rubric:
    """A rubric from a recipe name with its options and judge (a mapping, a
    :class:`~groundrl.judges.config.JudgeConfig` or a judge object), or ``Rubric`` as is."""
    merged = merge_options(recipe_options, judge, options)
    if isinstance(recipe_or_rubric, Rubric):
        if merged:
            raise TypeError("options and judge are for recipe names; build the Rubric with them instead")
        return recipe_or_rubric
    rubric = get_recipe(recipe_or_rubric).rubric(**merged)
    rubric.part_timeout = env_part_timeout()  # verl / OpenRLHF / Ray workers: set by environment
    return rubric


def label_field(recipe_or_rubric: str | Rubric) -> str | None:
    if isinstance(recipe_or_rubric, Rubric):
        return None
    return get_recipe(recipe_or_rubric).label_field


def options_for(recipe: Any, options: Mapping[str, Any], judge: Any = None) -> tuple[dict[str, Any], Any]:
    """The part of shared settings that ``recipe`` declares: on a server or a verl run
    that mixes recipes, each option goes to the recipes that have it and the judge to
    those with model-based parts. An option that no recipe declares is an error."""
    declared = {o.name for o in recipe.options}
    for key in options:
        if key not in declared and not any(
            key in {o.name for o in get_recipe(n).options} for n in recipe_names()
        ):
            raise OptionError(f"no recipe has the option {key!r}")
    mine = {k: v for k, v in options.items() if k in declared}
    return mine, judge if recipe.judge_factory is not None else None
