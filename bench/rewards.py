"""Rule-reward throughput on a seeded mixed corpus, beside ``json.loads`` and (when a
checkout is given) the papers' released reward code.

For every rule reward the script builds a seeded corpus of ``--n`` completions:
well-formed ones built from real gold data when ``../shared/data/external`` is present
(the ALFRED action map, the EmbodiedBrain simulation gold answers; synthetic
stand-ins otherwise) plus mutations — dropped / swapped / renamed steps, case,
whitespace, missing keys, string ids, fenced JSON, truncation, duplicated tags,
unicode, empty — at several lengths, with 8 completions per gold label (a GRPO group).
Each reward is timed over the whole corpus, ``--repeats`` times interleaved with the
other implementations of the same reward, groundrl's caches cleared before every
pass; the median pass is reported as completions/s.

Printed per reward: groundrl completions/s, the ratio ``json.loads ÷ groundrl``
(cost relative to one ``json.loads`` of the same completions) and, when the released
code is available, ``groundrl ÷ released`` (throughput ratio), each beside its target
(issue 18): every rule reward ≥ 2× the released code; Reinforced Reasoning within
3× ``json.loads``. Then completions/s per recipe rubric on the same corpora.

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

    .venv/bin/python bench/rewards.py [--n 6000] [--repeats 11] [--only rr,eb_format]
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
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from groundrl.parse.scores import parse_pairwise_verdict
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
from groundrl.rewards.scoring import eqa_accuracy, eqa_format

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


# ---------------------------------------------------------------------------
# Corpora
# ---------------------------------------------------------------------------


def alfred_map() -> dict[str, str]:
    f = EXTERNAL / "reinforced-reasoning" / "alfred_action_map.json"
    if f.is_file():
        return json.loads(f.read_text(encoding="utf-8"))
    objs = ["apple", "mug", "fridge", "knife", "bread", "cabinet", "drawer", "sink", "countertop", "lamp"]
    verbs = ("goto", "pickup", "put", "open", "close", "slice", "toggle")
    return {str(i): f"{v} {o}" for i, (v, o) in enumerate((v, o) for v in verbs for o in objs)}


RR_MUTATIONS = (
    "none", "none", "none", "drop", "swap", "rename", "case", "whitespace", "missing_key", "string_id",
    "fenced", "truncate", "duplicate_key", "unicode", "empty", "extra_steps", "name_not_str", "step_not_dict",
    "bool_id", "plan_not_list",
)  # fmt: skip


def rr_corpus(rng: random.Random, n: int, amap: dict[str, str]) -> list[dict[str, Any]]:
    ids = sorted(amap, key=int)
    out: list[dict[str, Any]] = []
    while len(out) < n:
        t = rng.choice([1, 2, 3, 4, 6, 8, 12, 20])
        gold_ids = [rng.choice(ids) for _ in range(t)]
        gold = str([amap[i] for i in gold_ids])  # the released code's label: a Python literal
        for _ in range(GROUP):
            mut = rng.choice(RR_MUTATIONS)
            steps = [{"action_id": int(i), "action_name": amap[i]} for i in gold_ids]
            if mut == "drop" and len(steps) > 1:
                del steps[rng.randrange(len(steps))]
            elif mut == "swap" and len(steps) > 1:
                a, b = rng.sample(range(len(steps)), 2)
                steps[a], steps[b] = steps[b], steps[a]
            elif mut == "rename":
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
            obj: dict[str, Any] = {
                "reasoning_and_reflection": prose(rng, length, mut == "unicode"),
                "visual_state_description": prose(rng, max(3, length // 2), mut == "unicode"),
                "language_plan": prose(rng, max(3, length // 3)),
                "executable_plan": steps if mut != "plan_not_list" else "goto fridge then open",
            }
            if mut == "missing_key":
                del obj[rng.choice(list(obj)[:3])]
            text = json.dumps(obj, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, None, 2]))
            if mut == "fenced":
                text = f"```json\n{text}\n```"
            elif mut == "truncate":
                text = text[: rng.randrange(1, len(text))]
            elif mut == "duplicate_key":
                text = text[:-1] + ', "executable_plan": []}'
            elif mut == "empty":
                text = rng.choice(["", "   ", "\n"])
            out.append({"completion": text, "gold": gold})
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
    return [f"<response>OK</response><plans>{lines}</plans><actions>{acts}</actions>"]


_ACT_RE = re.compile(r"<actions>(.*?)</actions>", re.DOTALL)
EB_MUTATIONS = (
    "none", "none", "none", "drop", "swap", "rename", "case", "whitespace", "plans_inside", "no_response",
    "duplicate_tags", "truncate", "unicode", "empty", "not_list", "long", "double_quotes", "verb_only",
)  # fmt: skip


def eb_corpus(rng: random.Random, n: int) -> list[dict[str, Any]]:
    golds = eb_golds()
    out: list[dict[str, Any]] = []
    while len(out) < n:
        gold = rng.choice(golds)
        m = _ACT_RE.search(gold)
        try:
            acts = ast.literal_eval(m.group(1)) if m else []
        except (ValueError, SyntaxError):
            acts = []
        for _ in range(GROUP):
            mut = rng.choice(EB_MUTATIONS)
            a = [list(x) for x in acts]
            if mut == "drop" and len(a) > 1:
                del a[rng.randrange(len(a))]
            elif mut == "swap" and len(a) > 1:
                i, j = rng.sample(range(len(a)), 2)
                a[i], a[j] = a[j], a[i]
            elif mut == "rename" and a:
                a[rng.randrange(len(a))][0] = rng.choice(["Grab", "Put down", "Take", "Slice", "Wipe"])
            elif mut == "case":
                a = [[str(x).lower() for x in it] for it in a]
            elif mut == "unicode" and a:
                a[-1] = [a[-1][0], "苹果 café"]
            elif mut == "long":
                a = a * rng.choice([3, 6])
            elif mut == "verb_only" and a:
                a[0] = a[0][:1]
            body = repr(a) if mut != "double_quotes" else json.dumps(a)
            if mut == "whitespace":
                body = body.replace(", ", ",\n    ")
            elif mut == "not_list":
                body = "Pick Apple then Place Apple"
            text = _ACT_RE.sub(lambda _m, body=body: f"<actions>{body}</actions>", gold, count=1)
            if mut == "plans_inside":
                lines = "\n".join(
                    f"{i + 1}.[{'Navigate' if it[0] == 'Navigate' else 'Manipulate'}] do it"
                    for i, it in enumerate(a)
                )
                text = text.replace("<plans></plans>", f"<plans>{lines}</plans>")
            elif mut == "no_response":
                text = re.sub(r"</?response>", "", text)
            elif mut == "duplicate_tags":
                text = text + f"<actions>{body}</actions>"
            elif mut == "truncate":
                text = text[: rng.randrange(1, len(text))]
            elif mut == "empty":
                text = ""
            text = prose(rng, _length(rng) // 4) + "\n" + text if rng.random() < 0.3 else text
            out.append({"completion": text, "gold": gold})
    return out[:n]


PROXY_MUTATIONS = (
    "none", "none", "none", "wrong", "both", "no_answer_tag", "newlines", "space_between", "duplicate_tags",
    "unicode", "truncate", "empty", "case", "think_layout", "prose_answer",
)  # fmt: skip


def proxy_corpus(rng: random.Random, n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while len(out) < n:
        pref = rng.choice([1, 2])
        for _ in range(GROUP):
            mut = rng.choice(PROXY_MUTATIONS)
            length = _length(rng)
            ans = str(pref if mut != "wrong" else 3 - pref)
            if mut == "both":
                ans = "1 or 2"
            elif mut == "prose_answer":
                ans = f"Response {ans} is better"
            rub, ev = prose(rng, max(3, length // 3), mut == "unicode"), prose(rng, length, mut == "unicode")
            if mut == "think_layout":
                text = f"<think>{rub}</think><summary>{ev}</summary><answer>{ans}</answer>"
            else:
                sep = "\n" if mut == "newlines" else (" " if mut == "space_between" else "")
                text = f"<rubric>{rub}</rubric>{sep}<eval>{ev}</eval>{sep}<answer>{ans}</answer>"
            if mut == "no_answer_tag":
                text = text.replace("<answer>", "").replace("</answer>", "")
            elif mut == "duplicate_tags":
                text += f"<answer>{3 - pref}</answer>"
            elif mut == "truncate":
                text = text[: rng.randrange(1, len(text))]
            elif mut == "empty":
                text = ""
            elif mut == "case":
                text = text.replace("answer>", "Answer>")
            out.append({"completion": text, "preferred": pref})
    return out[:n]


DET_LABELS = ["mug", "apple", "knife", "bowl", "cup", "bottle"]
DET_MUTATIONS = (
    "none", "none", "jitter", "drop", "extra", "wrong_label", "case", "no_answer_tag", "fenced", "truncate",
    "python_literal", "empty", "unicode", "bad_coord", "bare_boxes",
)  # fmt: skip


def det_corpus(rng: random.Random, n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while len(out) < n:
        boxes = []
        for _ in range(rng.choice([1, 1, 2, 3, 5, 8])):
            x, y = rng.randrange(0, 900), rng.randrange(0, 900)
            boxes.append({"bbox_2d": [x, y, x + rng.randrange(10, 100), y + rng.randrange(10, 100)],
                          "label": rng.choice(DET_LABELS)})  # fmt: skip
        gold = json.dumps(boxes)
        for _ in range(GROUP):
            mut = rng.choice(DET_MUTATIONS)
            b = [{"bbox_2d": list(d["bbox_2d"]), "label": d["label"]} for d in boxes]
            if mut == "jitter":
                for d in b:
                    d["bbox_2d"] = [c + rng.randrange(-8, 9) for c in d["bbox_2d"]]
            elif mut == "drop" and len(b) > 1:
                del b[rng.randrange(len(b))]
            elif mut == "extra":
                b.append({"bbox_2d": [1, 1, 50, 50], "label": rng.choice(DET_LABELS)})
            elif mut == "wrong_label":
                b[0]["label"] = "chair"
            elif mut == "case":
                b[0]["label"] = b[0]["label"].upper()
            elif mut == "unicode":
                b[0]["label"] = "杯子"
            elif mut == "bad_coord":
                b[0]["bbox_2d"][1] = "ten"
            body = json.dumps(b) if mut not in ("python_literal", "bare_boxes") else repr(b)
            if mut == "bare_boxes":
                body = json.dumps([d["bbox_2d"] for d in b])
            think = prose(rng, _length(rng) // 2)
            if mut == "no_answer_tag":
                text = f"<think>{think}</think>{body}"
            elif mut == "fenced":
                text = f"<think>{think}</think><answer>```json\n{body}\n```</answer>"
            else:
                text = f"<think>{think}</think><answer>{body}</answer>"
            if mut == "truncate":
                text = text[: rng.randrange(1, len(text))]
            elif mut == "empty":
                text = ""
            out.append({"completion": text, "gold": gold})
    return out[:n]


def eqa_corpus(rng: random.Random, n: int) -> list[dict[str, Any]]:
    out = []
    for _ in range(n):
        mut = rng.choice(
            ["none", "none", "decimal", "slash", "out_of_range", "word", "no_tag", "two_scores", "empty"]
        )
        s = rng.randint(0, 10)
        sc = {
            "decimal": f"{s}.5" if s < 10 else "9.5",
            "slash": f"{s}/10",
            "out_of_range": "11",
            "word": "seven",
        }.get(mut, str(s))
        text = f"<critique>{prose(rng, _length(rng))}</critique><score>{sc}</score>"
        if mut == "no_tag":
            text = text.replace("<score>", "")
        elif mut == "two_scores":
            text = f"<score>3</score>{text}"
        elif mut == "empty":
            text = ""
        out.append({"completion": text, "gt_score": rng.randint(0, 10)})
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
# Timing
# ---------------------------------------------------------------------------


def _json_loads_all(texts: list[str]) -> None:
    for t in texts:
        try:  # noqa: SIM105 - contextlib.suppress would add its own cost to the baseline
            json.loads(t)
        except ValueError:
            pass


def timed(fn: Callable[[], Any], clear: bool) -> float:
    if clear:
        clear_caches()
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def compare(impls: dict[str, Callable[[], Any]], n: int, repeats: int) -> dict[str, float]:
    """Median completions/s of each implementation over ``repeats`` interleaved passes."""
    for fn in impls.values():  # warm-up: lazy imports (scipy) out of the timing
        timed(fn, True)
    runs: dict[str, list[float]] = {k: [] for k in impls}
    for _ in range(repeats):
        for k, fn in impls.items():
            runs[k].append(timed(fn, k.startswith("groundrl")))  # ours: caches cleared each pass
    return {k: n / statistics.median(v) for k, v in runs.items()}


def _line(label: str, rates: dict[str, float], target_json: float | None = None) -> None:
    ours = rates["groundrl"]
    cols = [f"{label:34s} {ours:11,.0f}/s"]
    if "json.loads" in rates:
        r = rates["json.loads"] / ours
        tgt = (
            f" (target <= {target_json:g}x: {'met' if r <= target_json else 'NOT met'})"
            if target_json
            else ""
        )
        cols.append(f"json.loads/groundrl {r:5.2f}x{tgt}")
    if "released" in rates:
        r = ours / rates["released"]
        cols.append(f"groundrl/released {r:5.2f}x (target >= 2x: {'met' if r >= 2 else 'NOT met'})")
    elif "released_note" in rates:
        cols.append("released: not measured")
    print("  ".join(cols))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=6000, help="completions per reward (default 6000)")
    ap.add_argument("--repeats", type=int, default=11, help="interleaved timed passes (median; default 11)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="comma-separated subset of: rr,eb_format,eb_prf,proxy,verdict,"
                    "detection,eqa,recipes")  # fmt: skip
    args = ap.parse_args()
    only = {s.strip() for s in args.only.split(",") if s.strip()}

    def want(k: str) -> bool:
        return not only or k in only

    rng = random.Random(args.seed)
    n, rep = args.n, args.repeats
    amap_s = alfred_map()
    amap = load_action_map(amap_s)
    rr = rr_corpus(rng, n, amap_s)
    eb = eb_corpus(rng, n)
    px = proxy_corpus(rng, n)
    det = det_corpus(rng, n)
    eqa = eqa_corpus(rng, n)
    rel: dict[str, Callable[..., Any]] = {}
    for loader in (lambda: released_rr(amap_s), released_eb, released_proxy):
        try:
            rel.update(loader() or {})
        except Exception as e:  # a checkout at another commit: say so, time ours anyway
            print(f"(released code not loaded: {type(e).__name__}: {e})", file=sys.stderr)
    print(
        f"{n} completions per reward, median of {rep} interleaved passes, groundrl caches cleared before each;"
        f" python {sys.version.split()[0]}; released code: {', '.join(sorted(rel)) or 'none (set GROUNDRL_RELEASED_*)'}"
    )
    print(f"{'reward':34s} {'groundrl':>13s}")

    def stage(key: str, label: str, ours: Callable[[], Any], texts: list[str] | None,
              released: Callable[[], Any] | None, target_json: float | None = None) -> None:  # fmt: skip
        impls: dict[str, Callable[[], Any]] = {"groundrl": ours}
        if texts is not None:
            impls["json.loads"] = lambda: _json_loads_all(texts)
        if released is not None:
            impls["released"] = released
        rates = compare(impls, n, rep)
        if released is None and key in ("rr", "eb_format", "eb_prf", "proxy", "verdict", "detection"):
            rates["released_note"] = 0.0
        _line(label, rates, target_json)

    if want("rr"):
        texts = [s["completion"] for s in rr]

        def ours_rr() -> None:
            for s in rr:
                reinforced_format(s["completion"], amap)
                reinforced_accuracy(s["completion"], s["gold"])

        def rel_rr() -> None:
            f = rel["rr"]
            for s in rr:
                f(s["completion"], s["gold"])

        stage("rr", "RR format + accuracy", ours_rr, texts, rel_rr if "rr" in rel else None, target_json=3.0)
    if want("eb_format"):
        cs, gs = [s["completion"] for s in eb], [s["gold"] for s in eb]

        def ours_ebf() -> None:
            for c in cs:
                embodied_format(c)

        stage("eb_format", "EmbodiedBrain format", ours_ebf, None,
              (lambda: rel["eb_format"](cs, gs)) if "eb_format" in rel else None)  # fmt: skip
    if want("eb_prf"):

        def ours_prf() -> None:
            for s in eb:
                plan_f1(s["completion"], s["gold"])
                plan_order_f1(s["completion"], s["gold"])

        def rel_prf() -> None:
            f = rel["eb_prf"]
            for s in eb:
                f(s["completion"], s["gold"])

        stage(
            "eb_prf", "EmbodiedBrain plan_f1 + order_f1", ours_prf, None, rel_prf if "eb_prf" in rel else None
        )
    if want("proxy"):

        def ours_px() -> None:
            for s in px:
                proxy_accuracy(s["completion"], s["preferred"])
                proxy_format(s["completion"])

        def rel_px() -> None:
            f = rel["proxy"]
            for s in px:
                f("bench", s["completion"], str(s["preferred"]))

        stage("proxy", "Proxy-GRM accuracy + format", ours_px, None, rel_px if "proxy" in rel else None)
    if want("verdict"):

        def ours_v() -> None:
            for s in px:
                parse_pairwise_verdict(s["completion"])

        def rel_v() -> None:
            f = rel["verdict"]
            for s in px:
                f(s["completion"])

        stage("verdict", "pairwise verdict parser", ours_v, None, rel_v if "verdict" in rel else None)
    if want("detection"):
        cs, gs = [s["completion"] for s in det], [s["gold"] for s in det]

        def ours_det() -> None:
            for c, g in zip(cs, gs, strict=True):
                detection_reward(c, g)

        stage("detection", "EmbodiedBrain detection", ours_det, None,
              (lambda: rel["detection"](cs, gs)) if "detection" in rel else None)  # fmt: skip
    if want("eqa"):

        def ours_eqa() -> None:
            for s in eqa:
                eqa_accuracy(s["completion"], s["gt_score"])
                eqa_format(s["completion"])

        stage("eqa", "EQA-RM accuracy + format", ours_eqa, None, None)
    if want("recipes"):
        recipes(n, rep, {"reinforced_planning": (rr, {"action_map": amap}), "embodied_brain": (eb, {}),
                         "proxy_grm": (px, {}), "eqa_rm": (eqa, {})})  # fmt: skip


def recipes(n: int, rep: int, corpora: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]]) -> None:
    """Per recipe rubric on the same corpora, in batches of 64 as ``groundrl score`` and the
    server call it, against its part functions called directly with the fields each names
    (target: the rubric within 1.2× of the bare parts)."""
    try:
        from groundrl.recipes import get_recipe
    except ImportError as e:
        print(f"recipes: not measured ({e})")
        return
    print(f"\n{'recipe rubric':34s} {'completions/s':>13s} {'bare parts/s':>13s} {'overhead':>9s}  target ≤ 1.20×")
    for name, (data, opts) in corpora.items():
        try:
            rubric = get_recipe(name).rubric(**opts)
        except Exception as e:  # the recipe API is another module's; report, do not fail
            print(f"{name:34s} not measured ({type(e).__name__}: {e})")
            continue

        comps = [s["completion"] for s in data]
        fields = [{k: v for k, v in s.items() if k != "completion"} for s in data]
        calls = [
            (p.fn, [{k: f[k] for k in (*p._params,) if k in f} for f in fields])
            for p in rubric.parts
            if not p.batched
        ]

        def run(rubric: Any = rubric, comps: list = comps, fields: list = fields) -> None:
            for i in range(0, len(comps), 64):
                rubric.score_batch(comps[i : i + 64], fields[i : i + 64])

        def bare(comps: list = comps, calls: list = calls) -> None:
            for i, c in enumerate(comps):  # sample by sample, as a hand-written reward loop would
                for fn, kwargs in calls:
                    fn(c, **kwargs[i])

        rates = compare({"groundrl": run, "groundrl_bare": bare}, n, rep)
        rates["bare"] = rates["groundrl_bare"]
        ratio = rates["bare"] / rates["groundrl"]
        ok = "ok" if ratio <= 1.2 else "MISSED"
        print(f"{name:34s} {rates['groundrl']:11,.0f}/s {rates['bare']:11,.0f}/s {ratio:8.2f}×  {ok}")


if __name__ == "__main__":
    main()
