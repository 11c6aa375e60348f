"""The ``monitor:`` block of a train YAML, parsed once into a frozen :class:`MonitorConfig`.

Every key has a default; a misspelt key (with the nearest key), a wrong type or a value out
of range raises ``ValueError`` naming the key and what is allowed, before any model loads.
The keys and their types are the dataclass fields, read by the one settings parser
(:func:`groundrl.settings.parse_settings`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from groundrl.settings import parse_settings, unknown_key

# Alarm name -> default threshold. Each is [ours: chosen on the demo's honest run, where
# none fires; docs/monitor.md gives the false-alarm rate measured there].
DEFAULT_THRESHOLDS: dict[str, float] = {
    # judge reward vs ground truth (sliding window, compared with the run's own baseline)
    # Spearman(reward, truth) fell this far below its baseline. 0.6, not 0.3: with 64
    # samples per window an honest judge's correlation swung by up to 0.54 (demo, seed 1),
    # so this is a late confirmation; hack_share_rise and shortcut_token are the early ones
    "truth_corr_drop": 0.6,
    "hack_share_rise": 0.1,  # share of high-reward + failed-truth samples rose this much
    # policy-side shortcuts
    "length_growth": 1.5,  # mean completion length / baseline length
    "repetition_rise": 0.2,  # repeated word-trigram share rose this much
    "format_over_accuracy": 0.2,  # format-part gain minus accuracy gain
    "zero_std_groups": 0.95,  # share of GRPO groups whose rewards are all equal
    # a weighted reward part that varied in no group for this many windows in a row (1.0:
    # a whole window of steps): it contributes no gradient, whatever its weight [ours]
    "constant_reward_part": 1.0,
    "shortcut_token": 0.3,  # share of high-reward samples with a token the data never has
    "kl_jump": 5.0,  # KL this many times its recent median
    # judge health on the probe set
    "probe_drop_loss": 0.5,  # share of the baseline perturbation drop that is gone
    "probe_failure_rate": 0.2,  # share of probe items the judge failed to score
    "probe_agreement_drop": 0.2,  # agreement with the probe labels fell this much
    "probe_swap_drop": 0.2,  # pairwise swap consistency fell this much
}

Perturbation = Literal["frames", "patches", "reasoning"]
PERTURBATIONS: tuple[Perturbation, ...] = ("frames", "patches", "reasoning")


@dataclass(frozen=True)
class ProbeConfig:
    """A fixed probe set re-scored every ``every`` steps by the live judge."""

    path: str  # JSON lines: the reward's sample fields + "completion" (+ "gt_score")
    every: int = 50
    judge: str = "reward"  # the reward function (TRL name) that scores probe items
    # a list from PERTURBATIONS, or one of them on its own
    perturbations: tuple[Perturbation, ...] | Perturbation = PERTURBATIONS
    seed: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.perturbations, str):  # one perturbation named on its own
            object.__setattr__(self, "perturbations", (self.perturbations,))
        if self.every < 1:
            raise ValueError(f"monitor.probe.every: expected an integer >= 1, got {self.every!r}")


@dataclass(frozen=True)
class MonitorConfig:
    """Which logged values are the judge reward and the ground truth, window sizes,
    thresholds (merged over :data:`DEFAULT_THRESHOLDS`) and the stop switch.

    Parsed by :func:`groundrl.settings.parse_settings` (:meth:`from_mapping`): an unknown
    key names the nearest one, a wrong type names ``monitor.<key>``; the ranges that a
    type cannot say are checked here.
    """

    reward: str = "reward"  # the reward that trains the policy ("reward" = TRL's weighted total)
    truth: str | None = None  # a zero-weight part / column holding ground truth (e.g. env_success)
    format: str | None = None  # a format part, for "format rises while accuracy is flat"
    accuracy: str | None = None  # an accuracy part; defaults to ``truth``
    window: int = 8  # steps in the sliding window
    baseline_steps: int = 4  # the first steps with a value form each signal's baseline
    min_samples: int = 16  # fewer samples in the window: no value, no alarm
    high_reward: float = 0.8  # "high judge reward": reward >= this
    truth_pass: float = 0.5  # ground truth >= this counts as passed
    reference_column: str | None = None  # dataset column with reference texts (token signal)
    min_high_samples: int = 8  # fewer high-reward samples in the window: no token signal
    # fewer passed or failed samples in the window: no reward-truth correlation (with binary
    # truth and 3 successes it swings by 0.3 between windows of one policy) [ours: demo]
    min_truth_each: int = 8
    examples: int = 3  # example samples kept per alarm
    save_samples: bool = False  # also write every monitored sample to monitor_samples.jsonl
    stop_on_alarm: bool = False
    # alarm -> threshold, the ones given merged over DEFAULT_THRESHOLDS
    thresholds: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    probe: ProbeConfig | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "thresholds", _thresholds(self.thresholds))
        counts = (self.window, self.baseline_steps, self.min_samples, self.min_high_samples)
        if min(*counts, self.min_truth_each) < 1 or self.examples < 0:
            raise ValueError(
                "monitor: window, baseline_steps, min_samples, min_high_samples and min_truth_each must be >= 1 "
                f"and examples >= 0 (got {', '.join(map(str, counts))}, {self.min_truth_each}, {self.examples})"
            )

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> MonitorConfig | None:
        """``None`` for no block; a config otherwise. ``{}`` (``monitor: {}``) is all defaults.

        >>> MonitorConfig.from_mapping({"windw": 3})
        Traceback (most recent call last):
        ...
        groundrl.settings.SettingsError: monitor: unknown key 'windw' (did you mean 'window'?); allowed: ...
        """
        return None if raw is None else parse_settings(cls, raw, "monitor")


def _thresholds(value: Mapping[str, float]) -> dict[str, float]:
    """``value`` merged over :data:`DEFAULT_THRESHOLDS`; each a finite number >= 0."""
    for k in value:
        if k not in DEFAULT_THRESHOLDS:
            raise unknown_key("monitor.thresholds", str(k), list(DEFAULT_THRESHOLDS))
    out = dict(DEFAULT_THRESHOLDS)
    for k, v in value.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"monitor.thresholds.{k}: expected a finite number >= 0, got {v!r}")
        out[k] = float(v)
    return out
