"""``pairwise-rm``: a judge picks the better of two responses (VL-RewardBench, Multimodal
RewardBench, MM-RLHF-Reward Bench).

Each pair is shown in a seeded random order (swap with probability 0.5, per item from
``seed`` and the item id) and the verdict is mapped back. How the judge's text becomes a
verdict is a *parse protocol* (:mod:`groundrl.benchmarks.protocols`):

* ``strict`` (ours, the default): exactly one of "1"/"2" in the ``<answer>`` tag, else
  **no verdict, counted wrong**;
* ``released``: the released Proxy-GRM scripts' rule for the dataset. All of them keep
  every item: an unreadable tag **falls back to the last "1"/"2" in the text** (for
  MM-RLHF, the last one on the first line that has one); when there is none, the
  VL-RewardBench script counts the pair wrong, while the Multimodal RewardBench and
  MM-RLHF scripts count it as a vote for the response shown second.

With both protocols asked for, the first is the headline and the other is reported
beside it, with the number of pairs on which their verdicts differ.

Metrics: overall accuracy, macro accuracy over categories (bootstrap 95% CIs over
pairs), and Acc+ — the fraction of ``group``s whose every pair is right — when items
carry ``group`` (a rate over groups: Wilson 95% CI, with the number of groups). Chance
levels: 0.5 per pair; for Acc+ the mean over groups of 0.5^(pairs in the group).

Rubric-transfer mode (Proxy-GRM Table 4): with ``rubrics_from`` (a ``results.jsonl`` of
an earlier run), each item's rubric — that run's output up to ``</rubric>`` — goes to a
*different* judge acting as the proxy agent, in the same presentation order (strict
protocol only). A scalar reward model (:class:`~groundrl.benchmarks.scalar_rm.ScalarRM`)
in place of the judge scores both responses; the higher reward is its verdict, a tie is
no verdict.
"""

from __future__ import annotations

import json
import random
import zlib
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from groundrl.benchmarks.protocols import PROTOCOLS, verdict
from groundrl.benchmarks.runner import plot_rates, write_outputs
from groundrl.benchmarks.stats import fmt, md_table, wilson_ci, with_ci
from groundrl.judges.papers import ProxyAgent, ProxyGRMPolicy
from groundrl.rewards.preference import rubric_text

REQUIRED = ("query", "response_1", "response_2", "preferred")
NO_CATEGORY = "(no category)"

