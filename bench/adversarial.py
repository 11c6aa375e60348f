"""Adversarial megabyte inputs: seconds per case against its budget, one core.

Parsers and rewards must stay linear on hostile completions (a megabyte of unclosed tags,
deep JSON, runs of number-like text). The tests check that these inputs are handled
(a finite score, no exception); the *time* budgets live here, because a wall-clock assert
in a test flakes on a loaded CI machine (issue 17, item 1).

Run: ``.venv/bin/python bench/adversarial.py [--repeat 3] [--only argos]``.
Prints one line per case: the best of ``--repeat`` timings, the budget, and their ratio
(ratio ≤ 1 meets the budget). Exits 1 when any case is over budget, so it can gate a
release on a quiet machine; it never runs under ``make test``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable

os.environ.setdefault("OMP_NUM_THREADS", "1")

from rewards import clear_caches  # noqa: E402 - bench/rewards.py, beside this script


def _parse_core() -> list[tuple[str, float, Callable[[], object]]]:
    from groundrl.parse import find_tag, parse_json_object, parse_literal_list
    from groundrl.parse.numbers import parse_number

    text = "<" * 100_000 + "<score>" * 50_000 + "{" * 200_000 + "[" * 200_000 + "-e" * 200_000

    def run():
        find_tag(text, "score")
        find_tag(text, "score", which="last")
        parse_json_object(text, lenient=True)
        parse_literal_list(text)
        parse_number(text)

    return [("parse core: mixed 1.8 MB", 1.0, run)]


def _parse_scores():
    from groundrl.parse.scores import parse_pairwise_verdict, parse_score, parse_unit_score

    texts = {
        "open angles": "<" * 1_000_000,
        "unclosed <score>": "<score>" * 140_000,
        "unclosed '<score '": "<score " * 140_000,
        "answer runs": "<answer>" * 60_000 + "</answer" * 60_000,
        "long digits": ("<score>" + "9" * 200 + "/") * 4_900,
    }

    def case(text):
        def run():
            parse_score(text)
            parse_score(text, which="first")
            parse_unit_score(text)
            parse_pairwise_verdict(text)

        return run

    return [(f"parse scores: {k}", 0.5, case(v)) for k, v in texts.items()]


def _preference():
    from groundrl.rewards.preference import proxy_accuracy, proxy_format, rubric_text

    texts = {
        "unclosed rubric openers": "<rubric>" * 125_000,
        "many separators": "<rubric>" + "</rubric><eval>" * 60_000 + "</eval>" * 20_000 + "<answer>1",
        "near-miss separators": "<rubric>" + "</rubric><eval" * 70_000 + "</answer>",
        "deep nesting": "<rubric><eval><answer>" * 45_000 + "</answer></eval></rubric>" * 10_000,
        "think layout": "<think>" + "</think><summary>" * 55_000 + "</summary><answer" * 5_000 + "</answer>",
    }

    def case(text):
        def run():
            proxy_format(text)
            proxy_accuracy(text, 1)
            rubric_text(text)

        return run

    return [(f"proxy_grm rewards: {k}", 0.5, case(v)) for k, v in texts.items()]


def _scoring():
    from groundrl.rewards.scoring import eqa_accuracy, eqa_format

    texts = {
        "open angles": "<" * 1_000_000,
        "critique openers": "<critique>" * 100_000,
        "critique+score openers": "<critique>" * 60_000 + "<score>" * 60_000,
        "score openers after a critique": "<critique></critique>" + "<score>" * 140_000,
        "near-miss closers": ("<critique>" + "</critique" * 3 + "<score>") * 20_000,
    }

    def case(text):
        def run():
            eqa_format(text)
            eqa_accuracy(text, 5)

        return run

    return [(f"eqa_rm rewards: {k}", 0.5, case(v)) for k, v in texts.items()]


def _argos():
    import numpy as np

    from groundrl.parse.grounding import extract_temporal_mentions
    from groundrl.rewards.grounding import spatial
    from groundrl.rewards.outcome import outcome
    from groundrl.rewards.perception import detection_reward

    mask = np.zeros((10, 10), dtype=bool)
    mask[2:5, 3:6] = True
    texts = ["<" * 1_000_000, "<points x1=" * 90_000, "frame " * 150_000 + "1", "<answer>" * 120_000]

    def run():
        for s in texts:
            outcome(s, "B")
            outcome(s, "kitchen")
            spatial(s, {"cup": mask})
            detection_reward(s, [[0, 0, 1, 1]])
            extract_temporal_mentions(s)

    return [("argos rewards: 4 texts, 3.9 MB", 1.0, run)]


def _recipe_inputs() -> dict:
    fields = {
        "reinforced_planning": {"gold": ["find a Apple", "pick up the Apple"]},
        "embodied_brain": {"gold": "<actions>[['Pick', 'Apple'], ['Place', 'Apple', 'Table']]</actions>"},
        "eqa_rm": {"gt_score": 7},
        "proxy_grm": {"preferred": 1},
        "argos": {"answer": "B", "points_masks": {"cup": [[0, 0, 10, 10]]}},
    }
    action_map = {0: "find a Apple", 1: "pick up the Apple"}
    texts = {
        "open_angles": "<" * 100_000 + "x" * 900_000,
        "unclosed_tags": "<critique><score><rubric><eval><answer><response><plans><actions><points x1='1'"
        * 12_000,
        "deep_json": "{" * 300_000 + '"a":' + "[" * 300_000,
        "deep_list": "<actions>" + "[" * 500_000 + "</actions>",
        "many_pairs": "<score>1</score><answer>2</answer>" * 30_000,
        "numbers": "-1e" * 330_000,
    }
    return {"fields": fields, "action_map": action_map, "texts": texts}


def _recipes():
    from groundrl.recipes import RECIPE_NAMES, get_recipe

    inputs = _recipe_inputs()
    fields, action_map, texts = inputs["fields"], inputs["action_map"], inputs["texts"]
    out = []
    for name in RECIPE_NAMES:
        if name not in fields:
            continue
        opts = {"action_map": action_map} if name == "reinforced_planning" else {}
        rubric = get_recipe(name).rubric(**opts)
        for kind, text in texts.items():
            out.append(
                (f"rubric {name}: {kind}", 1.0, lambda r=rubric, t=text, f=fields[name]: r.score(t, **f))
            )
    return out


def _parts():
    """Issue 16: every part of every recipe alone on each ~1 MB adversarial input, budget
    0.2 s per part (the worst input is named at the end)."""
    from groundrl.recipes import get_recipe, recipe_names

    cases = _recipe_inputs()  # the recipes group's inputs
    out = []
    for name in recipe_names():
        if name not in cases["fields"]:
            continue
        opts = {"action_map": cases["action_map"]} if name == "reinforced_planning" else {}
        rubric = get_recipe(name).rubric(**opts)
        for part in rubric.parts:
            for kind, text in cases["texts"].items():
                out.append(
                    (
                        f"part {name}.{part.name}: {kind}",
                        0.2,
                        lambda p=part, t=text, f=cases["fields"][name]: p.score_batch([t], [f]),
                    )
                )
    return out


def _augment():
    from groundrl.augment import shuffle_reasoning

    big = "This is a step. " * 60_000 + "Last."
    return [("shuffle_reasoning: 1 MB", 2.0, lambda: shuffle_reasoning(big, random.Random(0)))]


def _sim():
    try:
        from groundrl.sim.goals import Goal
        from groundrl.sim.reward import sim_reward
        from groundrl.sim.tasks import Task
        from groundrl.sim.world import Obj, Scene
    except ImportError:  # the sim extra is not installed
        return []
    scene = Scene(
        "kitchen",
        [
            Obj("CounterTop_1", "CounterTop"),
            Obj("Fridge_1", "Fridge"),
            Obj("Apple_1", "Apple", "CounterTop_1"),
        ],
    )
    task = Task("A", "Put an apple in the fridge.", scene, Goal("pick_and_place_simple", "Apple", "Fridge"))
    junk = ("pick up the Apple\n" * 50_000) + "{" * 10_000 + "<actions>[[" * 1000
    return [("sim_reward: 0.9 MB of plan lines", 5.0, lambda: sim_reward(junk, task))]


GROUPS = {
    "parse": _parse_core,
    "scores": _parse_scores,
    "preference": _preference,
    "scoring": _scoring,
    "argos": _argos,
    "recipes": _recipes,
    "parts": _parts,
    "augment": _augment,
    "sim": _sim,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--repeat", type=int, default=3, help="timings per case; the best is reported (default 3)"
    )
    ap.add_argument(
        "--only", choices=sorted(GROUPS), action="append", help="run only these groups (repeatable)"
    )
    args = ap.parse_args(argv)
    over = 0
    worst: tuple[float, str] = (0.0, "")
    print(f"{'case':<52} {'best s':>8} {'budget s':>9} {'ratio':>6}")
    for group in args.only or list(GROUPS):
        for label, budget, fn in GROUPS[group]():
            best = float("inf")
            for _ in range(max(1, args.repeat)):
                clear_caches()  # every timing is a cold pass: a cached parse is not the budget
                t = time.perf_counter()
                fn()
                best = min(best, time.perf_counter() - t)
            ratio = best / budget
            worst = max(worst, (ratio, f"{label} ({best:.3f} s of {budget:g} s)"))
            over += ratio > 1
            flag = "  OVER" if ratio > 1 else ""
            print(f"{label:<52} {best:8.3f} {budget:9.2f} {ratio:6.2f}{flag}")
    print(f"{over} case(s) over budget (target: ratio ≤ 1.00 on an idle core); worst: {worst[1]}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
