"""Reinforced Reasoning for Embodied Planning: JSON plans scored by format + prefix accuracy.

``total = format + accuracy`` (max 0.5 + 1.0 = 1.5); see
:func:`groundrl.rewards.planning.reinforced_format` and
:func:`groundrl.rewards.planning.reinforced_accuracy` for the formulas.

The action map (``{id: name}``) comes from the caller's configuration, never from a file
a sample names: the ``action_map`` option (a path or mapping, e.g. ``-O action_map=PATH``)
is the default; ``action_maps`` (``{name: path or mapping}``) loads named maps when the
rubric is built. A sample's ``action_map`` field may be one of those *names* or an inline
``{id: name}`` mapping; any other string is refused with a reason and no file is read (a
reward server must not open paths its clients choose). Nothing fetched from elsewhere is
bundled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from groundrl.examples import bundled, example_action_map
from groundrl.recipes.base import Recipe
from groundrl.recipes.options import Option
from groundrl.rewards.planning import ActionMap, load_action_map, reinforced_accuracy, reinforced_format
from groundrl.rubric import Part, Rubric
from groundrl.types import Score


def _named_maps(action_maps: Any) -> dict[str, ActionMap]:
    if action_maps is None:
        return {}
    if not isinstance(action_maps, Mapping):
        raise ValueError(
            'action_maps must be a mapping {name: path or {id: name}}, e.g. {"alfred": "map.json"}'
        )
    return {str(name): load_action_map(m) for name, m in action_maps.items()}


def _sample_map(value: Any, named: Mapping[str, ActionMap]) -> ActionMap | str:
    """The sample's action map, or the reason it cannot be used (a string)."""
    if isinstance(value, Mapping):
        try:
            return load_action_map(value)
        except ValueError as e:
            return f"sample action_map unusable: {e}"
    if isinstance(value, str) and value in named:
        return named[value]
    names = ", ".join(sorted(named)[:20]) or "none configured (option action_maps)"
    return f"sample action_map must be an inline {{id: name}} mapping or a configured name ({names}); paths are not read"


def build(action_map: Any = None, lenient: bool = False, action_maps: Any = None) -> Rubric:
    default_map = load_action_map(action_map) if action_map is not None else None
    named = _named_maps(action_maps)

    def fmt(completion: Any, action_map: Any = None) -> Score:
        amap = default_map
        if action_map is not None:
            got = _sample_map(action_map, named)
            if isinstance(got, str):
                return Score("format", 0.0, got)
            amap = got
        return reinforced_format(completion, amap, lenient=lenient)

    def acc(completion: Any, gold: Any) -> Score:
        return reinforced_accuracy(completion, gold, lenient=lenient)

    # format ≤ 0.125 + 0.125 + 0.25; accuracy ≤ 1, −0.25 with the single-step penalty
    parts = [Part("format", fmt, value_range=(0.0, 0.5)), Part("accuracy", acc, value_range=(-0.25, 1.0))]
    return Rubric(parts, name="reinforced_planning")


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
        Option(
            "action_maps",
            "json",
            None,
            "named action maps {name: path or {id: name}}, loaded at start; a sample's action_map "
            "field may name one (or be an inline mapping; sample paths are never read)",
        ),
    ),
    examples=bundled("reinforced_planning"),
    gold_example="rp-perfect",
    example_options={"action_map": str(example_action_map())},
)
