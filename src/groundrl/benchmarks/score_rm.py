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

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NotRequired

from groundrl.benchmarks.records import Prediction, RateCell, ScoredRow
from groundrl.benchmarks.report import fmt, md_table
from groundrl.benchmarks.runner import plot_rates, write_outputs
from groundrl.benchmarks.stats import (
    mean_chance_accuracy,
    rate_cell,
    rmse,
    score_accuracy,
    score_group,
    spearman,
    split_by,
    wilson_ci,
    with_ci,
    within,
)
from groundrl.judges.base import SamplingParams
from groundrl.judges.papers import EQARMEvaluator
from groundrl.judges.tts import DEFAULT_KS, TTS_PARAMS, aggregate_scores, tts_curve
from groundrl.parse.scores import parse_score

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


class ScoreRow(ScoredRow):
    """One results.jsonl row of score-rm: ``pred`` is the aggregate of ``samples``."""

    raw: list[str]
    source: object
    category: object
    scalar_rm: NotRequired[float | None]


class ScalarBaseline(RateCell):
    """The scalar reward model's numbers on the same items (``metrics["scalar_rm"]``)."""

    model: str | None
    rmse: float | None
    spearman: float | None
    n_missing: int
    calls: int
    failures: int


def _hit(r: Prediction) -> bool:
    return within(r["pred"], r["gt_score"])


def _check(items: Sequence[Mapping[str, Any]], aggregate: Sequence[str]) -> list[str]:
    if not items:
        raise ValueError("score-rm needs at least one item")
    aggregate = list(dict.fromkeys(aggregate))
    for a in aggregate:
        if a not in ("vote", "mean"):
            raise ValueError(f"aggregate must be vote or mean, got {a!r}")
    return aggregate


def sampling_params(k: int, seed: int | None) -> SamplingParams:
    """One sample (max 512 tokens) for K = 1; EQA-RM's TTS setting for K > 1, seeded by
    ``seed`` when given."""
    params = TTS_PARAMS if k > 1 else SamplingParams(max_tokens=512)
    sample_seed = seed if (seed is not None and k > 1) else params.seed
    return SamplingParams(params.temperature, params.top_p, params.max_tokens, sample_seed, n=k)


def result_rows(items: Sequence[Mapping[str, Any]], gens: list[Any], k: int, how: str) -> list[ScoreRow]:
    """One results.jsonl row per item: its K parsed samples and their ``how`` aggregate."""
    results: list[ScoreRow] = []
    for it, g in zip(items, gens, strict=True):
        scores = [parse_score(t, 0, 10).value for t in g.texts]
        pred = aggregate_scores(scores[:1] if k == 1 else scores, how)  # type: ignore[arg-type]
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
    return results


def score_metrics(results: Sequence[ScoreRow], boot: int, bad: list, judge: Any) -> dict[str, Any]:
    """metrics.json of a run before its optional parts (raw values)."""
    failed = sum(r["error"] is not None for r in results)
    answered = [r for r in results if r["error"] is None]
    metrics: dict[str, Any] = {
        "n": len(results),
        "accuracy": score_accuracy(results),
        "rmse": rmse(results),
        "accuracy_ci95": with_ci(results, score_accuracy, boot)["ci95"],
        "rmse_ci95": with_ci(results, rmse, boot)["ci95"],
        "chance_accuracy": mean_chance_accuracy(results),
        "n_missing": sum(r["pred"] is None for r in results),
        "n_bad_items": len(bad),
        "bad_items": bad,
        "judge": {"calls": judge.calls, "failures": judge.failures},
        # a failed call is not a wrong answer: counted apart, accuracy also over the rest (issue 26)
        "n_judge_failures": failed,
        "judge_failure_rate": failed / len(results),
        "n_answered": len(answered),
        "accuracy_answered": score_accuracy(answered) if answered else None,
    }
    for key in ("source", "category"):
        metrics[f"by_{key}"] = {g: score_group(rs) for g, rs in split_by(results, key).items()}
    have = [(r["pred"], r["gt_score"]) for r in results if r["pred"] is not None]
    metrics["spearman"] = spearman([pred for pred, _ in have], [gold for _, gold in have])
    return metrics


