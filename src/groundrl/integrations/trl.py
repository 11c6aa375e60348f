"""TRL adapter: a rubric as the ``reward_funcs`` and ``reward_weights`` of ``GRPOTrainer``.

TRL calls each reward function as ``f(prompts=…, completions=…, completion_ids=…,
**columns, trainer_state=…, log_extra=…, log_metric=…)`` with one value per completion
in every column, sums ``weight · reward`` with ``nansum`` (``None`` → NaN → ignored) and
logs ``rewards/<function name>/mean``. So:

* an additive rubric (``aggregate="sum"``) becomes **one function per part**, named after
  the part, with the part's weight (zero-weight metrics are logged but not summed);
  batched (judge-backed) parts become **async** functions (run in a worker thread), so
  TRL's ``asyncio.gather`` overlaps several judges instead of waiting on each in turn
  (``async_judges=False`` turns that off);
* a gated rubric (Argos) cannot be expressed as a weighted sum, so it becomes one
  function ``reward`` (weight 1) returning the gated total, plus every part as a
  zero-weight function for logging. The batch is scored once and shared.

Each part's reasons go to the completions table via ``log_extra`` as ``<part>_reason``.

Usage::

    funcs, weights = reward_funcs("reinforced_planning", action_map="map.json")
    funcs, weights = reward_funcs("proxy_grm", judge={"backend": "openai", "model": "m",
                                                      "url": "http://127.0.0.1:8000/v1"})
    trainer = GRPOTrainer(model, reward_funcs=funcs,
                          args=GRPOConfig(..., reward_weights=weights), train_dataset=ds)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from groundrl.integrations.common import completion_text
from groundrl.recipes.resolve import resolve_rubric
from groundrl.results import part_values
from groundrl.rubric import Part, Rubric
from groundrl.types import Verdict

# Keys TRL adds to the reward kwargs that are not dataset columns.
_TRL_KEYS = frozenset({"trainer_state", "log_extra", "log_metric", "environments", "completion_ids"})


def _samples(prompts: list[Any] | None, n: int, columns: Mapping[str, object]) -> list[dict[str, object]]:
    """One sample per completion from TRL's columns (one list per dataset field)."""
    samples: list[dict[str, object]] = [{} for _ in range(n)]
    for key, values in columns.items():
        if key in _TRL_KEYS:
            continue
        if not isinstance(values, (list, tuple)) or len(values) != n:
            raise ValueError(
                f"column {key!r} has {len(values) if isinstance(values, (list, tuple)) else 'no'} values for "
                f"{n} completions; TRL passes one value per completion"
            )
        for s, v in zip(samples, values, strict=True):
            s[key] = v
    if prompts is not None:
        for s, p in zip(samples, prompts, strict=False):
            s.setdefault("prompt", p)
    return samples


class _BatchInputs:
    """The texts and sample dicts of one TRL batch, built once and shared by the part
    functions of a rubric (issue 41: each function rebuilt them, once per part).

    TRL hands every reward function of one step the same ``completions`` list and the
    same column lists. The cache holds those objects themselves and is reused only when
    every one is the same object again (an ``id`` alone could be reused by a later
    batch once the earlier list is freed)."""

    def __init__(self) -> None:
        self._objs: tuple[Any, ...] = ()
        self._texts: list[str] = []
        self._samples: list[dict[str, object]] = []

    def get(
        self, prompts: Any, completions: list[Any], kwargs: Mapping[str, object]
    ) -> tuple[list[str], list[dict[str, object]]]:
        objs = (completions, prompts, *(v for k, v in kwargs.items() if k not in _TRL_KEYS))
        old = self._objs
        if len(old) != len(objs) or any(a is not b for a, b in zip(old, objs, strict=True)):
            self._texts = [completion_text(c) for c in completions]
            self._samples = _samples(prompts, len(self._texts), kwargs)
            self._objs = objs
        return self._texts, self._samples


