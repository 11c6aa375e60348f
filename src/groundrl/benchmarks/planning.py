"""``planning``: EmbodiedBrain planning P/R/F1 (quantity: one-to-one matching; order: LCS)
of predicted ``<actions>`` against gold answers, macro-averaged over items.

Item ids: a JSONL set uses each line's ``id`` (``line<N>`` when absent); the EmbodiedBrain
``.json`` set has none, so its items are ``eb-<index>`` (0-based position in the file),
and a ``--predictions`` file must use those ids."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from groundrl.benchmarks.records import ValueCI
from groundrl.benchmarks.report import fmt, md_table
from groundrl.benchmarks.runner import write_outputs
from groundrl.benchmarks.stats import (
    column_means,
)
from groundrl.parse.plans import extract_actions
from groundrl.parse.structured import parse_literal_list
from groundrl.rewards.planning import canonical_actions, planning_scores

COLS = [f"{k}_{m}" for k in ("quantity", "order") for m in ("precision", "recall", "f1")]


def _items_of(x: Any) -> Any:
    parsed = extract_actions(x) if isinstance(x, str) else None
    if parsed is not None and not parsed.ok:
        parsed = parse_literal_list(x)
    return (parsed.value if parsed.ok else None) if parsed is not None else x


def _scores(pred: Any, gold: Any, matcher: Any = None) -> dict[str, float] | None:
    s = planning_scores(pred, gold, matcher)
    if s is None:
        return None
    return {f"{k}_{m}": getattr(v, m) for k, v in s.items() for m in ("precision", "recall", "f1")}


def _aggregate(rows: Sequence[Mapping[str, object]], prefix: str = "") -> dict[str, ValueCI]:
    return column_means(rows, COLS, prefix)


def _prepare_matcher(items: Sequence[Mapping[str, Any]], llm_matcher: Any) -> list[Any]:
    """Send every distinct (predicted action, gold list) to the LLM matcher at once;
    returns each item's canonical gold list."""
    pairs, golds = [], []
    for it in items:
        g = canonical_actions(_items_of(it["gold"]))
        p = canonical_actions(_items_of(it.get("prediction") or ""))
        pairs.append((p, g))
        golds.append(g)
    llm_matcher.prepare(pairs)
    return golds


def result_rows(items: Sequence[Mapping[str, Any]], llm_matcher: Any = None) -> list[dict[str, object]]:
    """One results.jsonl row per item: ``id`` and exact P/R/F1 (and ``llm_*`` with the
    matcher), or ``id`` and an ``error`` when the gold has no action to score against.
    The score columns are :data:`COLS` (prefixed), so a row is keyed by name, not a
    fixed record."""
    golds = _prepare_matcher(items, llm_matcher) if llm_matcher is not None else []
    results: list[dict[str, object]] = []
    for k, it in enumerate(items):
        s = _scores(it.get("prediction") or "", it["gold"])
        if s is None:
            results.append({"id": it["id"], "error": "gold has no (non-locomotion) actions"})
            continue
        row: dict[str, object] = {"id": it["id"], **s}
        if llm_matcher is not None:
            soft = _scores(it.get("prediction") or "", it["gold"], llm_matcher.matcher(golds[k]))
            row.update({f"llm_{key}": v for key, v in (soft or {}).items()})
        results.append(row)
    return results


def _score_rows(block: Mapping[str, Any], label: str) -> list[tuple[Any, ...]]:
    return [
        (f"{k} ({label})", block[f"{k}_precision"]["value"], block[f"{k}_recall"]["value"],
         block[f"{k}_f1"]["value"], block[f"{k}_f1"]["ci95"])
        for k in ("quantity", "order")
    ]  # fmt: skip


def render_report(metrics: Mapping[str, Any]) -> str:
    """report.md of a run (numbers rounded), from its metrics."""
    rows = _score_rows(metrics, "exact")
    extra = ""
    if "llm" in metrics:
        rows += _score_rows(metrics["llm"], "LLM matcher")
        j = metrics["judge"]
        extra = (
            f"\n\nLLM matcher: {j['calls']} judge requests (one per distinct predicted action and gold "
            f"list; {metrics['matcher_reused']} repeats answered from this run), {j['failures']} failed and "
            f"{metrics['matcher_unreadable']} unreadable (those actions matched exactly only)."
        )
    return (
        f"# planning: {metrics['n']} items\n\n"
        + md_table(["score", "P", "R", "F1", "F1 95% CI"], rows)
        + extra
        + "\n\n"
        + "\n".join(DEFINITIONS)
        + f"\n\nItems whose gold has no (non-locomotion) action (left out): {metrics['n_undefined']}; "
        f"bad items skipped: {metrics['n_bad_items']}.\n"
    )


def run(
    items: Sequence[Mapping[str, Any]], out: Path, bad: list | None = None, llm_matcher: Any = None
) -> dict[str, Any]:
    """Items carry ``gold`` (a completion with ``<actions>``) and ``prediction``. With
    ``llm_matcher`` (:class:`~groundrl.benchmarks.action_matcher.LLMActionMatcher`) the
    judge-matched scores are reported beside the exact ones (``llm_*`` columns)."""
    results = result_rows(items, llm_matcher)
    ok = [r for r in results if "error" not in r]
    metrics: dict[str, Any] = {
        "n": len(ok),
        "n_undefined": len(results) - len(ok),
        "n_bad_items": len(bad or []),
        "bad_items": bad or [],
        "matchers": ["exact"] + (["llm"] if llm_matcher is not None else []),
        **_aggregate(ok),
    }
    if llm_matcher is not None:
        metrics["llm"] = _aggregate(ok, "llm_")
        metrics["judge"] = {"calls": llm_matcher.calls, "failures": llm_matcher.failures}
        metrics["matcher_unreadable"] = llm_matcher.unreadable
        metrics["matcher_reused"] = llm_matcher.reused
    write_outputs(out, results, metrics, render_report(metrics))
    return metrics


DEFINITIONS = [
    "- **quantity P/R/F1**: actions matched one-to-one between prediction and gold (Hungarian "
    "matching, so each gold action counts once); P = matched / predicted, R = matched / gold.",
    "- **order P/R/F1**: the same with the longest common subsequence, so actions out of order do not count.",
    "- Each is computed per item and averaged over items (macro); an empty prediction scores 0.",
    "- **95% CI**: percentile bootstrap over items (1000 resamples).",
    "- **exact** matcher: canonical verb (synonyms mapped) and objects equal. **LLM matcher** (when a "
    "judge is given): a judge decides which gold actions each predicted action matches in intent, as in "
    "EmbodiedBrain's released evaluation; exact matches always count.",
]


def summary(metrics: Mapping[str, Any]) -> str:
    q, o = metrics["quantity_f1"], metrics["order_f1"]
    line = (
        f"n {metrics['n']}: quantity F1 {fmt(q['value'])} {fmt(q['ci95'])}, "
        f"order F1 {fmt(o['value'])} {fmt(o['ci95'])}; bad items skipped {metrics['n_bad_items']}"
    )
    if "llm" in metrics:
        lq, lo = metrics["llm"]["quantity_f1"], metrics["llm"]["order_f1"]
        line += (
            f"\n  LLM matcher: quantity F1 {fmt(lq['value'])} {fmt(lq['ci95'])}, order F1 "
            f"{fmt(lo['value'])} {fmt(lo['ci95'])} ({metrics['judge']['calls']} judge requests)"
        )
    return line
