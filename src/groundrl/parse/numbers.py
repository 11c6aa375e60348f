"""Numbers in free text.

Accepted forms: optional sign, digits with optional decimal part or a leading-dot
decimal (``7``, ``-3``, ``7.5``, ``.5``), optional exponent (``1e2``), and thousands
separators in the ``1,234`` style. Fractions such as ``7/10`` yield their numerator
(``7``): a score "7/10" means 7. ``inf``/``nan`` are never numbers here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from groundrl.parse.result import Parsed, fail

# A digit is required, so the scan never stops on empty matches (linear on "----eeee").
_NUMBER_RE = re.compile(
    r"(?<![\w.])[-+]?(?:(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"
)


def _candidates(text: str) -> Iterator[str]:
    for m in _NUMBER_RE.finditer(text):
        yield m.group(0)


def _to_float(s: str) -> float | None:
    try:
        v = float(s.replace(",", ""))
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def parse_number(text: Any, which: str = "first") -> Parsed:
    """The first (or last) number in ``text`` as a float. Ints and floats pass through;
    ``bool`` does not count as a number."""
    if isinstance(text, bool):
        return fail("a boolean is not a number")
    if isinstance(text, (int, float)):
        try:
            v = float(text)
        except OverflowError:  # an int beyond the float range (10**400)
            return fail("number too large for a float")
        return Parsed(v) if math.isfinite(v) else fail("non-finite number")
    if not isinstance(text, str):
        return fail(f"value is {type(text).__name__}, not text")
    found = None
    for s in _candidates(text):
        got = _to_float(s)
        if got is None:
            continue
        found = got
        if which == "first":
            break
    if found is None:
        return fail("no number found")
    return Parsed(found)


def parse_exact_number(text: Any) -> Parsed:
    """``text`` must be a number and nothing else (surrounding whitespace allowed)."""
    if isinstance(text, bool):
        return fail("a boolean is not a number")
    if isinstance(text, (int, float)):
        return parse_number(text)
    if not isinstance(text, str):
        return fail(f"value is {type(text).__name__}, not text")
    s = text.strip()
    m = _NUMBER_RE.fullmatch(s)
    if m is None:
        return fail(f"not a number: {s[:40]!r}")
    v = _to_float(s)
    return Parsed(v) if v is not None else fail(f"not a number: {s[:40]!r}")
