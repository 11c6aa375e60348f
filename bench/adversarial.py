"""Adversarial megabyte inputs: seconds per case against its budget, one core.

Parsers and rewards must stay linear on hostile completions (a megabyte of unclosed tags,
deep JSON, runs of number-like text). The tests check that these inputs are handled
(a finite score, no exception); the *time* budgets live here, because a wall-clock assert
in a test flakes on a loaded CI machine (issue 17, item 1).

Run: ``.venv/bin/python bench/adversarial.py [--repeat 3] [--only argos]``.
Prints one line per case: the best of ``--repeat`` timings (CPU seconds of this process,
so other work on a shared machine does not count), the budget, and their ratio
(ratio ≤ 1 meets the budget). The growth table (issue 30) times every reward and parser on
hostile shapes at 10 KB, 100 KB and 1 MB — since issue 41 one row per (function, shape)
for the Argos, verdict, teacher and lenient-RR parsers and the rewards and rubrics above
them: the fitted exponent k (time ~ size^k) over :data:`EXPONENT_BUDGET` (1.2) and
seconds per MB at 1 MB over :data:`PER_MB_BUDGET` (``--only growth`` runs only that
table, ``--match TEXT`` only its rows naming TEXT). Exits 1 when any case is over budget, so it can
gate a release on a quiet machine; it never runs under ``make test``.
"""

from __future__ import annotations

import argparse
import math
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
    from groundrl.rewards.critique_score import eqa_accuracy, eqa_format

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

    # Budget 1 s for 20 calls over 3.9 MB (~0.05 s/MB a call, a quarter of PER_MB_BUDGET [ours]).
    # Issue 41 (last round): the outcome's answer parsers were most of it (profiled: the
    # choice's stop-character removal and \b-led cue scan, normalize_answer's punctuation
    # class scan, a match object per <answer> opener); with those cheaper, 5 interleaved
    # passes at load 7 on the shared 2-core box gave min 0.68 / median 0.92 s against
    # 1.28 / 1.35 s before (what is left: the temporal scan of 'frame ' runs, ~0.25 s, and
    # each parser's one pass over a megabyte of '<').
    return [("argos rewards: 4 texts, 3.9 MB", 1.0, run)]


def _recipe_inputs() -> dict:
    """Every recipe (built-in, registered, installed) with valid fields and options from its
    own examples (``Recipe.examples``), and the hostile texts; the completion is what varies."""
    from groundrl.recipes import get_recipe, recipe_names

    recipes = {name: get_recipe(name) for name in recipe_names()}
    fields = {name: r.example_fields() for name, r in recipes.items()}
    options = {name: dict(r.example_options) for name, r in recipes.items()}
    texts = {
        "open_angles": "<" * 100_000 + "x" * 900_000,
        "unclosed_tags": "<critique><score><rubric><eval><answer><response><plans><actions><points x1='1'"
        * 12_000,
        "deep_json": "{" * 300_000 + '"a":' + "[" * 300_000,
        "deep_list": "<actions>" + "[" * 500_000 + "</actions>",
        "many_pairs": "<score>1</score><answer>2</answer>" * 30_000,
        "numbers": "-1e" * 330_000,
    }
    return {"fields": fields, "options": options, "texts": texts}


def _recipes():
    from groundrl.recipes import get_recipe

    inputs = _recipe_inputs()
    fields, texts = inputs["fields"], inputs["texts"]
    out = []
    for name in fields:
        rubric = get_recipe(name).rubric(**inputs["options"][name])
        for kind, text in texts.items():
            out.append(
                (f"rubric {name}: {kind}", 1.0, lambda r=rubric, t=text, f=fields[name]: r.score(t, **f))
            )
    return out


def _parts():
    """Issue 16: every part of every recipe alone on each ~1 MB adversarial input, budget
    0.2 s per part (the worst input is named at the end)."""
    from groundrl.recipes import get_recipe

    cases = _recipe_inputs()  # the recipes group's inputs
    out = []
    for name in cases["fields"]:
        rubric = get_recipe(name).rubric(**cases["options"][name])
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


