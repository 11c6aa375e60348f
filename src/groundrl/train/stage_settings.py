"""What a stage runner receives: one frozen, typed object per stage, never a mapping.

:func:`groundrl.train.config.load_train_config` builds it once, when the file loads (the
top level overlaid with the stage's keys, every block parsed); a runner reads
``settings.judge``, ``settings.hardware.peft``, ``settings.args`` … and a misspelt field
is an ``AttributeError`` mypy sees, as with TRL's ``GRPOTrainer(args=GRPOConfig)``.

Each stage kind names its settings class (:class:`~groundrl.train.stage_kinds.StageKind`
``settings``): :class:`StageSettings` holds the blocks every stage may have; a kind with
blocks of its own subclasses it with one field per block (:class:`RFTStageSettings`,
:class:`CGRPOStageSettings`, …). A plugin kind that declares no class finds its parsed
blocks in ``settings.blocks``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from groundrl.train.hardware import Hardware

if TYPE_CHECKING:  # types only: these modules bring numpy, read when a stage runs
    from groundrl.judges.config import JudgeConfig
    from groundrl.monitor.config import MonitorConfig
    from groundrl.train.cgrpo import CGRPOConfig
    from groundrl.train.evaluation import EvalConfig
    from groundrl.train.online_filter import OnlineFilterConfig
    from groundrl.train.rft import RFTConfig
    from groundrl.train.rm_data import RMInputConfig
    from groundrl.train.rm_stages import ProxySettings
    from groundrl.train.step_grpo import StepGRPOConfig


@dataclass(frozen=True)
class VerifierSettings:
    """Argos' agentic verifier (``verifier:``): ``tools`` (default: every tool the sample
    supports), ``tau`` (the gate, 0.5 [ours]), ``weights`` per tool, ``masks``: ``boxes``
    (masks from the sample's ``boxes``/``points_masks``) or ``{provider:
    detector_segmenter, detector: PATH, segmenter: PATH}``."""

    tools: list[str] | None = None
    tau: float = 0.5
    weights: dict[str, float] | None = None
    masks: Any = "boxes"


@dataclass(frozen=True)
class StageSettings:
    """One stage's settings as it runs (see the module doc). ``model`` and
    ``output_dir`` are the stage's own: :func:`groundrl.train.stages.run_config` sets the
    previous stage's ``final/`` and the stage's folder before calling the runner.
    ``args`` are the effective ``GRPOConfig``/``SFTConfig`` fields
    (:func:`groundrl.train.config.trainer_args`), already checked against TRL's field table."""

    name: str = "grpo"
    kind: str = "grpo"
    model: str = "tiny"
    output_dir: str = "runs/train"
    data: str | None = None
    seed: int = 0
    args: Mapping[str, Any] = field(default_factory=dict)
    recipe_options: Mapping[str, Any] = field(default_factory=dict)
    judge: JudgeConfig | None = None
    step_grpo: StepGRPOConfig | None = None
    online_filter: OnlineFilterConfig | None = None
    verifier: VerifierSettings | None = None
    hardware: Hardware = field(default_factory=Hardware)
    monitor: MonitorConfig | None = None
    eval: EvalConfig | None = None
    resume_from_checkpoint: str | None = None
    blocks: Mapping[str, Any] = field(default_factory=dict)  # a plugin kind's own blocks, parsed


@dataclass(frozen=True, kw_only=True)
class VerifierFilterSettings(StageSettings):
    threshold: float = 0.7  # Argos: keep a sample whose best rollout scores ≥ 0.7 [Argos §3]


@dataclass(frozen=True, kw_only=True)
class RFTStageSettings(StageSettings):
    rft: RFTConfig
    inputs: RMInputConfig


@dataclass(frozen=True, kw_only=True)
class CGRPOStageSettings(StageSettings):
    cgrpo: CGRPOConfig
    inputs: RMInputConfig


@dataclass(frozen=True, kw_only=True)
class ProxyGRPOSettings(StageSettings):
    proxy: ProxySettings