class _BatchScorer:
    """Scores a TRL batch once and shares the verdicts among the part functions.

    TRL hands the same ``completions`` list object to every reward function of one step,
    so its identity is the cache key. The list itself is held (not its ``id``, which a
    later batch's list could reuse once this one is freed)."""

    def __init__(self, rubric: Rubric) -> None:
        self.rubric = rubric
        self._key: tuple[Any, int] | None = None
        self._verdicts: list[Verdict] = []
        self._logged = False

    def verdicts(self, prompts, completions, kwargs) -> list[Verdict]:
        key = self._key
        if key is None or key[0] is not completions or key[1] != len(completions):
            key = (completions, len(completions))
            texts = [completion_text(c) for c in completions]
            samples = _samples(prompts, len(texts), kwargs)
            self._verdicts = self.rubric.score_batch(texts, samples)
            self._key = key
            self._logged = False
            log_extra = kwargs.get("log_extra")
            if callable(log_extra):
                for name in self.rubric.names:
                    log_extra(f"{name}_reason", [v.parts[name].reason for v in self._verdicts])
        return self._verdicts


def _check(out: list[Any], completions: list[Any]) -> list[Any]:
    if len(out) != len(completions):  # guard TRL's own check with a clearer message
        raise RuntimeError(f"groundrl produced {len(out)} rewards for {len(completions)} completions")
    return out


def _total_func(scorer: _BatchScorer, name: str | None) -> Callable[..., list[float | None]]:
    """Reads a shared, once-per-batch scoring (gated rubrics: the total needs every part)."""

    def reward(prompts=None, completions=None, completion_ids=None, **kwargs):
        if completions is None:
            raise ValueError("TRL reward function called without completions")
        verdicts = scorer.verdicts(prompts, completions, kwargs)
        if name is None:
            return _check([v.total for v in verdicts], completions)
        return _check([part_values(v, (name,))[name] for v in verdicts], completions)

    reward.__name__ = reward.__qualname__ = name or "reward"
    return reward


def _score_part(
    part: Part, prompts, completions, kwargs, timeout: float | None = None, inputs: _BatchInputs | None = None
) -> list[float | None]:
    if completions is None:
        raise ValueError("TRL reward function called without completions")
    if inputs is None:
        texts = [completion_text(c) for c in completions]
        samples = _samples(prompts, len(texts), kwargs)
    else:
        texts, samples = inputs.get(prompts, completions, kwargs)
    scores = part.score_batch(texts, samples, timeout)
    log_extra = kwargs.get("log_extra")
    if callable(log_extra):
        log_extra(f"{part.name}_reason", [sc.reason for sc in scores])
    return _check([sc.value for sc in scores], completions)


def _part_func(
    part: Part, async_judges: bool, timeout: float | None = None, inputs: _BatchInputs | None = None
) -> Callable[..., Any]:
    reward: Callable[..., Any]  # TRL awaits a coroutine function, calls a plain one
    if part.batched and async_judges:
        # in a worker thread, beside the others: its own inputs, no shared cache to race on
        async def awaited(prompts=None, completions=None, completion_ids=None, **kwargs):
            return await asyncio.to_thread(_score_part, part, prompts, completions, kwargs, timeout)

        reward = awaited
    else:

        def called(prompts=None, completions=None, completion_ids=None, **kwargs):
            return _score_part(part, prompts, completions, kwargs, timeout, inputs)

        reward = called
    reward.__name__ = reward.__qualname__ = part.name
    return reward


def reward_funcs(
    recipe_or_rubric: str | Rubric,
    async_judges: bool = True,
    *,
    recipe_options: Mapping[str, Any] | None = None,
    judge: Any = None,
    **options: Any,
) -> tuple[list[Callable[..., Any]], list[float]]:
    """``(funcs, weights)`` for ``GRPOTrainer(reward_funcs=funcs)`` and
    ``GRPOConfig(reward_weights=weights)``. See the module docstring.

    Recipe options come as ``recipe_options={...}`` or keyword arguments; ``judge`` is a
    :class:`~groundrl.judges.config.JudgeConfig`, its mapping (``{"backend": "openai",
    "model": …, "url": …}``) or a ready judge object."""
    rubric = resolve_rubric(recipe_or_rubric, recipe_options, judge, **options)
    if rubric.aggregate == "sum":
        inputs = _BatchInputs()  # shared by the plain (non-async) part functions
        return [
            _part_func(p, async_judges, rubric.part_timeout, inputs) for p in rubric.parts
        ], rubric.weights
    scorer = _BatchScorer(rubric)
    funcs = [_total_func(scorer, None)] + [_total_func(scorer, name) for name in rubric.names]
    return funcs, [1.0] + [0.0] * len(rubric.names)
