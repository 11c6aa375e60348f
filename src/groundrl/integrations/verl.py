"""verl adapter: ``compute_score(data_source, solution_str, ground_truth, extra_info)``.

verl's reward managers call a custom ``compute_score`` once per response and accept a
float or a dict with ``"score"``; every other key becomes a logged per-sample metric,
so every call returns the same keys: ``score`` plus one float per part (a part that
does not apply is reported as 0.0; the total already ignores it).

``ground_truth`` fills the recipe's label field (``gold``, ``gt_score``, ``preferred``,
``answer``); ``extra_info`` (a dict) supplies any other sample field, e.g. images or an
``action_map`` path — verl does not pass images to reward functions, so carry image
references in ``extra_info``.

Config (``custom_reward_function``)::

    custom_reward_function:
      path: <site-packages>/groundrl/integrations/verl.py
      name: compute_score          # recipe from extra_info["recipe"] or data_source "groundrl/<recipe>"

or build a bound function in your own module: ``compute_score = make_compute_score("reinforced_planning",
action_map="map.json")``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from groundrl.integrations.common import completion_text, label_field, resolve_rubric
from groundrl.rubric import Rubric


def _sample(label: str | None, ground_truth: Any, extra_info: Any) -> dict[str, Any]:
    sample = dict(extra_info) if isinstance(extra_info, dict) else {}
    if label is not None and ground_truth is not None:
        sample[label] = ground_truth
    return sample


def _result(rubric: Rubric, solution_str: Any, sample: dict[str, Any]) -> dict[str, Any]:
    verdict = rubric.score(completion_text(solution_str), **sample)
    out: dict[str, Any] = {"score": verdict.total}
    for name, s in verdict.parts.items():
        out[name] = 0.0 if s.value is None else s.value
    return out


def make_compute_score(
    recipe_or_rubric: str | Rubric, label: str | None = None, **options: Any
) -> Callable[..., dict[str, Any]]:
    """A verl ``compute_score`` bound to one recipe (or rubric). ``label`` overrides the
    field that ``ground_truth`` fills (required for a bare rubric)."""
    rubric = resolve_rubric(recipe_or_rubric, **options)
    field = label or label_field(recipe_or_rubric)

    def compute_score(data_source=None, solution_str="", ground_truth=None, extra_info=None, **kwargs):
        return _result(rubric, solution_str, _sample(field, ground_truth, extra_info))

    return compute_score


@lru_cache(maxsize=16)
def _recipe_rubric(name: str) -> Rubric:
    return resolve_rubric(name)


def compute_score(
    data_source: Any = None,
    solution_str: Any = "",
    ground_truth: Any = None,
    extra_info: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Dispatching ``compute_score``: the recipe comes from ``extra_info["recipe"]`` or a
    ``data_source`` of the form ``groundrl/<recipe>``. An unknown recipe is a
    configuration error and raises ``ValueError`` naming the choices."""
    from groundrl.recipes import RECIPE_NAMES, get_recipe

    name = extra_info.get("recipe") if isinstance(extra_info, dict) else None
    if name is None and isinstance(data_source, str) and data_source.startswith("groundrl/"):
        name = data_source.split("/", 1)[1]
    if name not in RECIPE_NAMES:
        raise ValueError(
            f"cannot tell the groundrl recipe (data_source={data_source!r}); set extra_info['recipe'] or "
            f"data_source='groundrl/<recipe>' with one of {RECIPE_NAMES}"
        )
    rubric = _recipe_rubric(name)
    return _result(rubric, solution_str, _sample(get_recipe(name).label_field, ground_truth, extra_info))
