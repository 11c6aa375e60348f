"""What a run will import and how it will be launched, checked before any stage runs
(``groundrl train --dry-run``; issue 35 item 3).

A GPU run that dies at its third stage has spent the first two stages' hours. The checks
here read the validated :class:`~groundrl.train.config.TrainConfig` (and the accelerate
launch file, when given) and find, stage by stage, what would fail later:

* packages a setting needs: ``use_vllm`` → vLLM; ``model_kwargs.attn_implementation:
  flash_attention_2`` → flash-attn; a DeepSpeed launch or a ``deepspeed:`` trainer field
  → DeepSpeed (and the file it names); ``peft.load_in_4bit`` → bitsandbytes; each
  ``report_to`` tracker (``report_to: [wandb]`` without wandb fails inside transformers
  at the first step);
* the batch geometry on ``num_processes`` ranks: TRL needs the global generation batch
  (``per_device_train_batch_size × steps_per_generation × processes``) to be whole groups
  of ``num_generations``; C-GRPO and the online filter need whole groups on each rank;
  the online filter's buffer must be whole optimiser steps.

Each finding names the stage, the problem and what to install or change. Nothing is
imported: packages are looked up with :func:`importlib.util.find_spec`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundrl.train.config import StageConfig, TrainConfig, read_yaml
from groundrl.train.online_filter import check_group_layout, steps_per_buffer


@dataclass(frozen=True)
class Finding:
    stage: str
    problem: str
    fix: str

    def __str__(self) -> str:
        return f"[{self.stage}] {self.problem}" + (f"; {self.fix}" if self.fix else "")


def installed(module: str) -> bool:
    """Whether ``module`` can be imported here (looked up, not imported)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


@dataclass(frozen=True)
class Launch:
    """The launch a run will have: process count and distributed type (from the accelerate
    config file when given)."""

    num_processes: int = 1
    distributed_type: str = "NO"
    source: str = ""

    @classmethod
    def read(cls, path: str | Path | None, num_processes: int | None) -> Launch:
        if path is None:
            return cls(num_processes or 1)
        raw = read_yaml(path)
        if not isinstance(raw, Mapping):
            raise ValueError(f"{path}: an accelerate config must be a mapping")
        n = num_processes or int(raw.get("num_processes") or 1)
        return cls(n, str(raw.get("distributed_type") or "NO").upper(), str(path))


# report_to name -> (the modules transformers looks for, what to install) [ours: the extras]
REPORTERS: dict[str, tuple[tuple[str, ...], str]] = {
    "tensorboard": (("tensorboard", "tensorboardX"), "pip install 'groundrl[train]' (or tensorboard)"),
    "wandb": (("wandb",), "pip install 'groundrl[wandb]' (or wandb), then `wandb login`"),
    "trackio": (("trackio",), "pip install 'groundrl[trackio]' (or trackio)"),
    "mlflow": (("mlflow",), "pip install mlflow"),
    "comet_ml": (("comet_ml",), "pip install comet_ml"),
    "clearml": (("clearml",), "pip install clearml"),
    "swanlab": (("swanlab",), "pip install swanlab"),
}


def _trackers(st: StageConfig) -> list[Finding]:
    names = st.args.get("report_to") or []
    out = []
    for name in [names] if isinstance(names, str) else names:
        spec = REPORTERS.get(str(name))
        if spec and not any(installed(m) for m in spec[0]):
            out.append(
                Finding(st.name, f"{st.kind.trainer}.report_to names {name}, which is not installed", spec[1])
            )
    return out


def missing_reporters(cfg: TrainConfig) -> list[str]:
    """Each stage's ``report_to`` tracker that is not installed here, with what to install."""
    return [str(f) for st in cfg.stages for f in _trackers(st)]


def _needs(stage: str, setting: str, module: str, package: str, install: str = "") -> list[Finding]:
    if installed(module):
        return []
    return [
        Finding(
            stage, f"{setting} needs {package}, which is not installed", install or f"pip install {package}"
        )
    ]


def _packages(st: StageConfig, launch: Launch) -> list[Finding]:
    out: list[Finding] = []
    args, settings = st.args, st.settings
    if args.get("use_vllm"):
        out += _needs(
            st.name, "use_vllm: true", "vllm", "vLLM", "pip install 'trl[vllm]' (a vLLM TRL supports)"
        )
    attn = settings.hardware.model_kwargs.get("attn_implementation")
    if attn == "flash_attention_2":
        out += _needs(st.name, "attn_implementation: flash_attention_2", "flash_attn", "flash-attn")
    ds = args.get("deepspeed")
    if ds or launch.distributed_type == "DEEPSPEED":
        where = f"deepspeed: {ds}" if ds else f"the DeepSpeed launch ({launch.source})"
        out += _needs(st.name, where, "deepspeed", "deepspeed")
    if isinstance(ds, str) and not Path(ds).is_file():
        out.append(
            Finding(st.name, f"deepspeed: {ds} is not a file", "give the path of a DeepSpeed JSON config")
        )
    if settings.hardware.peft is not None and settings.hardware.peft.load_in_4bit:
        out += _needs(
            st.name,
            "peft.load_in_4bit: true",
            "bitsandbytes",
            "bitsandbytes",
            "pip install bitsandbytes (CUDA)",
        )
    out += _trackers(st)
    return out


def _int(args: Mapping[str, Any], key: str, default: int) -> int:
    v = args.get(key)
    return default if v is None else int(v)


def _geometry(st: StageConfig, processes: int) -> list[Finding]:
    if st.kind.trainer != "grpo":
        return []
    args = st.args
    per_device = _int(args, "per_device_train_batch_size", 8)
    accum = _int(args, "gradient_accumulation_steps", 1)
    g = _int(args, "num_generations", 8)
    steps = _int(args, "steps_per_generation", accum)
    out: list[Finding] = []
    online = st.blocks.get("online_filter")
    if online is not None:
        try:
            steps = steps_per_buffer(online, per_device, accum, processes, g) * accum
        except ValueError as e:
            return [Finding(st.name, f"on {processes} process(es): {e}", "")]
    total = per_device * steps * processes
    if total % g:
        out.append(
            Finding(
                st.name,
                f"on {processes} process(es): the generation batch is {per_device} × {steps} × {processes} = "
                f"{total} rows, not whole groups of num_generations {g}",
                "change per_device_train_batch_size, gradient_accumulation_steps or num_generations",
            )
        )
    whole = {"C-GRPO": st.kind.name == "cgrpo", "online_filter": online is not None}
    for who in (w for w, on in whole.items() if on):
        try:
            check_group_layout(per_device, steps, g, who=who)
        except ValueError as e:
            out.append(Finding(st.name, f"on {processes} process(es): {e}", ""))
    return out


def preflight(cfg: TrainConfig, launch: Launch | None = None) -> list[Finding]:
    """Every problem found in ``cfg`` for ``launch`` (default: one process), stage by stage."""
    launch = launch or Launch()
    out: list[Finding] = []
    for st in cfg.stages:
        out += _packages(st, launch)
        out += _geometry(st, launch.num_processes)
    return out
