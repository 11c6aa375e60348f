"""OpenRLHF adapter: a ``reward_func(queries, prompts, labels, **kwargs)`` file for
``--remote_rm_url /path/to/groundrl/integrations/openrlhf.py`` (with ``--label_key``).

OpenRLHF passes ``queries`` = prompt + response text, the ``prompts`` they start with and
one ``label`` string per sample, and accepts ``{"rewards", "scores", "extra_logs"}``.
The completion is the query with its prompt prefix removed. The label fills the recipe's
label field; a label that is a JSON object is read as a dict of sample fields instead
(so several fields, e.g. ``{"gold": [...], "action_map": "map.json"}``, fit one label).

The recipe for the module-level ``reward_func`` is chosen by environment variables set
on the Ray workers: ``GROUNDRL_RECIPE`` (required) and ``GROUNDRL_ACTION_MAP``
(optional, reinforced_planning). Or build one with :func:`make_reward_func`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from groundrl.integrations.common import label_field, resolve_rubric
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
        except ValueError:
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
    extra = {
        name: [0.0 if v.parts[name].value is None else v.parts[name].value for v in verdicts]
        for name in rubric.names
    }
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
    recipe_or_rubric: str | Rubric, label: str | None = None, tensors: bool = True, **options: Any
) -> Callable[..., dict[str, Any]]:
    rubric = resolve_rubric(recipe_or_rubric, **options)
    field = label or label_field(recipe_or_rubric)

    def reward_func(queries, prompts, labels=None, **kwargs):
        out = score_queries(rubric, field, queries, prompts, labels)
        return _as_tensors(out) if tensors else out

    return reward_func


@lru_cache(maxsize=4)
def _env_reward_func(recipe: str, action_map: str | None) -> Callable[..., dict[str, Any]]:
    opts = {"action_map": action_map} if action_map else {}
    return make_reward_func(recipe, **opts)


def reward_func(queries, prompts, labels=None, **kwargs):
    recipe = os.environ.get("GROUNDRL_RECIPE")
    if not recipe:
        raise RuntimeError(
            "set GROUNDRL_RECIPE (e.g. reinforced_planning) on the workers that load this reward_func"
        )
    return _env_reward_func(recipe, os.environ.get("GROUNDRL_ACTION_MAP"))(queries, prompts, labels, **kwargs)
