"""The monitor as a ``transformers.TrainerCallback`` for TRL's ``GRPOTrainer``.

On every log step it reads the trainer's per-sample log of the latest generation batch
(:func:`groundrl.monitor.rows.rows_from_trl`) and the step's metrics (``kl``), feeds the
:class:`~groundrl.monitor.monitor.Monitor`, re-scores the probe set with the live reward
function every ``probe.every`` steps, and appends one row ``{"stage", "step",
"monitor/…": value, "alarms": [...]}`` to the run's ``log.jsonl``. Its own row, not the
``logs`` dict, because the JSON logger keeps numbers only and ``alarms`` is a list.
With ``stop_on_alarm`` the first alarm ends training (the model is saved as usual).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from groundrl.monitor.config import MonitorConfig
from groundrl.monitor.monitor import Monitor
from groundrl.monitor.probes import load_probe, run_probe
from groundrl.monitor.rows import MonitorRow, rows_from_trl, trainer_weights

log = logging.getLogger("groundrl.monitor")

MONITOR_LOG = "log.jsonl"
SAMPLES_LOG = "monitor_samples.jsonl"
_PROBE_SKIP = ("completion", "gt_score", "prompt")


def reward_score_fn(trainer: Any, name: str) -> Callable[[Sequence[Mapping[str, Any]]], list[float | None]]:
    """Score probe items with the trainer's reward function ``name`` (``reward``: every
    function, summed with the trainer's weights), called as TRL calls it."""
    funcs = list(getattr(trainer, "reward_funcs", ()))
    names = list(getattr(trainer, "reward_func_names", ()))
    raw = getattr(trainer, "reward_weights", None)  # a tensor on TRL's trainer
    weights = (
        [float(w) for w in raw.tolist()] if raw is not None and hasattr(raw, "tolist") else [1.0] * len(funcs)
    )
    if name != "reward" and name not in names:
        raise ValueError(f"monitor.probe.judge: no reward function {name!r}; the trainer has {names}")
    chosen = [(f, w) for f, n, w in zip(funcs, names, weights, strict=False) if name in ("reward", n)]

    def call(f: Any, items: Sequence[Mapping[str, Any]]) -> list[Any]:
        columns = {
            k: [it.get(k) for it in items]
            for k in sorted({k for it in items for k in it})
            if k not in _PROBE_SKIP
        }
        out = f(
            prompts=[it.get("prompt", "") for it in items],
            completions=[it["completion"] for it in items],
            completion_ids=None,
            **columns,
        )
        return list(asyncio.run(out) if inspect.iscoroutine(out) else out)  # TRL: async def rewards

    def score(items: Sequence[Mapping[str, Any]]) -> list[float | None]:
        total: list[float | None] = [0.0] * len(items)
        for f, w in chosen:
            for i, v in enumerate(call(f, items)):
                t = total[i]
                total[i] = None if v is None or t is None else t + w * float(v)
        return total

    return score


def _save_samples(path: Path, step: int, rows: Sequence[MonitorRow], config: MonitorConfig) -> None:
    """The step's rows under the config's own names, so ``groundrl monitor`` with the same
    ``monitor:`` block replays exactly these signals."""
    names = {
        "reward": config.reward,
        "truth": config.truth,
        "format": config.format,
        "accuracy": config.accuracy,
    }
    with path.open("a", encoding="utf-8") as f:
        for r in rows:
            rec = {"step": step, "completion": r["completion"], "group": r.get("group")}
            rec.update({col: r.get(k) for k, col in names.items() if col and k in r})
            f.write(json.dumps(rec) + "\n")


def monitor_callback(config: MonitorConfig, out_dir: Path, stage: str, trainer: Any) -> Any:
    """A callback that monitors ``trainer`` and appends its rows to ``out_dir/log.jsonl``."""
    # lazy: transformers loads only when the callback joins a trainer
    from transformers import TrainerCallback

    probe_items = load_probe(config.probe.path) if config.probe else None

    class MonitorCallback(TrainerCallback):
        def __init__(self) -> None:
            self.monitor: Monitor | None = None
            self._last_batch: int | None = None

        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            ref = None
            col = config.reference_column
            ds = getattr(trainer, "train_dataset", None)
            if col:
                if ds is None or col not in getattr(ds, "column_names", ()):
                    raise ValueError(f"monitor.reference_column: the training data has no column {col!r}")
                ref = ds[col][:5000]
            names = list(getattr(trainer, "reward_func_names", ()))
            weights = dict(zip(names, trainer_weights(trainer, len(names)), strict=False))
            self.monitor = Monitor(config, ref, part_weights=weights)

        def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
            if not state.is_world_process_zero or not logs or "reward" not in logs or self.monitor is None:
                return
            rows = rows_from_trl(trainer, config)
            key = hash(tuple(r["completion"] for r in rows))
            if not rows or key == self._last_batch:  # this generation batch was already seen
                return
            self._last_batch = key
            step = state.global_step
            out = self.monitor.observe(step, rows, logs)
            if probe_items and config.probe and (step == 1 or step % config.probe.every == 0):
                p = run_probe(
                    probe_items,
                    reward_score_fn(trainer, config.probe.judge),
                    config.probe.perturbations,
                    config.probe.seed,
                )
                extra = self.monitor.observe_probe(step, p)
                out["alarms"] = out["alarms"] + extra.pop("alarms")
                out.update(extra)
            if config.save_samples:
                _save_samples(Path(out_dir) / SAMPLES_LOG, step, rows, config)
            row = {"stage": stage, "step": step, **out}
            with (Path(out_dir) / MONITOR_LOG).open("a", encoding="utf-8") as f:
                f.write(json.dumps(row) + "\n")
            for a in out["alarms"]:
                log.warning(
                    "monitor alarm %s at step %d: %s (%.3g >= %.3g)",
                    a["name"],
                    step,
                    a["detail"],
                    a["value"],
                    a["threshold"],
                )
            if out["alarms"] and config.stop_on_alarm:
                log.warning("monitor.stop_on_alarm: stopping training at step %d", step)
                control.should_training_stop = True

    return MonitorCallback()
