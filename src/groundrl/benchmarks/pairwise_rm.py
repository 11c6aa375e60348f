"""``pairwise-rm``: a judge picks the better of two responses (VL-RewardBench, Multimodal
RewardBench, MM-RLHF-Reward Bench).

Each pair is shown in a seeded random order (swap with probability 0.5, per item from
``seed`` and the item id) and the verdict is mapped back. **An unparseable verdict counts
as wrong** (published scripts disagree: some drop such items, which flatters a judge that
fails to answer). Metrics: overall accuracy, macro accuracy over categories (bootstrap
95% CIs over pairs), and Acc+ — the fraction of ``group``s whose every pair is right —
when items carry ``group`` (a rate over groups: Wilson 95% CI, with the number of groups).
Chance levels: 0.5 per pair; for Acc+ the mean over groups of 0.5^(pairs in the group).

Rubric-transfer mode (Proxy-GRM Table 4): with ``rubrics_from`` (a ``results.jsonl`` of
an earlier run), each item's rubric — that run's output up to ``</rubric>`` — goes to a
*different* judge acting as the proxy agent, in the same presentation order.
"""

from __future__ import annotations

import json
import random
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any

from groundrl.benchmarks.runner import plot_rates, write_outputs
from groundrl.benchmarks.stats import fmt, md_table, wilson_ci, with_ci
from groundrl.judges.papers import ProxyAgent, ProxyGRMPolicy
from groundrl.parse.scores import parse_pairwise_verdict
from groundrl.rewards.preference import rubric_text

REQUIRED = ("query", "response_1", "response_2", "preferred")
NO_CATEGORY = "(no category)"

DEFINITIONS = [
    "- **accuracy**: share of pairs where the judge preferred the gold-preferred response; an "
    "unparseable verdict counts as wrong. Chance: 0.5.",
    "- **macro accuracy**: the mean of the per-category accuracies (each category weighs the same).",
    "- **Acc+**: share of groups (items with the same `group`) in which *every* pair is judged "
    "right; its n is the number of groups. Chance: the mean over groups of 0.5^(pairs in the group).",
    "- **95% CI**: percentile bootstrap over pairs (1000 resamples) for accuracy and macro accuracy; "
    "Wilson score interval for Acc+ and the per-category accuracies.",
]


def swapped(item_id: Any, seed: int) -> bool:
    return random.Random(zlib.crc32(f"{seed}|{item_id}".encode())).random() < 0.5


def _presented(it: dict[str, Any], swap: bool) -> dict[str, Any]:
    a, b = (it["response_2"], it["response_1"]) if swap else (it["response_1"], it["response_2"])
    return {"query": it["query"], "response_1": a, "response_2": b, "image": it.get("image")}


def map_back(verdict: int | None, swap: bool) -> int | None:
    """A verdict on the presented order → the original order."""
    if verdict is None:
        return None
    return 3 - verdict if swap else verdict


def accuracy(rows: list[dict[str, Any]]) -> float:
    return sum(r["correct"] for r in rows) / len(rows)


def macro_accuracy(rows: list[dict[str, Any]]) -> float:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[str(r.get("category", "all"))].append(r)
    return sum(accuracy(g) for g in groups.values()) / len(groups)


def _groups(rows: list[dict[str, Any]]) -> dict[str, list[bool]]:
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        if r.get("group") is not None:
            groups[str(r["group"])].append(r["correct"])
    return groups


def acc_plus(rows: list[dict[str, Any]]) -> float | None:
    """Share of groups whose every pair is right (``None`` without groups).

    >>> acc_plus([{"group": "g1", "correct": True}, {"group": "g1", "correct": True},
    ...           {"group": "g2", "correct": True}, {"group": "g2", "correct": False}])
    0.5
    """
    groups = _groups(rows)
    return sum(all(v) for v in groups.values()) / len(groups) if groups else None


