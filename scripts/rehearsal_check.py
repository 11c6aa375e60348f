"""Checks a training run's ``log.jsonl`` proves something (used by scripts/gpu_rehearsal.sh).

    python scripts/rehearsal_check.py RUN_DIR --stage grpo [--min-steps 3]

Fails (exit 1, one line per failed check) unless the stage's step rows show:
* at least ``--min-steps`` optimiser steps were logged;
* every ``loss`` and ``reward`` is a finite number;
* the gradient was non-zero on at least one step (``grad_norm`` > 0): a run whose every
  group got equal rewards trains nothing, and exit code 0 alone would call it RAN;
* the reward varied inside a group on at least one step (``reward_std`` > 0).
``--code-path-only`` (a random model's smoke run, which has no signal by design) keeps the
first two checks only. Prints what it read either way. Standard library only: it runs under any environment.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path


def _steps(log: Path, stage: str) -> list[dict]:
    rows = []
    for line in log.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and row.get("stage") == stage and "loss" in row:
            rows.append(row)
    return rows


def _finite(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def problems(rows: list[dict], min_steps: int, signal: bool = True) -> list[str]:
    """Every failed check, as a sentence (empty: the run proved what it should)."""
    out = []
    if len(rows) < min_steps:
        out.append(f"{len(rows)} step(s) logged, expected at least {min_steps}")
    bad = [r.get("step") for r in rows if not _finite(r.get("loss"))]
    if bad:
        out.append(f"loss not finite at step(s) {bad}")
    bad = [r.get("step") for r in rows if "reward" in r and not _finite(r.get("reward"))]
    if bad:
        out.append(f"reward not finite at step(s) {bad}")
    if not signal:
        return out
    if rows and not any(_finite(r.get("grad_norm")) and r["grad_norm"] > 0 for r in rows):
        out.append("the gradient was zero on every step: nothing was trained")
    if rows and not any(_finite(r.get("reward_std")) and r["reward_std"] > 0 for r in rows):
        out.append("the reward never varied inside a group (reward_std 0 on every step): no GRPO signal")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--stage", required=True, help="the stage name in log.jsonl")
    ap.add_argument("--min-steps", type=int, default=1)
    ap.add_argument(
        "--code-path-only", action="store_true", help="skip the gradient and reward-variance checks"
    )
    a = ap.parse_args(argv)
    log = a.run_dir / "log.jsonl"
    if not log.is_file():
        print(f"FAILED: {log} not found", file=sys.stderr)
        return 1
    rows = _steps(log, a.stage)
    for r in rows:
        keys = ("step", "loss", "grad_norm", "reward", "reward_std")
        print("  " + " ".join(f"{k}={r.get(k)}" for k in keys))
    found = problems(rows, a.min_steps, signal=not a.code_path_only)
    for p in found:
        print(f"FAILED: stage {a.stage}: {p}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
