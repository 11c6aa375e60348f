"""Bootstrap confidence intervals and small table helpers."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any


def bootstrap_ci(
    items: Sequence[Any],
    metric: Callable[[Sequence[Any]], float | None],
    n: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
) -> tuple[float | None, float | None]:
    """Percentile bootstrap (resampling items with replacement, seeded) of ``metric``."""
    if not items:
        return None, None
    rng = random.Random(seed)
    vals = []
    for _ in range(n):
        sample = [items[rng.randrange(len(items))] for _ in items]
        v = metric(sample)
        if v is not None:
            vals.append(v)
    if not vals:
        return None, None
    vals.sort()
    return vals[int(alpha / 2 * len(vals))], vals[min(len(vals) - 1, int((1 - alpha / 2) * len(vals)))]


def with_ci(
    items: Sequence[Any], metric: Callable[[Sequence[Any]], float | None], seed: int = 0
) -> dict[str, Any]:
    lo, hi = bootstrap_ci(items, metric, seed=seed)
    return {"value": metric(items), "ci95": [lo, hi]}


def md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(x: Any) -> str:
        return f"{x:.3f}" if isinstance(x, float) else str(x)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)
