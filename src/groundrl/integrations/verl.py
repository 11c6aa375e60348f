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
      reward_kwargs:               # optional; verl passes these to compute_score
        recipe: proxy_grm          # default recipe when the sample names none
        recipe_options: {}         # the recipe's options (groundrl recipes lists them)
        judge: {backend: openai, model: judge, url: "http://127.0.0.1:8000/v1"}

The same settings can come from ``GROUNDRL_RECIPE`` / ``GROUNDRL_OPTIONS`` /
``GROUNDRL_JUDGE_*`` environment variables on the workers
(:func:`groundrl.integrations.common.env_config`). Or build a bound function in your own
module: ``compute_score = make_compute_score("reinforced_planning", action_map="map.json")``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from groundrl.integrations.common import (
    RubricCache,
    completion_text,
    env_config,
    label_field,
    options_for,
    resolve_rubric,
)
from groundrl.results import TRAINER_NOT_APPLICABLE, part_values
from groundrl.rubric import Rubric


def _sample(label: str | None, ground_truth: Any, extra_info: Any) -> dict[str, Any]:
    # string keys only: a sample field is a keyword argument of the reward parts
    sample = {k: v for k, v in extra_info.items() if isinstance(k, str)} if isinstance(extra_info, dict) else {}
    if label is not None and ground_truth is not None:
        sample[label] = ground_truth
    return sample


def _result(rubric: Rubric, solution_str: Any, sample: dict[str, Any]) -> dict[str, Any]:
    verdict = rubric.score(completion_text(solution_str), **sample)
    return {"score": verdict.total, **part_values(verdict, rubric.names, TRAINER_NOT_APPLICABLE)}


def make_compute_score(
    recipe_or_rubric: str | Rubric,
    label: str | None = None,
    *,
    recipe_options: Mapping[str, Any] | None = None,
    judge: Any = None,
    **options: Any,
) -> Callable[..., dict[str, Any]]:
    """A verl ``compute_score`` bound to one recipe (or rubric). ``label`` overrides the
    field that ``ground_truth`` fills (required for a bare rubric); options come as
    ``recipe_options={...}`` or keywords, ``judge`` as a mapping, a JudgeConfig or a
    judge object."""
    rubric = resolve_rubric(recipe_or_rubric, recipe_options, judge, **options)
    field = label or label_field(recipe_or_rubric)

    def compute_score(data_source=None, solution_str="", ground_truth=None, extra_info=None, **kwargs):
        return _result(rubric, solution_str, _sample(field, ground_truth, extra_info))

    return compute_score


_rubrics = RubricCache()


def compute_score(
    data_source: Any = None,
    solution_str: Any = "",
    ground_truth: Any = None,
    extra_info: Any = None,
    *,
    recipe: str | None = None,
    recipe_options: Mapping[str, Any] | None = None,
    judge: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Dispatching ``compute_score``: the recipe comes from ``extra_info["recipe"]``, a
    ``data_source`` of the form ``groundrl/<recipe>``, the ``recipe`` reward kwarg or
    ``$GROUNDRL_RECIPE``, in that order. Options and judge come from the reward kwargs,
    else from the environment. An unknown recipe is a configuration error and raises
    ``ValueError`` naming the choices."""
    from groundrl.recipes import get_recipe, recipe_names

    env_recipe, env_options, env_judge = env_config()
    name = extra_info.get("recipe") if isinstance(extra_info, dict) else None
    if name is None and isinstance(data_source, str) and data_source.startswith("groundrl/"):
        name = data_source.split("/", 1)[1]
    name = name or recipe or env_recipe
    if name is None:
        raise ValueError(
            f"cannot tell the groundrl recipe (data_source={data_source!r}); set extra_info['recipe'], "
            f"data_source='groundrl/<recipe>' or reward_kwargs.recipe, with one of {', '.join(recipe_names())}"
        )
    rec = get_recipe(name)
    options, judge = options_for(
        rec,
        dict(recipe_options) if recipe_options is not None else env_options,
        judge if judge is not None else env_judge,
    )
    rubric = _rubrics.get(name, options, judge)
    return _result(rubric, solution_str, _sample(rec.label_field, ground_truth, extra_info))
