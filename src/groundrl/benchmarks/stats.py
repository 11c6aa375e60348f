"""Benchmark metrics on result rows, and small report helpers.

The confidence intervals live in :mod:`groundrl.intervals` (layer 0, used by the
simulator too) and are re-exported here. Reports show numbers rounded to 3 decimals;
``metrics.json`` keeps the raw values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from groundrl.intervals import bootstrap_ci as bootstrap_ci  # re-exported
from groundrl.intervals import wilson_ci as wilson_ci


def with_ci(
    items: Sequence[Any], metric: Callable[[Sequence[Any]], float | None], seed: int = 0
) -> dict[str, Any]:
    lo, hi = bootstrap_ci(items, metric, seed=seed)
    return {"value": metric(items), "ci95": [lo, hi]}


def fmt(x: Any) -> str:
    """A report cell: floats to 3 decimals, ``None`` as an em dash, a CI pair as
    ``[lo, hi]`` with both ends rounded.

    >>> fmt(3.366501646120693), fmt(None), fmt([1.9364916731037085, 2.5]), fmt(7)
    ('3.367', '—', '[1.936, 2.500]', '7')
    """
    if x is None:
        return "—"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, float):
        return "—" if math.isnan(x) else f"{x:.3f}"
    if (
        isinstance(x, (list, tuple))
        and len(x) == 2
        and all(v is None or isinstance(v, (int, float)) for v in x)
    ):
        return "—" if x[0] is None or x[1] is None else f"[{float(x[0]):.3f}, {float(x[1]):.3f}]"
    return str(x)


def md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(x: Any) -> str:
        return fmt(x).replace("|", "\\|")  # a literal | (as in |Δ|) would split the cell

    lines = ["| " + " | ".join(h.replace("|", "\\|") for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


# -- metrics: pure functions on result rows (dicts), shared by the benchmark drivers -----


def split_by(rows: Sequence[dict[str, Any]], field: str) -> dict[str, list[dict[str, Any]]]:
    """Rows grouped by ``str(row[field])``, groups in sorted order; rows without the
    field (or with ``None``) are left out.

    >>> split_by([{"c": "b", "v": 1}, {"c": "a", "v": 2}, {"c": "b", "v": 3}, {"v": 4}], "c")
    {'a': [{'c': 'a', 'v': 2}], 'b': [{'c': 'b', 'v': 1}, {'c': 'b', 'v': 3}]}
    """
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get(field) is not None:
            groups.setdefault(str(r[field]), []).append(r)
    return dict(sorted(groups.items()))


def share(rows: Sequence[dict[str, Any]], key: str = "correct") -> float:
    """The share of rows whose ``key`` is true (rows must not be empty)."""
    return sum(bool(r[key]) for r in rows) / len(rows)


def macro_share(rows: Sequence[dict[str, Any]], key: str = "correct", by: str = "category") -> float:
    """The mean over ``by`` groups of each group's :func:`share` (each group weighs the
    same); rows without ``by`` form one group ``"all"``."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(str(r.get(by, "all")), []).append(r)
    return sum(share(g, key) for g in groups.values()) / len(groups)


def group_outcomes(rows: Sequence[dict[str, Any]], key: str = "correct") -> dict[str, list[bool]]:
    """``{group: [row[key], …]}`` over the rows that carry a ``group``."""
    groups: dict[str, list[bool]] = {}
    for r in rows:
        if r.get("group") is not None:
            groups.setdefault(str(r["group"]), []).append(r[key])
    return groups


def all_right_share(groups: dict[str, list[bool]]) -> float | None:
    """Acc+: the share of groups whose every outcome is true (``None`` without groups)."""
    return sum(all(v) for v in groups.values()) / len(groups) if groups else None


def all_right_chance(groups: dict[str, list[bool]]) -> float:
    """Acc+ of a coin-flip judge: the mean over groups of 0.5^(pairs in the group)."""
    return sum(0.5 ** len(v) for v in groups.values()) / len(groups)


def rate_cell(hits: int, n: int) -> dict[str, Any]:
    """``{"n", "hits", "accuracy", "accuracy_ci95"}`` of ``hits`` out of ``n`` (Wilson CI)."""
    return {"n": n, "hits": hits, "accuracy": hits / n, "accuracy_ci95": list(wilson_ci(hits, n))}


def within(pred: float | None, gold: float, tol: float = 2) -> bool:
    """A predicted score counts as right when it is within ``tol`` of gold; no prediction
    is wrong."""
    return pred is not None and abs(pred - gold) <= tol


def score_accuracy(rows: Sequence[dict[str, Any]]) -> float:
    """Share of rows whose ``pred`` is :func:`within` 2 of ``gt_score``."""
    return sum(1 for r in rows if within(r["pred"], r["gt_score"])) / len(rows)


def rmse(rows: Sequence[dict[str, Any]]) -> float | None:
    """Root mean squared error of ``pred`` against ``gt_score`` over the rows that have
    a ``pred`` (``None`` when none has)."""
    have = [r for r in rows if r["pred"] is not None]
    return math.sqrt(sum((r["pred"] - r["gt_score"]) ** 2 for r in have) / len(have)) if have else None


def chance_accuracy(gold: float) -> float:
    """P(|s − gold| ≤ 2) for s uniform on the integers 0..10.

    >>> round(chance_accuracy(7), 4), round(chance_accuracy(9), 4), round(chance_accuracy(0), 4)
    (0.4545, 0.3636, 0.2727)
    """
    return sum(1 for s in range(11) if abs(s - gold) <= 2 + 1e-9) / 11


def mean_chance_accuracy(rows: Sequence[dict[str, Any]]) -> float:
    """:func:`chance_accuracy` averaged over the rows' ``gt_score`` (rows must not be empty)."""
    return sum(chance_accuracy(r["gt_score"]) for r in rows) / len(rows)


def error_kinds(bad: Sequence[dict[str, Any]]) -> list[tuple[str, int]]:
    """Bad-item errors counted by kind (the message up to its first quoted value or
    parenthesis), sorted by kind."""
    counts: dict[str, int] = {}
    for b in bad:
        kind = str(b.get("error", "")).split(" '")[0].split(" (")[0]
        counts[kind] = counts.get(kind, 0) + 1
    return sorted(counts.items())
