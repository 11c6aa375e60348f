"""One bootstrap in the package (issue 40 item 3): the planner demo's ``bootstrap_ci`` is
:func:`groundrl.intervals.bootstrap_ci` over the per-task values (or paired differences),
not a second resampler that gives other intervals on the same data."""

from __future__ import annotations

import random

from groundrl import intervals
from groundrl.demos.planner import bootstrap_ci


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def _data(seed: int) -> tuple[list[int], list[int]]:
    rng = random.Random(seed)
    xs = [int(rng.random() < 0.3) for _ in range(60)]
    return xs, [int(rng.random() < 0.6) for _ in xs]


def test_planner_interval_of_a_mean_is_the_packages() -> None:
    xs, _ = _data(1)
    lo, hi = intervals.bootstrap_ci([float(x) for x in xs], _mean, n=500, seed=3)
    assert lo is not None and hi is not None
    assert bootstrap_ci(xs, n_boot=500, seed=3) == (round(lo, 4), round(hi, 4))


def test_planner_paired_interval_resamples_the_per_task_differences() -> None:
    xs, ys = _data(2)
    diffs = [float(y - x) for x, y in zip(xs, ys, strict=True)]
    lo, hi = intervals.bootstrap_ci(diffs, _mean, n=500, seed=5)
    assert lo is not None and hi is not None
    assert bootstrap_ci(xs, ys, n_boot=500, seed=5) == (round(lo, 4), round(hi, 4))


def test_no_tasks_is_nan_not_an_error() -> None:
    lo, hi = bootstrap_ci([])
    assert lo != lo and hi != hi