# ---------------------------------------------------------------------------
# Growth: each hostile shape at 10 KB, 100 KB and 1 MB (issue 30, item 2)
# ---------------------------------------------------------------------------

SIZES = (10_000, 100_000, 1_000_000)
PER_MB_BUDGET = 0.2  # seconds per MB of completion [ours: issue 16's part budget]


def _fill(unit: str, size: int, head: str = "", tail: str = "") -> str:
    return head + unit * max(1, (size - len(head) - len(tail)) // len(unit)) + tail


def _growth_shapes() -> list[tuple[str, Callable[[int], object], Callable[[object], object]]]:
    """(label, make(size) -> input, score(input)) for every reward and parser on the shapes
    that were super-linear (issue 30): digits and digit runs inside ``<plans>``, long plans,
    plans of ints, many boxes, many ``[`` without JSON, long P/R/F1 predictions below the
    cap, and the Proxy-GRM / verdict / RR parsers on their own hostile shapes."""
    from groundrl.parse.scores import parse_pairwise_verdict
    from groundrl.rewards.perception import detection_reward
    from groundrl.rewards.planning import (
        MAX_PLAN_ACTIONS,
        embodied_format,
        load_action_map,
        plan_f1,
        plan_order_f1,
        reinforced_accuracy,
        reinforced_format,
    )
    from groundrl.rewards.preference import proxy_accuracy, proxy_format

    amap = load_action_map({i: f"pickup obj{i}" for i in range(300)})
    rr_gold = str([f"pickup obj{i}" for i in range(20)])
    eb_gold = "<actions>" + repr([["Pick", f"obj{i}"] for i in range(20)]) + "</actions>"
    resp = "<response>ok</response>"

    def eb(text):
        embodied_format(text)
        plan_f1(text, eb_gold)
        plan_order_f1(text, eb_gold)

    def rr(text):
        reinforced_format(text, amap)
        reinforced_accuracy(text, rr_gold)

    def det(text):
        detection_reward(text, '[{"bbox_2d": [0, 0, 10, 10], "label": "mug"}]')

    def proxy(text):
        proxy_format(text)
        proxy_accuracy(text, 1)
        parse_pairwise_verdict(text)

    def rr_plan(step: str, size: int) -> str:
        keys = '{"reasoning_and_reflection": "r", "visual_state_description": "v", "language_plan": "l", '
        return _fill(step + ", ", size, keys + '"executable_plan": [', step + "]}")

    def long_names(size: int) -> str:  # MAX_PLAN_ACTIONS - 6 actions with long object names
        n = MAX_PLAN_ACTIONS - 6
        name = "x" * max(1, size // n - 14)
        return resp + "<actions>" + repr([["Pick", f"{name}{i}"] for i in range(n)]) + "</actions>"

    step = '{"action_id": 1, "action_name": "pickup obj1"}'
    return [
        ("EB format+P/R/F1: one digit run in <plans>", lambda n: _fill("1", n, resp + "<plans>", "</plans>"), eb),
        ("EB format+P/R/F1: digit runs of 1000 in <plans>", lambda n: _fill("1" * 1000 + " ", n, "<plans>", "</plans>"), eb),
        ("EB format+P/R/F1: many '1. [' in <plans>", lambda n: _fill("1. [", n, "<plans>", "</plans>"), eb),
        ("EB format+P/R/F1: numbered lines", lambda n: _fill("1.[Manipulate] pick it\n", n, "<plans>", "</plans>"), eb),
        ("EB format+P/R/F1: many actions", lambda n: _fill("['Pick', 'Apple'], ", n, resp + "<actions>[", "]</actions>"), eb),
        ("EB format+P/R/F1: many locomotion actions", lambda n: _fill("['Navigate', 'x'], ", n, "<actions>[", "['Pick', 'obj1']]</actions>"), eb),
        ("EB format+P/R/F1: tuples", lambda n: _fill("('Pick', 'Apple'), ", n, "<actions>(", ")</actions>"), eb),
        ("EB format+P/R/F1: long prediction below the cap", long_names, eb),
        ("EB format+P/R/F1: many [ without a list", lambda n: _fill("[", n, "<actions>", "</actions>"), eb),
        ("RR format+accuracy: long plan", lambda n: rr_plan(step, n), rr),
        ("RR format+accuracy: plan of ints", lambda n: rr_plan("1", n), rr),
        ("RR format+accuracy: truncated long plan", lambda n: rr_plan(step, n)[:-3], rr),
        ("RR format+accuracy: fenced prose", lambda n: _fill("The plan. ", n, "```json\n{", "}\n```"), rr),
        ("detection: many boxes", lambda n: _fill('{"bbox_2d": [1, 2, 30, 40], "label": "mug"}, ', n, "<answer>[", "{}]</answer>"), det),
        ("detection: many [ without JSON", lambda n: _fill("[", n), det),
        ("detection: many [1, without JSON", lambda n: _fill("[1, ", n), det),
        ("detection: many boxes, Python literal", lambda n: _fill("(1, 2, 30, 40), ", n, "<answer>[", "]</answer>"), det),
        ("Proxy-GRM + verdict: long eval", lambda n: _fill("1 ", n, "<rubric>r</rubric><eval>", "</eval><answer>1</answer>"), proxy),
        ("Proxy-GRM + verdict: <rubric prefixes", lambda n: _fill("<rubric_item>", n, "<rubric>", "</rubric><eval>e</eval><answer>2</answer>"), proxy),
    ]  # fmt: skip


def _shape_families() -> list[tuple[str, Callable[[int], object], Callable[[object], object]]]:
    """Issue 41: every Argos, verdict, teacher and lenient-RR parser, and the rewards and
    rubrics that read them, alone on each hostile shape of its family (one row per
    (function, shape)): runs after an opener or keyword (letters after ``<points``,
    whitespace after ``frame`` / ``between 1`` / ``score:`` / ```` ```json ````), repeated
    unclosed openers, and repeated open/close pairs."""
    from groundrl.benchmarks.protocols import released_verdict, strict_verdict
    from groundrl.judges.papers import parse_binary_score
    from groundrl.parse.grounding import extract_points, extract_temporal_mentions
    from groundrl.parse.scores import parse_pairwise_verdict, parse_score
    from groundrl.recipes import get_recipe
    from groundrl.rewards.grounding import point_frame_mentions, spatial, spatial_video
    from groundrl.rewards.outcome import outcome
    from groundrl.rewards.perception import counting_reward, detection_reward
    from groundrl.rewards.planning import load_action_map, reinforced_accuracy, reinforced_format
    from groundrl.verify.verifier import AgenticVerifier, ParsedResponse

    masks = {"cup": [[10, 5, 20, 15]]}
    argos = get_recipe("argos")
    argos_rubric, argos_fields = argos.rubric(), argos.example_fields()
    verifier = AgenticVerifier()
    eqa = get_recipe("eqa_rm")
    eqa_rubric, eqa_fields = eqa.rubric(), eqa.example_fields()
    router = get_recipe("embodied_brain").rubric(router=True)
    amap = load_action_map({1: "pickup obj1"})
    gold_boxes = '[{"bbox_2d": [0, 0, 10, 10], "label": "mug"}]'

    argos_fns: dict[str, Callable[[str], object]] = {
        "extract_points": extract_points,
        "extract_temporal_mentions": extract_temporal_mentions,
        "ParsedResponse.of": ParsedResponse.of,
        "spatial": lambda t: spatial(t, masks),
        "spatial_video": lambda t: spatial_video(t, {1: masks}),
        "point_frame_mentions": point_frame_mentions,
        "outcome": lambda t: outcome(t, "cup"),
        "verifier.verify": lambda t: verifier.verify([t], [dict(argos_fields)]),
        "Argos rubric": lambda t: argos_rubric.score(t, **argos_fields),
        "parse_binary_score": parse_binary_score,
    }
    verdict_fns: dict[str, Callable[[str], object]] = {
        **{f"released_verdict {d}": lambda t, d=d: released_verdict(t, d) for d in _VERDICT_SETS},
        "strict_verdict": strict_verdict,
        "parse_pairwise_verdict": parse_pairwise_verdict,
        "parse_score": parse_score,
    }
    families: list[tuple[dict[str, Callable[[str], object]], dict[str, Callable[[int], str]]]] = [
        (argos_fns, {
            "<points + letters (CLI)": lambda n: _fill("a", n, "<points ", ">cup</points> <answer>cup</answer>"),
            "<point + letters, open": lambda n: _fill("a", n, "<point "),
            "'frame' + blanks": lambda n: _fill(" ", n, "frame", "x"),
            "'frames' + blanks": lambda n: _fill(" ", n, "frames", "x"),
            "'between frames' + blanks": lambda n: _fill(" ", n, "between frames", "x"),
            "'between 1' + blanks": lambda n: _fill(" ", n, "between 1", "x"),
            "'frame 1' + blanks before points": lambda n: _fill(" ", n, "frame", 'x<points x1="12" y1="9">cup</points>'),
            "'score:' + blanks": lambda n: _fill(" ", n, "score:", "x"),
            "<think>1</think> pairs": lambda n: _fill("<think>1</think>", n),
            "</think><think> repeats": lambda n: _fill("</think><think>", n),
        }),
        (verdict_fns, {
            "unclosed <answer> repeats": lambda n: _fill("<answer>", n),
            "<answer> + blanks": lambda n: _fill(" ", n, "<answer>", "x"),
            "<answer>1</answer> pairs": lambda n: _fill("<answer>1</answer>", n),
        }),
        ({
            "RR format lenient": lambda t: reinforced_format(t, amap, lenient=True),
            "RR accuracy lenient": lambda t: reinforced_accuracy(t, "['pickup obj1']", lenient=True),
        }, {
            "'```json' + blanks": lambda n: _fill(" ", n, "```json", "x"),
            "'```' + blanks": lambda n: _fill(" ", n, "```", "{"),
            "unclosed ```json repeats": lambda n: _fill("```json ", n),
        }),
        ({
            "EB detection_reward": lambda t: detection_reward(t, gold_boxes),
            "EB counting_reward": lambda t: counting_reward(t, 3),
            "EB router rubric (detection)": lambda t: router.score(t, task_type="detection", boxes=gold_boxes),
        }, {
            "<think>1</think> pairs": lambda n: _fill("<think>1</think>", n),
            "</think><think> repeats": lambda n: _fill("</think><think>", n),
            "many boxes": lambda n: _fill('{"bbox_2d": [1, 2, 30, 40], "label": "mug"}, ', n, "<answer>[", "{}]</answer>"),
        }),
        ({"EQA rubric": lambda t: eqa_rubric.score(t, **eqa_fields)}, {
            "<score>1</score> pairs": lambda n: _fill("<score>1</score>", n),
            "<critique>x</critique><score>1</score> pairs": lambda n: _fill("<critique>x</critique><score>1</score>", n),
        }),
    ]  # fmt: skip
    return [
        (f"{fname}: {sname}", make, fn)
        for fns, shapes in families
        for sname, make in shapes.items()
        for fname, fn in fns.items()
    ]


_VERDICT_SETS = ("vl-rewardbench", "multimodal-rewardbench", "mm-rlhf-rewardbench")

GROWTH_FLOOR_S = 0.001  # below a millisecond, fixed costs and timer noise decide the ratio
EXPONENT_BUDGET = 1.2  # fitted k in time ~ size^k, 10 KB to 1 MB [issue 41: linear is 1]


def _time(fn: Callable[[], object], repeat: int) -> float:
    """Best CPU seconds of this process over ``repeat`` cold runs: on a shared machine the
    time spent waiting for a core is not the code's."""
    best = float("inf")
    for _ in range(max(1, repeat)):
        clear_caches()  # every timing is a cold pass: a cached parse is not the budget
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def fitted_exponent(sizes: tuple[int, ...], seconds: list[float]) -> float:
    """Least-squares slope of log(time) on log(size): ``k`` in time ~ size^k (1 is linear,
    2 quadratic). Times below :data:`GROWTH_FLOOR_S` count as the floor."""
    xs = [math.log(n) for n in sizes[: len(seconds)]]
    ys = [math.log(max(t, GROWTH_FLOOR_S)) for t in seconds]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


def run_growth(repeat: int, cap: float = 10.0, match: str = "") -> tuple[int, tuple[float, str]]:
    """One line per (function, shape): seconds at each size, the fitted exponent ``k``
    between 10 KB and 1 MB over :data:`EXPONENT_BUDGET`, and seconds per MB at 1 MB over
    :data:`PER_MB_BUDGET` (ratios ≤ 1 meet them). A size that takes more than ``cap``
    seconds ends its shape (shown as ``>cap``, over budget), so an old quadratic path can
    be measured too. ``match`` keeps only the rows whose label contains it."""
    print(
        f"\n{'shape (growth)':<64} {'10 KB':>8} {'100 KB':>8} {'1 MB':>8} {'k':>5} {'k/budget':>9} {'s/MB/budget':>12}"
    )
    over, worst = 0, (0.0, "")
    for label, make, fn in [*_growth_shapes(), *_shape_families()]:
        if match not in label:
            continue
        fn(make(1_000))  # warm-up: lazy imports (scipy) out of the timing
        ts: list[float] = []
        for size in SIZES:
            if ts and ts[-1] > cap:
                break
            ts.append(_time(lambda t=make(size), f=fn: f(t), repeat if not ts or ts[-1] < 1 else 1))
        done = len(ts) == len(SIZES)
        k = fitted_exponent(SIZES, ts)
        k_ratio = k / EXPONENT_BUDGET if done else float("inf")
        per_mb = ts[2] / (SIZES[2] / 1e6) / PER_MB_BUDGET if done else float("inf")
        bad = k_ratio > 1 or per_mb > 1
        over += bad
        worst = max(worst, (max(k_ratio, per_mb), f"{label} (k {k:.2f}, per MB {per_mb:.2f})"))
        cols = " ".join(f"{t:8.4f}" for t in ts) + f" {'>' + format(cap, 'g'):>8}" * (len(SIZES) - len(ts))
        print(
            f"{label:<64} {cols} {k:5.2f} {k_ratio:9.2f} {per_mb:12.2f}{'  OVER' if bad else ''}", flush=True
        )
    return over, worst


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
        "--only",
        choices=sorted([*GROUPS, "growth"]),
        action="append",
        help="run only these groups (repeatable)",
    )
    ap.add_argument(
        "--cap", type=float, default=10.0, help="growth table: seconds after which a shape stops growing"
    )
    ap.add_argument("--match", default="", help="growth table: only the rows whose label contains this")
    args = ap.parse_args(argv)
    over = 0
    worst: tuple[float, str] = (0.0, "")
    groups = args.only or [*GROUPS, "growth"]
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; CPU seconds, best of {args.repeat}")
    print(f"{'case':<52} {'best s':>8} {'budget s':>9} {'ratio':>6}")
    for group in groups:
        if group == "growth":
            continue
        for label, budget, fn in GROUPS[group]():
            best = _time(fn, args.repeat)
            ratio = best / budget
            worst = max(worst, (ratio, f"{label} ({best:.3f} s of {budget:g} s)"))
            over += ratio > 1
            flag = "  OVER" if ratio > 1 else ""
            print(f"{label:<52} {best:8.3f} {budget:9.2f} {ratio:6.2f}{flag}")
    if "growth" in groups:
        g_over, g_worst = run_growth(args.repeat, args.cap, args.match)
        over += g_over
        worst = max(worst, g_worst)
    print(f"{over} case(s) over budget (target: ratio ≤ 1.00 on an idle core); worst: {worst[1]}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
