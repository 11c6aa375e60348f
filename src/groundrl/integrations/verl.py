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

A run that mixes recipes names them all (``reward_kwargs.recipes: [reinforced_planning,
proxy_grm]`` or ``GROUNDRL_RECIPES=reinforced_planning,proxy_grm``): every call then
returns the same keys — ``score``, ``<recipe>/applies`` per recipe and
``<recipe>/<part>`` + ``<recipe>/<part>/applies`` per part of each (verl takes the key set
from the first sample, and parts of different recipes that share a name stay apart). A
part that does not apply (or belongs to another recipe) logs 0.0 with ``…/applies`` 0.0,
so ``mean(<recipe>/<part>) / mean(<recipe>/<part>/applies)`` is its mean where it applies
(:mod:`groundrl.results`). A one-recipe run keeps the plain keys (``score`` + one per
part); ``applicability: true`` adds ``<part>/applies`` there too.

``ground_truth`` may be a numpy array (pandas reads parquet lists that way), a list, a
number or a string; a JSON-encoded label (``groundrl.integrations.verl.write_dataset``
encodes labels when their types differ across rows) is decoded, and a JSON *object*
supplies several sample fields. For verl's process-based ``reward_manager.name=remote``
the function must pickle: the file loaded by ``path`` re-exports this module's objects,
so Ray pickles them by reference to ``groundrl.integrations.verl``.

