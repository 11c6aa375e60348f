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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from groundrl.benchmarks.protocols import PROTOCOLS, verdict
from groundrl.benchmarks.records import JudgeCalls, ShownPair
from groundrl.benchmarks.report import fmt, md_table
from groundrl.benchmarks.runner import plot_rates, write_outputs
from groundrl.benchmarks.stats import (
    ProxyAgreement,
    accuracy_block,
    accuracy_by_category,
    accuracy_by_source,
    all_right_share,
    error_kinds,
    group_outcomes,
    macro_share,
    protocol_block,
    proxy_agreement,
    share,
)
from groundrl.io import read_jsonl
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


def _presented(it: Mapping[str, Any], swap: bool) -> ShownPair:
    a, b = (it["response_2"], it["response_1"]) if swap else (it["response_1"], it["response_2"])
    return {"query": it["query"], "response_1": a, "response_2": b, "image": it.get("image")}


def map_back(verdict: int | None, swap: bool) -> int | None:
    """A verdict on the presented order → the original order."""
    if verdict is None:
        return None
    return 3 - verdict if swap else verdict


def accuracy(rows: Sequence[Mapping[str, object]]) -> float:
    return share(rows, "correct")


def macro_accuracy(rows: Sequence[Mapping[str, object]]) -> float:
    return macro_share(rows, "correct", "category")


def acc_plus(rows: Sequence[Mapping[str, Any]]) -> float | None:
    """Share of groups whose every pair is right (``None`` without groups).

    >>> acc_plus([{"group": "g1", "correct": True}, {"group": "g1", "correct": True},
    ...           {"group": "g2", "correct": True}, {"group": "g2", "correct": False}])
    0.5
    """
    return all_right_share(group_outcomes(rows))


# -- judging: the pairs in their presented order -> raw outputs and verdicts -------------


@dataclass
class Judged:
    """What the judge said, in presented order: ``mode`` (direct, scalar_rm,
    rubric_transfer), the object whose calls / failures are reported, each pair's raw
    output (``None`` for a failed call), the verdicts per parse protocol, and with
    proxy-verified inference the proxy and its votes."""

    mode: str
    used: Any
    raw: list[str | None]
    parsed: dict[str, list[int | None]]
    proxy: Any = None
    proxy_votes: list[int | None] | None = None


def _check_parse(items: Sequence[Mapping[str, Any]], parse: Sequence[str], transfer: bool) -> list[str]:
    if not items:
        raise ValueError("pairwise-rm needs at least one item")
    parse = list(dict.fromkeys(parse))
    for p in parse:
        if p not in PROTOCOLS:
            raise ValueError(f"parse protocol must be one of {', '.join(PROTOCOLS)}, got {p!r}")
    if transfer and parse != ["strict"]:
        raise ValueError("rubric transfer reads the proxy's verdicts with the strict protocol only")
    return parse


def _transfer_source(
    items: Sequence[Mapping[str, Any]], swaps: list[bool], rubrics_from: str | Path
) -> tuple[list[bool], list[str]]:
    """Each pair's presentation order and rubric from an earlier run's results.jsonl:
    a pair is shown in the order its rubric was written for."""
    source = {str(r["id"]): r for r in read_jsonl(rubrics_from)}
    swaps = [
        bool(source.get(str(it["id"]), {}).get("swapped", s)) for it, s in zip(items, swaps, strict=True)
    ]
    rubrics = [rubric_text(source.get(str(it["id"]), {}).get("raw") or "") for it in items]
    return swaps, rubrics


def _judge_transfer(judge: Any, shown: list[ShownPair], rubrics: list[str]) -> Judged:
    proxy = judge if isinstance(judge, ProxyAgent) else ProxyAgent(judge.backend)
    verdicts = proxy.verdicts(shown, rubrics)
    return Judged(
        "rubric_transfer", proxy, [why for _, why in verdicts], {"strict": [v for v, _ in verdicts]}
    )


def _judge_scalar(judge: Any, shown: list[ShownPair], parse: list[str]) -> Judged:
    rewards = judge.pairwise_rewards(shown)
    raw = [json.dumps(r) if r is not None else None for r in rewards]
    v = [None if r is None or r[0] == r[1] else (1 if r[0] > r[1] else 2) for r in rewards]
    return Judged("scalar_rm", judge, raw, {p: v for p in parse})


