"""Confidence intervals: percentile bootstrap and Wilson score.

A core-layer module (layer 0) so that every layer can report an interval: the
benchmarks (``benchmarks/stats.py`` re-exports both), the simulator's evaluation and
comparison, and the training demo. Pure standard library.
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
    """Percentile bootstrap (resampling items with replacement, seeded) of ``metric``.

    ``metric`` may answer ``None`` for a resample it cannot score; those are left out.

    >>> bootstrap_ci([2.0, 2.0, 2.0], lambda xs: sum(xs) / len(xs))
    (2.0, 2.0)
    >>> bootstrap_ci([], len)
    (None, None)
    """
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
