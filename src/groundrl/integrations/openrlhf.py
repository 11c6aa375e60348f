"""OpenRLHF adapter (0.11.x): a ``reward_func(queries, prompts, labels, **kwargs)`` file
for ``--reward.remote_url /path/to/groundrl/integrations/openrlhf.py`` (with
``--data.label_key``), and the core of the server's ``/get_reward``.

OpenRLHF's ``SingleTurnAgentExecutor`` sends ``queries`` =
``tokenizer.decode(prompt_ids + response_ids, skip_special_tokens=False)``, the chat-
templated ``prompts`` and one ``label`` per sample, and reads ``{"rewards", "scores",
"extra_logs"}``. The completion is recovered by
:func:`groundrl.integrations.common.response_text`: image placeholder runs collapsed
(the processor expands ``<|image_pad|>`` into many tokens), the prompt prefix removed
(or the text after the last assistant header when the prompt does not match), and the
trailing EOS / end-of-turn / pad tokens removed (Qwen's and Llama's by default;
``stop_tokens=`` or ``GROUNDRL_STOP_TOKENS='["<|im_end|>", …]'``). The label fills the
recipe's label field; a label that is a JSON object is read as a dict of sample fields.

``rewards`` is the raw total; ``scores`` is the total normalised onto [0, 1] by the
recipe's reward range (:func:`groundrl.integrations.common.reward_range`; override with
``score_range=(lo, hi)`` or ``GROUNDRL_SCORE_RANGE=lo,hi``), which is what OpenRLHF's
dynamic filtering (``--algo.dynamic_filtering_range``, default ``0 1``) compares;
``extra_logs`` has one value per part (a part that does not apply logs 0.0, see
:mod:`groundrl.results`).

The module-level ``reward_func`` is configured by environment variables on the Ray
actors (:func:`groundrl.integrations.common.env_config`): ``GROUNDRL_RECIPE``
(required), options as ``GROUNDRL_OPTIONS`` (JSON) or ``GROUNDRL_OPTION_<NAME>``, the
judge as ``GROUNDRL_JUDGE`` (JSON) or ``GROUNDRL_JUDGE_BACKEND`` / ``_MODEL`` / ``_URL`` /
…; set them in the job's ``runtime_env`` (``ray job submit --runtime-env-json
'{"env_vars": {...}}'``). Or build a function with :func:`make_reward_func`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from groundrl.integrations.common import (
    ENV_SCORE_RANGE,
    RubricCache,
    collapse_vision,
    env_config,
    env_stop_tokens,
    loads_fresh,
    normalise,
    parse_range,
    response_of,
    response_text,
    reward_range,
)
from groundrl.recipes import get_recipe
from groundrl.recipes.resolve import label_field, resolve_rubric
from groundrl.results import TRAINER_NOT_APPLICABLE
from groundrl.rubric import Rubric

if TYPE_CHECKING:  # types only: torch loads when OpenRLHF takes tensors back
    import torch


class RewardBatch(TypedDict):
    """What a reward function returns for one batch: the totals, the scores OpenRLHF
    trains on (the totals normalised, or the totals) and one column per part."""

    rewards: list[float]
    scores: list[float]
    extra_logs: dict[str, list[float | None]]


class RewardTensors(TypedDict):
    """:class:`RewardBatch` as the float32 tensors OpenRLHF takes."""

    rewards: torch.Tensor
    scores: torch.Tensor
    extra_logs: dict[str, torch.Tensor]


def strip_prompt(query: str, prompt: str, stop_tokens: tuple[str, ...] | None = None) -> str:
    """The response part of an OpenRLHF query (see :func:`response_text`)."""
    return response_text(query, prompt, stop_tokens)


def label_to_sample(label: Any, field: str | None) -> dict[str, object]:
    if isinstance(label, dict):
        return dict(label)
    if isinstance(label, str) and label.lstrip().startswith("{"):
        obj = loads_fresh(label)  # a group's labels are one text: decoded once, copied per call
        if isinstance(obj, dict):
            return obj
    return {field: label} if field is not None and label is not None else {}


def score_queries(
    rubric: Rubric,
    field: str | None,
    queries: Sequence[str],
    prompts: Sequence[str],
    labels: Sequence[Any] | None,
    *,
    score_range: tuple[float, float] | None | str = "auto",
    stop_tokens: tuple[str, ...] | None = None,
    recipe: Any = None,
) -> RewardBatch:
    """Plain-Python core shared by the reward function and the HTTP server.

    ``score_range``: ``"auto"`` (the recipe's range, :func:`reward_range`; ``recipe``
    defaults to the rubric's name), a ``(lo, hi)`` pair, or ``None`` (``scores`` =
    ``rewards``)."""
    labels = list(labels) if labels is not None else [None] * len(queries)
    if not (len(queries) == len(prompts) == len(labels)):
        raise ValueError(
            f"queries ({len(queries)}), prompts ({len(prompts)}) and labels ({len(labels)}) differ in length"
        )
    # each distinct prompt collapsed once, not once per response (issue 41)
    collapsed: dict[str, str] = {}
    for p in prompts:
        if isinstance(p, str) and p not in collapsed:
            collapsed[p] = collapse_vision(p)
    completions = [
        response_of(q, collapsed[p] if isinstance(p, str) else "", stop_tokens)
        for q, p in zip(queries, prompts, strict=True)
    ]
    samples = [label_to_sample(lab, field) for lab in labels]
    if len(completions) == 1:  # OpenRLHF 0.11's call: one response (no batch machinery)
        verdicts = [rubric.score_sample(completions[0], samples[0])]
    else:
        verdicts = rubric.score_batch(completions, samples)
    rewards = [v.total for v in verdicts]
    if isinstance(score_range, str):
        score_range = _auto_range(recipe, rubric)
    scores = rewards if score_range is None else [normalise(r, score_range) for r in rewards]
    return {"rewards": rewards, "scores": list(scores), "extra_logs": _columns(verdicts, rubric.names)}


def _columns(verdicts: Sequence[Any], names: Sequence[str]) -> dict[str, list[float | None]]:
    """:func:`groundrl.results.part_columns` with ``TRAINER_NOT_APPLICABLE``, column by
    column (no per-sample row dict)."""
    na = TRAINER_NOT_APPLICABLE
    out: dict[str, list[float | None]] = {}
    for name in names:
        col = out[name] = []
        for v in verdicts:
            s = v.parts.get(name)
            col.append(na if s is None or s.value is None else s.value)
    return out


def _auto_range(recipe: Any, rubric: Rubric) -> tuple[float, float] | None:
    """``GROUNDRL_SCORE_RANGE`` if set, else the recipe's range (the recipe named like the
    rubric when none is given); ``None`` when unknown. Cheap: a few parts summed."""
    if os.environ.get(ENV_SCORE_RANGE):
        return parse_range(os.environ[ENV_SCORE_RANGE])
    rec = recipe
    if rec is None and getattr(rubric, "name", None):
        try:
            rec = get_recipe(rubric.name)
        except (KeyError, ValueError, LookupError):
            return None
    return reward_range(rec, rubric) if rec is not None else None


def _as_tensors(out: RewardBatch) -> RewardBatch | RewardTensors:
    try:
        # lazy: torch only for the tensors OpenRLHF takes back; scoring does not need it
        import numpy as np
        import torch
    except ImportError:  # pragma: no cover - OpenRLHF always has torch
        return out
    # One float32 array, one tensor per row over it: a torch.tensor per list cost 5-20 µs
    # each, more than a cheap reward, on every call (OpenRLHF 0.11 sends one response a
    # call; issue 41). The rows do not overlap: an in-place change stays in its tensor.
    logs = out["extra_logs"]
    table = np.array([out["rewards"], out["scores"], *logs.values()], dtype=np.float32)
    rows = [torch.from_numpy(row) for row in table]
    return {"rewards": rows[0], "scores": rows[1], "extra_logs": dict(zip(logs, rows[2:], strict=True))}


def make_reward_func(
    recipe_or_rubric: str | Rubric,
    label: str | None = None,
    tensors: bool = True,
    *,
    recipe_options: Mapping[str, Any] | None = None,
    judge: Any = None,
    score_range: tuple[float, float] | None | str = "auto",
    stop_tokens: Sequence[str] | None = None,
    **options: Any,
) -> Callable[..., RewardBatch | RewardTensors]:
    """An OpenRLHF ``reward_func`` for one recipe (or rubric): options as
    ``recipe_options={...}`` or keywords, ``judge`` as a mapping, a JudgeConfig or a
    judge object; ``label`` overrides the field the label fills; ``score_range`` and
    ``stop_tokens`` as in :func:`score_queries`."""
    rubric = resolve_rubric(recipe_or_rubric, recipe_options, judge, **options)
    field = label or label_field(recipe_or_rubric)
    stops = tuple(stop_tokens) if stop_tokens is not None else None
    rec = None
    if isinstance(recipe_or_rubric, str):
        rec = get_recipe(recipe_or_rubric)
    rng = _auto_range(rec, rubric) if score_range == "auto" and rec is not None else score_range

    def reward_func(queries, prompts, labels=None, **kwargs):
        out = score_queries(rubric, field, queries, prompts, labels, score_range=rng, stop_tokens=stops)
        return _as_tensors(out) if tensors else out

    return reward_func


_rubrics = RubricCache()


def reward_func(queries, prompts, labels=None, **kwargs):
    recipe, options, judge = env_config()
    if not recipe:
        raise RuntimeError(
            "set GROUNDRL_RECIPE (e.g. reinforced_planning) on the workers that load this reward_func"
        )

    rec = get_recipe(recipe)
    rubric = _rubrics.get(recipe, options, judge)
    out = score_queries(
        rubric,
        rec.label_field,
        queries,
        prompts,
        labels,
        score_range=_auto_range(rec, rubric),
        stop_tokens=env_stop_tokens(),
    )
    return _as_tensors(out)


if __name__ != "groundrl.integrations.openrlhf":  # loaded by path (OpenRLHF's reward file)
    # Use the installed module's objects, so the rubric cache is shared with it and the
    # function pickles by reference (Ray) instead of by value.
    from groundrl.integrations import openrlhf as _installed

    reward_func = _installed.reward_func  # noqa: F811
    make_reward_func = _installed.make_reward_func  # noqa: F811
