"""Simulator speed, one process on one core.

* env steps/second stepping skills (expert plans replayed, one invalid step each);
* the reward path: ``execute()`` / ``sim_reward`` on text plans, per second;
* render: top-down images per second;
* EB-ALFRED (300 tasks of ``splits.json``): expert-planner time per task (median, p95,
  max) and the wall time to evaluate the expert policy on all of them (plan + execute),
  and the random policy for comparison. Skipped, with a message, when the data is absent.

* the Gymnasium environment: multi-turn rollouts/s (expert plans, one action per
  turn, through ``HouseholdEnv.step``) and through the vector form;
* descriptions: expert vs attribute-blind expert success per EB-ALFRED subset.

Targets (issue 15, item 5): ≥ 100,000 env steps/s/core; expert planner over all 300
EB-ALFRED tasks < 5 s, worst single task < 0.5 s. Each figure is printed next to its
target. Run: ``OMP_NUM_THREADS=1 taskset -c 0 .venv/bin/python bench/sim.py [--splits PATH]``.
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
from groundrl.sim.vocab import render_plan

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
    ap.add_argument(
        "--policy-rollouts",
        action="store_true",
        help="also time GRPO-style rollouts with a transformer policy in the loop (needs torch/transformers)",
    )
    args = ap.parse_args()

    tasks = generate_tasks(60, seed=0)
    sps = env_steps_per_second(tasks)
    print(
        f"env steps/s (skills, one core):            {sps:>10,.0f}   target ≥ 100,000  ({sps / 100_000:.2f}x)"
    )
    plans_s, text_sps, reward_s = reward_path(tasks)
    print(
        f"execute() text plans/s (EB-ALFRED strings): {plans_s:>10,.0f}   ({text_sps:,.0f} env steps/s through parsing)"
    )
    print(f"sim_reward calls/s (task as a JSON dict):   {reward_s:>10,.0f}")
    print(f"render_scene images/s (448x448):            {renders_per_second(tasks):>10,.0f}")
    rollouts(tasks)
    if args.policy_rollouts:
        policy_rollouts()

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
        f"p95 {p95 * 1e3:.1f} ms, max {times[-1] * 1e3:.0f} ms   target max < 500 ms "
        f"({'met' if times[-1] < 0.5 else 'missed'})"
    )
    print(
        f"expert planner over all {len(times)} tasks: {sum(times):.2f} s   target < 5 s "
        f"({'met' if sum(times) < 5 else 'missed'})"
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
    blind_gap(eb)


def blind_gap(tasks) -> None:
    """Expert vs attribute-blind expert (descriptions dropped from the goal) per subset."""
    rows: dict[str, list[int]] = {}
    for t in tasks:
        r = rows.setdefault(t.subset, [0, 0, 0, 0])
        for k, goal in enumerate((t.goal, t.goal.blind())):
            plan = expert_plan(goal, t.scene)
            r[k] += plan is not None and execute(t, render_plan(plan, "eb_alfred", t.scene)).success
        r[2] += 1
        r[3] += t.goal.described
    print("success per subset: expert / attribute-blind expert (tasks with a description)")
    for subset, (ok, blind, n, d) in sorted(rows.items()):
        print(f"  {subset:<20} {ok / n:.2f} / {blind / n:.2f}   ({d}/{n} described)")


def rollouts(tasks) -> None:
    """Multi-turn rollouts through the Gymnasium env: one expert action per turn."""
    try:
        from groundrl.sim.env import HouseholdEnv, HouseholdVectorEnv
    except ImportError:
        print("gymnasium not installed: skipping the environment rollouts")
        return
    plans = {t.id: render_plan(expert_plan(t), "eb_alfred", t.scene) for t in tasks}
    env = HouseholdEnv(tasks)
    turns = [0]

    def one_pass() -> int:
        for t in tasks:
            env.reset(options={"task": t})
            for a in plans[t.id]:
                turns[0] += 1
                if any(env.step(a)[2:4]):
                    break
        return len(tasks)

    n, dt = _for(1.5, one_pass)
    print(
        f"env rollouts/s (multi-turn, 1 action/turn):  {n / dt:>10,.0f}   ({turns[0] / dt:,.0f} turns/s through step())"
    )
    venv = HouseholdVectorEnv(len(tasks), tasks)

    def vec_pass() -> int:
        venv.reset(options={"tasks": [t.id for t in tasks]})
        k = 0
        while not venv.done.all():
            acts = [p[k] if k < len(p) else "" for p in (plans[t.id] for t in tasks)]
            venv.step(acts)
            k += 1
        return len(tasks)

    m, dt2 = _for(1.5, vec_pass)
    print(f"vector env rollouts/s ({len(tasks)} episodes in lockstep): {m / dt2:>7,.0f}   (no target)")


def policy_rollouts() -> None:
    """Multi-turn episodes with the demo's transformer (2 layers, 128 wide, random
    weights: every turn writes the full 80 tokens, the worst case) sampling in the loop
    through :class:`groundrl.train.multiturn.EnvRollout`, 32 episodes per batch."""
    import torch

    from groundrl.demos.planner import build_policy, demo_tasks
    from groundrl.train.multiturn import EnvRollout
    from groundrl.train.planning_data import global_action_map, records

    torch.set_num_threads(1)
    tasks = demo_tasks(32, seed=0)
    recs = records(tasks, global_action_map(tasks))
    model, tok = build_policy([r["prompt"] + r["completion"] for r in recs], 128, 2, seed=0)
    torch.manual_seed(0)
    for turns in (1, 3):
        ro = EnvRollout({r["prompt"]: r["task"] for r in recs}, max_turns=turns)
        t0 = time.perf_counter()
        eps = ro.play(model, tok, [r["prompt"] for r in recs], 80)
        dt = time.perf_counter() - t0
        n_turns = sum(e.turns for e in eps)
        print(
            f"policy-in-the-loop rollouts/s (≤{turns} turns, 80 tokens/turn): {len(eps) / dt:>6,.1f}   "
            f"({n_turns / dt:,.1f} policy turns/s; no target)"
        )


if __name__ == "__main__":
    main()
