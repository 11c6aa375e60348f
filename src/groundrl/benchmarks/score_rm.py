"""``score-rm``: a generative reward model scoring embodied-QA trajectories 0–10 against
gold scores (EQARewardBench). Metrics: accuracy (|s − s*| ≤ 2) and RMSE overall, per
``source`` and per ``category``, each with a bootstrap 95% CI; with ``k > 1`` samples,
test-time-scaling curves (vote) from the same samples. An item whose judge output has
no parseable score counts as wrong for accuracy and is left out of RMSE (``n_missing``)."""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from groundrl.benchmarks.runner import plot_bars, write_outputs
from groundrl.benchmarks.stats import md_table, with_ci
from groundrl.judges.base import SamplingParams
from groundrl.judges.papers import EQARMEvaluator
from groundrl.judges.tts import DEFAULT_KS, TTS_PARAMS, aggregate_scores, plot_tts, tts_curve

REQUIRED = ("question", "reasoning", "answer", "gt_score")


def _acc(rows: list[dict[str, Any]]) -> float:
    return sum(1 for r in rows if r["pred"] is not None and abs(r["pred"] - r["gt_score"]) <= 2) / len(rows)


def _rmse(rows: list[dict[str, Any]]) -> float | None:
    have = [r for r in rows if r["pred"] is not None]
    return math.sqrt(sum((r["pred"] - r["gt_score"]) ** 2 for r in have) / len(have)) if have else None


def run(
    items: list[dict[str, Any]], evaluator: EQARMEvaluator, out: Path, k: int = 1, bad: list | None = None
) -> dict[str, Any]:
    params = TTS_PARAMS if k > 1 else SamplingParams(max_tokens=512)
    params = SamplingParams(params.temperature, params.top_p, params.max_tokens, params.seed, n=k)
    gens = evaluator.raw(items, params)
    from groundrl.parse.scores import parse_score

    results = []
    for it, g in zip(items, gens, strict=True):
        scores = [parse_score(t, 0, 10).value for t in g.texts]
        pred = aggregate_scores(scores[:1] if k == 1 else scores, "vote")
        results.append(
            {
                "id": it["id"],
                "gt_score": float(it["gt_score"]),
                "pred": pred,
                "samples": scores,
                "raw": g.texts[:1],
                "error": g.error,
                "source": it.get("source", "all"),
                "category": it.get("category", "all"),
            }
        )
    metrics: dict[str, Any] = {
        "n": len(results),
        "accuracy": _acc(results),
        "rmse": _rmse(results),
        "accuracy_ci95": with_ci(results, _acc)["ci95"],
        "rmse_ci95": with_ci(results, _rmse)["ci95"],
        "n_missing": sum(r["pred"] is None for r in results),
        "n_bad_items": len(bad or []),
        "bad_items": bad or [],
        "judge": {"calls": evaluator.calls, "failures": evaluator.failures},
    }
    for key in ("source", "category"):
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in results:
            groups[str(r[key])].append(r)
        metrics[f"by_{key}"] = {
            g: {"n": len(rs), "accuracy": _acc(rs), "rmse": _rmse(rs)} for g, rs in sorted(groups.items())
        }
    report = [
        f"# score-rm: {metrics['n']} items",
        "",
        f"accuracy (|Δ|≤2) **{metrics['accuracy']:.3f}** (95% CI {metrics['accuracy_ci95']}), RMSE **{metrics['rmse']}** (95% CI {metrics['rmse_ci95']}), unparseable {metrics['n_missing']}, bad items skipped {len(bad or [])}",
        "",
    ]
    for key in ("source", "category"):
        rows = [
            (g, m["n"], m["accuracy"], m["rmse"] if m["rmse"] is not None else "—")
            for g, m in metrics[f"by_{key}"].items()
        ]
        report += [f"## by {key}", "", md_table([key, "n", "accuracy", "RMSE"], rows), ""]
    out.mkdir(parents=True, exist_ok=True)
    if k > 1:
        ks = [x for x in DEFAULT_KS if x <= k]
        curve = tts_curve([r["samples"] for r in results], [r["gt_score"] for r in results], ks)
        metrics["tts"] = curve
        plot_tts(curve, str(out / "tts.png"))
        report += [
            "## test-time scaling (vote)",
            "",
            md_table(["K", "accuracy", "RMSE"], [(c["k"], c["accuracy"], c["rmse"]) for c in curve]),
            "",
        ]
    cats = metrics["by_category"]
    plot_bars(
        out / "accuracy_by_category.png",
        list(cats),
        [m["accuracy"] for m in cats.values()],
        "score-rm accuracy by category",
        "accuracy (|Δ|≤2)",
    )
    write_outputs(out, results, metrics, "\n".join(report) + "\n")
    return metrics
