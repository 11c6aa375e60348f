"""OpenRLHF adapter: a ``reward_func(queries, prompts, labels, **kwargs)`` file for
``--remote_rm_url /path/to/groundrl/integrations/openrlhf.py`` (with ``--label_key``).

OpenRLHF passes ``queries`` = prompt + response text, the ``prompts`` they start with and
one ``label`` string per sample, and accepts ``{"rewards", "scores", "extra_logs"}``.
The completion is the query with its prompt prefix removed. The label fills the recipe's
label field; a label that is a JSON object is read as a dict of sample fields instead
(so several fields, e.g. ``{"gold": [...], "action_map": "map.json"}``, fit one label).

The module-level ``reward_func`` is configured by environment variables set on the Ray
workers (:func:`groundrl.integrations.common.env_config`): ``GROUNDRL_RECIPE``
(required), recipe options as ``GROUNDRL_OPTIONS`` (JSON) or ``GROUNDRL_OPTION_<NAME>``,
and the judge as ``GROUNDRL_JUDGE`` (JSON) or ``GROUNDRL_JUDGE_BACKEND`` /
``GROUNDRL_JUDGE_MODEL`` / ``GROUNDRL_JUDGE_URL`` / …. On Ray, set them in the job's
runtime environment (``ray job submit --runtime-env-json '{"env_vars": {...}}'``) so
every worker sees them. Or build a function with :func:`make_reward_func`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from groundrl.integrations.common import RubricCache, env_config, label_field, resolve_rubric
from groundrl.results import TRAINER_NOT_APPLICABLE, part_columns
from groundrl.rubric import Rubric


def strip_prompt(query: str, prompt: str) -> str:
    """The response part of an OpenRLHF query (``query = prompt + response``)."""
    if isinstance(query, str) and isinstance(prompt, str) and query.startswith(prompt):
        return query[len(prompt) :]
    return query if isinstance(query, str) else ""


def label_to_sample(label: Any, field: str | None) -> dict[str, Any]:
    if isinstance(label, dict):
        return dict(label)
    if isinstance(label, str) and label.lstrip().startswith("{"):
        try:
            obj = json.loads(label)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
            obj = None
        if isinstance(obj, dict):
            return obj
    return {field: label} if field is not None and label is not None else {}


def score_queries(
    rubric: Rubric,
    field: str | None,
    queries: Sequence[str],
    prompts: Sequence[str],
    labels: Sequence[Any] | None,
) -> dict[str, Any]:
    """Plain-Python core shared by the reward function and the HTTP server."""
    labels = list(labels) if labels is not None else [None] * len(queries)
    if not (len(queries) == len(prompts) == len(labels)):
        raise ValueError(
            f"queries ({len(queries)}), prompts ({len(prompts)}) and labels ({len(labels)}) differ in length"
        )
    completions = [strip_prompt(q, p) for q, p in zip(queries, prompts, strict=True)]
    samples = [label_to_sample(lab, field) for lab in labels]
    verdicts = rubric.score_batch(completions, samples)
    rewards = [v.total for v in verdicts]
    extra = part_columns(verdicts, rubric.names, TRAINER_NOT_APPLICABLE)
    return {"rewards": rewards, "scores": rewards, "extra_logs": extra}


def _as_tensors(out: dict[str, Any]) -> dict[str, Any]:
    try:
        import torch
    except ImportError:  # pragma: no cover - OpenRLHF always has torch
        return out
    return {
        "rewards": torch.tensor(out["rewards"], dtype=torch.float32),
        "scores": torch.tensor(out["scores"], dtype=torch.float32),
        "extra_logs": {k: torch.tensor(v, dtype=torch.float32) for k, v in out["extra_logs"].items()},
    }


def make_reward_func(
    recipe_or_rubric: str | Rubric,
    label: str | None = None,
    tensors: bool = True,
    *,
    recipe_options: Mapping[str, Any] | None = None,
    judge: Any = None,
    **options: Any,
) -> Callable[..., dict[str, Any]]:
    """An OpenRLHF ``reward_func`` for one recipe (or rubric): options as
    ``recipe_options={...}`` or keywords, ``judge`` as a mapping, a JudgeConfig or a
    judge object; ``label`` overrides the field the label fills."""
    rubric = resolve_rubric(recipe_or_rubric, recipe_options, judge, **options)
    field = label or label_field(recipe_or_rubric)

    def reward_func(queries, prompts, labels=None, **kwargs):
        out = score_queries(rubric, field, queries, prompts, labels)
        return _as_tensors(out) if tensors else out

    return reward_func


_rubrics = RubricCache()


def reward_func(queries, prompts, labels=None, **kwargs):
    recipe, options, judge = env_config()
    if not recipe:
        raise RuntimeError(
            "set GROUNDRL_RECIPE (e.g. reinforced_planning) on the workers that load this reward_func"
        )
    from groundrl.recipes import get_recipe

    out = score_queries(
        _rubrics.get(recipe, options, judge), get_recipe(recipe).label_field, queries, prompts, labels
    )
    return _as_tensors(out)
