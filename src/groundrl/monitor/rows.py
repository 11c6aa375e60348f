"""Per-sample rows for the monitor from what each trainer already produces.

A row is ``{"completion", "reward", "truth"?, "format"?, "accuracy"?, "group"?}``; the
config names which logged value plays each role (``reward: judge``, ``truth: env_success``).

* TRL: the trainer's own per-sample log of the latest generation batch (prompts,
  completions and every reward function's values — what its completions table shows);
* verl / OpenRLHF: the dicts ``compute_score`` returns (``{"score", **parts}``,
  :mod:`groundrl.integrations.verl`) beside the completions they scored;
* offline: the records of a samples file (one JSON object per sample with ``step``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any, NotRequired, TypedDict

from groundrl.integrations.common import completion_text
from groundrl.monitor.config import MonitorConfig
from groundrl.monitor.signals import num


class MonitorRow(TypedDict):
    """One sample as the monitor reads it (``format`` / ``accuracy`` when the config
    names those roles); ``group``: the GRPO group (any hashable id), ``None`` without."""

    completion: str
    reward: float | None
    group: object
    truth: float | None
    format: NotRequired[float | None]
    accuracy: NotRequired[float | None]


def _with_roles(row: MonitorRow, cfg: MonitorConfig, get: Callable[[str], object]) -> MonitorRow:
    """``row`` with the values the config's ``format`` / ``accuracy`` roles name (numbers
    or ``None``); ``truth`` is set already."""
    if cfg.format:
        row["format"] = num(get(cfg.format))
    if cfg.accuracy:
        row["accuracy"] = num(get(cfg.accuracy))
    return row


def row_from_record(
    record: Mapping[str, Any], cfg: MonitorConfig, reward_key: str | None = None
) -> MonitorRow:
    """One sample record (a verl ``compute_score`` dict with its completion, or a line of
    a samples file) as a monitor row. The reward is ``record[cfg.reward]``, falling back
    to ``score`` (verl's key) and then ``reward``."""
    key = reward_key or cfg.reward
    reward = record.get(key)
    if reward is None:
        reward = record.get("score", record.get("reward"))
    row: MonitorRow = {
        "completion": str(record.get("completion", record.get("solution_str", "")) or ""),
        "reward": num(reward),
        "group": record.get("group", record.get("uid")),
        "truth": num(record.get(cfg.truth)) if cfg.truth else None,
    }
    return _with_roles(row, cfg, record.get)


def rows_from_scores(
    scores: Sequence[Mapping[str, Any]],
    completions: Sequence[Any],
    cfg: MonitorConfig,
    group_size: int | None = None,
) -> list[MonitorRow]:
    """verl / OpenRLHF: the per-sample dicts ``compute_score`` returned for one step and the
    completions they scored (same order). ``group_size`` (rollouts per prompt, laid out
    consecutively) sets the group of each sample when the dicts carry none."""
    if len(scores) != len(completions):
        raise ValueError(f"rows_from_scores: {len(scores)} score dicts for {len(completions)} completions")
    rows = []
    for i, (s, c) in enumerate(zip(scores, completions, strict=True)):
        rec = dict(s) if isinstance(s, Mapping) else {"score": s}
        rec.setdefault("completion", c)
        if group_size and rec.get("group") is None and rec.get("uid") is None:
            rec["group"] = i // group_size
        rows.append(row_from_record(rec, cfg))
    return rows


def _weighted_total(rewards: Mapping[str, Sequence[float]], weights: Sequence[float], i: int) -> float | None:
    vals = [(float(rewards[n][i]), w) for n, w in zip(rewards, weights, strict=False)]
    finite = [(v, w) for v, w in vals if math.isfinite(v)]
    return sum(v * w for v, w in finite) if finite else None  # TRL: nansum; all-NaN = unscorable


def trainer_weights(trainer: Any, n: int) -> list[float]:
    """A TRL trainer's ``reward_weights`` (a tensor) as floats; ``n`` ones without them."""
    raw = getattr(trainer, "reward_weights", None)
    return [float(w) for w in raw.tolist()] if raw is not None and hasattr(raw, "tolist") else [1.0] * n


def rows_from_trl(trainer: Any, cfg: MonitorConfig) -> list[MonitorRow]:
    """The latest generation batch of a TRL ``GRPOTrainer`` (its ``_logs``, the data of the
    completions table): one row per completion, consecutive ``num_generations`` rows
    forming a group."""
    logs = getattr(trainer, "_logs", None) or {}
    completions = list(logs.get("completion", ()))
    rewards = {k: list(v) for k, v in (logs.get("rewards") or {}).items()}
    names = list(getattr(trainer, "reward_func_names", rewards))
    rewards = {n: rewards[n] for n in names if n in rewards and len(rewards[n]) == len(completions)}
    weights = trainer_weights(trainer, len(rewards))
    g = int(getattr(trainer, "num_generations", 0) or 0)

    def value(name: str | None, i: int) -> float | None:
        if name is None or name not in rewards:
            return None
        return num(rewards[name][i])

    rows = []
    for i, c in enumerate(completions):
        reward = _weighted_total(rewards, weights, i) if cfg.reward == "reward" else value(cfg.reward, i)
        row: MonitorRow = {
            "completion": completion_text(c),
            "reward": reward,
            "group": i // g if g else None,
            "truth": value(cfg.truth, i) if cfg.truth else None,
        }
        rows.append(_with_roles(row, cfg, partial(value, i=i)))
    return rows
