"""The real-model demo at its default settings, timed (issue 36 item 4).

Runs ``groundrl demo real-model`` (SmolLM2-135M-Instruct unless ``--model``) in this
process and prints the headline: held-out success per stage with 95 % CIs, GRPO − SFT and
SFT − zero-shot with paired CIs, whether the target (GRPO − SFT ≥ +0.10, CI above 0) is
met, the wall and CPU seconds per stage and the machine's load average before and after.
Target: ≤ 30 minutes on 2 quiet cores; the time is printed, never asserted. Run::

    OMP_NUM_THREADS=2 .venv/bin/python bench/real_model_demo.py [-o runs/demo_real_model] [--seed 0]

Other work on the machine slows it: read the load beside the time (``uptime``'s three
averages are printed at start and end).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time
from pathlib import Path

from groundrl.demos.real_model import RealModelConfig, run_real_model_demo
from groundrl.demos.real_model_report import headline


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", type=Path, default=Path("runs/demo_real_model"))
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=None, help="GRPO steps (default: the demo's)")
    a = ap.parse_args()
    over = {"model": a.model, "seed": a.seed}
    if a.steps is not None:
        over["grpo_steps"] = a.steps
    cfg = RealModelConfig(**over)
    print(f"start: {_uptime()} ({os.cpu_count()} CPUs, torch threads {cfg.threads})", flush=True)
    t0 = time.perf_counter()
    m = run_real_model_demo(a.output, cfg, log=lambda s: print(s, flush=True))
    wall = time.perf_counter() - t0
    print(f"end:   {_uptime()}")
    print("\n".join(headline(m)))
    print(f"wall {wall / 60:.1f} min (target ≤ 30 min on 2 quiet cores); per stage (s): {m['stage_seconds']}")
    print(f"CPU s per stage: {m['stage_cpu_seconds']}")
    print(json.dumps({k: m[k] for k in ("grpo_minus_sft", "sft_minus_zero_shot", "target_met")}))


if __name__ == "__main__":
    main()
