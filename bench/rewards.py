"""Rule-reward throughput per input shape, against the papers' released reward code on
the same inputs in the same process (issue 30).

For every rule reward the script builds a seeded corpus of ``--n`` completions, 8 per gold
label (a GRPO group), each tagged with the *shape* it was built as (one shape per group, chosen
uniformly, so a group's completions share their gold as in a trainer's batch; one mutation
of that shape per completion; ``--mixed-groups`` draws a shape per completion instead, so
a shape's timing parses nearly every gold):

* **real** — the papers' own examples when ``../shared/data/external`` is present: the
  EB-ALFRED in-context outputs as written (not valid JSON) and re-encoded, the
  EmbodiedBrain simulation gold answers (synthetic stand-ins otherwise);
* **steps** — dropped, swapped, repeated (1-3 copies), renamed or extra steps;
* **long plan** — plans of 50-200 steps (EmbodiedBrain: with their numbered ``<plans>``
  lines; detection: 50-200 boxes);
* **surface** — case, whitespace, unicode, indentation, double quotes;
* **types / tuples / literal** — string, bool or int-list ids, steps that are not
  dicts; tuple items, a top-level tuple, items with no outer brackets; Python-literal
  boxes;
* **tags / prose** — tag-case changes, ``<rubric_item>`` / ``<rubric id=…>``,
  duplicated or missing tags, prose before and after the answer, fenced JSON;
* **broken** — truncation, empty text, bad coordinates, runs of brackets.

Each comparison is timed shape by shape, ``--repeats`` passes, every implementation in
turn within a pass (interleaved, the order reversed every other pass so that no
implementation always reads the completions first), in **CPU seconds of this process**
(a shared machine's load does not count), groundrl's caches cleared before each of its
timings; a shape's rate comes from its median time, the overall rate from the median
per-pass total. The groundrl side is the recipe's **whole rubric** (``score_batch`` in
batches of 64, as ``groundrl score`` and the server call it), compared with the released
calls that compute the same parts (EmbodiedBrain: the format ORM *and* the P/R/F1 core). Beside
it, in the same interleaved passes (issue 41): the **bare** reward functions called in a plain
loop, the **TRL adapter** (:func:`groundrl.integrations.trl.reward_funcs`, every function
called as ``GRPOTrainer`` calls it, 64 completions a batch), the **verl** reward call
(``compute_score_async``, what ``examples/verl`` configure, once per response as verl
0.8 / 0.9's reward managers call it: ``write_dataset``'s ground truth and ``extra_info``
columns, a group's responses sharing one row, ``num_turns`` and ``rollout_reward_scores``
added to extra_info as verl adds them, the options as ``reward_kwargs``; see
:func:`_verl`) and the **OpenRLHF** reward function (``make_reward_func``, chat-templated
queries ending in ``<|im_end|>``, tensors out, one response a call as OpenRLHF 0.11.2's
``SingleTurnAgentExecutor`` sends them; see :func:`_openrlhf`). The adapters' JSON decode
cache is emptied with groundrl's other caches before each timing, so every pass decodes
each group's text once, as a trainer meets each prompt once. Targets: ≥ 2× the released
code overall for every comparison, and for the TRL adapter on Reinforced Reasoning,
EmbodiedBrain format, EmbodiedBrain P/R/F1 (each half through its own TRL functions) and
detection; rubric ÷ bare and every adapter ÷ bare ≤ 1.15× (verl's and OpenRLHF's per-call
APIs resolve the run's settings, build the sample from its row and the result dict, and
OpenRLHF's wants float32 tensors back, on every call: several microseconds that the
cheapest rewards, 10-20 µs a call, do not hide); the Reinforced Reasoning rubric within 3× one
``json.loads`` of the same completions; the pairwise verdict parser within 1.3× of its floor
(its own one regex search per completion). Then (``--only recipes``) each recipe's rubric and
TRL adapter against its part functions called directly (target ≤ 1.15×). Every corpus has a
**long reasoning** shape (issue 41): 2-8 KB of reasoning before the tags and, for plans, 20-60
steps. The script exits 1 when any target is missed (``make bench`` fails), after the list
of misses.

Released code is **never** part of this repository. Point environment variables at
local checkouts (work trees) of the papers' repositories to include it:

* ``GROUNDRL_RELEASED_RR`` — mail-taii/Reinforced-Reasoning-for-Embodied-Planning
  (``RFT training/examples/scripts/reward_func_embench_alfred_nonlinear.py``:
  ``format_reward`` + ``accuracy_reward``);
* ``GROUNDRL_RELEASED_EB`` — ZTERobot/EmbodiedBrain1.0 (``PlanningActionSetORM`` in
  ``train/RL/ms-swift-main/main_experiments/plugin/plugin_joint_if_spatial_planningformat_training.py``,
  the evaluation core of ``evaluation/src/InternalBench/eval_key_action_canonical_soft.py``
  with exact matching in place of the GPT judge, ``VisualPerceptionAccuracy`` in
  ``…/plugin/plugin_vpt.py``);
* ``GROUNDRL_RELEASED_PROXY`` — Qwen-Applications/Proxy-GRM
  (``verl/verl/utils/reward_score/grm_reward_with_instruct.py``: ``compute_score`` with
  ``use_format=1``; ``eval/vl_reward_bench.py``: ``parse_answer``).

Only the named top-level functions, classes and constants are read from those files
(their imports of training frameworks, network clients and file paths are skipped;
``print`` is silenced so logging does not dominate). Run::

    .venv/bin/python bench/rewards.py [--n 6000] [--repeats 11] [--only rr,eb]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from groundrl.parse.scores import parse_pairwise_verdict
from groundrl.rewards.critique_score import eqa_accuracy, eqa_format
from groundrl.rewards.perception import detection_reward
from groundrl.rewards.planning import (
    embodied_format,
    load_action_map,
    plan_f1,
    plan_order_f1,
    reinforced_accuracy,
    reinforced_format,
)
from groundrl.rewards.preference import proxy_accuracy, proxy_format

ROOT = Path(__file__).resolve().parent.parent
EXTERNAL = ROOT.parent / "shared" / "data" / "external"
GROUP = 8  # completions per gold label (a GRPO group)

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
    "then",
    "first",
    "after",
    "carefully",
    "locate",
    "examine",
]
UNICODE_WORDS = ["café", "naïve", "苹果", "冰箱", "Ω-shelf", "emoji🙂", "ＦＵＬＬ", "ß"]


def prose(rng: random.Random, n_words: int, unicode: bool = False) -> str:
    pool = WORDS + UNICODE_WORDS if unicode else WORDS
    return " ".join(rng.choice(pool) for _ in range(n_words)).capitalize() + "."


def _length(rng: random.Random) -> int:
    return rng.choice([5, 20, 60, 150, 400])


def long_prose(rng: random.Random) -> str:
    """2-8 KB of reasoning, as a thinking model writes before its tags (issue 41)."""
    target = rng.randint(2_000, 8_000)
    parts: list[str] = []
    size = 0
    while size < target:
        parts.append(prose(rng, rng.randint(8, 30)))
        size += len(parts[-1]) + 1
    return " ".join(parts)


def clear_caches() -> None:
    """Every cache groundrl's parsers and rewards keep between calls (a fair cold pass)."""
    import groundrl.parse
    import groundrl.rewards

    for pkg in (groundrl.parse, groundrl.rewards):
        for mod in list(sys.modules.values()):
            if getattr(mod, "__name__", "").startswith(pkg.__name__ + "."):
                for obj in list(vars(mod).values()):
                    if callable(getattr(obj, "cache_clear", None)) and not isinstance(obj, type):
                        obj.cache_clear()
    # the adapters' decode of a prompt's label / extra_info text: a trainer meets each
    # prompt's group once, so every timed pass decodes each group's text once too
    common = sys.modules.get("groundrl.integrations.common")
    if common is not None:
        getattr(common, "_fresh", {}).clear()
        getattr(getattr(common, "loads_cached", None), "cache_clear", lambda: None)()  # before 4603bd4