def _judge_direct(
    judge: Any, shown: list[ShownPair], parse: list[str], dataset: str, proxy_verify: bool
) -> Judged:
    policy = (
        judge
        if isinstance(judge, ProxyGRMPolicy)
        else ProxyGRMPolicy(judge.backend if hasattr(judge, "backend") else judge)
    )
    gens = policy.judge(shown)
    raw = [g.text if g.ok else None for g in gens]
    # a failed call has no text: no verdict under either protocol
    parsed = {p: [verdict(t, p, dataset) if t is not None else None for t in raw] for p in parse}
    judged = Judged("direct", policy, raw, parsed)
    if proxy_verify:
        judged.proxy = ProxyAgent(policy.backend, policy.params)
        votes = judged.proxy.verdicts(shown, [rubric_text(t or "") for t in raw])
        judged.proxy_votes = [v for v, _ in votes]
    return judged


def judge_pairs(
    judge: Any,
    shown: list[ShownPair],
    parse: list[str],
    dataset: str,
    rubrics: list[str] | None = None,
    proxy_verify: bool = False,
) -> Judged:
    """Ask the judge (a policy GRM, a scalar reward model, or with ``rubrics`` a proxy
    agent) about every presented pair."""
    if rubrics is not None:
        return _judge_transfer(judge, shown, rubrics)
    if hasattr(judge, "pairwise_rewards"):
        return _judge_scalar(judge, shown, parse)
    return _judge_direct(judge, shown, parse, dataset, proxy_verify)


class PairRow(TypedDict):
    """One results.jsonl row of pairwise-rm: the headline protocol's verdict in the
    original order; ``proxy_*`` with proxy-verified inference; ``verdict_<p>`` /
    ``correct_<p>`` for the protocol ``p`` reported beside the headline."""

    id: object
    swapped: bool
    raw: str | None
    verdict_presented: int | None
    verdict: int | None
    preferred: int
    correct: bool
    category: object
    group: object
    source: NotRequired[object]
    proxy_verdict: NotRequired[int | None]
    proxy_agree: NotRequired[bool]
    verdict_strict: NotRequired[int | None]
    correct_strict: NotRequired[bool]
    verdict_released: NotRequired[int | None]
    correct_released: NotRequired[bool]
    judge_failed: NotRequired[bool]  # always set, last (the key order of results.jsonl)


def _other_protocol(row: PairRow, p: str, v: int | None) -> None:
    """``verdict_<p>`` and ``correct_<p>`` of the protocol ``p`` beside the headline."""
    if p == "strict":
        row["verdict_strict"], row["correct_strict"] = v, v == row["preferred"]
    elif p == "released":
        row["verdict_released"], row["correct_released"] = v, v == row["preferred"]
    else:
        raise ValueError(f"parse protocol must be one of {', '.join(PROTOCOLS)}, got {p!r}")


def result_rows(
    items: Sequence[Mapping[str, Any]], swaps: list[bool], judged: Judged, parse: list[str]
) -> list[PairRow]:
    """One results.jsonl row per pair, verdicts mapped back to the original order."""
    results: list[PairRow] = []
    for k, (it, s, raw) in enumerate(zip(items, swaps, judged.raw, strict=True)):
        pref = int(str(it["preferred"]).strip())
        v = map_back(judged.parsed[parse[0]][k], s)
        row: PairRow = {
            "id": it["id"],
            "swapped": s,
            "raw": raw,
            "verdict_presented": judged.parsed[parse[0]][k],
            "verdict": v,
            "preferred": pref,
            "correct": v == pref,
            "category": it.get("category") if it.get("category") is not None else NO_CATEGORY,
            "group": it.get("group"),
        }
        if it.get("source") is not None:
            row["source"] = it["source"]
        if judged.proxy_votes is not None:
            row["proxy_verdict"] = map_back(judged.proxy_votes[k], s)
            row["proxy_agree"] = row["verdict"] is not None and row["proxy_verdict"] == row["verdict"]
        for p in parse[1:]:
            _other_protocol(row, p, map_back(judged.parsed[p][k], s))
        # a call that got no usable answer (not a wrong verdict): counted apart (issue 26)
        row["judge_failed"] = raw is None or (judged.mode == "rubric_transfer" and "call failed" in str(raw))
        results.append(row)
    return results


