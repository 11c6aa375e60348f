"""Shared plumbing of the reward-model stages: a GRPO trainer on rows built here (not
read by :func:`groundrl.train.grpo.load_rows`), with reward functions given directly.

The model, processor, PEFT and freezing come from the same helpers as ``grpo`` stages
(:mod:`groundrl.train.hardware`), the ``GRPOConfig`` from the stage's effective ``grpo:`` block
(:func:`groundrl.train.config.trainer_args`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any


def model_path(cfg: Mapping[str, Any], out: Path) -> str:
    """The stage's model: a path, or ``tiny`` → the tiny random Qwen2.5-VL built in ``out``."""
    path = cfg.get("model", "tiny")
    if path == "tiny":
        from groundrl.testing.tiny_vlm import build_tiny_vlm

        path = str(build_tiny_vlm(out / "tiny-model", seed=int(cfg.get("seed", 0))))
    return str(path)


def set_threads() -> None:
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")) if torch.cuda.is_available() else 1)


def build_grpo_on_rows(
    cfg: Mapping[str, Any],
    rows: list[dict[str, Any]],
    funcs: Sequence[Callable[..., Any]],
    weights: Sequence[float],
    trainer_cls: type | None = None,
    **trainer_kw: Any,
) -> Any:
    """A GRPO trainer (``trainer_cls``, default :class:`GroundGRPOTrainer`) on ``rows``."""
    from datasets import Dataset
    from trl import GRPOConfig

    from groundrl.train.config import is_tiny_model, machine_defaults, trainer_args
    from groundrl.train.hardware import load_policy, peft_config
    from groundrl.train.trainer import ground_grpo_trainer_class

    set_threads()
    out = Path(cfg.get("output_dir", "runs/train"))
    out.mkdir(parents=True, exist_ok=True)
    tiny = is_tiny_model(cfg.get("model", "tiny"))
    grpo = {**machine_defaults(), **trainer_args("grpo", cfg.get("grpo"), tiny, cfg.get("seed"))}
    args = GRPOConfig(output_dir=str(out), reward_weights=list(weights), **grpo)  # TRL's checks first
    model, processor = load_policy(model_path(cfg, out), cfg, bf16=bool(args.bf16))
    cls = trainer_cls or ground_grpo_trainer_class()
    return cls(
        model=model,
        processing_class=processor,
        reward_funcs=list(funcs),
        args=args,
        train_dataset=Dataset.from_list(rows),
        peft_config=peft_config(cfg),
        **trainer_kw,
    )
