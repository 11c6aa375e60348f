"""Reward-hacking and judge-health monitor for RL runs (issue 28).

It watches a training run and raises an alarm before the policy learns to game its
reward: the judge reward against ground truth (a rule reward or the simulator on the
same samples), the judge's health on a fixed probe set (EQA-RM perturbations, agreement
with labels, failures, latency), and policy-side shortcuts (length, repetition, format
without accuracy, collapsed group variance, tokens the data never has, KL jumps).

    from groundrl.monitor import MonitorConfig, monitor_callback, report_section

    cfg = MonitorConfig.from_mapping({"reward": "judge", "truth": "env_success"})
    trainer.add_callback(monitor_callback(cfg, out_dir, "grpo", trainer))

Same signals on verl / OpenRLHF reward outputs: :func:`rows_from_scores` + :class:`Monitor`;
offline on a run's logs: ``groundrl monitor`` (:func:`replay`). See docs/monitor.md.
The TRL callback imports transformers when it is built; nothing here imports torch.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "MonitorConfig": "groundrl.monitor.config",
    "ProbeConfig": "groundrl.monitor.config",
    "DEFAULT_THRESHOLDS": "groundrl.monitor.config",
    "Monitor": "groundrl.monitor.monitor",
    "Alarm": "groundrl.monitor.monitor",
    "monitor_callback": "groundrl.monitor.callback",
    "report_section": "groundrl.monitor.report",
    "rows_from_scores": "groundrl.monitor.rows",
    "rows_from_trl": "groundrl.monitor.rows",
    "run_probe": "groundrl.monitor.probes",
    "replay": "groundrl.monitor.offline",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'groundrl.monitor' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
