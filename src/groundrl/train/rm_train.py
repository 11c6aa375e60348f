"""Shared plumbing of the reward-model stages: a GRPO trainer on rows built here (not
read by :func:`groundrl.train.grpo.load_rows`), with reward functions given directly.

The model, processor, PEFT and freezing come from the same helpers as ``grpo`` stages
(:mod:`groundrl.train.hardware`), the ``GRPOConfig`` from the stage's effective ``grpo:`` block
(:func:`groundrl.train.config.trainer_args`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from groundrl.train.builders import resolve_model, set_threads

__all__ = ["build_grpo_on_rows", "model_path", "set_threads"]


def model_path(cfg: Mapping[str, Any], out: Path) -> str:
    """The stage's model: a path, or ``tiny`` → the tiny random Qwen2.5-VL built in ``out``."""
    return resolve_model(cfg, out)


def build_grpo_on_rows(
    cfg: Mapping[str, Any],
    rows: list[dict[str, Any]],
    funcs: Sequence[Callable[..., Any]],
    weights: Sequence[float],
    trainer_cls: type | None = None,
    **trainer_kw: Any,
) -> Any:
    """A GRPO trainer (``trainer_cls``, default :class:`GroundGRPOTrainer`) on ``rows``
    (:func:`groundrl.train.builders.grpo_trainer`)."""
    from groundrl.train.builders import grpo_trainer

    return grpo_trainer(cfg, rows, funcs, weights, trainer_cls, **trainer_kw)
