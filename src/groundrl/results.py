"""The one verdict → result step that every surface shares.

``groundrl score``, the server's ``/score`` and ``/get_reward``, and the TRL, verl and
OpenRLHF adapters all turn a :class:`~groundrl.types.Verdict` into output here, so a
part that does not apply is reported the same way everywhere:

* JSON results (score, ``/score``): ``{"reward", "parts", "reasons"}`` with the part's
  value ``None`` and its reason (``"not applicable"`` unless the part said more);
* TRL gets ``None``, which it treats as "no reward from this function";
* trainer logs that need one finite number per sample and the same keys on every call
  (verl's ``reward_extra_info``, OpenRLHF's ``extra_logs``) get
  ``TRAINER_NOT_APPLICABLE`` (0.0) in its place **plus an applicability key**
  ``<part>/applies`` (1.0 where the part has a value, 0.0 where it does not) when the
  caller asks for it (:func:`trainer_values`). The mean over the samples where the part
  applies is then ``mean(<part>) / mean(<part>/applies)`` — both are plain batch means,
  so any trainer's logger can report them (0.0, not NaN: verl and OpenRLHF average the
  columns with ``np.mean`` / ``Tensor.mean``, where one NaN would erase the metric).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from groundrl.types import Verdict, VerdictDict

TRAINER_NOT_APPLICABLE = 0.0
APPLIES = "applies"


def verdict_row(verdict: Verdict) -> VerdictDict:
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


def trainer_values(
    verdict: Verdict | None, names: Iterable[str], prefix: str = "", applicability: bool = False
) -> dict[str, float]:
    """One finite float per part for trainer logs: ``{prefix}{part}`` (the value, or
    ``TRAINER_NOT_APPLICABLE``) and, with ``applicability``, ``{prefix}{part}/applies``.
    ``verdict=None`` (the sample belongs to another recipe) fills every key as not
    applicable, so rows of different recipes share one key set.

    >>> from groundrl.types import Score, Verdict
    >>> v = Verdict(1.0, {"a": Score("a", 1.0), "b": Score("b", None, "no masks")})
    >>> trainer_values(v, ["a", "b"], applicability=True)
    {'a': 1.0, 'a/applies': 1.0, 'b': 0.0, 'b/applies': 0.0}
    """
    out: dict[str, float] = {}
    for name in names:
        s = verdict.parts.get(name) if verdict is not None else None
        value = s.value if s is not None else None
        has = value is not None
        out[f"{prefix}{name}"] = float(value) if value is not None else TRAINER_NOT_APPLICABLE
        if applicability:
            out[f"{prefix}{name}/{APPLIES}"] = 1.0 if has else 0.0
    return out


def part_columns(
    verdicts: Sequence[Verdict], names: Sequence[str], not_applicable: float | None = None
) -> dict[str, list[float | None]]:
    """``{part: [value per sample]}`` (trainer logs)."""
    rows = [part_values(v, names, not_applicable) for v in verdicts]
    return {name: [r[name] for r in rows] for name in names}


def applicable_mean(values: Sequence[float], applies: Sequence[float]) -> float | None:
    """Mean of a logged part over the samples where it applies (``None`` if nowhere).

    >>> applicable_mean([1.0, 0.0, 0.5], [1.0, 0.0, 1.0])
    0.75
    """
    n = sum(applies)
    return sum(v for v, a in zip(values, applies, strict=True) if a) / n if n else None
