"""``score-rm``: a generative reward model scoring embodied-QA trajectories 0–10 against
gold scores (EQARewardBench). Metrics: accuracy (|s − s*| ≤ 2) and RMSE overall, per
``source`` and per ``category``, each with a bootstrap 95% CI; with ``k > 1`` samples,
test-time-scaling curves (``vote`` and/or ``mean``) from the same samples, and
optionally a scalar reward-model baseline. An item whose judge output has
no parseable score counts as wrong for accuracy and is left out of RMSE (``n_missing``).
An item whose judge call failed is also counted apart (``n_judge_failures``,
``judge_failure_rate``) and ``accuracy_answered`` is the accuracy over the others, so an
outage does not pass for a bad reward model.

Chance level (drawn on the plots): a score drawn uniformly from the integers 0..10 is
within 2 of a gold score g with probability ``#{s : |s − g| ≤ 2} / 11`` (5/11 for
g = 7); a group's chance level is that probability averaged over its items."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from groundrl.benchmarks.runner import plot_rates, write_outputs
from groundrl.benchmarks.scalar_rm import spearman
from groundrl.benchmarks.stats import fmt, md_table, wilson_ci, with_ci
from groundrl.judges.base import SamplingParams
from groundrl.judges.papers import EQARMEvaluator
from groundrl.judges.tts import DEFAULT_KS, TTS_PARAMS, aggregate_scores, tts_curve

REQUIRED = ("question", "reasoning", "answer", "gt_score")


NO_SOURCE = "(no source)"
NO_CATEGORY = "(no category)"

DEFINITIONS = [
    "- **accuracy**: share of items whose predicted score is within 2 of the gold score "
    "(|Δ| ≤ 2 on the 0–10 scale); an unparseable judge output counts as wrong.",
    "- **RMSE**: root mean squared error of the predicted against the gold score, over the items "
    "with a parseable prediction.",
    "- **chance**: accuracy of a score drawn uniformly from the integers 0..10 (its expected value "
    "for these gold scores).",
    "- **95% CI**: percentile bootstrap over items (1000 resamples) for the overall numbers; Wilson "
    "score interval for the per-group accuracies on the plot.",
]


def _hit(r: dict[str, Any]) -> bool:
    return r["pred"] is not None and abs(r["pred"] - r["gt_score"]) <= 2


def _acc(rows: list[dict[str, Any]]) -> float:
    return sum(1 for r in rows if _hit(r)) / len(rows)


def chance_accuracy(gold: float) -> float:
    """P(|s − gold| ≤ 2) for s uniform on the integers 0..10.

    >>> round(chance_accuracy(7), 4), round(chance_accuracy(9), 4), round(chance_accuracy(0), 4)
    (0.4545, 0.3636, 0.2727)
    """
    return sum(1 for s in range(11) if abs(s - gold) <= 2 + 1e-9) / 11


def _rmse(rows: list[dict[str, Any]]) -> float | None:
    have = [r for r in rows if r["pred"] is not None]
    return math.sqrt(sum((r["pred"] - r["gt_score"]) ** 2 for r in have) / len(have)) if have else None


def run(
    items: list[dict[str, Any]],
    evaluator: EQARMEvaluator,
    out: Path,
    k: int = 1,
    bad: list | None = None,
    seed: int | None = None,
    aggregate: Sequence[str] = ("vote",),
    scalar_rm: Any = None,
) -> dict[str, Any]:
    """Judge every item (``k`` samples each), write results.jsonl, metrics.json,
    report.md, accuracy_by_category.png (and tts.png for ``k > 1``) into ``out``; return
    the metrics (raw values). ``seed`` seeds the bootstrap (and the sampling when K > 1).

    ``aggregate`` lists how K samples become one score (``vote`` and/or ``mean``, from
    the same samples; the first is the headline, every one gets a test-time-scaling
    curve). ``scalar_rm`` (:class:`~groundrl.benchmarks.scalar_rm.ScalarRM`) adds a
    scalar reward-model baseline (``10 · sigmoid(reward)``; Spearman beside it), drawn as
    a flat line on the curve: it has no K."""
    if not items:
        raise ValueError("score-rm needs at least one item")
    aggregate = list(dict.fromkeys(aggregate))
    for a in aggregate:
        if a not in ("vote", "mean"):
            raise ValueError(f"aggregate must be vote or mean, got {a!r}")
    params = TTS_PARAMS if k > 1 else SamplingParams(max_tokens=512)
    sample_seed = seed if (seed is not None and k > 1) else params.seed
    params = SamplingParams(params.temperature, params.top_p, params.max_tokens, sample_seed, n=k)
    boot = seed or 0
    gens = evaluator.raw(items, params)
    from groundrl.parse.scores import parse_score

    results = []
    for it, g in zip(items, gens, strict=True):
        scores = [parse_score(t, 0, 10).value for t in g.texts]
        pred = aggregate_scores(scores[:1] if k == 1 else scores, aggregate[0])  # type: ignore[arg-type]
        results.append(
            {
                "id": it["id"],
                "gt_score": float(it["gt_score"]),
                "pred": pred,
                "samples": scores,
                "raw": g.texts[:1],
                "error": g.error,
                "source": it.get("source") if it.get("source") is not None else NO_SOURCE,
                "category": it.get("category") if it.get("category") is not None else NO_CATEGORY,
            }
        )
    metrics: dict[str, Any] = {
        "n": len(results),
        "accuracy": _acc(results) if results else None,
        "rmse": _rmse(results),
        "accuracy_ci95": with_ci(results, _acc, boot)["ci95"],
        "rmse_ci95": with_ci(results, _rmse, boot)["ci95"],
        "chance_accuracy": sum(chance_accuracy(r["gt_score"]) for r in results) / len(results)
        if results
        else None,
        "n_missing": sum(r["pred"] is None for r in results),
        "n_bad_items": len(bad or []),
        "bad_items": bad or [],
        "judge": {"calls": evaluator.calls, "failures": evaluator.failures},
        # a failed call is not a wrong answer: counted apart, accuracy also over the rest (issue 26)
        "n_judge_failures": sum(r["error"] is not None for r in results),
        "judge_failure_rate": sum(r["error"] is not None for r in results) / len(results),
        "n_answered": sum(r["error"] is None for r in results),
        "accuracy_answered": _acc(answered)
        if (answered := [r for r in results if r["error"] is None])
        else None,
    }
    for key in ("source", "category"):
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in results:
            groups[str(r[key])].append(r)
        metrics[f"by_{key}"] = {
            g: {
                "n": len(rs),
                "hits": sum(_hit(r) for r in rs),
                "accuracy": _acc(rs),
                "accuracy_ci95": list(wilson_ci(sum(_hit(r) for r in rs), len(rs))),
                "rmse": _rmse(rs),
                "chance_accuracy": sum(chance_accuracy(r["gt_score"]) for r in rs) / len(rs),
            }
            for g, rs in sorted(groups.items())
        }
    report = [
        f"# score-rm: {metrics['n']} items",
        "",
        md_table(
            ["metric", "value", "95% CI", "n"],
            [
                ("accuracy (|Δ| ≤ 2)", metrics["accuracy"], metrics["accuracy_ci95"], metrics["n"]),
                ("RMSE", metrics["rmse"], metrics["rmse_ci95"], metrics["n"] - metrics["n_missing"]),
                ("chance accuracy", metrics["chance_accuracy"], None, metrics["n"]),
            ],
        ),
        "",
        f"Judge failures (no usable answer): {metrics['n_judge_failures']} of {metrics['n']} items "
        f"({fmt(metrics['judge_failure_rate'])}); accuracy over the {metrics['n_answered']} answered items: "
        f"{fmt(metrics['accuracy_answered'])}.",
        "",
        f"Unparseable judge outputs (counted wrong, left out of RMSE): {metrics['n_missing']}; "
        f"judge calls {evaluator.calls}, failed {evaluator.failures}; bad items skipped: {len(bad or [])}.",
        "",
        *DEFINITIONS,
        "",
    ]
    for key in ("source", "category"):
        rows = [
            (g, m["n"], m["accuracy"], m["accuracy_ci95"], m["chance_accuracy"], m["rmse"])
            for g, m in metrics[f"by_{key}"].items()
        ]
        report += [
            f"## by {key}",
            "",
            md_table([key, "n", "accuracy", "95% CI (Wilson)", "chance", "RMSE"], rows),
            "",
        ]
    out.mkdir(parents=True, exist_ok=True)
    pngs = []
    spear = spearman(
        [r["pred"] for r in results if r["pred"] is not None],
        [r["gt_score"] for r in results if r["pred"] is not None],
    )
    metrics["spearman"] = spear
    metrics["aggregate"] = aggregate[0]
    baseline = None
    if scalar_rm is not None:
        sc = scalar_rm.scores(items)
        srows = [{"pred": v, "gt_score": r["gt_score"]} for v, r in zip(sc, results, strict=True)]
        for r, v in zip(results, sc, strict=True):
            r["scalar_rm"] = v
        have = [x for x in srows if x["pred"] is not None]
        baseline = {
            "model": getattr(scalar_rm, "path", None),
            "n": len(srows),
            "hits": sum(_hit(x) for x in srows),
            "accuracy": _acc(srows),
            "accuracy_ci95": list(wilson_ci(sum(_hit(x) for x in srows), len(srows))),
            "rmse": _rmse(srows),
            "spearman": spearman([x["pred"] for x in have], [x["gt_score"] for x in have]),
            "n_missing": len(srows) - len(have),
            "calls": scalar_rm.calls,
            "failures": scalar_rm.failures,
        }
        metrics["scalar_rm"] = baseline
        report += [
            "## scalar reward-model baseline",
            "",
            md_table(
                ["scorer", "accuracy (|Δ| ≤ 2)", "95% CI", "RMSE", "Spearman", "n"],
                [
                    (
                        f"judge ({aggregate[0]}, K={k})",
                        metrics["accuracy"],
                        metrics["accuracy_ci95"],
                        metrics["rmse"],
                        spear,
                        metrics["n"],
                    ),
                    (
                        "scalar RM (10·sigmoid(r))",
                        baseline["accuracy"],
                        baseline["accuracy_ci95"],
                        baseline["rmse"],
                        baseline["spearman"],
                        baseline["n"],
                    ),
                ],
            ),  # fmt: skip
            "",
            "The scalar RM reads text only (question, reasoning, answer; no frames). Its score on the 0–10 "
            "scale is 10·sigmoid(reward), our choice; Spearman's rank correlation with the gold scores needs "
            "no scale and compares the two fairly.",
            "",
        ]
    if k > 1:
        ks = [x for x in DEFAULT_KS if x <= k]
        curves = {}
        for a in aggregate:
            curve = tts_curve([r["samples"] for r in results], [r["gt_score"] for r in results], ks, a)  # type: ignore[arg-type]
            for c in curve:
                hits = round(c["accuracy"] * len(results)) if c["accuracy"] is not None else 0
                c["accuracy_ci95"] = list(wilson_ci(hits, len(results)))
            curves[a] = curve
        metrics["tts"] = curves[aggregate[0]]
        metrics["tts_by_aggregate"] = curves
        plot_tts(curves, out / "tts.png", len(results), metrics["chance_accuracy"], baseline)
        pngs.append("tts.png")
        for a, curve in curves.items():
            report += [
                f"## test-time scaling ({a} over the first K samples)",
                "",
                md_table(
                    ["K", "accuracy", "95% CI (Wilson)", "RMSE"],
                    [(c["k"], c["accuracy"], c["accuracy_ci95"], c["rmse"]) for c in curve],
                ),
                "",
            ]
    cats = metrics["by_category"]
    plot_rates(
        out / "accuracy_by_category.png",
        list(cats),
        [m["hits"] for m in cats.values()],
        [m["n"] for m in cats.values()],
        f"score-rm accuracy by category (n={metrics['n']})",
        "accuracy (|Δ| ≤ 2)",
        chance=[m["chance_accuracy"] for m in cats.values()],
        chance_label="chance (uniform 0..10 score)",
    )
    pngs.insert(0, "accuracy_by_category.png")
    write_outputs(out, results, metrics, "\n".join(report) + "\n", pngs)
    return metrics


def summary(metrics: dict[str, Any]) -> str:
    """One line for the terminal, rounded."""
    return (
        f"n {metrics['n']}: accuracy {fmt(metrics['accuracy'])} {fmt(metrics['accuracy_ci95'])}, "
        f"RMSE {fmt(metrics['rmse'])} {fmt(metrics['rmse_ci95'])} (chance accuracy {fmt(metrics['chance_accuracy'])}); "
        f"unparseable {metrics['n_missing']}, bad items skipped {metrics['n_bad_items']}; judge failures "
        f"{metrics['n_judge_failures']} ({fmt(metrics['judge_failure_rate'])}), accuracy over answered "
        f"{fmt(metrics['accuracy_answered'])}"
        + (
            f"\n  scalar RM: accuracy {fmt(metrics['scalar_rm']['accuracy'])} "
            f"{fmt(metrics['scalar_rm']['accuracy_ci95'])}, RMSE {fmt(metrics['scalar_rm']['rmse'])}, "
            f"Spearman {fmt(metrics['scalar_rm']['spearman'])} (judge {fmt(metrics.get('spearman'))})"
            if metrics.get("scalar_rm")
            else ""
        )
    )


def plot_tts(
    curves: dict[str, list[dict[str, Any]]] | list[dict[str, Any]],
    path: Path,
    n: int,
    chance: float | None,
    baseline: dict[str, Any] | None = None,
) -> None:
    """Accuracy (with Wilson 95% CIs, the chance line and a scalar-RM baseline if any)
    and RMSE against K, one line per aggregation, in two panels sharing the K axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if isinstance(curves, list):
        curves = {"vote": curves}
    colors = {"vote": "tab:blue", "mean": "tab:green"}
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(9.0, 6.4), sharex=True)
    ks: list[int] = []
    tops = []
    for j, (method, curve) in enumerate(curves.items()):
        ks = [c["k"] for c in curve]
        acc = [c["accuracy"] if c["accuracy"] is not None else float("nan") for c in curve]
        lo = [a - (c["accuracy_ci95"][0] or 0) for a, c in zip(acc, curve, strict=True)]
        hi = [(c["accuracy_ci95"][1] or 0) - a for a, c in zip(acc, curve, strict=True)]
        shift = [kk * (1.04 if j else 1.0) for kk in ks]  # keep two methods' error bars apart
        col = colors.get(method, "tab:gray")
        ax.errorbar(
            shift, acc, yerr=[lo, hi], marker="o", color=col, capsize=4, label=f"{method}: accuracy, 95% CI"
        )
        for kk, a in zip(shift, acc, strict=True):
            ax.annotate(
                f"{a:.3f}", (kk, a), textcoords="offset points", xytext=(6, 6 - 14 * j), fontsize=7, color=col
            )
        rm = [c["rmse"] if c["rmse"] is not None else float("nan") for c in curve]
        tops += [v for v in rm if v == v]
        ax2.plot(shift, rm, marker="s", color=col, label=f"{method}: RMSE")
        for kk, v in zip(shift, rm, strict=True):
            ax2.annotate(
                f"{v:.3f}", (kk, v), textcoords="offset points", xytext=(6, 6 - 14 * j), fontsize=7, color=col
            )
    if chance is not None:
        ax.axhline(chance, color="tab:red", ls="--", lw=1.2, label=f"chance ({chance:.3f})")
    if baseline is not None and baseline.get("accuracy") is not None:
        ax.axhline(
            baseline["accuracy"], color="tab:orange", ls=":", lw=1.6,
            label=f"scalar RM ({baseline['accuracy']:.3f}, no K)",
        )  # fmt: skip
        if baseline.get("rmse") is not None:
            ax2.axhline(baseline["rmse"], color="tab:orange", ls=":", lw=1.6, label="scalar RM: RMSE")
            tops.append(baseline["rmse"])
    ax.set_ylim(-0.04, 1.08)  # a line at 0 (or 1) stays visible off the frame
    ax.set_ylabel("accuracy (|Δ| ≤ 2)")
    ax.set_title(f"EQA-RM test-time scaling ({' / '.join(curves)}), n={n} items")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)  # off the data
    ax.grid(alpha=0.3)
    ax2.set_xscale("log", base=2)
    ax2.set_xticks(ks, [str(x) for x in ks])
    ax2.set_xlabel("K (samples per item)")
    ax2.set_ylabel("RMSE (0–10 scale)")
    top = max(tops or [1.0]) * 1.3 + 0.1
    ax2.set_ylim(-0.03 * top, top)  # an RMSE of 0 stays visible above the frame
    ax2.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