# -- metrics: pure functions of the result rows ------------------------------------------


class ProxyVerify(ProxyAgreement):
    """``metrics["proxy_verify"]``: :class:`ProxyAgreement` and the proxy's calls."""

    proxy_judge: JudgeCalls


def pairwise_metrics(
    results: Sequence[PairRow], judged: Judged, parse: list[str], dataset: str, bad: list, seed: int
) -> dict[str, Any]:
    """metrics.json of a run (raw values)."""
    answered = [r for r in results if not r["judge_failed"]]
    scalar = judged.mode == "scalar_rm"
    metrics: dict[str, Any] = {
        "mode": judged.mode,
        "dataset": dataset,
        "parse": parse[0] if not scalar else "scalar",
        "n": len(results),
        **accuracy_block(results, "correct", seed),
        "n_categories": len({str(r["category"]) for r in results}),
        "chance_accuracy": 0.5,
        "unparseable": sum(r["verdict"] is None for r in results),
        "n_bad_items": len(bad),
        "bad_items": bad,
        "judge": {"calls": judged.used.calls, "failures": judged.used.failures},
        "n_judge_failures": len(results) - len(answered),
        "judge_failure_rate": (len(results) - len(answered)) / len(results),
        "n_answered": len(answered),
        "accuracy_answered": accuracy(answered) if answered else None,
    }
    if judged.proxy_votes is not None:
        proxy = judged.proxy
        proxy_verify: ProxyVerify = {
            **proxy_agreement(results),
            "proxy_judge": {"calls": proxy.calls, "failures": proxy.failures},
        }
        metrics["proxy_verify"] = proxy_verify
    others = [] if scalar else parse[1:]
    for p in others:
        metrics[p] = protocol_block(results, p, seed)
    metrics["by_category"] = accuracy_by_category(results, others)
    sources = accuracy_by_source(results)
    if sources:  # VL-RewardBench's query_source: reported beside its three categories
        metrics["by_source"] = sources
        with_source = [r for r in results if r.get("source") is not None]
        metrics["macro_accuracy_over_sources"] = macro_share(with_source, "correct", "source")
    return metrics


# -- report ------------------------------------------------------------------------------


def _headline(metrics: Mapping[str, Any], label: str, n_bad: int) -> list[str]:
    m = metrics
    table = [
        ("accuracy", m["accuracy"], m["accuracy_ci95"], f"{m['n']} pairs", 0.5),
        (
            "macro accuracy",
            m["macro_accuracy"],
            m["macro_accuracy_ci95"],
            f"{m['n_categories']} categories",
            0.5,
        ),
        ("Acc+", m["acc_plus"], m.get("acc_plus_ci95"), f"{m['n_groups']} groups", m.get("chance_acc_plus")),
    ]
    return [
        f"# pairwise-rm ({label}): {m['n']} pairs",
        "",
        md_table(["metric", "value", "95% CI", "n", "chance"], table),
        "",
        f"Judge failures (no usable answer): {m['n_judge_failures']} of {m['n']} pairs "
        f"({fmt(m['judge_failure_rate'])}); accuracy over the {m['n_answered']} answered pairs: "
        f"{fmt(m['accuracy_answered'])}.",
        "",
        f"Pairs without a verdict (counted wrong): {m['unparseable']}; judge calls "
        f"{m['judge']['calls']}, failed {m['judge']['failures']}; bad items skipped: {n_bad}."
        + ("" if m["n_groups"] else " Acc+ needs a `group` field on the items; none had one."),
        "",
    ]


def _protocol_section(metrics: Mapping[str, Any], head: str, p: str) -> list[str]:
    o, n = metrics[p], metrics["n"]
    rows = [
        ("accuracy", o["accuracy"], o["accuracy_ci95"], f"{n} pairs"),
        (
            "macro accuracy",
            o["macro_accuracy"],
            o["macro_accuracy_ci95"],
            f"{metrics['n_categories']} categories",
        ),
        ("Acc+", o["acc_plus"], o.get("acc_plus_ci95"), f"{o['n_groups']} groups"),
    ]
    return [
        f"## parse protocol `{p}` (beside `{head}`)",
        "",
        md_table(["metric", "value", "95% CI", "n"], rows),
        "",
        f"Pairs whose verdicts differ between `{head}` and `{p}`: {o['n_differ']} (of which "
        f"{o['n_correct_differ']} change correctness); pairs without a verdict under `{p}`: "
        f"{o['unparseable']}.",
        "",
    ]


