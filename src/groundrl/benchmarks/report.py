"""Report cells and Markdown tables for the benchmarks' report.md (numbers rounded to 3
decimals; metrics.json keeps the raw values)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


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