DEFINITIONS = [
    "- **accuracy**: share of pairs where the judge preferred the gold-preferred response; a pair "
    "without a verdict counts as wrong. Chance: 0.5.",
    "- **parse protocols**: `strict` reads only the `<answer>` tag (exactly one of 1/2, else no "
    "verdict); `released` is the released Proxy-GRM script's rule for the dataset (fall back to the "
    "last 1/2 in the text; Multimodal RewardBench and MM-RLHF then default to the second response).",
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


def _block(results: list[dict[str, Any]], key: str, seed: int) -> dict[str, Any]:
    """Accuracy, macro accuracy and Acc+ of ``results`` judged by the ``key`` column."""
    rows = [{**r, "correct": r[key]} for r in results]
    groups = _groups(rows)
    block: dict[str, Any] = {
        "accuracy": accuracy(rows),
        "accuracy_ci95": with_ci(rows, accuracy, seed)["ci95"],
        "macro_accuracy": macro_accuracy(rows),
        "macro_accuracy_ci95": with_ci(rows, macro_accuracy, seed)["ci95"],
        "acc_plus": acc_plus(rows),
        "n_groups": len(groups),
    }
    if groups:
        block["acc_plus_ci95"] = list(wilson_ci(sum(all(v) for v in groups.values()), len(groups)))
        block["chance_acc_plus"] = sum(0.5 ** len(v) for v in groups.values()) / len(groups)
    return block


def _proxy_verify_metrics(results: list[dict[str, Any]], proxy: Any) -> dict[str, Any]:
    n = len(results)
    agree = [r for r in results if r["proxy_agree"]]
    proxy_hits = sum(r["proxy_verdict"] == r["preferred"] for r in results)
    return {
        "n": n,
        "n_agree": len(agree),
        "agree_rate": len(agree) / n,
        "agree_rate_ci95": list(wilson_ci(len(agree), n)),
        "accuracy_when_agree": (sum(r["correct"] for r in agree) / len(agree)) if agree else None,
        "proxy_accuracy": proxy_hits / n,
        "proxy_accuracy_ci95": list(wilson_ci(proxy_hits, n)),
        "proxy_judge": {"calls": proxy.calls, "failures": proxy.failures},
    }


def run(
    items: list[dict[str, Any]],
    judge: Any,
    out: Path,
    seed: int = 0,
    rubrics_from: str | Path | None = None,
    bad: list | None = None,
    parse: Sequence[str] = ("strict",),
    dataset: str = "jsonl",
    proxy_verify: bool = False,
) -> dict[str, Any]:
    """Judge every pair, write results.jsonl, metrics.json, report.md and
    accuracy_by_category.png into ``out``; return the metrics. ``parse`` lists the
    protocols to report (the first is the headline); ``dataset`` picks the released
    script's rule. ``proxy_verify`` (Proxy-GRM's proxy-verified inference): the policy's
    verdict stays the answer; a proxy agent on the same backend, shown only the policy's
    rubric, votes too, and agreement, accuracy when both agree and the proxy's own accuracy
    are reported (``metrics["proxy_verify"]``)."""
    if not items:
        raise ValueError("pairwise-rm needs at least one item")
    parse = list(dict.fromkeys(parse))
    for p in parse:
        if p not in PROTOCOLS:
            raise ValueError(f"parse protocol must be one of {', '.join(PROTOCOLS)}, got {p!r}")
    swaps = [swapped(it["id"], seed) for it in items]
    if rubrics_from is not None:
        if parse != ["strict"]:
            raise ValueError("rubric transfer reads the proxy's verdicts with the strict protocol only")
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
    parsed: dict[str, list[int | None]] = {}
    if rubrics_from is not None:
        proxy = judge if isinstance(judge, ProxyAgent) else ProxyAgent(judge.backend)
        used: Any = proxy
        verdicts = proxy.verdicts(shown, rubrics)
        raw_outputs = [why for _, why in verdicts]
        parsed["strict"] = [v for v, _ in verdicts]
        mode = "rubric_transfer"
    elif hasattr(judge, "pairwise_rewards"):
        used = judge
        rewards = judge.pairwise_rewards(shown)
        raw_outputs = [json.dumps(r) if r is not None else None for r in rewards]
        v = [None if r is None or r[0] == r[1] else (1 if r[0] > r[1] else 2) for r in rewards]
        parsed = {p: v for p in parse}
        mode = "scalar_rm"
    else:
        policy = (
            judge
            if isinstance(judge, ProxyGRMPolicy)
            else ProxyGRMPolicy(judge.backend if hasattr(judge, "backend") else judge)
        )
        used = policy
        gens = policy.judge(shown)
        raw_outputs = [g.text if g.ok else None for g in gens]
        for p in parse:  # a failed call has no text: no verdict under either protocol
            parsed[p] = [verdict(t, p, dataset) if t is not None else None for t in raw_outputs]
        mode = "direct"
        if proxy_verify:
            proxy = ProxyAgent(policy.backend, policy.params)
            proxy_votes = [v for v, _ in proxy.verdicts(shown, [rubric_text(t or "") for t in raw_outputs])]
    head = parse[0]
    results = []
    for k, (it, s, raw) in enumerate(zip(items, swaps, raw_outputs, strict=True)):
        pref = int(str(it["preferred"]).strip())
        row = {
            "id": it["id"],
            "swapped": s,
            "raw": raw,
            "verdict_presented": parsed[head][k],
            "verdict": map_back(parsed[head][k], s),
            "preferred": pref,
            "correct": map_back(parsed[head][k], s) == pref,
            "category": it.get("category") if it.get("category") is not None else NO_CATEGORY,
            "group": it.get("group"),
        }
        if it.get("source") is not None:
            row["source"] = it["source"]
        if mode == "direct" and proxy_verify:
            row["proxy_verdict"] = map_back(proxy_votes[k], s)
            row["proxy_agree"] = row["verdict"] is not None and row["proxy_verdict"] == row["verdict"]
        for p in parse[1:]:
            row[f"verdict_{p}"] = map_back(parsed[p][k], s)
            row[f"correct_{p}"] = row[f"verdict_{p}"] == pref
        # a call that got no usable answer (not a wrong verdict): counted apart (issue 26)
        row["judge_failed"] = raw is None or (mode == "rubric_transfer" and "call failed" in str(raw))
        results.append(row)
    main = _block(results, "correct", seed)
    answered = [r for r in results if not r["judge_failed"]]
    metrics: dict[str, Any] = {
        "mode": mode,
        "dataset": dataset,
        "parse": head if mode != "scalar_rm" else "scalar",
        "n": len(results),
        **main,
        "n_categories": len({str(r["category"]) for r in results}),
        "chance_accuracy": 0.5,
        "unparseable": sum(r["verdict"] is None for r in results),
        "n_bad_items": len(bad or []),
        "bad_items": bad or [],
        "judge": {"calls": used.calls, "failures": used.failures},
        "n_judge_failures": len(results) - len(answered),
        "judge_failure_rate": (len(results) - len(answered)) / len(results),
        "n_answered": len(answered),
        "accuracy_answered": accuracy(answered) if answered else None,
    }
    if mode == "direct" and proxy_verify:
        metrics["proxy_verify"] = _proxy_verify_metrics(results, proxy)
    for p in parse[1:]:
        if mode == "scalar_rm":
            break
        other = _block(results, f"correct_{p}", seed)
        other["unparseable"] = sum(r[f"verdict_{p}"] is None for r in results)
        other["n_differ"] = sum(r[f"verdict_{p}"] != r["verdict"] for r in results)
        other["n_correct_differ"] = sum(r[f"correct_{p}"] != r["correct"] for r in results)
        metrics[p] = other
    cats: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        cats[str(r["category"])].append(r)
    metrics["by_category"] = {
        c: {
            "n": len(rs),
            "hits": sum(r["correct"] for r in rs),
            "accuracy": accuracy(rs),
            "accuracy_ci95": list(wilson_ci(sum(r["correct"] for r in rs), len(rs))),
            **{
                f"accuracy_{p}": sum(r[f"correct_{p}"] for r in rs) / len(rs)
                for p in parse[1:]
                if mode != "scalar_rm"
            },
        }
        for c, rs in sorted(cats.items())
    }
    srcs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        if r.get("source") is not None:
            srcs[str(r["source"])].append(r)
    if srcs:  # VL-RewardBench's query_source: reported beside its three categories
        metrics["by_source"] = {
            c: {
                "n": len(rs),
                "accuracy": accuracy(rs),
                "accuracy_ci95": list(wilson_ci(sum(r["correct"] for r in rs), len(rs))),
            }
            for c, rs in sorted(srcs.items())
        }
        metrics["macro_accuracy_over_sources"] = sum(accuracy(rs) for rs in srcs.values()) / len(srcs)
    label = {"direct": f"{mode}, parse {head}", "scalar_rm": "scalar RM"}.get(mode, mode)
    table = [
        ("accuracy", main["accuracy"], main["accuracy_ci95"], f"{metrics['n']} pairs", 0.5),
        (
            "macro accuracy",
            main["macro_accuracy"],
            main["macro_accuracy_ci95"],
            f"{metrics['n_categories']} categories",
            0.5,
        ),
        (
            "Acc+",
            main["acc_plus"],
            main.get("acc_plus_ci95"),
            f"{main['n_groups']} groups",
            main.get("chance_acc_plus"),
        ),
    ]
    report = [
        f"# pairwise-rm ({label}): {metrics['n']} pairs",
        "",
        md_table(["metric", "value", "95% CI", "n", "chance"], table),
        "",
        f"Judge failures (no usable answer): {metrics['n_judge_failures']} of {metrics['n']} pairs "
        f"({fmt(metrics['judge_failure_rate'])}); accuracy over the {metrics['n_answered']} answered pairs: "
        f"{fmt(metrics['accuracy_answered'])}.",
        "",
        f"Pairs without a verdict (counted wrong): {metrics['unparseable']}; judge calls "
        f"{metrics['judge']['calls']}, failed {metrics['judge']['failures']}; bad items skipped: {len(bad or [])}."
        + ("" if main["n_groups"] else " Acc+ needs a `group` field on the items; none had one."),
        "",
    ]
    for p in parse[1:]:
        if p not in metrics:
            continue
        o = metrics[p]
        report += [
            f"## parse protocol `{p}` (beside `{head}`)",
            "",
            md_table(
                ["metric", "value", "95% CI", "n"],
                [
                    ("accuracy", o["accuracy"], o["accuracy_ci95"], f"{metrics['n']} pairs"),
                    (
                        "macro accuracy",
                        o["macro_accuracy"],
                        o["macro_accuracy_ci95"],
                        f"{metrics['n_categories']} categories",
                    ),
                    ("Acc+", o["acc_plus"], o.get("acc_plus_ci95"), f"{o['n_groups']} groups"),
                ],
            ),
            "",
            f"Pairs whose verdicts differ between `{head}` and `{p}`: {o['n_differ']} (of which "
            f"{o['n_correct_differ']} change correctness); pairs without a verdict under `{p}`: "
            f"{o['unparseable']}.",
            "",
        ]
    bad_counts: dict[str, int] = defaultdict(int)
    for b in bad or []:
        bad_counts[str(b.get("error", "")).split(" '")[0].split(" (")[0]] += 1
    if bad_counts:
        report += [
            "## items not loaded",
            "",
            md_table(["reason", "count"], sorted(bad_counts.items())),
            "",
        ]
    report += [
        *DEFINITIONS,
        "",
        "## by category",
        "",
        md_table(
            [
                "category",
                "n",
                "accuracy",
                "95% CI (Wilson)",
                *[f"accuracy ({p})" for p in parse[1:] if p in metrics],
            ],
            [
                (
                    c,
                    m["n"],
                    m["accuracy"],
                    m["accuracy_ci95"],
                    *[m[f"accuracy_{p}"] for p in parse[1:] if p in metrics],
                )
                for c, m in metrics["by_category"].items()
            ],
        ),
        "",
    ]
    if srcs:
        report += [
            "## by source (`query_source`)",
            "",
            md_table(
                ["source", "n", "accuracy", "95% CI (Wilson)"],
                [(c, m["n"], m["accuracy"], m["accuracy_ci95"]) for c, m in metrics["by_source"].items()],
            ),
            "",
            f"Macro accuracy over sources: {fmt(metrics['macro_accuracy_over_sources'])} "
            f"({len(srcs)} sources; the headline macro is over categories).",
            "",
        ]
    out.mkdir(parents=True, exist_ok=True)
    cats_m = metrics["by_category"]
    plot_rates(
        out / "accuracy_by_category.png",
        list(cats_m),
        [m["hits"] for m in cats_m.values()],
        [m["n"] for m in cats_m.values()],
        f"pairwise-rm accuracy by category ({label}, n={metrics['n']})",
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
        f"{metrics['unparseable']}, bad items skipped {metrics['n_bad_items']}; judge failures "
        f"{metrics['n_judge_failures']} ({fmt(metrics['judge_failure_rate'])}), accuracy over answered "
        f"{fmt(metrics['accuracy_answered'])}"
        + "".join(
            f"\n  parse {p}: accuracy {fmt(metrics[p]['accuracy'])} {fmt(metrics[p]['accuracy_ci95'])}, "
            f"macro {fmt(metrics[p]['macro_accuracy'])}; verdicts differ on {metrics[p]['n_differ']} pairs"
            for p in PROTOCOLS
            if isinstance(metrics.get(p), dict)
        )
        + _proxy_line(metrics.get("proxy_verify"))
    )


def _proxy_line(pv: dict[str, Any] | None) -> str:
    if not pv:
        return ""
    return (
        f"\n  proxy-verified: proxy agrees on {pv['n_agree']} of {pv['n']} ({fmt(pv['agree_rate'])} "
        f"{fmt(pv['agree_rate_ci95'])}); accuracy when both agree {fmt(pv['accuracy_when_agree'])}; "
        f"proxy's own accuracy {fmt(pv['proxy_accuracy'])}"
    )
