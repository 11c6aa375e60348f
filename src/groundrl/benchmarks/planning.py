"""``planning``: EmbodiedBrain planning P/R/F1 (quantity: one-to-one matching; order: LCS)
of predicted ``<actions>`` against gold answers, macro-averaged over items.

Item ids: a JSONL set uses each line's ``id`` (``line<N>`` when absent); the EmbodiedBrain
``.json`` set has none, so its items are ``eb-<index>`` (0-based position in the file),
and a ``--predictions`` file must use those ids."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from groundrl.benchmarks.runner import write_outputs
from groundrl.benchmarks.stats import fmt, md_table, with_ci
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
        f"# planning: {len(ok)} items\n\n"
        + md_table(["score", "P", "R", "F1", "F1 95% CI"], rows)
        + "\n\n"
        + "\n".join(DEFINITIONS)
        + f"\n\nItems whose gold has no (non-locomotion) action (left out): {metrics['n_undefined']}; "
        f"bad items skipped: {metrics['n_bad_items']}.\n"
    )
    write_outputs(out, results, metrics, report)
    return metrics


DEFINITIONS = [
    "- **quantity P/R/F1**: actions matched one-to-one between prediction and gold (Hungarian "
    "matching, so each gold action counts once); P = matched / predicted, R = matched / gold.",
    "- **order P/R/F1**: the same with the longest common subsequence, so actions out of order do not count.",
    "- Each is computed per item and averaged over items (macro); an empty prediction scores 0.",
    "- **95% CI**: percentile bootstrap over items (1000 resamples).",
]


def summary(metrics: dict[str, Any]) -> str:
    q, o = metrics["quantity_f1"], metrics["order_f1"]
    return (
        f"n {metrics['n']}: quantity F1 {fmt(q['value'])} {fmt(q['ci95'])}, "
        f"order F1 {fmt(o['value'])} {fmt(o['ci95'])}; bad items skipped {metrics['n_bad_items']}"
    )
