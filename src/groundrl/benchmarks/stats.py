"""Confidence intervals (bootstrap, Wilson) and small report helpers.

Reports show numbers rounded to 3 decimals; ``metrics.json`` keeps the raw values.
"""

from __future__ import annotations

import math
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


def wilson_ci(k: int, n: int, z: float = 1.959964) -> tuple[float | None, float | None]:
    """Wilson score 95% interval of a rate ``k / n`` (``(None, None)`` for ``n = 0``).

    >>> [round(x, 3) for x in wilson_ci(0, 4)]
    [0.0, 0.49]
    >>> [round(x, 3) for x in wilson_ci(3, 4)]
    [0.301, 0.954]
    """
    if n <= 0:
        return None, None
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


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
