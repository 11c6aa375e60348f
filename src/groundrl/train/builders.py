"""The one place a TRL trainer is constructed: threads, the effective trainer arguments
(:func:`groundrl.train.config.trainer_args`, the CPU smoke defaults only for a tiny model,
``use_cpu`` on a machine without CUDA), TRL's own config checks *before* the policy loads,
the policy and processor with the hardware blocks (:mod:`groundrl.train.hardware`), PEFT.

Every trainer of groundrl goes through :func:`grpo_trainer` or :func:`sft_trainer`: the
recipe GRPO stage (:func:`groundrl.train.grpo.build_trainer`), the reward-model GRPO
stages (C-GRPO and Proxy-RL in :mod:`groundrl.train.rm_stages`), the SFT
stage and ``groundrl sft`` (:func:`groundrl.train.sft.build_sft_trainer`) and the RFT /
Proxy-SFT stages (:func:`groundrl.train.rft.build_sft_on_rows`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from groundrl.models.tiny_vlm import build_tiny_vlm
from groundrl.train.config import is_tiny_model, machine_defaults, trainer_args
from groundrl.train.hardware import Hardware, load_policy, peft_config
from groundrl.train.stage_settings import StageSettings


def set_threads() -> None:
    """One torch thread on a CPU (2-thread CPU steps were 18–70× slower here);
    ``OMP_NUM_THREADS`` on a GPU machine."""
    # lazy: torch loads only when a model runs
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")) if torch.cuda.is_available() else 1)


def resolve_model(st: StageSettings, out: Path) -> str:
    """The stage's model: a path, or ``tiny`` → the tiny random Qwen2.5-VL built in ``out``."""
    if st.model == "tiny":
        return str(build_tiny_vlm(out / "tiny-model", seed=st.seed))
    return st.model


def _args(
    kind: str, block: Mapping[str, Any] | None, tiny: bool, seed: Any, output_dir: Path, **extra: Any
) -> Any:
    # lazy: TRL loads only when a trainer is built or its fields are read
    import trl

    cls = trl.GRPOConfig if kind == "grpo" else trl.SFTConfig
    args = {**machine_defaults(), **trainer_args(kind, block, tiny, seed)}
    return cls(output_dir=str(output_dir), **args, **extra)  # TRL's checks, before any model loads


def grpo_trainer(
    st: StageSettings,
    dataset: Any,
    funcs: Sequence[Callable[..., Any]],
    weights: Sequence[float],
    trainer_cls: type | None = None,
    **trainer_kw: Any,
) -> Any:
    """A GRPO trainer (``trainer_cls``, default :class:`~groundrl.train.trainer.GroundGRPOTrainer`)
    for one stage's typed settings ``st`` on ``dataset`` (rows or a ``datasets.Dataset``)."""
    # lazy: datasets loads only when a trainer is built
    from datasets import Dataset

    # lazy: train.trainer brings numpy; loaded only when this runs
    from groundrl.train.trainer import ground_grpo_trainer_class

    set_threads()
    out = Path(st.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    tiny = is_tiny_model(st.model)
    args = _args("grpo", st.args, tiny, st.seed, out, reward_weights=list(weights))
    model, processor = load_policy(resolve_model(st, out), st.hardware, bf16=bool(args.bf16))
    cls = trainer_cls or ground_grpo_trainer_class()
    return cls(
        model=model,
        processing_class=processor,
        reward_funcs=list(funcs),
        args=args,
        train_dataset=dataset if isinstance(dataset, Dataset) else Dataset.from_list(list(dataset)),
        peft_config=peft_config(st.hardware),
        **trainer_kw,
    )


def sft_trainer(
    model: str, dataset: Any, output_dir: str | Path, hw: Hardware, tiny: bool = False, **config: Any
) -> Any:
    """An ``SFTTrainer`` (loss on the completion only) on a local checkpoint; ``hw`` holds
    the typed ``peft``/``freeze``/``image``/``model_kwargs`` blocks, ``config`` the
    ``SFTConfig`` fields."""
    # lazy: datasets loads only when a trainer is built
    from datasets import Dataset
    from trl import SFTTrainer

    set_threads()
    tiny = tiny or is_tiny_model(model)
    args = _args("sft", config, tiny, None, Path(output_dir))
    policy, processor = load_policy(model, hw, bf16=bool(args.bf16))
    return SFTTrainer(
        model=policy,
        args=args,
        train_dataset=dataset if isinstance(dataset, Dataset) else Dataset.from_list(list(dataset)),
        processing_class=processor,
        peft_config=peft_config(hw),
    )
