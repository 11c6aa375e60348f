"""Floats as a reader expects them in JSONL and reports.

A reward summed from parts prints as ``1.9100000000000001`` (binary floating point);
output files round every float to :data:`DIGITS` decimals so that the sum reads
``1.91``. The rounding is far below any difference a reward makes, and a command's
``--raw-floats`` keeps the full precision instead.
"""

from __future__ import annotations

import math
from typing import Any

DIGITS = 6  # [ours: a reward in [0, 1] or [0, 10] keeps 6 decimals; float noise starts at ~16]


def tidy(obj: Any, digits: int | None = DIGITS) -> Any:
    """``obj`` with every finite float rounded to ``digits`` decimals (dicts, lists and
    tuples walked; anything else returned as is). ``digits=None`` returns ``obj``."""
    if digits is None:
        return obj
    if isinstance(obj, float):
        return round(obj, digits) if math.isfinite(obj) else obj
    if isinstance(obj, dict):
        return {k: tidy(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [tidy(v, digits) for v in obj]
    return obj


__all__ = ["DIGITS", "tidy"]