def run(
    items: list[dict[str, Any]],
    judge: Any,
    out: Path,
    seed: int = 0,
    rubrics_from: str | Path | None = None,
    bad: list | None = None,
) -> dict[str, Any]:
    if not items:
        raise ValueError("pairwise-rm needs at least one item")
    swaps = [swapped(it["id"], seed) for it in items]
    if rubrics_from is not None:
        source = {}
        for line in Path(rubrics_from).read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                source[str(r["id"])] = r
        # present each pair in the order its rubric was written for
        swaps = [
            bool(source.get(str(it["id"]), {}).get("swapped", s)) for it, s in zip(items, swaps, strict=True)
        ]
        rubrics = [rubric_text(source.get(str(it["id"]), {}).get("raw") or "") for it in items]
    shown = [_presented(it, s) for it, s in zip(items, swaps, strict=True)]
    if rubrics_from is not None:
        proxy = judge if isinstance(judge, ProxyAgent) else ProxyAgent(judge.backend)
        used: Any = proxy
        verdicts = proxy.verdicts(shown, rubrics)
        raw_outputs = [why for _, why in verdicts]
        parsed = [v for v, _ in verdicts]
        mode = "rubric_transfer"
    else:
        policy = (
            judge
            if isinstance(judge, ProxyGRMPolicy)
            else ProxyGRMPolicy(judge.backend if hasattr(judge, "backend") else judge)
        )
        used = policy
        gens = policy.judge(shown)
        raw_outputs = [g.text if g.ok else None for g in gens]
        parsed = [parse_pairwise_verdict(t).value if t is not None else None for t in raw_outputs]
        mode = "direct"
    results = []
    for it, s, raw, v in zip(items, swaps, raw_outputs, parsed, strict=True):
        verdict = map_back(v, s)
        pref = int(str(it["preferred"]).strip())
        results.append(
            {
                "id": it["id"],
                "swapped": s,
                "raw": raw,
                "verdict_presented": v,
                "verdict": verdict,
                "preferred": pref,
                "correct": verdict == pref,
                "category": it.get("category") if it.get("category") is not None else NO_CATEGORY,
                "group": it.get("group"),
            }
        )
    groups = _groups(results)
    metrics: dict[str, Any] = {
        "mode": mode,
        "n": len(results),
        "accuracy": accuracy(results),
        "macro_accuracy": macro_accuracy(results),
        "acc_plus": acc_plus(results),
        "accuracy_ci95": with_ci(results, accuracy, seed)["ci95"],
        "macro_accuracy_ci95": with_ci(results, macro_accuracy, seed)["ci95"],
        "n_categories": len({str(r["category"]) for r in results}),
        "n_groups": len(groups),
        "chance_accuracy": 0.5,
        "unparseable": sum(r["verdict"] is None for r in results),
        "n_bad_items": len(bad or []),
        "bad_items": bad or [],
        "judge": {"calls": used.calls, "failures": used.failures},
    }
    if groups:
        metrics["acc_plus_ci95"] = list(wilson_ci(sum(all(v) for v in groups.values()), len(groups)))
        metrics["chance_acc_plus"] = sum(0.5 ** len(v) for v in groups.values()) / len(groups)
    cats: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        cats[str(r["category"])].append(r)
    metrics["by_category"] = {
        c: {
            "n": len(rs),
            "hits": sum(r["correct"] for r in rs),
            "accuracy": accuracy(rs),
            "accuracy_ci95": list(wilson_ci(sum(r["correct"] for r in rs), len(rs))),
        }
        for c, rs in sorted(cats.items())
    }
    report = [
        f"# pairwise-rm ({mode}): {metrics['n']} pairs",
        "",
        md_table(
            ["metric", "value", "95% CI", "n", "chance"],
            [
                ("accuracy", metrics["accuracy"], metrics["accuracy_ci95"], f"{metrics['n']} pairs", 0.5),
                (
                    "macro accuracy",
                    metrics["macro_accuracy"],
                    metrics["macro_accuracy_ci95"],
                    f"{metrics['n_categories']} categories",
                    0.5,
                ),
                (
                    "Acc+",
                    metrics["acc_plus"],
                    metrics.get("acc_plus_ci95"),
                    f"{metrics['n_groups']} groups",
                    metrics.get("chance_acc_plus"),
                ),
            ],
        ),
        "",
        f"Unparseable verdicts (counted wrong): {metrics['unparseable']}; judge calls "
        f"{metrics['judge']['calls']}, failed {metrics['judge']['failures']}; bad items skipped: {len(bad or [])}."
        + ("" if groups else " Acc+ needs a `group` field on the items; none had one."),
        "",
        *DEFINITIONS,
        "",
        "## by category",
        "",
        md_table(
            ["category", "n", "accuracy", "95% CI (Wilson)"],
            [(c, m["n"], m["accuracy"], m["accuracy_ci95"]) for c, m in metrics["by_category"].items()],
        ),
        "",
    ]
    out.mkdir(parents=True, exist_ok=True)
    cats_m = metrics["by_category"]
    plot_rates(
        out / "accuracy_by_category.png",
        list(cats_m),
        [m["hits"] for m in cats_m.values()],
        [m["n"] for m in cats_m.values()],
        f"pairwise-rm accuracy by category ({mode}, n={metrics['n']})",
        "accuracy (picks the preferred)",
        chance=0.5,
        chance_label="chance (0.5)",
    )
    write_outputs(out, results, metrics, "\n".join(report), ["accuracy_by_category.png"])
    return metrics


def summary(metrics: dict[str, Any]) -> str:
    """One line for the terminal, rounded."""
    acc_plus_part = (
        f", Acc+ {fmt(metrics['acc_plus'])} {fmt(metrics.get('acc_plus_ci95'))} over {metrics['n_groups']} groups"
        if metrics["acc_plus"] is not None
        else ""
    )
    return (
        f"n {metrics['n']} pairs: accuracy {fmt(metrics['accuracy'])} {fmt(metrics['accuracy_ci95'])}, "
        f"macro {fmt(metrics['macro_accuracy'])}{acc_plus_part} (chance 0.5); unparseable "
        f"{metrics['unparseable']}, bad items skipped {metrics['n_bad_items']}"
    )