def scalar_baseline(results: Sequence[ScoreRow], sc: list[float | None], scalar_rm: Any) -> ScalarBaseline:
    """The scalar reward model's accuracy, RMSE and Spearman on the same items."""
    srows: list[Prediction] = [
        {"pred": v, "gt_score": r["gt_score"]} for v, r in zip(sc, results, strict=True)
    ]
    have = [(x["pred"], x["gt_score"]) for x in srows if x["pred"] is not None]
    return {
        "model": getattr(scalar_rm, "path", None),
        **rate_cell(sum(_hit(x) for x in srows), len(srows)),
        "rmse": rmse(srows),
        "spearman": spearman([pred for pred, _ in have], [gold for _, gold in have]),
        "n_missing": len(srows) - len(have),
        "calls": scalar_rm.calls,
        "failures": scalar_rm.failures,
    }


def tts_curves(
    results: Sequence[ScoredRow], k: int, aggregate: list[str]
) -> dict[str, list[dict[str, object]]]:
    """Per aggregation, accuracy (Wilson CI) and RMSE against the first K samples: the
    rows of :func:`~groundrl.judges.tts.tts_curve` (its keys) with ``accuracy_ci95``."""
    ks = [x for x in DEFAULT_KS if x <= k]
    n = len(results)
    curves: dict[str, list[dict[str, object]]] = {}
    for a in aggregate:
        curve = tts_curve([r["samples"] for r in results], [r["gt_score"] for r in results], ks, a)  # type: ignore[arg-type]
        curves[a] = [
            {
                **c,
                "accuracy_ci95": list(
                    wilson_ci(round(c["accuracy"] * n) if c["accuracy"] is not None else 0, n)
                ),
            }
            for c in curve
        ]
    return curves


def _headline(m: Mapping[str, Any], n_bad: int) -> list[str]:
    rows = [
        ("accuracy (|Δ| ≤ 2)", m["accuracy"], m["accuracy_ci95"], m["n"]),
        ("RMSE", m["rmse"], m["rmse_ci95"], m["n"] - m["n_missing"]),
        ("chance accuracy", m["chance_accuracy"], None, m["n"]),
    ]
    return [
        f"# score-rm: {m['n']} items",
        "",
        md_table(["metric", "value", "95% CI", "n"], rows),
        "",
        f"Judge failures (no usable answer): {m['n_judge_failures']} of {m['n']} items "
        f"({fmt(m['judge_failure_rate'])}); accuracy over the {m['n_answered']} answered items: "
        f"{fmt(m['accuracy_answered'])}.",
        "",
        f"Unparseable judge outputs (counted wrong, left out of RMSE): {m['n_missing']}; "
        f"judge calls {m['judge']['calls']}, failed {m['judge']['failures']}; bad items skipped: {n_bad}.",
        "",
        *DEFINITIONS,
        "",
    ]


def _group_sections(m: Mapping[str, Any]) -> list[str]:
    lines = []
    for key in ("source", "category"):
        rows = [
            (g, c["n"], c["accuracy"], c["accuracy_ci95"], c["chance_accuracy"], c["rmse"])
            for g, c in m[f"by_{key}"].items()
        ]
        header = [key, "n", "accuracy", "95% CI (Wilson)", "chance", "RMSE"]
        lines += [f"## by {key}", "", md_table(header, rows), ""]
    return lines


