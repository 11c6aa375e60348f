"""Reward throughput, one core: completions/second per recipe, and the reinforced-planning
reward's cost relative to a plain ``json.loads`` of the same completions.

Targets (issue 3): reinforced planning ≤ 5× ``json.loads``; ≥ 20,000 completions/s for
~300-token completions. Run: ``.venv/bin/python bench/rewards.py [--n 2000]``.
The baseline is measured in the same run, so the ratio is what to compare across machines.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from groundrl.recipes import RECIPE_NAMES, get_recipe
from groundrl.rewards.planning import reinforced_accuracy, reinforced_format

WORDS = [
    "the",
    "a",
    "apple",
    "mug",
    "fridge",
    "sink",
    "counter",
    "table",
    "knife",
    "bread",
    "drawer",
    "cabinet",
    "open",
    "close",
    "pick",
    "place",
    "find",
    "slice",
    "left",
    "right",
    "near",
    "on",
    "in",
]


def prose(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n_words)).capitalize() + "."


def planning_sample(rng: random.Random, amap: dict[int, str]) -> dict:
    ids = rng.sample(sorted(amap), 8)
    plan = [{"action_id": i, "action_name": amap[i]} for i in ids]
    completion = json.dumps(
        {
            "reasoning_and_reflection": prose(rng, 90),
            "visual_state_description": prose(rng, 50),
            "language_plan": prose(rng, 40),
            "executable_plan": plan,
        }
    )
    gold = [amap[i] for i in ids[: rng.randint(1, 8)]]
    return {"completion": completion, "gold": gold}


def samples_for(recipe: str, rng: random.Random, amap: dict[int, str]) -> dict:
    if recipe == "reinforced_planning":
        return planning_sample(rng, amap)
    if recipe == "embodied_brain":
        acts = [
            ["Navigate", "Apple"],
            ["Pick", "Apple"],
            ["Open", "Fridge"],
            ["Place", "Apple", "Fridge"],
        ] * 2
        lines = "\n".join(
            f"{i + 1}.[{'Navigate' if a[0] == 'Navigate' else 'Manipulate'}] {prose(rng, 8)}"
            for i, a in enumerate(acts)
        )
        c = f"<response>{prose(rng, 120)}</response><plans>{lines}</plans><actions>{acts}</actions>"
        return {"completion": c, "gold": c}
    if recipe == "eqa_rm":
        return {
            "completion": f"<critique>{prose(rng, 220)}</critique><score>{rng.randint(0, 10)}</score>",
            "gt_score": rng.randint(0, 10),
        }
    if recipe == "proxy_grm":
        return {
            "completion": f"<rubric>{prose(rng, 80)}</rubric><eval>{prose(rng, 140)}</eval><answer>{rng.choice('12')}</answer>",
            "preferred": rng.choice([1, 2]),
        }
    return {
        "completion": f'{prose(rng, 200)} <points x1="{rng.randint(0, 99)}" y1="{rng.randint(0, 99)}" alt="mug">mug</points> <answer>mug</answer>',
        "answer": "mug",
        "points_masks": {"mug": [[0, 0, 50, 50]]},
    }


def rate(fn, n: int) -> float:
    t = time.perf_counter()
    fn()
    return n / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=3000, help="completions per recipe")
    args = ap.parse_args()
    rng = random.Random(0)
    amap = {
        i: f"{v} {o}"
        for i, (v, o) in enumerate(
            (v, o)
            for v in ("find a", "pick up the", "open the")
            for o in ("Apple", "Mug", "Fridge", "Knife", "Bread")
        )
    }
    print(f"{'recipe':22s} {'completions/s':>14s}  (rubric.score, {args.n} completions, one core)")
    for name in RECIPE_NAMES:
        opts = {"action_map": amap} if name == "reinforced_planning" else {}
        rubric = get_recipe(name).rubric(**opts)
        data = [samples_for(name, rng, amap) for _ in range(args.n)]

        rubric.score(data[0]["completion"], **data[0])  # warm-up: lazy imports (scipy) out of the timing

        def run(rubric=rubric, data=data):
            for s in data:
                rubric.score(s["completion"], **s)

        print(f"{name:22s} {rate(run, args.n):14,.0f}")

    data = [planning_sample(rng, amap) for _ in range(args.n)]
    tokens = sum(len(s["completion"]) for s in data) / len(data) / 4
    texts = [s["completion"] for s in data]
    base = min(rate(lambda: [json.loads(t) for t in texts], args.n) for _ in range(3))

    def reward():
        for s in data:
            reinforced_format(s["completion"], amap)
            reinforced_accuracy(s["completion"], s["gold"])

    from groundrl.parse.plans import parse_reinforced_plan

    def reward_cold():
        parse_reinforced_plan.cache_clear()
        reward()

    warm = min(rate(reward_cold, args.n) for _ in range(3))
    print(f"\nreinforced planning, ~{tokens:.0f}-token completions:")
    print(f"  json.loads baseline         {base:12,.0f} /s")
    print(
        f"  format + accuracy (1 parse) {warm:12,.0f} /s   ratio to json.loads: {base / warm:.2f}x (target <= 5x)"
    )
    print(f"  target >= 20,000/s: {'met' if warm >= 20000 else 'NOT met'}")


if __name__ == "__main__":
    main()
