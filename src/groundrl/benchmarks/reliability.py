"""``judge-reliability``: how far a judge's own verdicts can be trusted, on any pairwise
set or score set.

Pairwise judges — every pair is shown in **both orders** (original and swapped), K
samples each:

* **first-slot rate**: share of verdicts (first sample of each order, parseable ones)
  that pick the response shown first. An order-blind judge sits near 0.5 on a balanced
  set; a judge that always answers "1" scores 1.0. Wilson 95% CI over verdicts.
* **swap agreement**: share of pairs (parseable in both orders) whose two verdicts name
  the same underlying response. Always-"1" scores 0. Wilson CI over pairs.
* **accuracy in both orders**: share of all pairs judged right in both orders (the
  position-consistent accuracy); accuracy per order beside it.
* **self-consistency** (K > 1): per presentation, the share of the K samples that agree
  with the most frequent verdict (no verdict counts as its own answer), averaged
  (bootstrap CI); and the share of presentations where all K agree (Wilson CI).

Score judges (items with ``gt_score``): K samples per item; the first sample is the
prediction. **Calibration**: items binned by predicted score (0–2, 3–4, 5–6, 7–8, 9–10,
rounded half up); per bin n, mean predicted, mean gold with a bootstrap 95% CI, and the
share within 2 of gold (Wilson CI); drawn against the identity line. **Self-consistency**:
mean per-item standard deviation of the K scores (bootstrap CI) and the share of items
whose K scores are identical.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from groundrl.benchmarks.protocols import verdict
from groundrl.benchmarks.records import ScoredRow, ShownPair, SwapRow
from groundrl.benchmarks.report import fmt, md_table
from groundrl.benchmarks.runner import plot_rates, write_outputs
from groundrl.benchmarks.stats import (
    calibration,
    position_counts,
    position_metrics,
    score_spread,
    self_consistency,
)
from groundrl.judges.base import SamplingParams
from groundrl.parse.scores import parse_score


def default_params(k: int, given: SamplingParams | None, seed: int) -> SamplingParams:
    """Greedy for K = 1; temperature 0.8, top-p 0.9 (EQA-RM's TTS setting) for K > 1,
    unless the judge configuration sets a temperature or max_tokens."""
    if given is not None:
        return SamplingParams(given.temperature, given.top_p, given.max_tokens, seed, n=k)
    if k == 1:
        return SamplingParams(0.0, 1.0, 512, seed, n=1)
    return SamplingParams(0.8, 0.9, 512, seed, n=k)


def _both_orders(items: Sequence[Mapping[str, Any]]) -> list[ShownPair]:
    """Every pair as shown: original order, then swapped, pair after pair."""
    shown: list[ShownPair] = []
    for it in items:
        for swap in (False, True):
            a, b = (it["response_2"], it["response_1"]) if swap else (it["response_1"], it["response_2"])
            shown.append({"query": it["query"], "response_1": a, "response_2": b, "image": it.get("image")})
    return shown


def pair_rows(items: Sequence[Mapping[str, Any]], gens: list[Any], parse: str, dataset: str) -> list[SwapRow]:
    """One results.jsonl row per pair from its two presentations' generations."""
    results: list[SwapRow] = []
    for i, it in enumerate(items):
        g0, g1 = gens[2 * i], gens[2 * i + 1]
        s0 = [verdict(t, parse, dataset) for t in g0.texts] if g0.ok else []
        s1 = [verdict(t, parse, dataset) for t in g1.texts] if g1.ok else []
        v0 = s0[0] if s0 else None  # slot chosen, original order
        v1 = s1[0] if s1 else None  # slot chosen, swapped order
        pick0 = v0  # underlying response picked
        pick1 = None if v1 is None else 3 - v1
        pref = int(str(it["preferred"]).strip())
        results.append(
            {
                "id": it["id"],
                "preferred": pref,
                "slot_original": v0,
                "slot_swapped": v1,
                "samples_original": s0,
                "samples_swapped": s1,
                "agree": None if pick0 is None or pick1 is None else pick0 == pick1,
                "right_original": pick0 == pref,
                "right_swapped": pick1 == pref,
                "error": g0.error or g1.error,
            }
        )
    return results


PAIRWISE_DEFINITIONS = [
    "- **first-slot rate**: share of verdicts picking the response shown first (first sample per order); "
    "0.5 for a judge blind to position on this set, 1.0 for one that always answers 1.",
    "- **swap agreement**: share of pairs whose verdicts in the two orders name the same response.",
    "- **accuracy in both orders**: share of pairs judged right in both orders (a random judge: 0.25).",
    "- **self-consistency**: share of the K samples agreeing with their most frequent verdict, averaged "
    "over presentations (bootstrap CI); **all K agree**: share of presentations with one verdict.",
    "- 95% CI: Wilson for rates, percentile bootstrap (1000 resamples) for the self-consistency mean.",
]


def _pairwise_report(metrics: Mapping[str, Any], k: int, n_bad: int) -> str:
    m, n = metrics, metrics["n"]
    rows: list[tuple[Any, ...]] = [
        ("first-slot rate", m["first_slot_rate"], m["first_slot_rate_ci95"], f"{m['n_verdicts']} verdicts", 0.5),
        ("swap agreement", m["swap_agreement"], m["swap_agreement_ci95"], f"{m['n_pairs_both_parsed']} pairs", 0.5),
        ("accuracy in both orders", m["accuracy_both_orders"], m["accuracy_both_orders_ci95"], f"{n} pairs", 0.25),
    ]  # fmt: skip
    if k > 1:
        pres = m["n_presentations"]
        rows += [
            (f"self-consistency (share agreeing with the mode of K={k})", m["self_consistency"],
             m["self_consistency_ci95"], f"{pres} presentations", None),
            ("all K samples agree", m["unanimous_rate"], m["unanimous_rate_ci95"], f"{pres} presentations", None),
        ]  # fmt: skip
    return "\n".join(
        [
            f"# judge reliability (pairwise, {m['dataset']}, parse {m['parse']}, K={k}): {n} pairs",
            "",
            md_table(["metric", "value", "95% CI", "n", "unbiased / chance"], rows),
            "",
            f"Accuracy in the original order {fmt(m['accuracy_original_order'])}, in the swapped order "
            f"{fmt(m['accuracy_swapped_order'])}. Judge calls {m['judge']['calls']} (two orders per pair), "
            f"failed {m['judge']['failures']}; bad items skipped: {n_bad}.",
            "",
            *PAIRWISE_DEFINITIONS,
            "",
        ]
    )


def _plot_reliability(path: Path, results: Sequence[SwapRow], k: int, unanimous: tuple[int, int]) -> None:
    c, n = position_counts(results), len(results)
    bars: list[tuple[str, int, int, float | None]] = [
        ("first-slot rate", c["first"], c["verdicts"], 0.5),
        ("swap agreement", c["agree"], c["both_parsed"], 0.5),
        ("right in both orders", c["right_both"], n, 0.25),
    ]
    if k > 1:
        bars.append((f"all {k} samples agree", *unanimous, None))
    plot_rates(
        path,
        [b[0] for b in bars],
        [b[1] for b in bars],
        [b[2] for b in bars],
        f"pairwise judge reliability (n={n} pairs, K={k})",
        "rate",
        chance=[b[3] if b[3] is not None else float("nan") for b in bars],
        chance_label="position-blind / random judge",
        bar_label="rate",
    )


def pairwise(
    items: Sequence[Mapping[str, Any]],
    backend: Any,
    out: Path,
    k: int = 1,
    seed: int = 0,
    params: SamplingParams | None = None,
    parse: str = "strict",
    dataset: str = "jsonl",
    bad: list | None = None,
) -> dict[str, Any]:
    """Show every pair in both orders (K samples each), write results.jsonl,
    metrics.json, report.md and reliability.png into ``out``; return the metrics."""
    # lazy: judges.papers brings numpy and orjson; loaded only when this runs
    from groundrl.judges.papers import ProxyGRMPolicy

    if not items:
        raise ValueError("judge-reliability needs at least one item")
    policy = ProxyGRMPolicy(backend, default_params(k, params, seed))
    results = pair_rows(items, policy.judge(_both_orders(items)), parse, dataset)
    metrics: dict[str, Any] = {
        "kind": "pairwise",
        "dataset": dataset,
        "parse": parse,
        "k": k,
        "n": len(results),
        **position_metrics(results),
        "n_bad_items": len(bad or []),
        "bad_items": bad or [],
        "judge": {"calls": policy.calls, "failures": policy.failures},
    }
    unanimous = (0, 0)
    if k > 1:
        sc = self_consistency(results, seed)
        unanimous = (sc.pop("n_unanimous"), sc["n_presentations"])
        metrics.update(sc)
    report = _pairwise_report(metrics, k, len(bad or []))
    plots = {"reliability.png": lambda path: _plot_reliability(path, results, k, unanimous)}
    write_outputs(out, results, metrics, report, plots)
    return metrics


CALIBRATION_HEADER = [
    "predicted bin",
    "n",
    "mean predicted",
    "mean gold",
    "95% CI (bootstrap)",
    "|Δ| ≤ 2",
    "95% CI (Wilson)",
]


def _scores_report(metrics: Mapping[str, Any], k: int, n_bad: int) -> str:
    m = metrics
    table = [
        (
            e["bin"],
            e["n"],
            e["mean_pred"],
            e["mean_gold"],
            e["mean_gold_ci95"],
            e["within_2"],
            e["within_2_ci95"],
        )
        for e in m["calibration"]
    ]
    report = [
        f"# judge reliability (scores, K={k}): {m['n']} items",
        "",
        "## calibration (first sample against gold)",
        "",
        md_table(CALIBRATION_HEADER, table),
        "",
        f"Items without a parseable score (left out of the bins): {m['n_missing']}; judge calls "
        f"{m['judge']['calls']}, failed {m['judge']['failures']}; bad items skipped: {n_bad}. A calibrated "
        "judge's mean gold in each bin equals its mean prediction (the identity line on calibration.png).",
        "",
    ]
    if k > 1:
        n = m["n_self_consistency"]
        rows = [
            ("mean per-item SD of the K scores", m["score_sd"], m["score_sd_ci95"], n),
            ("share of items with K identical scores", m["identical_rate"], m["identical_rate_ci95"], n),
        ]
        report += [
            f"## self-consistency over K={k} samples",
            "",
            md_table(["metric", "value", "95% CI", "n"], rows),
            "",
        ]
    return "\n".join(report)


def scores(
    items: Sequence[Mapping[str, Any]],
    backend: Any,
    out: Path,
    k: int = 1,
    seed: int = 0,
    params: SamplingParams | None = None,
    bad: list | None = None,
) -> dict[str, Any]:
    """Score every item K times, write results.jsonl, metrics.json, report.md and
    calibration.png into ``out``; return the metrics."""
    # lazy: judges.papers brings numpy and orjson; loaded only when this runs
    from groundrl.judges.papers import EQARMEvaluator

    if not items:
        raise ValueError("judge-reliability needs at least one item")
    ev = EQARMEvaluator(backend)
    gens = ev.raw(items, default_params(k, params, seed))
    results: list[ScoredRow] = []
    for it, g in zip(items, gens, strict=True):
        samples = [parse_score(t, 0, 10).value for t in g.texts]
        pred = samples[0] if samples else None
        results.append(
            {
                "id": it["id"],
                "gt_score": float(it["gt_score"]),
                "pred": pred,
                "samples": samples,
                "error": g.error,
            }
        )
    n_have = sum(r["pred"] is not None for r in results)
    metrics: dict[str, Any] = {
        "kind": "score",
        "k": k,
        "n": len(results),
        "n_missing": len(results) - n_have,
        "calibration": calibration(results, seed),
        "n_bad_items": len(bad or []),
        "bad_items": bad or [],
        "judge": {"calls": ev.calls, "failures": ev.failures},
    }
    if k > 1:
        metrics.update(score_spread(results, seed))
    report = _scores_report(metrics, k, len(bad or []))
    plots = {"calibration.png": lambda path: plot_calibration(metrics["calibration"], path, n_have)}
    write_outputs(out, results, metrics, report, plots)
    return metrics


def plot_calibration(calib: Sequence[Mapping[str, Any]], path: Path, n: int) -> None:
    """Mean gold against mean predicted score per bin (bootstrap 95% CI, n per point),
    with the identity line."""
    # lazy: matplotlib loads only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    # lazy: matplotlib loads only when a figure is drawn
    import matplotlib.pyplot as plt

    pts = [c for c in calib if c["n"]]
    fig, ax = plt.subplots(figsize=(6.8, 5.2))
    ax.plot(
        [0, 10], [0, 10], ls="--", color="tab:gray", lw=1.2, label="perfect calibration (gold = predicted)"
    )
    if pts:
        x = [c["mean_pred"] for c in pts]
        y = [c["mean_gold"] for c in pts]
        lo = [c["mean_gold"] - c["mean_gold_ci95"][0] for c in pts]
        hi = [c["mean_gold_ci95"][1] - c["mean_gold"] for c in pts]
        ax.errorbar(
            x, y, yerr=[lo, hi], fmt="o", color="tab:blue", capsize=4, label="mean gold per bin, 95% CI"
        )
        for c in pts:
            ax.annotate(
                f"{c['bin']}: n={c['n']}\ngold {c['mean_gold']:.2f}",
                (c["mean_pred"], c["mean_gold"]),
                textcoords="offset points",
                xytext=(8, -12),
                fontsize=7,
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
            )
    ax.set_xlim(-0.5, 11.5)
    ax.set_ylim(-0.5, 11)
    ax.set_xlabel("mean predicted score in the bin (0–10)")
    ax.set_ylabel("mean gold score (0–10)")
    ax.set_title(f"score-judge calibration (n={n} items with a score)")
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def summary(metrics: Mapping[str, Any]) -> str:
    if metrics["kind"] == "pairwise":
        line = (
            f"n {metrics['n']} pairs: first-slot rate {fmt(metrics['first_slot_rate'])} "
            f"{fmt(metrics['first_slot_rate_ci95'])}, swap agreement {fmt(metrics['swap_agreement'])} "
            f"{fmt(metrics['swap_agreement_ci95'])}, accuracy in both orders {fmt(metrics['accuracy_both_orders'])}"
        )
        if "self_consistency" in metrics:
            line += f", self-consistency {fmt(metrics['self_consistency'])} {fmt(metrics['self_consistency_ci95'])}"
        return line
    parts = [f"{c['bin']}: n={c['n']} gold {fmt(c['mean_gold'])}" for c in metrics["calibration"] if c["n"]]
    line = f"n {metrics['n']} items; calibration " + "; ".join(parts)
    if "score_sd" in metrics:
        line += f"; mean score SD over K {fmt(metrics['score_sd'])} {fmt(metrics['score_sd_ci95'])}"
    return line
