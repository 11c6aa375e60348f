"""Simulator speed: env steps/second, expert planner time per task, and the wall time to
evaluate the expert on all 300 EB-ALFRED tasks. Targets (issue 4): ≥ 20,000 steps/s on
one core; expert on 300 tasks < 5 s. Run: ``.venv/bin/python bench/sim.py``."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from groundrl.sim.evaluate import evaluate
from groundrl.sim.generate import generate_tasks
from groundrl.sim.planner import expert_plan
from groundrl.sim.policies import ExpertPolicy
from groundrl.sim.skills import Skill
from groundrl.sim.tasks import load_tasks
from groundrl.sim.vocab import split_plan

SPLITS = Path(__file__).resolve().parents[2] / "shared" / "data" / "external" / "eb-alfred" / "splits.json"


def steps_per_second(n_tasks: int = 50) -> float:
    tasks = generate_tasks(n_tasks, seed=0)
    episodes = []
    for t in tasks:
        skills = expert_plan(t)
        episodes.append((t, skills))
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 2.0:
        for task, skills in episodes:
            env = task.env(max_steps=10**6, max_invalid=10**6)
            for s in skills:
                env.step(s)
            env.step(Skill("pickup", "Fridge"))  # an invalid step too
            n += len(skills) + 1
    return n / (time.perf_counter() - t0)


def main() -> None:
    print(f"env steps/second (skills, one core): {steps_per_second():,.0f}   (target ≥ 20,000)")
    _ = split_plan  # text parsing is measured with execute() in the eval below
    if not SPLITS.is_file():
        print(f"EB-ALFRED splits not found at {SPLITS}: skipping the planner and evaluation timings")
        return
    tasks = load_tasks(SPLITS)
    times = []
    for t in tasks:
        t0 = time.perf_counter()
        expert_plan(t)
        times.append(time.perf_counter() - t0)
    times.sort()
    print(
        f"expert planner per task over {len(tasks)} EB-ALFRED tasks: median {statistics.median(times) * 1000:.1f} ms, p95 {times[int(0.95 * len(times))] * 1000:.1f} ms, max {times[-1] * 1000:.0f} ms"
    )
    t0 = time.perf_counter()
    res = evaluate(tasks, ExpertPolicy())
    wall = time.perf_counter() - t0
    print(
        f"expert policy on all {len(tasks)} EB-ALFRED tasks (plan + execute): {wall:.2f} s (target < 5 s), success {sum(r['success'] for r in res) / len(res):.3f}"
    )


if __name__ == "__main__":
    main()
