"""``planning``: EmbodiedBrain planning P/R/F1 (quantity: one-to-one matching; order: LCS)
of predicted ``<actions>`` against gold answers, macro-averaged over items."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from groundrl.benchmarks.runner import write_outputs
from groundrl.benchmarks.stats import md_table, with_ci
from groundrl.rewards.planning import planning_scores


def run(items: list[dict[str, Any]], out: Path, bad: list | None = None) -> dict[str, Any]:
    """Items carry ``gold`` (a completion with ``<actions>``) and ``prediction``."""
    results = []
    for it in items:
        s = planning_scores(it.get("prediction") or "", it["gold"])
        if s is None:
            results.append({"id": it["id"], "error": "gold has no (non-locomotion) actions"})
            continue
        results.append(
            {
                "id": it["id"],
                **{f"{k}_{m}": getattr(v, m) for k, v in s.items() for m in ("precision", "recall", "f1")},
            }
        )
    ok = [r for r in results if "error" not in r]
    metrics: dict[str, Any] = {
        "n": len(ok),
        "n_undefined": len(results) - len(ok),
        "n_bad_items": len(bad or []),
        "bad_items": bad or [],
    }
    for key in ("quantity", "order"):
        for m in ("precision", "recall", "f1"):
            col = f"{key}_{m}"
            metrics[col] = with_ci(ok, lambda rs, col=col: sum(r[col] for r in rs) / len(rs) if rs else None)
    rows = [
        (
            k,
            metrics[f"{k}_precision"]["value"],
            metrics[f"{k}_recall"]["value"],
            metrics[f"{k}_f1"]["value"],
            metrics[f"{k}_f1"]["ci95"],
        )
        for k in ("quantity", "order")
    ]
    report = (
        f"# planning: {len(ok)} items\n\n" + md_table(["score", "P", "R", "F1", "F1 95% CI"], rows) + "\n"
    )
    write_outputs(out, results, metrics, report)
    return metrics
