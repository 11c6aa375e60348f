"""Terminal summary tables (rich) for scored results."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table


def part_means(
    names: Sequence[str], results: Sequence[Mapping[str, Any]]
) -> dict[str, tuple[float | None, int]]:
    """``{part: (mean over samples where it applies, count)}``, plus ``reward``."""
    out: dict[str, tuple[float | None, int]] = {}
    ok = [r for r in results if "error" not in r]
    for name in ["reward", *names]:
        vals = [r["reward"] if name == "reward" else r["parts"].get(name) for r in ok]
        vals = [v for v in vals if isinstance(v, (int, float)) and math.isfinite(v)]
        out[name] = (sum(vals) / len(vals) if vals else None, len(vals))
    return out


class RunningMeans:
    """:func:`part_means` kept as results stream by (``add``), in constant memory, so a
    scorer need not hold every result for its summary (issue 26)."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = ["reward", *names]
        self.sums = dict.fromkeys(self.names, 0.0)
        self.counts = dict.fromkeys(self.names, 0)
        self.n = self.n_bad = 0

    def add(self, row: Mapping[str, Any]) -> None:
        self.n += 1
        if "error" in row:
            self.n_bad += 1
            return
        for name in self.names:
            v = row.get("reward") if name == "reward" else (row.get("parts") or {}).get(name)
            if isinstance(v, (int, float)) and math.isfinite(v):
                self.sums[name] += v
                self.counts[name] += 1

    def means(self) -> dict[str, tuple[float | None, int]]:
        return {k: (self.sums[k] / c if (c := self.counts[k]) else None, c) for k in self.names}


def print_summary(
    title: str, names: Sequence[str], results: Sequence[Mapping[str, Any]] | RunningMeans, err: bool = True
) -> None:
    console = Console(stderr=err)
    if isinstance(results, RunningMeans):
        n_all, n_bad, means = results.n, results.n_bad, results.means()
    else:
        n_all, n_bad, means = (
            len(results),
            sum(1 for r in results if "error" in r),
            part_means(names, results),
        )
    table = Table(title=f"{title}: {n_all - n_bad} scored, {n_bad} errors")
    table.add_column("part")
    table.add_column("mean", justify="right")
    table.add_column("n", justify="right")
    for name, (mean, n) in means.items():
        table.add_row(name, "—" if mean is None else f"{mean:.4f}", str(n))
    console.print(table)