# ---------------------------------------------------------------------------
# Corpora: every completion carries the shape it was built as (issue 30, item 1)
# ---------------------------------------------------------------------------


def alfred_map() -> dict[str, str]:
    f = EXTERNAL / "reinforced-reasoning" / "alfred_action_map.json"
    if f.is_file():
        return json.loads(f.read_text(encoding="utf-8"))
    objs = ["apple", "mug", "fridge", "knife", "bread", "cabinet", "drawer", "sink", "countertop", "lamp"]
    verbs = ("goto", "pickup", "put", "open", "close", "slice", "toggle")
    return {str(i): f"{v} {o}" for i, (v, o) in enumerate((v, o) for v in verbs for o in objs)}


MIXED_GROUPS = False  # --mixed-groups: a shape per completion instead (no gold shared in a shape's timing)


def _shape(rng: random.Random, table: dict[str, tuple[str, ...]]) -> str:
    """A group's shape, all equally likely. A group (the 8 completions of one prompt)
    keeps one shape, so a shape's timing sees whole groups sharing their gold, as a
    trainer's batch does; each completion then draws its own mutation of that shape."""
    return rng.choice(list(table))


def _steps(rng: random.Random, items: list, mut: str) -> list:
    """The step-level mutations every plan corpus shares (items: a list of copies)."""
    if mut == "drop" and len(items) > 1:
        del items[rng.randrange(len(items))]
    elif mut == "swap" and len(items) > 1:
        a, b = rng.sample(range(len(items)), 2)
        items[a], items[b] = items[b], items[a]
    elif mut == "repeat" and items:
        k = rng.randrange(len(items))
        items[k:k] = [items[k]] * rng.randint(1, 3)
    elif mut == "long" and items:  # a plan of 50-200 steps
        items = [items[i % len(items)] for i in range(rng.randint(50, 200))]
    return items


def _prose_around(rng: random.Random, text: str) -> str:
    pre, post = prose(rng, rng.randint(3, 40)), prose(rng, rng.randint(0, 30))
    return f"{pre}\n{text}\n{post}"


RR_SHAPES = {
    "real examples": ("example", "example_json"),
    "clean": ("none",),
    "steps": ("drop", "swap", "repeat", "rename", "extra_steps"),
    "long plan": ("long",),
    "long reasoning": ("long_reasoning",),  # 2-8 KB reasoning, 20-60-step plans (issue 41)
    "surface": ("case", "whitespace", "unicode", "indent"),
    "types": ("string_id", "bool_id", "name_not_str", "step_not_dict", "plan_not_list", "ints"),
    "prose": ("fenced", "prose_around", "missing_key", "duplicate_key"),
    "broken": ("truncate", "empty"),
}


def alfred_examples() -> list[tuple[str, list[str]]]:
    """EB-ALFRED's in-context examples (raw model-style outputs and their action names)."""
    out = []
    for name in ("alfred_examples.json", "alfred_long_horizon_examples.json"):
        f = EXTERNAL / "eb-alfred" / name
        if not f.is_file():
            continue
        for ex in json.loads(f.read_text(encoding="utf-8")):
            raw = ex.split("Output:", 1)[-1].strip()
            names = re.findall(r'"action_name":\s*"([^"]*)"', raw)
            ids = [int(i) for i in re.findall(r'"action_id":\s*(\d+)', raw)]
            if names and len(ids) == len(names):
                out.append((raw, names, ids))
    return out


