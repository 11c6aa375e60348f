"""Reinforced Reasoning for Embodied Planning: JSON plans scored by format + prefix accuracy.

``total = format + accuracy`` (max 0.5 + 1.0 = 1.5); see
:func:`groundrl.rewards.planning.reinforced_format` and
:func:`groundrl.rewards.planning.reinforced_accuracy` for the formulas.

The action map (``{id: name}``) comes from the caller: the ``action_map`` option (a
path or mapping, e.g. ``--action-map`` on the CLI) or a per-sample ``action_map`` field
(a path); the sample's field wins. Nothing fetched from elsewhere is bundled.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from groundrl.recipes.base import Recipe
from groundrl.recipes.options import Option
from groundrl.rewards.planning import load_action_map, reinforced_accuracy, reinforced_format
from groundrl.rubric import Part, Rubric
from groundrl.types import Score


@lru_cache(maxsize=64)
def _map_from_path(path: str) -> dict[int, str]:
    return load_action_map(path)


def build(action_map: Any = None, lenient: bool = False) -> Rubric:
    default_map = load_action_map(action_map) if action_map is not None else None

    def fmt(completion, action_map=None):
        amap = default_map
        if action_map is not None:
            try:
                amap = (
                    _map_from_path(str(action_map))
                    if not isinstance(action_map, dict)
                    else load_action_map(action_map)
                )
            except (OSError, ValueError) as e:
                return Score("format", 0.0, f"sample action_map unusable: {e}")
        return reinforced_format(completion, amap, lenient=lenient)

    def acc(completion, gold):
        return reinforced_accuracy(completion, gold, lenient=lenient)

    return Rubric([Part("format", fmt), Part("accuracy", acc)], name="reinforced_planning")


RECIPE = Recipe(
    name="reinforced_planning",
    paper="Reinforced Reasoning for Embodied Planning",
    summary="JSON plan: format (keys, valid steps, ids in the action map; max 0.5) + prefix accuracy (max 1.0)",
    build=build,
    required=("gold",),
    optional=("action_map",),
    label_field="gold",
    options=(
        Option(
            "action_map",
            "path",
            None,
            "{id: name} JSON action map (a path, or the mapping itself from Python/YAML); "
            "without one the format reward's map term is 0",
            mapping_ok=True,
        ),
        Option("lenient", "bool", False, "also accept fenced JSON / prose around the plan"),
    ),
)