def _category_section(metrics: Mapping[str, Any], others: list[str]) -> list[str]:
    header = ["category", "n", "accuracy", "95% CI (Wilson)", *[f"accuracy ({p})" for p in others]]
    rows = [
        (c, m["n"], m["accuracy"], m["accuracy_ci95"], *[m[f"accuracy_{p}"] for p in others])
        for c, m in metrics["by_category"].items()
    ]
    return ["## by category", "", md_table(header, rows), ""]


def _source_section(metrics: Mapping[str, Any]) -> list[str]:
    src = metrics["by_source"]
    return [
        "## by source (`query_source`)",
        "",
        md_table(
            ["source", "n", "accuracy", "95% CI (Wilson)"],
            [(c, m["n"], m["accuracy"], m["accuracy_ci95"]) for c, m in src.items()],
        ),
        "",
        f"Macro accuracy over sources: {fmt(metrics['macro_accuracy_over_sources'])} "
        f"({len(src)} sources; the headline macro is over categories).",
        "",
    ]


def render_report(metrics: Mapping[str, Any], parse: list[str], label: str, bad: list) -> str:
    """report.md of a run (numbers rounded), from its metrics."""
    others = [p for p in parse[1:] if p in metrics]
    report = _headline(metrics, label, len(bad))
    for p in others:
        report += _protocol_section(metrics, parse[0], p)
    kinds = error_kinds(bad)
    if kinds:
        report += ["## items not loaded", "", md_table(["reason", "count"], kinds), ""]
    report += [*DEFINITIONS, "", *_category_section(metrics, others)]
    if "by_source" in metrics:
        report += _source_section(metrics)
    return "\n".join(report)


def _plot_categories(path: Path, metrics: Mapping[str, Any], label: str) -> None:
    cats = metrics["by_category"]
    plot_rates(
        path,
        list(cats),
        [m["hits"] for m in cats.values()],
        [m["n"] for m in cats.values()],
        f"pairwise-rm accuracy by category ({label}, n={metrics['n']})",
        "accuracy (picks the preferred)",
        chance=0.5,
        chance_label="chance (0.5)",
    )


# -- the driver --------------------------------------------------------------------------


def run(
    items: Sequence[Mapping[str, Any]],
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
    parse = _check_parse(items, parse, rubrics_from is not None)
    bad = bad or []
    swaps = [swapped(it["id"], seed) for it in items]
    rubrics = None
    if rubrics_from is not None:
        swaps, rubrics = _transfer_source(items, swaps, rubrics_from)
    shown = [_presented(it, s) for it, s in zip(items, swaps, strict=True)]
    judged = judge_pairs(judge, shown, parse, dataset, rubrics, proxy_verify and rubrics is None)
    results = result_rows(items, swaps, judged, parse)
    metrics = pairwise_metrics(results, judged, parse, dataset, bad, seed)
    label = {"direct": f"direct, parse {parse[0]}", "scalar_rm": "scalar RM"}.get(judged.mode, judged.mode)
    report = render_report(metrics, parse, label, bad)
    plots = {"accuracy_by_category.png": lambda path: _plot_categories(path, metrics, label)}
    write_outputs(out, results, metrics, report, plots)
    return metrics


def summary(metrics: Mapping[str, Any]) -> str:
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


def _proxy_line(pv: ProxyVerify | None) -> str:
    if not pv:
        return ""
    return (
        f"\n  proxy-verified: proxy agrees on {pv['n_agree']} of {pv['n']} ({fmt(pv['agree_rate'])} "
        f"{fmt(pv['agree_rate_ci95'])}); accuracy when both agree {fmt(pv['accuracy_when_agree'])}; "
        f"proxy's own accuracy {fmt(pv['proxy_accuracy'])}"
    )