def rr_corpus(rng: random.Random, n: int, amap: dict[str, str]) -> list[dict[str, Any]]:
    ids = sorted(amap, key=int)
    examples = alfred_examples()
    out: list[dict[str, Any]] = []
    while len(out) < n:
        shape = _shape(rng, RR_SHAPES)
        if shape == "real examples" and not examples:
            shape = "clean"
        real = shape == "real examples" or (shape != "long reasoning" and rng.random() < 0.25)
        ex = rng.choice(examples) if examples and real else None
        if ex is not None:
            gold_steps = [{"action_id": i, "action_name": nm} for nm, i in zip(ex[1], ex[2], strict=True)]
        else:
            t = rng.randint(20, 60) if shape == "long reasoning" else rng.choice([1, 2, 3, 4, 6, 8, 12, 20])
            gold_steps = [
                {"action_id": int(i), "action_name": amap[i]} for i in (rng.choice(ids) for _ in range(t))
            ]
        gold = str([s["action_name"] for s in gold_steps])  # the released code's label: a Python literal
        for _ in range(GROUP):
            if MIXED_GROUPS:
                shape = _shape(rng, RR_SHAPES)
                shape = "clean" if shape == "real examples" and ex is None else shape
            mut = rng.choice(RR_SHAPES[shape])
            steps = _steps(rng, [dict(s) for s in gold_steps], mut)
            if mut == "rename":
                k = rng.randrange(len(steps))
                steps[k] = {"action_id": steps[k]["action_id"], "action_name": amap[rng.choice(ids)]}
            elif mut == "case":
                steps = [{**s, "action_name": s["action_name"].title()} for s in steps]
            elif mut == "whitespace":
                steps = [
                    {**s, "action_name": " " + s["action_name"].replace(" ", "  \t") + " "} for s in steps
                ]
            elif mut == "string_id":
                steps = [{**s, "action_id": str(s["action_id"])} for s in steps]
            elif mut == "extra_steps":
                steps += [{"action_id": int(i), "action_name": amap[i]} for i in rng.sample(ids, 3)]
            elif mut == "name_not_str":
                steps[rng.randrange(len(steps))]["action_name"] = rng.randrange(100)
            elif mut == "step_not_dict":
                steps[rng.randrange(len(steps))] = [steps[0]["action_id"], steps[0]["action_name"]]
            elif mut == "bool_id":
                steps[0]["action_id"] = True
            elif mut == "unicode":
                steps[-1]["action_name"] += " 冰箱"
            length = _length(rng)
            plan: Any = steps
            if mut == "plan_not_list":
                plan = "goto fridge then open"
            elif mut == "ints":
                plan = [s["action_id"] for s in steps]
            reasoning = long_prose(rng) if mut == "long_reasoning" else prose(rng, length, mut == "unicode")
            obj: dict[str, Any] = {
                "reasoning_and_reflection": reasoning,
                "visual_state_description": prose(rng, max(3, length // 2), mut == "unicode"),
                "language_plan": prose(rng, max(3, length // 3)),
                "executable_plan": plan,
            }
            if mut == "missing_key":
                del obj[rng.choice(list(obj)[:3])]
            indent = rng.choice([None, 2, 4]) if mut == "indent" else rng.choice([None, None, 2])
            text = json.dumps(obj, ensure_ascii=rng.random() < 0.5, indent=indent)
            if mut == "example":
                text = ex[0]  # the raw example: not JSON (single quotes, no commas), as written
            elif mut == "fenced":
                text = f"```json\n{text}\n```"
            elif mut == "prose_around":
                text = _prose_around(rng, text)
            elif mut == "truncate":
                text = text[: rng.randrange(1, len(text))]
            elif mut == "duplicate_key":
                text = text[:-1] + ', "executable_plan": []}'
            elif mut == "empty":
                text = rng.choice(["", "   ", "\n"])
            out.append({"completion": text, "gold": gold, "shape": shape})
    return out[:n]


def eb_golds() -> list[str]:
    f = EXTERNAL / "embodiedbrain" / "simulation_benchmark_set.json"
    if f.is_file():
        data = json.loads(f.read_text(encoding="utf-8"))
        golds = [
            t["content"] for d in data for t in d.get("conversations", []) if t.get("role") == "assistant"
        ]
        if golds:
            return golds
    acts = [["Navigate", "Apple"], ["Pick", "Apple"], ["Open", "Fridge"], ["Place", "Apple", "Fridge"]]
    lines = "\n".join(f"{i + 1}.[Manipulate] step {i}" for i in range(len(acts)))
    return [f"<response>OK</response>{lines}\n<plans></plans><actions>{acts}</actions>"]


_ACT_RE = re.compile(r"<actions>(.*?)</actions>", re.DOTALL)
EB_SHAPES = {
    "real gold": ("gold", "plans_inside"),
    "steps": ("drop", "swap", "repeat", "rename", "verb_only"),
    "long plan": ("long",),
    "long reasoning": ("long_reasoning",),  # 2-8 KB reasoning first, 20-60-step plans (issue 41)
    "surface": ("case", "whitespace", "unicode", "double_quotes"),
    "tuples": ("tuple_items", "tuple_top", "no_brackets"),
    "tags": ("tag_case", "no_response", "duplicate_tags", "plans_inside_case"),
    "prose": ("prose_around",),
    "broken": ("truncate", "empty", "not_list"),
}


def _plan_lines(a: list) -> str:
    return "\n".join(
        f"{i + 1}.[{'Navigate' if it and it[0] == 'Navigate' else 'Manipulate'}] do it"
        for i, it in enumerate(a)
    )


def eb_corpus(rng: random.Random, n: int) -> list[dict[str, Any]]:
    golds = eb_golds()
    out: list[dict[str, Any]] = []
    while len(out) < n:
        gold, shape = rng.choice(golds), _shape(rng, EB_SHAPES)
        m = _ACT_RE.search(gold)
        try:
            acts = ast.literal_eval(m.group(1)) if m else []
        except (ValueError, SyntaxError):
            acts = []
        for _ in range(GROUP):
            shape = _shape(rng, EB_SHAPES) if MIXED_GROUPS else shape
            mut = rng.choice(EB_SHAPES[shape])
            a = _steps(rng, [list(x) for x in acts], mut)
            if mut == "long_reasoning" and a:
                a = [list(a[i % len(a)]) for i in range(rng.randint(20, 60))]
            if mut == "rename" and a:
                a[rng.randrange(len(a))][0] = rng.choice(["Grab", "Put down", "Take", "Slice", "Wipe"])
            elif mut == "case":
                a = [[str(x).lower() for x in it] for it in a]
            elif mut == "unicode" and a:
                a[-1] = [a[-1][0], "苹果 café"]
            elif mut == "verb_only" and a:
                a[0] = a[0][:1]
            body = json.dumps(a) if mut == "double_quotes" else repr(a)
            if mut == "tuple_items":
                body = repr([tuple(it) for it in a])
            elif mut == "tuple_top":
                body = repr(tuple(a))
            elif mut == "no_brackets":
                body = repr(a)[1:-1]
            elif mut == "whitespace":
                body = body.replace(", ", ",\n    ")
            elif mut == "not_list":
                body = "Pick Apple then Place Apple"
            text = _ACT_RE.sub(lambda _m, body=body: f"<actions>{body}</actions>", gold, count=1)
            if mut in ("plans_inside", "plans_inside_case", "long", "long_reasoning"):  # lines inside <plans>
                tag = "PLANS" if mut == "plans_inside_case" else "plans"
                text = text.replace("<plans></plans>", f"<{tag}>{_plan_lines(a)}</{tag}>")
            elif mut == "tag_case":
                text = text.replace("<actions>", "<Actions>").replace("</response>", "</RESPONSE>")
            elif mut == "no_response":
                text = re.sub(r"</?response>", "", text)
            elif mut == "duplicate_tags":
                text = text + f"<actions>{body}</actions>"
            elif mut == "prose_around":
                text = _prose_around(rng, text)
            elif mut == "truncate":
                text = text[: rng.randrange(1, len(text))]
            elif mut == "empty":
                text = ""
            if mut == "long_reasoning":
                text = f"<think>{long_prose(rng)}</think>\n{text}"
            out.append({"completion": text, "gold": gold, "shape": shape})
    return out[:n]


PROXY_SHAPES = {
    "clean": ("none", "newlines"),
    "verdicts": ("wrong", "both", "prose_answer", "neither"),
    "think layout": ("think_layout",),
    "tags": ("case", "rubric_items", "rubric_attr", "duplicate_tags", "no_answer_tag"),
    "whitespace": ("space_between", "indented"),
    "long": ("long",),
    "prose": ("preamble", "trailer"),
    "broken": ("truncate", "empty", "unicode"),
}


def proxy_corpus(rng: random.Random, n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while len(out) < n:
        pref, shape = rng.choice([1, 2]), _shape(rng, PROXY_SHAPES)
        for _ in range(GROUP):
            shape = _shape(rng, PROXY_SHAPES) if MIXED_GROUPS else shape
            mut = rng.choice(PROXY_SHAPES[shape])
            length = rng.choice([300, 800, 2000]) if mut == "long" else _length(rng)
            ans = str(pref if mut != "wrong" else 3 - pref)
            if mut == "both":
                ans = "1 or 2"
            elif mut == "neither":
                ans = "tie"
            elif mut == "prose_answer":
                ans = f"Response {ans} is better"
            k = max(3, length // 3)
            rub = prose(rng, k, mut == "unicode")
            if mut == "rubric_items":
                rub = "".join(f"<rubric_item>{prose(rng, 6)}</rubric_item>" for _ in range(rng.randint(2, 5)))
            ev = prose(rng, length, mut == "unicode")
            if mut == "think_layout":
                text = f"<think>{rub}</think><summary>{ev}</summary><answer>{ans}</answer>"
            else:
                sep = {"newlines": "\n", "space_between": " ", "indented": "\n  "}.get(mut, "")
                head = '<rubric id="1">' if mut == "rubric_attr" else "<rubric>"
                text = f"{head}{rub}</rubric>{sep}<eval>{ev}</eval>{sep}<answer>{ans}</answer>"
            if mut == "no_answer_tag":
                text = text.replace("<answer>", "").replace("</answer>", "")
            elif mut == "duplicate_tags":
                text += f"<answer>{3 - pref}</answer>"
            elif mut == "preamble":
                text = prose(rng, rng.randint(3, 30)) + "\n" + text
            elif mut == "trailer":
                text = text + "\n" + prose(rng, rng.randint(3, 30))
            elif mut == "truncate":
                text = text[: rng.randrange(1, len(text))]
            elif mut == "empty":
                text = ""
            elif mut == "case":
                text = text.replace("answer>", "Answer>")
            out.append({"completion": text, "preferred": pref, "shape": shape})
    return out[:n]


DET_LABELS = ["mug", "apple", "knife", "bowl", "cup", "bottle"]
DET_SHAPES = {
    "clean": ("none",),
    "boxes": ("jitter", "drop", "extra", "wrong_label", "repeat"),
    "many boxes": ("many",),
    "long reasoning": ("long_reasoning",),  # 2-8 KB reasoning before the answer (issue 41)
    "literal": ("python_literal", "tuples", "bare_boxes"),
    "prose": ("no_answer_tag", "fenced", "prose_after", "two_lists"),
    "tags": ("tag_case", "case"),
    "broken": ("truncate", "empty", "bad_coord", "unicode", "brackets"),
}


def det_corpus(rng: random.Random, n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while len(out) < n:
        boxes = []
        for _ in range(rng.choice([1, 1, 2, 3, 5, 8])):
            x, y = rng.randrange(0, 900), rng.randrange(0, 900)
            boxes.append({"bbox_2d": [x, y, x + rng.randrange(10, 100), y + rng.randrange(10, 100)],
                          "label": rng.choice(DET_LABELS)})  # fmt: skip
        gold, shape = json.dumps(boxes), _shape(rng, DET_SHAPES)
        for _ in range(GROUP):
            shape = _shape(rng, DET_SHAPES) if MIXED_GROUPS else shape
            mut = rng.choice(DET_SHAPES[shape])
            b = [{"bbox_2d": list(d["bbox_2d"]), "label": d["label"]} for d in boxes]
            b = _steps(rng, b, "repeat" if mut == "repeat" else "")
            if mut == "jitter":
                for d in b:
                    d["bbox_2d"] = [c + rng.randrange(-8, 9) for c in d["bbox_2d"]]
            elif mut == "drop" and len(b) > 1:
                del b[rng.randrange(len(b))]
            elif mut == "extra":
                b.append({"bbox_2d": [1, 1, 50, 50], "label": rng.choice(DET_LABELS)})
            elif mut == "many":  # 50-200 boxes, most of them jittered copies
                b = [{"bbox_2d": [c + rng.randrange(-20, 21) for c in d["bbox_2d"]], "label": d["label"]}
                     for d in (rng.choice(boxes) for _ in range(rng.randint(50, 200)))]  # fmt: skip
            elif mut == "wrong_label":
                b[0]["label"] = "chair"
            elif mut == "case":
                b[0]["label"] = b[0]["label"].upper()
            elif mut == "unicode":
                b[0]["label"] = "杯子"
            elif mut == "bad_coord":
                b[0]["bbox_2d"][1] = "ten"
            body = json.dumps(b)
            if mut == "python_literal":
                body = repr(b)
            elif mut == "tuples":
                body = repr(tuple({"bbox_2d": tuple(d["bbox_2d"]), "label": d["label"]} for d in b))
            elif mut == "bare_boxes":
                body = json.dumps([d["bbox_2d"] for d in b])
            elif mut == "two_lists":
                body = json.dumps(b[:1]) + " then, corrected: " + body
            think = long_prose(rng) if mut == "long_reasoning" else prose(rng, _length(rng) // 2)
            tag = "Answer" if mut == "tag_case" else "answer"
            if mut == "no_answer_tag":
                text = f"<think>{think}</think>{body}"
            elif mut == "fenced":
                text = f"<think>{think}</think><answer>```json\n{body}\n```</answer>"
            elif mut == "brackets":
                text = f"<think>{think} [see [1] and [2, [3]]</think><answer>[[[ {body[:20]}</answer>"
            else:
                text = f"<think>{think}</think><{tag}>{body}</{tag}>"
            if mut == "prose_after":
                text += "\n" + prose(rng, rng.randint(3, 30))
            elif mut == "truncate":
                text = text[: rng.randrange(1, len(text))]
            elif mut == "empty":
                text = ""
            out.append({"completion": text, "gold": gold, "shape": shape})
    return out[:n]


def eqa_corpus(rng: random.Random, n: int) -> list[dict[str, Any]]:
    out = []
    for _ in range(n):
        mut = rng.choice(
            [
                "none",
                "none",
                "decimal",
                "slash",
                "out_of_range",
                "word",
                "no_tag",
                "two_scores",
                "empty",
                "long",
            ]
        )
        s = rng.randint(0, 10)
        sc = {
            "decimal": f"{s}.5" if s < 10 else "9.5",
            "slash": f"{s}/10",
            "out_of_range": "11",
            "word": "seven",
        }.get(mut, str(s))
        critique = long_prose(rng) if mut == "long" else prose(rng, _length(rng))
        text = f"<critique>{critique}</critique><score>{sc}</score>"
        if mut == "no_tag":
            text = text.replace("<score>", "")
        elif mut == "two_scores":
            text = f"<score>3</score>{text}"
        elif mut == "empty":
            text = ""
        out.append({"completion": text, "gt_score": rng.randint(0, 10), "shape": "mixed"})
    return out


# ---------------------------------------------------------------------------
# Released code, read from a checkout named by an environment variable
# ---------------------------------------------------------------------------


def _noop(*_a: Any, **_k: Any) -> None:
    return None


def load_released(path: Path, names: set[str], env: dict[str, Any]) -> dict[str, Any]:
    """Execute only the top-level definitions of ``path`` named in ``names`` (functions,
    classes, assignments, and ``for`` loops that fill a named constant) in a namespace
    seeded with ``env``; the file's own imports are not run."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    keep = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in names:
            keep.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in names for t in targets):
                keep.append(node)
        elif isinstance(node, ast.For):
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            if used & names and any(
                isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in names
                for n in ast.walk(node)
                if isinstance(n, ast.Assign)
                for t in n.targets
            ):
                keep.append(node)
    import typing

    ns: dict[str, Any] = {"__name__": f"released_{path.stem}", "print": _noop, "re": re, "json": json,
                          "ast": ast, "os": os, "defaultdict": defaultdict}  # fmt: skip
    ns.update({k: getattr(typing, k) for k in ("List", "Dict", "Tuple", "Any", "Union", "Optional")})
    ns.update(env)
    exec(compile(ast.Module(body=keep, type_ignores=[]), str(path), "exec"), ns)  # noqa: S102
    missing = names - set(ns)
    if missing:
        raise RuntimeError(f"{path}: not found {sorted(missing)}")
    return ns


def released_rr(amap: dict[str, str]) -> dict[str, Callable[..., Any]] | None:
    root = os.environ.get("GROUNDRL_RELEASED_RR")
    if not root:
        return None
    p = Path(root) / "RFT training" / "examples" / "scripts" / "reward_func_embench_alfred_nonlinear.py"
    ns = load_released(
        p,
        {
            "parse_json_output",
            "check_structure",
            "check_executable_items",
            "check_action_id_match",
            "format_reward",
            "accuracy_reward",
        },  # fmt: skip
        {"ACTION_MAP": amap, "ACTION_IDS": set(amap)},
    )
    fmt, acc = ns["format_reward"], ns["accuracy_reward"]

    def both(c: str, gold: str) -> float:
        # reward_func wraps each sample in try/except (0 on error); so do we
        try:
            a, _ = acc(c, gold)
            return a + fmt(c)
        except Exception:
            return 0.0

    return {"rr": both}


def released_eb() -> dict[str, Callable[..., Any]] | None:
    root = os.environ.get("GROUNDRL_RELEASED_EB")
    if not root:
        return None
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    plug = Path(root) / "train" / "RL" / "ms-swift-main" / "main_experiments" / "plugin"
    ns = load_released(
        plug / "plugin_joint_if_spatial_planningformat_training.py", {"PlanningActionSetORM"}, {"ORM": object}
    )
    orm = ns["PlanningActionSetORM"]()
    ev = load_released(
        Path(root) / "evaluation" / "src" / "InternalBench" / "eval_key_action_canonical_soft.py",
        {"ACTION_SYNONYM_GROUPS", "ACTION_CANONICAL_MAP", "IGNORE_VERBS", "canonicalize_actions", "extract_actions",
         "lcs_from_match_matrix", "count_max_matching", "get_precison_single", "get_recall_single", "get_f1_single"},
        {"np": np, "linear_sum_assignment": linear_sum_assignment},
    )  # fmt: skip
    vpt = load_released(plug / "plugin_vpt.py", {"is_valid", "VisualPerceptionAccuracy"}, {"ORM": object})
    vpa = vpt["VisualPerceptionAccuracy"]()

    def prf(c: str, gold: str) -> tuple[float, float]:
        # the evaluation core of process_item with exact matching in place of the GPT judge
        try:
            pred = ev["canonicalize_actions"](ev["extract_actions"](c))
            gt = ev["canonicalize_actions"](ev["extract_actions"](gold))
            if not gt:
                return 0.0, 0.0
            m = np.zeros((len(pred), len(gt)))
            for i, a in enumerate(pred):
                for j, b in enumerate(gt):
                    if a == b:
                        m[i, j] = 1
            q = ev["count_max_matching"](m) if len(pred) else 0
            o = ev["lcs_from_match_matrix"](m.tolist(), pred, gt)[1] if len(pred) else 0
            out = []
            for k in (q, o):
                p, r = ev["get_precison_single"](k, len(pred)), ev["get_recall_single"](k, len(gt))
                out.append(ev["get_f1_single"](p, r))
            return out[0], out[1]
        except Exception:
            return 0.0, 0.0

    return {
        "eb_format": lambda cs, golds: orm(cs, golds, ["planning_action_set"] * len(cs)),
        "eb_prf": prf,
        "detection": lambda cs, golds: vpa(cs, golds, ["detection"] * len(cs)),
    }


def released_proxy() -> dict[str, Callable[..., Any]] | None:
    root = os.environ.get("GROUNDRL_RELEASED_PROXY")
    if not root:
        return None
    ns = load_released(
        Path(root) / "verl" / "verl" / "utils" / "reward_score" / "grm_reward_with_instruct.py",
        {"extract_characters_regex", "verify_math", "verify_format", "compute_score"},
        {"use_api": 0, "use_format": 1, "use_fb": 0},
    )
    pa = load_released(Path(root) / "eval" / "vl_reward_bench.py", {"parse_answer"}, {})
    return {"proxy": ns["compute_score"], "verdict": pa["parse_answer"]}


# ---------------------------------------------------------------------------
# Timing: per shape and overall, interleaved passes in one process
# ---------------------------------------------------------------------------

Impl = Callable[[list[dict[str, Any]]], Any]  # scores a list of samples


def _json_loads_all(samples: list[dict[str, Any]]) -> None:
    for s in samples:
        try:  # noqa: SIM105 - contextlib.suppress would add its own cost to the baseline
            json.loads(s["completion"])
        except ValueError:
            pass


def timed(fn: Callable[[], Any], clear: bool) -> float:
    """CPU seconds of this process (single-threaded): on a shared, loaded machine the
    time spent waiting for a core is not counted against either implementation."""
    if clear:
        clear_caches()
    t = time.process_time()
    fn()
    return time.process_time() - t


def compare(impls: dict[str, Impl], data: list[dict[str, Any]], repeats: int) -> dict[str, dict[str, float]]:
    """``{shape: {impl: completions/s}}`` plus ``"overall"``: each pass times every shape's
    subset with every implementation in turn (groundrl's caches cleared before each of its
    timings); a shape's rate is from its median time, overall from the median per-pass sum."""
    shapes = list(dict.fromkeys(s["shape"] for s in data))
    subsets = {sh: [s for s in data if s["shape"] == sh] for sh in shapes}
    for fn in impls.values():  # warm-up: lazy imports (scipy) out of the timing
        fn(data[:64])
    times: dict[str, dict[str, list[float]]] = {sh: {k: [] for k in impls} for sh in shapes}
    order = list(impls.items())
    for i in range(repeats):
        for sh in shapes:
            # the order turns round every pass: the first to read a shape's completions
            # fetches them into the CPU caches for the others, and that must not always
            # be the same implementation (groundrl went first, a 5-15% handicap)
            for k, fn in order if i % 2 == 0 else order[::-1]:
                times[sh][k].append(timed(lambda fn=fn, sub=subsets[sh]: fn(sub), k.startswith("groundrl")))
    rates = {sh: {k: len(subsets[sh]) / statistics.median(v) for k, v in times[sh].items()} for sh in shapes}
    rates["overall"] = {
        k: len(data) / statistics.median([sum(times[sh][k][i] for sh in shapes) for i in range(repeats)])
        for k in impls
    }
    counts = {sh: len(sub) for sh, sub in subsets.items()}
    counts["overall"] = len(data)
    rates["_n"] = counts  # type: ignore[assignment]
    return rates


SUMMARY: list[tuple[str, str, float | None, str]] = []  # (comparison, path, ratio, note)
# (what, measured, target, "≤" or "≥"): every target the run checks; main() exits 1 on a miss
TARGETS: list[tuple[str, float, float, str]] = []
ADAPTER_TARGET = 1.15  # rubric / TRL adapter cost over the bare reward [issue 41]
RELEASED_TARGET = 2.0  # speed over the released code [issue 30 / 41]
FLOOR_TARGET = 1.3  # verdict parser cost over its one regex search [issue 41]
# the trainer adapters timed beside the rubric (issue 41): impl key -> label
ADAPTERS = {"groundrl_trl": "TRL", "groundrl_verl": "verl", "groundrl_orlhf": "OpenRLHF"}


def _target(what: str, value: float, target: float, op: str) -> str:
    met = value <= target if op == "≤" else value >= target
    TARGETS.append((what, value, target, op))
    return f"target {op} {target:g}×: {'met' if met else 'NOT met'}"


def _cost(rates: dict[str, float], impl: str, base: str) -> float:
    """How many times ``base``'s time ``impl`` takes (rates are completions per second)."""
    return rates[base] / rates[impl]


def report(
    title: str,
    path: str,
    rates: dict[str, dict[str, float]],
    target_json: float | None = None,
    trl_vs_released: bool = False,
    released_target: bool = True,
) -> None:
    """One table per comparison: a row per shape and the overall row, with the ratios.
    ``groundrl`` is the rubric (or the parser); ``groundrl_bare`` the bare reward functions,
    ``groundrl_trl`` the TRL adapter's functions, ``floor`` the parser's one regex search."""
    counts = rates.pop("_n")
    o = rates["overall"]
    has_rel, has_json = "released" in o, "json.loads" in o
    extra = [k for k in ("groundrl_bare", *ADAPTERS, "floor") if k in o]
    label = {"groundrl_bare": "bare", "floor": "floor", **ADAPTERS}
    print(f"\n{title} — {path}")
    head = f"  {'shape':22s} {'n':>5s} {'groundrl/s':>11s}" + "".join(
        f" {label[k] + '/s':>10s}" for k in extra
    )
    head += f" {'released/s':>11s} {'ours÷rel':>9s}" if has_rel else ""
    head += "".join(f" {label[k] + '÷rel':>9s}" for k in ADAPTERS if has_rel and k in o)
    head += "".join(f" {'÷' + label[k]:>7s}" for k in extra if k not in ADAPTERS)
    head += f" {'json÷ours':>10s}" if has_json else ""
    print(head)
    for sh, r in rates.items():
        line = f"  {sh:22s} {counts[sh]:5d} {r['groundrl']:11,.0f}" + "".join(
            f" {r[k]:10,.0f}" for k in extra
        )
        if has_rel:
            line += f" {r['released']:11,.0f} {r['groundrl'] / r['released']:8.2f}×"
            line += "".join(f" {r[k] / r['released']:8.2f}×" for k in ADAPTERS if k in r)
        line += "".join(f" {_cost(r, 'groundrl', k):6.2f}×" for k in extra if k not in ADAPTERS)
        if has_json:
            line += f" {r['json.loads'] / r['groundrl']:9.2f}×"
        print(line)
    if has_rel:
        ratio = o["groundrl"] / o["released"]
        worst = min(rates, key=lambda sh: rates[sh]["groundrl"] / rates[sh]["released"])
        note = f"worst shape {worst} {rates[worst]['groundrl'] / rates[worst]['released']:.2f}×"
        SUMMARY.append((title, path, ratio, note))
        if released_target:
            met = _target(f"{title}: ours÷released", ratio, RELEASED_TARGET, "≥")
        else:  # the verdict parser sits at its floor: its target is ÷floor (issue 41)
            met = "no target here: see ÷floor"
        print(f"  overall ours÷released {ratio:.2f}× ({met}); {note}")
        for k in (k for k in ADAPTERS if k in o):
            r, name = o[k] / o["released"], ADAPTERS[k]
            SUMMARY.append((title, f"{name} adapter", r, f"{name} adapter ÷ released"))
            if trl_vs_released and k == "groundrl_trl":  # the target is the TRL path's
                print(
                    f"  overall TRL adapter÷released {r:.2f}× ({_target(f'{title}: TRL÷released', r, RELEASED_TARGET, '≥')})"
                )
            else:
                print(f"  overall {name} adapter÷released {r:.2f}×")
    else:
        SUMMARY.append((title, path, None, "released code not loaded"))
    if "groundrl_bare" in o:
        r = _cost(o, "groundrl", "groundrl_bare")
        print(f"  overall rubric÷bare {r:.2f}× ({_target(f'{title}: rubric÷bare', r, ADAPTER_TARGET, '≤')})")
    for k in (k for k in ADAPTERS if k in o and "groundrl_bare" in o):
        r, name = _cost(o, k, "groundrl_bare"), ADAPTERS[k]
        print(
            f"  overall {name} adapter÷bare {r:.2f}× ({_target(f'{title}: {name}÷bare', r, ADAPTER_TARGET, '≤')})"
        )
    if "floor" in o:
        r = _cost(o, "groundrl", "floor")
        print(f"  overall parser÷floor {r:.2f}× ({_target(f'{title}: parser÷floor', r, FLOOR_TARGET, '≤')})")
    if has_json and target_json:
        r = o["json.loads"] / o["groundrl"]
        print(
            f"  overall json.loads÷ours {r:.2f}× ({_target(f'{title}: json.loads÷ours', r, target_json, '≤')})"
        )
        SUMMARY.append((title, path + " vs json.loads", r, f"target ≤ {target_json:g}×"))


def _batched(rubric: Any, fields: tuple[str, ...], extra: dict[str, Any] | None = None) -> Impl:
    """A recipe rubric scoring in batches of 64, as ``groundrl score`` and the server call it.
    The corpus rows are the samples, as a data set's records are (the parts read the fields
    they name; building a second dict per row was the bench's cost, not the rubric's)."""

    def run(samples: list[dict[str, Any]]) -> None:
        for i in range(0, len(samples), 64):
            chunk = samples[i : i + 64]
            rows = chunk if not extra else [{**s, **extra} for s in chunk]
            rubric.score_batch([s["completion"] for s in chunk], rows)

    return run


def _trl(rubric: Any, fields: tuple[str, ...], names: tuple[str, ...] | None = None) -> Impl:
    """The TRL adapter's reward functions (:func:`groundrl.integrations.trl.reward_funcs`)
    called as ``GRPOTrainer`` calls them, a batch of 64 at a time: prompts, completions,
    one list per dataset column, ``trainer_state`` and the logging callbacks. ``names``:
    only the functions of these parts."""
    from groundrl.integrations.trl import reward_funcs

    funcs = [f for f in reward_funcs(rubric)[0] if names is None or f.__name__ in names]

    def run(samples: list[dict[str, Any]]) -> None:
        for i in range(0, len(samples), 64):
            chunk = samples[i : i + 64]
            completions = [s["completion"] for s in chunk]
            columns = {f: [s[f] for s in chunk] for f in fields}
            prompts = ["prompt"] * len(chunk)
            for f in funcs:
                f(prompts=prompts, completions=completions, completion_ids=None, trainer_state=None,
                  log_extra=_noop, log_metric=_noop, **columns)  # fmt: skip

    return run


def _label_and_extra(
    s: dict[str, Any], label: str | None, fields: tuple[str, ...]
) -> tuple[Any, dict[str, Any]]:
    """A corpus row as ``groundrl export verl`` writes it: the recipe's label field as the
    ground truth (lists JSON-encoded), the other fields in ``extra_info``."""
    extra = {f: s[f] for f in fields if f != label}
    return (s[label] if label in fields else None), extra


def _verl(recipe: str, opts: dict[str, Any], fields: tuple[str, ...], data: list[dict[str, Any]]) -> Impl:
    """verl's reward call as verl 0.8.0 / 0.9.1 make it: ``await compute_score_async(...)``
    (:func:`groundrl.integrations.verl.compute_score_async`, what ``examples/verl`` configure;
    the coroutine is driven here without an event loop, as a rule-only recipe never
    waits), once per response, ``data_source`` ``groundrl/<recipe>``, the
    ``reward_model.ground_truth`` and ``extra_info`` columns as
    :func:`~groundrl.integrations.verl.write_dataset` writes them (JSON-encoded lists and
    the ``{"json": …}`` extra_info), and the options as the run's ``reward_kwargs``.

    Grouping, as verl does it: ``DataProto.repeat(n, interleave=True)`` puts a prompt's n
    responses next to each other, all holding that row's ``extra_info`` dict and ground
    truth, and the reward manager (``workers/reward_manager/naive.py``, and the reward
    loop's ``experimental/reward_loop/reward_manager/naive.py``) sets
    ``extra_info["num_turns"]`` and ``extra_info["rollout_reward_scores"]`` on it before every
    call: here a group (consecutive rows with one gold) is one row, its extra_info one
    dict carrying those two keys (``num_turns`` 2: the agent loop's single turn). The rows
    are built before any timing (a data loader's work, not the reward's)."""
    from groundrl.integrations.verl import compute_score_async
    from groundrl.recipes import get_recipe

    label = get_recipe(recipe).label_field
    rows: dict[int, tuple[Any, dict[str, Any]]] = {}
    last: tuple[Any, Any] = (None, None)
    for s in data:  # a group (consecutive rows, one gold) is one prompt's n responses: one row
        key = _label_and_extra(s, label, fields)
        if key != last[0]:
            gt, extra = key
            if not isinstance(gt, (str, int, float, bool)) and gt is not None:
                gt = {"json": json.dumps(gt)}
            info = {"json": json.dumps({**extra, "recipe": recipe, "index": len(rows)})}
            info.update(num_turns=2, rollout_reward_scores={})  # what verl sets per call
            last = key, (gt, info)
        rows[id(s)] = last[1]
    source, kw = f"groundrl/{recipe}", ({"recipe_options": opts} if opts else {})

    def run(samples: list[dict[str, Any]]) -> None:
        for s in samples:
            gt, extra = rows[id(s)]
            coro = compute_score_async(data_source=source, solution_str=s["completion"], ground_truth=gt,
                                       extra_info=extra, **kw)  # fmt: skip
            try:
                coro.send(None)
            except StopIteration:  # done without waiting, as a rule-only recipe is
                continue
            coro.close()
            raise RuntimeError(
                f"{recipe}: compute_score_async waited (a judge part?); time it with an event loop"
            )

    return run


def _openrlhf(recipe: str, opts: dict[str, Any], fields: tuple[str, ...], data: list[dict[str, Any]]) -> Impl:
    """OpenRLHF's reward function (:func:`groundrl.integrations.openrlhf.make_reward_func`,
    tensors out) called as OpenRLHF 0.11.2 calls a ``--reward.remote_url`` file: one
    response a call (``SingleTurnAgentExecutor._fetch_rewards_via_func``: batch_size 1,
    ``reward_func([query], [prompt], [label])``); ``queries`` = chat-templated prompt +
    response + ``<|im_end|>``, ``prompts`` the prompt, ``labels`` the recipe's label field
    (a JSON object of the fields when the recipe needs more than its label, as a
    ``--data.label_key`` column holds them; a group's responses share one label text).
    Queries and labels are built here, before any timing."""
    from groundrl.integrations.openrlhf import make_reward_func
    from groundrl.recipes import get_recipe

    label = get_recipe(recipe).label_field
    func = make_reward_func(recipe, recipe_options=opts or None)
    prompt = "<|im_start|>system\nYou plan.<|im_end|>\n<|im_start|>user\nDo the task.<|im_end|>\n<|im_start|>assistant\n"
    rows: dict[int, tuple[list[str], list[Any]]] = {}
    last: tuple[Any, Any] = (None, None)
    for s in data:
        key = _label_and_extra(s, label, fields)
        if key != last[0]:  # one label object per group, as one dataset row gives it
            gt, extra = key
            last = key, (json.dumps({label: gt, **extra} if label in fields else extra) if extra else gt)
        rows[id(s)] = [prompt + s["completion"] + "<|im_end|>"], [last[1]]
    prompts = [prompt]

    def run(samples: list[dict[str, Any]]) -> None:
        for s in samples:
            queries, labels = rows[id(s)]
            func(queries, prompts, labels)

    return run


def _others(
    recipe: str, opts: dict[str, Any], fields: tuple[str, ...], data: list[dict[str, Any]]
) -> dict[str, Impl]:
    """The verl and OpenRLHF adapters of one comparison (timed beside the TRL adapter)."""
    return {
        "groundrl_verl": _verl(recipe, opts, fields, data),
        "groundrl_orlhf": _openrlhf(recipe, opts, fields, data),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=6000, help="completions per reward (default 6000)")
    ap.add_argument("--repeats", type=int, default=11, help="interleaved timed passes (median; default 11)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--only", default="", help="comma-separated subset of: rr,eb,proxy,verdict,detection,eqa,recipes"
    )
    ap.add_argument("--mixed-groups", action="store_true",
                    help="a shape per completion, not per group (a shape's timing then parses most golds)")  # fmt: skip
    args = ap.parse_args()
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    global MIXED_GROUPS
    MIXED_GROUPS = args.mixed_groups

    def want(k: str) -> bool:
        return not only or k in only

    from groundrl.parse.scores import _VERDICT_SEARCH
    from groundrl.recipes import get_recipe

    rng = random.Random(args.seed)
    n, rep = args.n, args.repeats
    amap_s = alfred_map()
    amap = load_action_map(amap_s)
    # verl / OpenRLHF runs name the map by path in their reward settings
    amap_dir = tempfile.TemporaryDirectory(prefix="groundrl-bench-")
    amap_path = os.path.join(amap_dir.name, "action_map.json")
    Path(amap_path).write_text(json.dumps(amap_s), encoding="utf-8")
    rr, eb, px = rr_corpus(rng, n, amap_s), eb_corpus(rng, n), proxy_corpus(rng, n)
    det, eqa = det_corpus(rng, n), eqa_corpus(rng, n)
    for s in det:
        s["boxes"], s["task_type"] = s["gold"], "detection"
    rel: dict[str, Callable[..., Any]] = {}
    for loader in (lambda: released_rr(amap_s), released_eb, released_proxy):
        try:
            rel.update(loader() or {})
        except Exception as e:  # a checkout at another commit: say so, time ours anyway
            print(f"(released code not loaded: {type(e).__name__}: {e})", file=sys.stderr)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"{n} completions per reward, median of {rep} interleaved passes (process CPU time), groundrl caches"
        " cleared before each;"
        f" python {sys.version.split()[0]}; load average {load};"
        f" released code: {', '.join(sorted(rel)) or 'none (set GROUNDRL_RELEASED_* to include it)'}"
    )

    def run(title: str, path: str, impls: dict[str, Impl], data: list, released: Impl | None, key: str,
            json_target: float | None = None, trl_vs_released: bool = False,
            released_target: bool = True) -> None:  # fmt: skip
        impls = dict(impls)
        if released is not None and key in rel:
            impls["released"] = released
        if json_target:
            impls["json.loads"] = _json_loads_all
        report(title, path, compare(impls, data, rep), json_target, trl_vs_released, released_target)

    def each(*calls: Callable[[dict[str, Any]], Any]) -> Impl:
        def bare(samples: list[dict[str, Any]]) -> None:
            for s in samples:
                for c in calls:
                    c(s)

        return bare

    if want("rr"):

        def rel_rr(samples):
            f = rel["rr"]
            for s in samples:
                f(s["completion"], s["gold"])

        rubric = get_recipe("reinforced_planning").rubric(action_map=amap)
        impls = {
            "groundrl": _batched(rubric, ("gold",)),
            "groundrl_bare": each(
                lambda s: reinforced_format(s["completion"], amap),
                lambda s: reinforced_accuracy(s["completion"], s["gold"]),
            ),  # fmt: skip
            "groundrl_trl": _trl(rubric, ("gold",)),
            **_others("reinforced_planning", {"action_map": amap_path}, ("gold",), rr),
        }
        run("Reinforced Reasoning format + accuracy", "rubric reinforced_planning", impls, rr, rel_rr, "rr",
            json_target=3.0, trl_vs_released=True)  # fmt: skip
    if want("eb"):

        def rel_ebf(samples):
            rel["eb_format"]([s["completion"] for s in samples], [s["gold"] for s in samples])

        def rel_prf(samples):
            f = rel["eb_prf"]
            for s in samples:
                f(s["completion"], s["gold"])

        def rel_eb(samples):
            rel_ebf(samples)
            rel_prf(samples)

        rubric = get_recipe("embodied_brain").rubric()
        fmt = each(lambda s: embodied_format(s["completion"]))
        prf = each(
            lambda s: plan_f1(s["completion"], s["gold"]), lambda s: plan_order_f1(s["completion"], s["gold"])
        )
        impls = {
            "groundrl": _batched(rubric, ("gold",)),
            "groundrl_bare": each(
                lambda s: embodied_format(s["completion"]),
                lambda s: plan_f1(s["completion"], s["gold"]),
                lambda s: plan_order_f1(s["completion"], s["gold"]),
            ),  # fmt: skip
            "groundrl_trl": _trl(rubric, ("gold",)),
            **_others("embodied_brain", {}, ("gold",), eb),
        }
        run("EmbodiedBrain format + plan P/R/F1", "rubric embodied_brain (released ORM + P/R/F1 core)", impls, eb,
            rel_eb, "eb_format")  # fmt: skip
        # the TRL adapter's own functions for each half, against the released half
        run("EmbodiedBrain format", "bare embodied_format; its TRL function", {"groundrl": fmt, "groundrl_trl": _trl(rubric, ("gold",), ("format",))},
            eb, rel_ebf, "eb_format", trl_vs_released=True)  # fmt: skip
        run("EmbodiedBrain plan P/R/F1", "bare plan_f1 + plan_order_f1; their TRL functions",
            {"groundrl": prf, "groundrl_trl": _trl(rubric, ("gold",), ("plan_f1", "plan_order_f1"))},
            eb, rel_prf, "eb_prf", trl_vs_released=True)  # fmt: skip
    if want("proxy"):

        def rel_px(samples):
            f = rel["proxy"]
            for s in samples:
                f("bench", s["completion"], str(s["preferred"]))

        rubric = get_recipe("proxy_grm").rubric()
        impls = {
            "groundrl": _batched(rubric, ("preferred",)),
            "groundrl_bare": each(
                lambda s: proxy_accuracy(s["completion"], s["preferred"]),
                lambda s: proxy_format(s["completion"]),
            ),  # fmt: skip
            "groundrl_trl": _trl(rubric, ("preferred",)),
            **_others("proxy_grm", {}, ("preferred",), px),
        }
        run(
            "Proxy-GRM accuracy + format",
            "rubric proxy_grm (released compute_score)",
            impls,
            px,
            rel_px,
            "proxy",
        )
    if want("verdict"):

        def ours_v(samples):
            for s in samples:
                parse_pairwise_verdict(s["completion"])

        def floor_v(samples):  # the parser's own first regex search, nothing else
            for s in samples:
                _VERDICT_SEARCH(s["completion"])

        def rel_v(samples):
            f = rel["verdict"]
            for s in samples:
                f(s["completion"])

        run("pairwise verdict parser", "parse_pairwise_verdict (released parse_answer)",
            {"groundrl": ours_v, "floor": floor_v}, px, rel_v, "verdict", released_target=False)  # fmt: skip
    if want("detection"):

        def rel_det(samples):
            rel["detection"]([s["completion"] for s in samples], [s["gold"] for s in samples])

        rubric = get_recipe("embodied_brain").rubric(router=True)
        impls = {
            "groundrl": _batched(rubric, ("task_type", "boxes")),
            "groundrl_bare": each(lambda s: detection_reward(s["completion"], s["gold"])),
            "groundrl_trl": _trl(rubric, ("task_type", "boxes")),
            **_others("embodied_brain", {"router": True}, ("task_type", "boxes"), det),
        }
        run("EmbodiedBrain detection", "rubric embodied_brain router=true (released VisualPerceptionAccuracy)",
            impls, det, rel_det, "detection", trl_vs_released=True)  # fmt: skip
    if want("eqa"):
        rubric = get_recipe("eqa_rm").rubric()
        impls = {
            "groundrl": _batched(rubric, ("gt_score",)),
            "groundrl_bare": each(
                lambda s: eqa_accuracy(s["completion"], s["gt_score"]), lambda s: eqa_format(s["completion"])
            ),  # fmt: skip
            "groundrl_trl": _trl(rubric, ("gt_score",)),
            **_others("eqa_rm", {}, ("gt_score",), eqa),
        }
        run("EQA-RM accuracy + format", "rubric eqa_rm (no released code)", impls, eqa, None, "eqa")
    if SUMMARY:
        print(f"\n{'summary':60s} {'ratio':>7s}")
        for title, path, ratio, note in SUMMARY:
            print(f"{title + ' — ' + path:60.60s} {'' if ratio is None else f'{ratio:6.2f}×'}  {note}")
    if want("recipes"):
        recipes(n, rep, {"reinforced_planning": (rr, {"action_map": amap_path}), "embodied_brain": (eb, {}),
                         "proxy_grm": (px, {}), "eqa_rm": (eqa, {})})  # fmt: skip
    amap_dir.cleanup()
    missed = [t for t in TARGETS if not (t[1] <= t[2] if t[3] == "≤" else t[1] >= t[2])]
    print(f"\n{len(TARGETS) - len(missed)} of {len(TARGETS)} targets met")
    for what, value, target, op in missed:
        print(f"  MISSED {what}: {value:.2f}× (target {op} {target:g}×)")
    return 1 if missed else 0


def recipes(n: int, rep: int, corpora: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]]) -> None:
    """Per recipe rubric and the TRL / verl / OpenRLHF adapters on the same corpora (the
    rubric in batches of 64 as ``groundrl score`` and the server call it; each adapter as its
    trainer calls it), against its part functions called directly with the fields each names
    (target: every path within 1.15× of the bare parts)."""
    paths = {"groundrl": "rubric", **ADAPTERS}
    print(
        f"\n{'recipe':20s}" + "".join(f" {k + '/s':>11s}" for k in (*paths.values(), "bare"))
        + "".join(f" {k + '÷bare':>13s}" for k in paths.values()) + f"  target ≤ {ADAPTER_TARGET:g}×"
    )  # fmt: skip
    from groundrl.recipes import get_recipe

    for name, (data, opts) in corpora.items():
        rubric = get_recipe(name).rubric(**opts)
        fields = tuple(k for k in data[0] if k not in ("completion", "shape"))
        calls = [(p.fn, tuple(k for k in p._params if k in fields)) for p in rubric.parts if not p.batched]

        def bare(samples: list, calls: list = calls) -> None:
            for s in samples:  # sample by sample, as a hand-written reward loop would
                c = s["completion"]
                for fn, keys in calls:
                    fn(c, **{k: s[k] for k in keys})

        rows = [{**s, "shape": "all"} for s in data]
        impls = {
            "groundrl": _batched(rubric, fields),
            "groundrl_trl": _trl(rubric, fields),
            **_others(name, opts, fields, rows),
            "groundrl_bare": bare,
        }
        rates = compare(impls, rows, rep)["overall"]
        costs = {k: _cost(rates, k, "groundrl_bare") for k in paths}
        ok = [
            _target(f"recipe {name}: {paths[k]}÷bare", r, ADAPTER_TARGET, "≤").split(": ")[1]
            for k, r in costs.items()
        ]
        print(
            f"{name:20s}" + "".join(f" {rates[k]:9,.0f}/s" for k in (*paths, "groundrl_bare"))
            + "".join(f" {r:12.2f}×" for r in costs.values()) + f"  {' / '.join(ok)}"
        )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
