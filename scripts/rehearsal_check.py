"""Checks a training run's ``log.jsonl`` proves something (used by scripts/gpu_rehearsal.sh).

    python scripts/rehearsal_check.py RUN_DIR --stage grpo [--min-steps 3] [--reward-moved]
        [--samples SAMPLES.jsonl --recipe R [-O KEY=VALUE ...] [--python PY]]

Fails (exit 1, one line per failed check) unless the stage's step rows show:
* at least ``--min-steps`` optimiser steps were logged;
* every ``loss`` and ``reward`` is a finite number;
* the gradient was non-zero on at least one step (``grad_norm`` > 0): a run whose every
  group got equal rewards trains nothing, and exit code 0 alone would call it RAN;
* the reward varied inside a group on at least one step (``reward_std`` > 0), where the
  rows log it;
* with ``--reward-moved``: the mean reward of the last half of the steps differs from the
  first half's (a flat reward curve: the policy's samples did not change what they earn).
  Moved, not rose: a handful of steps cannot show learning reliably [ours];
* with ``--samples``: every logged completion re-scored offline (``groundrl score RECIPE``
  under ``--python``, the same scorer a user runs on a file) gets the reward and parts the
  trainer logged, within ``--tolerance`` (float32 round trips in verl / OpenRLHF), and at
  least ``--min-samples`` of them were logged.
  A samples line is ``{"step", "completion", "fields": {recipe fields}, "logged": {"reward"
  or a part name: value}}`` (scripts/rehearsal_logs.py writes them from each trainer).
``--code-path-only`` (a random model's smoke run, which has no signal by design) keeps the
first two checks and the offline comparison. Prints what it read either way. Standard
library only: it runs under any environment (the re-scoring runs in ``--python``'s).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
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


def _signal_problems(rows: list[dict]) -> list[str]:
    out = []
    if not any(_finite(r.get("grad_norm")) and r["grad_norm"] > 0 for r in rows):
        out.append("the gradient was zero on every step: nothing was trained")
    logged_std = [r for r in rows if "reward_std" in r]
    if logged_std and not any(_finite(r.get("reward_std")) and r["reward_std"] > 0 for r in logged_std):
        out.append("the reward never varied inside a group (reward_std 0 on every step): no GRPO signal")
    return out


def reward_moved(rows: list[dict]) -> str | None:
    """``None`` when the mean reward of the last half of the steps differs from the first
    half's; else why not (fewer than 2 steps with a reward, or equal means)."""
    rewards = [float(r["reward"]) for r in rows if _finite(r.get("reward"))]
    if len(rewards) < 2:
        return f"{len(rewards)} step(s) with a reward: cannot tell whether it moved (needs 2)"
    half = len(rewards) // 2
    first, last = rewards[:half], rewards[-half:]
    a, b = sum(first) / len(first), sum(last) / len(last)
    if a == b:
        return f"the reward did not move: mean {a:.6g} over the first {half} step(s) and the last {half}"
    return None


def problems(rows: list[dict], min_steps: int, signal: bool = True, moved: bool = False) -> list[str]:
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
    if signal and rows:
        out.extend(_signal_problems(rows))
    if moved and rows:
        why = reward_moved(rows)
        if why:
            out.append(why)
    return out


def read_samples(path: Path) -> list[dict]:
    """The samples file's lines (see the module docstring); a bad line raises ValueError."""
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if not isinstance(row, dict) or not isinstance(row.get("logged"), dict):
            raise ValueError(f"{path}:{n}: expected an object with a 'logged' object")
        rows.append(row)
    return rows


def offline_scores(samples: list[dict], recipe: str, options: list[str], python: str) -> list[dict]:
    """``groundrl score RECIPE`` of every sample (its fields and completion), in order."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "in.jsonl", Path(tmp) / "out.jsonl"
        lines = [
            json.dumps({**(s.get("fields") or {}), "completion": s.get("completion", "")}) for s in samples
        ]
        src.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        cmd = [python, "-m", "groundrl", "score", recipe, str(src), "-o", str(dst), "-q", "--raw-floats"]
        for kv in options:
            cmd += ["-O", kv]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if not dst.is_file():
            raise RuntimeError(f"groundrl score exited {res.returncode}: {res.stderr.strip()[-500:]}")
        return [json.loads(line) for line in dst.read_text(encoding="utf-8").splitlines() if line.strip()]


def mismatches(samples: list[dict], scored: list[dict], tol: float) -> list[str]:
    """Every logged value the offline score disagrees with (``reward``: the total; other
    keys: parts of that name; keys the offline scorer has no value for are not compared)."""
    if not samples:
        return ["no logged completions to compare with the offline scorer"]
    if len(scored) != len(samples):
        return [f"the offline scorer gave {len(scored)} results for {len(samples)} samples"]
    out = []
    for i, (s, off) in enumerate(zip(samples, scored, strict=True), 1):
        if off.get("error") or off.get("reward") is None:
            out.append(
                f"sample {i} (step {s.get('step')}): the offline scorer could not score it: {off.get('error')}"
            )
            continue
        ref = {"reward": off.get("reward"), **(off.get("parts") or {})}
        for key, got in s["logged"].items():
            want = ref.get(key)
            if want is None:
                continue
            if not _finite(got) or not _finite(want) or abs(float(got) - float(want)) > tol:
                out.append(f"sample {i} (step {s.get('step')}): logged {key}={got}, offline {want}")
    if out:
        out.insert(0, f"{len(out)} logged value(s) differ from the offline scorer:")
    return out[:11]


def _args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--stage", required=True, help="the stage name in log.jsonl")
    ap.add_argument("--min-steps", type=int, default=1)
    ap.add_argument(
        "--code-path-only", action="store_true", help="skip the gradient and reward-variance checks"
    )
    ap.add_argument("--reward-moved", action="store_true", help="the last steps' mean reward != the first's")
    ap.add_argument("--samples", type=Path, help="logged completions to re-score offline")
    ap.add_argument("--recipe", help="the recipe that scores --samples")
    ap.add_argument("-O", "--option", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--python", default=sys.executable, help="the interpreter that runs groundrl score")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    ap.add_argument("--min-samples", type=int, default=1, help="fewer logged completions fail")
    a = ap.parse_args(argv)
    if a.samples and not a.recipe:
        ap.error("--samples needs --recipe")
    return a


def _compare(a: argparse.Namespace) -> list[str]:
    try:
        samples = read_samples(a.samples)
        scored = offline_scores(samples, a.recipe, a.option, a.python) if samples else []
    except (OSError, ValueError, RuntimeError) as e:
        return [f"offline comparison: {e}"]
    print(f"  {len(samples)} logged completion(s) re-scored with groundrl score {a.recipe}")
    short = [f"{len(samples)} logged completion(s), expected at least {a.min_samples}"]
    return (short if 0 < len(samples) < a.min_samples else []) + mismatches(samples, scored, a.tolerance)


def main(argv: list[str] | None = None) -> int:
    a = _args(argv)
    log = a.run_dir / "log.jsonl"
    if not log.is_file():
        print(f"FAILED: {log} not found", file=sys.stderr)
        return 1
    rows = _steps(log, a.stage)
    for r in rows:
        keys = ("step", "loss", "grad_norm", "reward", "reward_std")
        print("  " + " ".join(f"{k}={r.get(k)}" for k in keys))
    found = problems(rows, a.min_steps, signal=not a.code_path_only, moved=a.reward_moved)
    if a.samples:
        found += _compare(a)
    for p in found:
        print(f"FAILED: stage {a.stage}: {p}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