The same settings can come from ``GROUNDRL_RECIPE`` / ``GROUNDRL_OPTIONS`` /
``GROUNDRL_JUDGE_*`` environment variables on the workers
(:func:`groundrl.integrations.common.env_config`). Or build a bound function in your own
module: ``compute_score = make_compute_score("reinforced_planning", action_map="map.json")``.
"""

from __future__ import annotations

import json
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
from groundrl.results import APPLIES, TRAINER_NOT_APPLICABLE, part_values, trainer_values
from groundrl.rubric import Rubric

ENV_RECIPES = "GROUNDRL_RECIPES"
ENV_APPLICABILITY = "GROUNDRL_APPLICABILITY"


def plain(value: Any) -> Any:
    """numpy arrays / scalars (pandas-read parquet) as Python lists / numbers, recursively.

    >>> import numpy as np
    >>> plain(np.array(["find a Apple", "pick up the Apple"], dtype=object))
    ['find a Apple', 'pick up the Apple']
    """
    if isinstance(value, (str, bytes, bool, int, float)) or value is None:
        return value
    if hasattr(value, "tolist") and hasattr(value, "dtype"):  # ndarray or numpy scalar
        return plain(value.tolist())
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def _decode_label(value: Any) -> Any:
    """A JSON-encoded list/object label (``write_dataset``'s ``{"json": …}`` form or a
    JSON string starting with ``[``/``{``) decoded; anything else unchanged."""
    if isinstance(value, dict) and set(value) == {"json"} and isinstance(value["json"], str):
        value = value["json"]
    else:
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        return value


def _extra(extra_info: Any) -> Any:
    """``extra_info`` as plain Python; ``write_dataset``'s ``{"json": "…"}`` form decoded."""
    extra = plain(extra_info) if isinstance(extra_info, dict) else extra_info
    if isinstance(extra, dict) and isinstance(extra.get("json"), str):
        try:
            decoded = json.loads(extra["json"])
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, dict):
            rest = {k: v for k, v in extra.items() if k != "json"}  # verl adds num_turns etc.
            extra = {**decoded, **rest}
    return extra


def _sample(label: str | None, ground_truth: Any, extra_info: Any) -> dict[str, Any]:
    extra_info = _extra(extra_info)
    # string keys only: a sample field is a keyword argument of the reward parts
    sample = (
        {k: plain(v) for k, v in extra_info.items() if isinstance(k, str)}
        if isinstance(extra_info, dict)
        else {}
    )
    gt = _decode_label(plain(ground_truth))
    if isinstance(gt, str) and gt.lstrip()[:1] in ("[", "{"):
        try:
            decoded = json.loads(gt)
        except (ValueError, RecursionError):
            decoded = None
        if isinstance(decoded, dict):
            sample.update({k: v for k, v in decoded.items() if isinstance(k, str)})
            return sample
        if isinstance(decoded, list):
            gt = decoded
    if label is not None and gt is not None:
        sample[label] = gt
    return sample


def _result(
    rubric: Rubric, solution_str: Any, sample: dict[str, Any], applicability: bool = False
) -> dict[str, Any]:
    verdict = rubric.score(completion_text(solution_str), **sample)
    if applicability:
        return {"score": verdict.total, **trainer_values(verdict, rubric.names, applicability=True)}
    return {"score": verdict.total, **part_values(verdict, rubric.names, TRAINER_NOT_APPLICABLE)}


def make_compute_score(
    recipe_or_rubric: str | Rubric,
    label: str | None = None,
    *,
    recipe_options: Mapping[str, Any] | None = None,
    judge: Any = None,
    applicability: bool = False,
    **options: Any,
) -> Callable[..., dict[str, Any]]:
    """A verl ``compute_score`` bound to one recipe (or rubric). ``label`` overrides the
    field that ``ground_truth`` fills (required for a bare rubric); options come as
    ``recipe_options={...}`` or keywords, ``judge`` as a mapping, a JudgeConfig or a
    judge object; ``applicability`` adds ``<part>/applies`` keys."""
    rubric = resolve_rubric(recipe_or_rubric, recipe_options, judge, **options)
    field = label or label_field(recipe_or_rubric)

    def compute_score(data_source=None, solution_str="", ground_truth=None, extra_info=None, **kwargs):
        return _result(rubric, solution_str, _sample(field, ground_truth, extra_info), applicability)

    return compute_score


_rubrics = RubricCache()


def _recipe_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


def compute_score(
    data_source: Any = None,
    solution_str: Any = "",
    ground_truth: Any = None,
    extra_info: Any = None,
    *,
    recipe: str | None = None,
    recipes: Any = None,
    recipe_options: Mapping[str, Any] | None = None,
    judge: Any = None,
    applicability: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Dispatching ``compute_score``: the recipe comes from ``extra_info["recipe"]``, a
    ``data_source`` of the form ``groundrl/<recipe>``, the ``recipe`` reward kwarg or
    ``$GROUNDRL_RECIPE``, in that order. Options and judge come from the reward kwargs,
    else from the environment. ``recipes`` (reward kwarg, a list, or
    ``$GROUNDRL_RECIPES``, comma-separated) names every recipe of a mixed run: with two or
    more, the keys are namespaced and identical on every call (see the module docstring).
    An unknown recipe, or one outside ``recipes``, is a configuration error and raises
    ``ValueError`` naming the choices."""
    import os

    from groundrl.recipes import get_recipe, recipe_names

    env_recipe, env_options, env_judge = env_config()
    extra_info = _extra(extra_info)
    name = extra_info.get("recipe") if isinstance(extra_info, dict) else None
    if name is None and isinstance(data_source, str) and data_source.startswith("groundrl/"):
        name = data_source.split("/", 1)[1]
    name = name or recipe or env_recipe
    if name is None:
        raise ValueError(
            f"cannot tell the groundrl recipe (data_source={data_source!r}); set extra_info['recipe'], "
            f"data_source='groundrl/<recipe>' or reward_kwargs.recipe, with one of {', '.join(recipe_names())}"
        )
    run = _recipe_list(recipes) or _recipe_list(os.environ.get(ENV_RECIPES))
    shared_options = dict(recipe_options) if recipe_options is not None else env_options
    shared_judge = judge if judge is not None else env_judge
    if applicability is None:
        applicability = os.environ.get(ENV_APPLICABILITY, "")
    if len(run) < 2:
        rec = get_recipe(name)
        options, judge_ = options_for(rec, shared_options, shared_judge)
        rubric = _rubrics.get(name, options, judge_)
        return _result(
            rubric, solution_str, _sample(rec.label_field, ground_truth, extra_info), _truthy(applicability)
        )
    if name not in run:
        raise ValueError(f"sample recipe {name!r} is not one of this run's recipes ({', '.join(run)})")
    out: dict[str, Any] = {"score": 0.0}
    for r in run:
        rec = get_recipe(r)
        options, judge_ = options_for(rec, shared_options, shared_judge)
        rubric = _rubrics.get(r, options, judge_)
        verdict = None
        if r == name:
            verdict = rubric.score(
                completion_text(solution_str), **_sample(rec.label_field, ground_truth, extra_info)
            )
            out["score"] = verdict.total
        out[f"{r}/{APPLIES}"] = 1.0 if r == name else 0.0
        out.update(trainer_values(verdict, rubric.names, prefix=f"{r}/", applicability=True))
    return out


def write_dataset(rows: Any, path: str, recipe: str | None = None) -> int:
    """Write groundrl samples as verl's RLHF parquet layout: ``data_source``
    (``groundrl/<recipe>``), chat ``prompt``, ``images``, ``ability``,
    ``reward_model: {style: rule, ground_truth}`` and ``extra_info`` (the other fields,
    ``recipe`` and ``index`` included). Labels whose types differ across rows (Arrow needs
    one type per column) are JSON-encoded as ``{"json": "…"}``, which
    :func:`compute_score` decodes. Returns the number of rows written."""
    import pandas as pd

    from groundrl.recipes import get_recipe

    rows = list(rows)
    records = []
    for i, row in enumerate(rows):
        r = row.get("recipe") or recipe
        if r is None:
            raise ValueError(f"row {i} names no recipe and no recipe= was given")
        rec = get_recipe(r)
        prompt = row.get("prompt", "")
        if isinstance(prompt, str):
            prompt = [{"role": "user", "content": prompt}]
        gt = row.get(rec.label_field) if rec.label_field else None
        skip = {"prompt", "images", "completion", rec.label_field}
        extra = {k: v for k, v in row.items() if k not in skip}
        extra.update(recipe=r, index=i)
        records.append(
            {
                "data_source": f"groundrl/{r}",
                "prompt": prompt,
                "images": list(row.get("images") or []),
                "ability": r,
                "reward_model": {"style": "rule", "ground_truth": gt},
                "extra_info": {"json": json.dumps(extra)},
            }
        )
    kinds = {type(x["reward_model"]["ground_truth"]).__name__ for x in records}
    if len(kinds) > 1 or kinds & {"list", "dict"}:
        for x in records:
            x["reward_model"]["ground_truth"] = {"json": json.dumps(x["reward_model"]["ground_truth"])}
    pd.DataFrame.from_records(records).to_parquet(path)
    return len(records)


if __name__ != "groundrl.integrations.verl":  # loaded by path (verl's custom_reward_function)
    # Re-export the installed module's objects: they pickle by reference (verl's process-
    # based ``remote`` reward manager sends compute_score to Ray workers), and the rubric
    # cache is shared with code that imports the module.
    from groundrl.integrations import verl as _installed

    compute_score = _installed.compute_score  # noqa: F811
    make_compute_score = _installed.make_compute_score  # noqa: F811
