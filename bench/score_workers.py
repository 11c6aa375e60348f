"""``groundrl score --workers N`` scaling on a rule recipe (issue 18: ≥ 1.8× at 2 workers
on 2 cores, output order preserved).

Writes a seeded file of Reinforced Reasoning plans (valid and truncated, with their gold),
then times the whole command (process start included) with 1 and N workers, best of
``--repeats`` interleaved runs, and checks the outputs are identical.

    .venv/bin/python bench/score_workers.py --lines 200000 --workers 2
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS = ["find a Apple", "pick up the Apple", "find a Fridge", "open the Fridge", "put down the Apple"]


def corpus(path: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    with path.open("w") as f:
        for i in range(n):
            k = rng.randint(0, len(STEPS))
            plan = {
                "reasoning_and_reflection": "r" * rng.randint(10, 400),
                "visual_state_description": "v",
                "language_plan": f"plan {i}",
                "executable_plan": [{"action_id": j, "action_name": s} for j, s in enumerate(STEPS[:k])],
            }
            text = json.dumps(plan)
            if rng.random() < 0.2:
                text = text[: rng.randint(0, len(text))]
            f.write(json.dumps({"id": i, "completion": text, "gold": STEPS}) + "\n")


def run(data: Path, out: Path, workers: int) -> float:
    cmd = [sys.executable, "-m", "groundrl", "score", "reinforced_planning", str(data), "-o", str(out), "-q"]
    t = time.perf_counter()
    subprocess.run([*cmd, "--workers", str(workers)], check=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--lines",
        type=int,
        default=200000,
        help="lines in the corpus (the command's ~0.3 s start-up is amortised over them)",
    )
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data, one, many = Path(tmp, "in.jsonl"), Path(tmp, "one.jsonl"), Path(tmp, "many.jsonl")
        corpus(data, args.lines, args.seed)
        t1, tn = [], []
        for _ in range(args.repeats):
            t1.append(run(data, one, 1))
            tn.append(run(data, many, args.workers))
        same = one.read_bytes() == many.read_bytes()
    b1, bn = min(t1), min(tn)
    ratio = b1 / bn
    print(f"{args.lines} lines, cpus {os.cpu_count()}, best of {args.repeats}")
    print(f"workers 1: {b1:6.2f} s  ({args.lines / b1:,.0f} lines/s)")
    print(f"workers {args.workers}: {bn:6.2f} s  ({args.lines / bn:,.0f} lines/s)")
    print(f"speed-up {ratio:.2f}x (target >= 1.8x at 2 workers on 2 cores: {'met' if ratio >= 1.8 else 'NOT met'});"
          f" outputs identical: {same}")  # fmt: skip
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
