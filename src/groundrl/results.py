"""The one verdict → result step that every surface shares.

``groundrl score``, the server's ``/score`` and ``/get_reward``, and the TRL, verl and
OpenRLHF adapters all turn a :class:`~groundrl.types.Verdict` into output here, so a
part that does not apply is reported the same way everywhere:

* JSON results (score, ``/score``): ``{"reward", "parts", "reasons"}`` with the part's
  value ``None`` and its reason (``"not applicable"`` unless the part said more);
* trainer logs that need one number per sample (verl metrics, OpenRLHF ``extra_logs``)
  use ``not_applicable`` in its place (``TRAINER_NOT_APPLICABLE``, 0.0 today: both
  trainers stack the values into float arrays; the total already skips the part);
* TRL gets ``None``, which it treats as "no reward from this function".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from groundrl.types import Verdict

TRAINER_NOT_APPLICABLE = 0.0


def verdict_row(verdict: Verdict) -> dict[str, Any]:
    """``{"reward", "parts", "reasons"}`` (+ ``info`` when a part left some)."""
    return verdict.to_dict()


def part_values(
    verdict: Verdict, names: Iterable[str], not_applicable: float | None = None
) -> dict[str, float | None]:
    """One value per part name, ``not_applicable`` where the part has no value."""
    out: dict[str, float | None] = {}
    for name in names:
        s = verdict.parts.get(name)
        out[name] = not_applicable if s is None or s.value is None else s.value
    return out


def part_columns(
    verdicts: Sequence[Verdict], names: Sequence[str], not_applicable: float | None = None
) -> dict[str, list[float | None]]:
    """``{part: [value per sample]}`` (trainer logs)."""
    rows = [part_values(v, names, not_applicable) for v in verdicts]
    return {name: [r[name] for r in rows] for name in names}
