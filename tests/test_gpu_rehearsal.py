"""scripts/gpu_rehearsal.sh fails when it proves nothing (issue 35 item 5): without CUDA, and
on a training log whose every step had zero gradient, however cleanly the run exited."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECK = ROOT / "scripts" / "rehearsal_check.py"


def test_without_cuda_the_rehearsal_exits_non_zero_and_says_why(tmp_path):
    # a CPU interpreter (this one: CPU torch here) stands for a machine without CUDA
    env = {**os.environ, "PY": sys.executable}
    res = subprocess.run(
        ["bash", str(ROOT / "scripts" / "gpu_rehearsal.sh"), str(tmp_path / "w")],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert res.returncode == 2, res.stdout + res.stderr
    assert "no CUDA device visible to" in res.stderr and "nothing was rehearsed" in res.stderr


def _log(tmp_path: Path, rows: list[dict]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def _check(run: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(CHECK), str(run), "--stage", "grpo", *flags]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def _step(i: int, **kw: float) -> dict:
    return {"stage": "grpo", "step": i, "loss": 0.0, "grad_norm": 0.0, "reward": 0.0, "reward_std": 0.0, **kw}


def test_a_zero_gradient_run_fails_the_check(tmp_path):
    # what the old rehearsal counted as RAN: 3 steps, exit 0, zero gradient and no reward spread
    res = _check(_log(tmp_path, [_step(i) for i in (1, 2, 3)]), "--min-steps", "3")
    assert res.returncode == 1
    assert "gradient was zero on every step" in res.stderr and "reward never varied" in res.stderr


def test_a_run_with_signal_passes_and_bad_values_fail(tmp_path):
    good = [_step(1), _step(2, grad_norm=0.3, reward=0.4, reward_std=0.2), _step(3, grad_norm=0.1)]
    assert _check(_log(tmp_path / "good", good), "--min-steps", "3").returncode == 0
    nan = [*good, {"stage": "grpo", "step": 4, "loss": float("nan"), "grad_norm": 0.2, "reward": 0.1}]
    res = _check(_log(tmp_path / "nan", nan))
    assert res.returncode == 1 and "loss not finite at step(s) [4]" in res.stderr
    res = _check(_log(tmp_path / "short", good), "--min-steps", "4")
    assert res.returncode == 1 and "3 step(s) logged, expected at least 4" in res.stderr
    assert _check(tmp_path / "missing").returncode == 1


def test_code_path_only_skips_the_signal_checks_but_not_finiteness(tmp_path):
    flat = [_step(1), _step(2)]
    assert _check(_log(tmp_path / "flat", flat), "--code-path-only").returncode == 0
    bad = [_step(1, reward=float("inf"))]
    assert _check(_log(tmp_path / "inf", bad), "--code-path-only").returncode == 1
