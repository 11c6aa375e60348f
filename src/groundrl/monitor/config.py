"""The ``monitor:`` block of a train YAML, parsed once into a frozen :class:`MonitorConfig`.

Every key has a default; a misspelt key, a wrong type or a value out of range raises
``ValueError`` naming the key and what is allowed, before any model loads.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

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

PERTURBATIONS = ("frames", "patches", "reasoning")


@dataclass(frozen=True)
class ProbeConfig:
    """A fixed probe set re-scored every ``every`` steps by the live judge."""

    path: str  # JSON lines: the reward's sample fields + "completion" (+ "gt_score")
    every: int = 50
    judge: str = "reward"  # the reward function (TRL name) that scores probe items
    perturbations: tuple[str, ...] = PERTURBATIONS
    seed: int = 0


@dataclass(frozen=True)
class MonitorConfig:
    """Which logged values are the judge reward and the ground truth, window sizes,
    thresholds (merged over :data:`DEFAULT_THRESHOLDS`) and the stop switch."""

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
    thresholds: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    probe: ProbeConfig | None = None

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> MonitorConfig | None:
        """``None`` for no block; a config otherwise. ``{}`` (``monitor: {}``) is all defaults."""
        if raw is None:
            return None
        if not isinstance(raw, Mapping):
            raise ValueError(f"monitor: expected a mapping of {_allowed(cls)}, got {type(raw).__name__}")
        _unknown("monitor", raw, _names(cls))
        kw: dict[str, Any] = {}
        for key, value in raw.items():
            if key == "thresholds":
                kw[key] = _thresholds(value)
            elif key == "probe":
                kw[key] = None if value is None else _probe(value)
            else:
                kw[key] = _check_field(cls, "monitor", key, value)
        cfg = cls(**kw)
        if (
            min(cfg.window, cfg.baseline_steps, cfg.min_samples, cfg.min_high_samples, cfg.min_truth_each) < 1
            or cfg.examples < 0
        ):
            raise ValueError(
                "monitor: window, baseline_steps, min_samples, min_high_samples and min_truth_each must be >= 1 "
                f"and examples >= 0 (got {cfg.window}, {cfg.baseline_steps}, {cfg.min_samples}, "
                f"{cfg.min_high_samples}, {cfg.min_truth_each}, {cfg.examples})"
            )
        return cfg


def _names(cls: type) -> list[str]:
    return [f.name for f in fields(cls)]


def _allowed(cls: type) -> str:
    return ", ".join(_names(cls))


def _unknown(where: str, raw: Mapping[str, Any], allowed: list[str]) -> None:
    bad = [k for k in raw if k not in allowed]
    if bad:
        raise ValueError(f"{where}: unknown key {bad[0]!r}; allowed keys: {', '.join(allowed)}")


_TYPES = {
    "str": (str,),
    "str | None": (str, type(None)),
    "int": (int,),
    "float": (int, float),
    "bool": (bool,),
}


def _check_field(cls: type, where: str, key: str, value: Any) -> Any:
    ftype = {f.name: f.type for f in fields(cls)}[key]
    ok = _TYPES.get(str(ftype))
    if ok is not None:
        wrong = not isinstance(value, ok) or (isinstance(value, bool) and bool not in ok)
        if wrong:
            raise ValueError(f"{where}.{key}: expected {ftype}, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{where}.{key}: expected a finite number, got {value!r}")
    return float(value) if ftype == "float" else value


def _thresholds(value: Any) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise ValueError(
            f"monitor.thresholds: expected a mapping of alarm -> number over {sorted(DEFAULT_THRESHOLDS)}"
        )
    _unknown("monitor.thresholds", value, list(DEFAULT_THRESHOLDS))
    out = dict(DEFAULT_THRESHOLDS)
    for k, v in value.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"monitor.thresholds.{k}: expected a finite number >= 0, got {v!r}")
        out[k] = float(v)
    return out


def _probe(value: Any) -> ProbeConfig:
    if not isinstance(value, Mapping):
        raise ValueError(f"monitor.probe: expected a mapping of {_allowed(ProbeConfig)}")
    _unknown("monitor.probe", value, _names(ProbeConfig))
    if "path" not in value:
        raise ValueError("monitor.probe.path: required (a JSON-lines probe set)")
    kw: dict[str, Any] = {}
    for k, v in value.items():
        if k == "perturbations":
            items = [v] if isinstance(v, str) else v
            if not isinstance(items, (list, tuple)) or any(p not in PERTURBATIONS for p in items):
                raise ValueError(
                    f"monitor.probe.perturbations: expected a list from {list(PERTURBATIONS)}, got {v!r}"
                )
            kw[k] = tuple(items)
        else:
            kw[k] = _check_field(ProbeConfig, "monitor.probe", k, v)
    if kw.get("every", 1) < 1:
        raise ValueError(f"monitor.probe.every: expected an integer >= 1, got {kw['every']!r}")
    return ProbeConfig(**kw)
