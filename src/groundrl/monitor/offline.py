"""The monitor after the fact: the same signals and alarms from a run's ``log.jsonl``
(step metrics such as ``kl``) and a samples file (one JSON object per sample, with
``step``, ``completion`` and the reward / truth values), e.g. what a verl or OpenRLHF
run dumped from its ``compute_score`` results.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from groundrl.io import iter_lines
from groundrl.monitor.config import MonitorConfig
from groundrl.monitor.monitor import Monitor
from groundrl.monitor.rows import MonitorRow, row_from_record
from groundrl.monitor.signals import num


def read_jsonl(path: Path) -> list[dict[str, object]]:
    """The JSON objects of a file, one per line; lines that are not an object are skipped."""
    return [line.value for line in iter_lines(path) if not line.problem]


def replay(
    samples: Iterable[Mapping[str, Any]],
    config: MonitorConfig,
    log_rows: Iterable[Mapping[str, Any]] = (),
    reference_texts: Iterable[Any] | None = None,
    stage: str | None = None,
) -> list[dict[str, Any]]:
    """One monitor row per step (``{"stage", "step", "monitor/…", "alarms"}``), in step
    order. Samples without a numeric ``step`` are skipped; ``log_rows`` give each step's
    metrics (the last logged row of a step wins)."""
    by_step: dict[int, list[MonitorRow]] = {}
    for rec in samples:
        step = num(rec.get("step"))
        if step is None:
            continue
        by_step.setdefault(int(step), []).append(row_from_record(rec, config))
    metrics: dict[int, Mapping[str, Any]] = {}
    for r in log_rows:
        step = num(r.get("step"))
        if step is not None and (stage is None or r.get("stage") == stage) and "kl" in r:
            metrics[int(step)] = r
    mon = Monitor(config, reference_texts)
    out = []
    for step in sorted(by_step):
        row = mon.observe(step, by_step[step], metrics.get(step))
        out.append({"stage": stage, "step": step, **row})
    return out
