"""Terminal summary tables (rich) for scored results."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table


def part_means(
    names: Sequence[str], results: Sequence[dict[str, Any]]
) -> dict[str, tuple[float | None, int]]:
    """``{part: (mean over samples where it applies, count)}``, plus ``reward``."""
    out: dict[str, tuple[float | None, int]] = {}
    ok = [r for r in results if "error" not in r]
    for name in ["reward", *names]:
        vals = [r["reward"] if name == "reward" else r["parts"].get(name) for r in ok]
        vals = [v for v in vals if isinstance(v, (int, float)) and math.isfinite(v)]
        out[name] = (sum(vals) / len(vals) if vals else None, len(vals))
    return out


def print_summary(
    title: str, names: Sequence[str], results: Sequence[dict[str, Any]], err: bool = True
) -> None:
    console = Console(stderr=err)
    n_bad = sum(1 for r in results if "error" in r)
    table = Table(title=f"{title}: {len(results) - n_bad} scored, {n_bad} errors")
    table.add_column("part")
    table.add_column("mean", justify="right")
    table.add_column("n", justify="right")
    for name, (mean, n) in part_means(names, results).items():
        table.add_row(name, "—" if mean is None else f"{mean:.4f}", str(n))
    console.print(table)
