"""Simulator speed, one process on one core.

* env steps/second stepping skills (expert plans replayed, one invalid step each);
* the reward path: ``execute()`` / ``sim_reward`` on text plans, per second;
* render: top-down images per second;
* EB-ALFRED (300 tasks of ``splits.json``): expert-planner time per task (median, p95,
  max) and the wall time to evaluate the expert policy on all of them (plan + execute),
  and the random policy for comparison. Skipped, with a message, when the data is absent.

Targets (simulator issue, item 7): ≥ 20,000 env steps/s; expert on 300 tasks < 5 s.
Run: ``.venv/bin/python bench/sim.py [--splits PATH]`` (under a minute).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from groundrl.sim.evaluate import evaluate, summarise
from groundrl.sim.execute import execute
from groundrl.sim.generate import generate_tasks
from groundrl.sim.planner import expert_plan
from groundrl.sim.policies import ExpertPolicy, RandomPolicy
from groundrl.sim.render import render_scene
from groundrl.sim.reward import sim_reward
from groundrl.sim.skills import Skill
from groundrl.sim.tasks import load_tasks

SPLITS = Path(__file__).resolve().parents[2] / "shared" / "data" / "external" / "eb-alfred" / "splits.json"


def _for(seconds: float, fn) -> tuple[int, float]:
    """Call ``fn() -> units`` until ``seconds`` pass; (units, elapsed)."""
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        n += fn()
    return n, time.perf_counter() - t0


def env_steps_per_second(tasks) -> float:
    episodes = [(t, expert_plan(t)) for t in tasks]
    bad = Skill("pickup", "Fridge")

    def replay() -> int:
        n = 0
        for task, skills in episodes:
            env = task.env(max_steps=10**6, max_invalid=10**6)
            for s in skills:
                env.step(s)
            env.step(bad)  # an invalid step too
            n += len(skills) + 1
        return n

    n, dt = _for(2.0, replay)
    return n / dt


def reward_path(tasks) -> tuple[float, float, float]:
    """(execute() plans/s, env steps/s through text, sim_reward calls/s on task dicts)."""
    texts = [("\n".join(t.gold_plan), t) for t in tasks]
    dicts = [(text, t.to_json()) for text, t in texts]
    steps = [0]

    def run_execute() -> int:
        for text, t in texts:
            steps[0] += execute(t, text).steps
        return len(texts)

    n, dt = _for(1.5, run_execute)
    plans_s, steps_s = n / dt, steps[0] / dt

    def run_reward() -> int:
        for text, d in dicts:
            sim_reward(text, d)
        return len(dicts)

    m, dt2 = _for(1.0, run_reward)
    return plans_s, steps_s, m / dt2


def renders_per_second(tasks) -> float:
    envs = [t.env() for t in tasks[:10]]

    def draw() -> int:
        for e in envs:
            render_scene(e)
        return len(envs)

    n, dt = _for(1.0, draw)
    return n / dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=Path, default=SPLITS, help="EB-ALFRED splits.json")
    args = ap.parse_args()

    tasks = generate_tasks(60, seed=0)
    sps = env_steps_per_second(tasks)
    print(
        f"env steps/s (skills, one core):            {sps:>10,.0f}   target ≥ 20,000  ({sps / 20_000:.1f}x)"
    )
    plans_s, text_sps, reward_s = reward_path(tasks)
    print(
        f"execute() text plans/s (EB-ALFRED strings): {plans_s:>10,.0f}   ({text_sps:,.0f} env steps/s through parsing)"
    )
    print(f"sim_reward calls/s (task as a JSON dict):   {reward_s:>10,.0f}")
    print(f"render_scene images/s (448x448):            {renders_per_second(tasks):>10,.0f}")

    if not args.splits.is_file():
        print(
            f"EB-ALFRED splits not found at {args.splits}: skipping the planner and 300-task evaluation timings"
        )
        return
    eb = load_tasks(args.splits)
    expert = ExpertPolicy()
    t0 = time.perf_counter()
    res = evaluate(eb, expert)
    wall = time.perf_counter() - t0
    m = summarise(res)
    times = sorted(expert.plan_seconds)
    p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
    print(
        f"expert planner per task ({len(times)} EB-ALFRED tasks): median {statistics.median(times) * 1e3:.1f} ms, "
        f"p95 {p95 * 1e3:.1f} ms, max {times[-1] * 1e3:.0f} ms, total {sum(times):.2f} s"
    )
    print(
        f"expert policy on all {len(eb)} EB-ALFRED tasks (plan + execute): {wall:.2f} s   target < 5 s "
        f"({'met' if wall < 5 else f'{wall / 5:.1f}x over'}); success {m['success_rate']:.3f}, "
        f"{m['env_steps']:.1f} env steps/task"
    )
    t0 = time.perf_counter()
    rnd = summarise(evaluate(eb, RandomPolicy(seed=0)))
    print(
        f"random policy on all {len(eb)} tasks: {time.perf_counter() - t0:.2f} s; success {rnd['success_rate']:.3f}, "
        f"progress {rnd['progress_rate']:.3f}"
    )


if __name__ == "__main__":
    main()