def _baseline_section(m: Mapping[str, Any], k: int) -> list[str]:
    b = m["scalar_rm"]
    rows = [
        (
            f"judge ({m['aggregate']}, K={k})",
            m["accuracy"],
            m["accuracy_ci95"],
            m["rmse"],
            m["spearman"],
            m["n"],
        ),
        ("scalar RM (10·sigmoid(r))", b["accuracy"], b["accuracy_ci95"], b["rmse"], b["spearman"], b["n"]),
    ]
    header = ["scorer", "accuracy (|Δ| ≤ 2)", "95% CI", "RMSE", "Spearman", "n"]
    return [
        "## scalar reward-model baseline",
        "",
        md_table(header, rows),
        "",
        "The scalar RM reads text only (question, reasoning, answer; no frames). Its score on the 0–10 "
        "scale is 10·sigmoid(reward), our choice; Spearman's rank correlation with the gold scores needs "
        "no scale and compares the two fairly.",
        "",
    ]


def _tts_sections(m: Mapping[str, Any]) -> list[str]:
    lines = []
    for a, curve in m["tts_by_aggregate"].items():
        rows = [(c["k"], c["accuracy"], c["accuracy_ci95"], c["rmse"]) for c in curve]
        lines += [
            f"## test-time scaling ({a} over the first K samples)",
            "",
            md_table(["K", "accuracy", "95% CI (Wilson)", "RMSE"], rows),
            "",
        ]
    return lines


def render_report(m: Mapping[str, Any], k: int, n_bad: int) -> str:
    """report.md of a run (numbers rounded), from its metrics."""
    report = _headline(m, n_bad) + _group_sections(m)
    if "scalar_rm" in m:
        report += _baseline_section(m, k)
    if "tts_by_aggregate" in m:
        report += _tts_sections(m)
    return "\n".join(report) + "\n"


def _plot_categories(path: Path, m: Mapping[str, Any]) -> None:
    cats = m["by_category"]
    plot_rates(
        path,
        list(cats),
        [c["hits"] for c in cats.values()],
        [c["n"] for c in cats.values()],
        f"score-rm accuracy by category (n={m['n']})",
        "accuracy (|Δ| ≤ 2)",
        chance=[c["chance_accuracy"] for c in cats.values()],
        chance_label="chance (uniform 0..10 score)",
    )


def run(
    items: Sequence[Mapping[str, Any]],
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
    aggregate = _check(items, aggregate)
    bad = bad or []
    gens = evaluator.raw(items, sampling_params(k, seed))
    results = result_rows(items, gens, k, aggregate[0])
    metrics = score_metrics(results, seed or 0, bad, evaluator)
    metrics["aggregate"] = aggregate[0]
    plots = {"accuracy_by_category.png": lambda path: _plot_categories(path, metrics)}
    if scalar_rm is not None:
        sc = scalar_rm.scores(items)
        for r, v in zip(results, sc, strict=True):
            r["scalar_rm"] = v
        metrics["scalar_rm"] = scalar_baseline(results, sc, scalar_rm)
    if k > 1:
        curves = tts_curves(results, k, aggregate)
        metrics["tts"] = curves[aggregate[0]]
        metrics["tts_by_aggregate"] = curves
        baseline = metrics.get("scalar_rm")
        n, chance = len(results), metrics["chance_accuracy"]
        plots["tts.png"] = lambda path: plot_tts(curves, path, n, chance, baseline)
    write_outputs(out, results, metrics, render_report(metrics, k, len(bad)), plots)
    return metrics


def summary(metrics: Mapping[str, Any]) -> str:
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
    curves: Mapping[str, Sequence[Mapping[str, Any]]] | list[Mapping[str, Any]],
    path: Path,
    n: int,
    chance: float | None,
    baseline: ScalarBaseline | None = None,
) -> None:
    """Accuracy (with Wilson 95% CIs, the chance line and a scalar-RM baseline if any)
    and RMSE against K, one line per aggregation, in two panels sharing the K axis."""
    # lazy: matplotlib loads only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    # lazy: matplotlib loads only when a figure is drawn
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
        rmse_b = baseline["rmse"]
        if rmse_b is not None:
            ax2.axhline(rmse_b, color="tab:orange", ls=":", lw=1.6, label="scalar RM: RMSE")
            tops.append(rmse_b)
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
