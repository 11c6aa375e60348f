"""Core value types shared by every module: a reward part's :class:`Score` and a
sample's :class:`Verdict` (its total and named parts)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict


class ScoreDict(TypedDict):
    """:meth:`Score.to_dict`."""

    name: str
    value: float | None
    reason: str


class VerdictDict(TypedDict):
    """:meth:`Verdict.to_dict`: the total as ``reward``, each part's value and reason,
    and ``info`` when a part left some."""

    reward: float
    parts: dict[str, float | None]
    reasons: dict[str, str]
    info: NotRequired[dict[str, Any]]


_set = object.__setattr__
_isfinite = math.isfinite


@dataclass(frozen=True, slots=True, init=False)
class Score:
    """One reward part for one completion.

    ``value`` is a finite float, or ``None`` when the part does not apply to this
    sample (TRL's convention: a ``None`` reward is ignored for that completion).
    ``reason`` says why the value is what it is when that is not obvious (a parse
    failure, a missing field, a judge that could not be reached); empty otherwise.

    ``Score(name, value, reason="")``; a value that is not a finite float becomes one
    (``float(value)``), NaN / ±inf become 0 with the replacement noted in the reason.

    >>> Score("format", 1)
    Score(name='format', value=1.0, reason='')
    >>> Score("accuracy", float("nan")).value
    0.0
    """

    name: str
    value: float | None
    reason: str = ""

    # Written out (not generated with a __post_init__): every reward call builds
    # Scores, and one pass of plain assignments costs half the generated pair.
    def __init__(self, name: str, value: float | None, reason: str = "") -> None:
        if value is not None:
            v = float(value)
            if not _isfinite(v):
                # A reward must never poison a training batch with NaN/inf.
                reason = (reason + "; " if reason else "") + f"non-finite value {v!r} replaced by 0"
                v = 0.0
            value = v
        _set(self, "name", name)
        _set(self, "value", value)
        _set(self, "reason", reason)

    @property
    def applies(self) -> bool:
        return self.value is not None

    def to_dict(self) -> ScoreDict:
        return {"name": self.name, "value": self.value, "reason": self.reason}


_new = object.__new__
_set_name = Score.__dict__["name"].__set__  # the slots' own setters: no frozen check
_set_value = Score.__dict__["value"].__set__
_set_reason = Score.__dict__["reason"].__set__


def finite_score(name: str, value: float, reason: str = "") -> Score:
    """``Score(name, value, reason)`` for a ``value`` the caller knows is a finite
    ``float``, built without the conversion and check (0.18 µs instead of 0.31: the
    hot path of the rule rewards, issue 18). Anything else must use ``Score``.

    >>> finite_score("format", 0.5) == Score("format", 0.5)
    True
    """
    s = _new(Score)
    _set_name(s, name)
    _set_value(s, value)
    _set_reason(s, reason)
    return s


NO_DEDUCTION = "no deduction reported by this part"
NOT_APPLICABLE = "not applicable"


@dataclass(slots=True)
class Verdict:
    """The result of scoring one sample: ``total`` and the named ``parts`` behind it."""

    total: float
    parts: dict[str, Score] = field(default_factory=dict)
    # Free-form extras a part wants carried to reports (e.g. tools chosen by a verifier).
    info: dict[str, Any] = field(default_factory=dict)

    # hand-written: the generated __init__ with two default factories costs ~2× on the
    # rubric's per-sample path (bench/rewards.py, recipe rubric overhead)
    def __init__(
        self, total: float, parts: dict[str, Score] | None = None, info: dict[str, Any] | None = None
    ) -> None:
        self.total = total
        self.parts = {} if parts is None else parts
        self.info = {} if info is None else info

    def values(self) -> dict[str, float | None]:
        return {k: s.value for k, s in self.parts.items()}

    def reasons(self) -> dict[str, str]:
        """One reason per part, so that no value stands unexplained: the part's own, or
        — a part states a reason whenever it deducts — :data:`NO_DEDUCTION`
        (:data:`NOT_APPLICABLE` for a part without a value)."""
        return {
            k: s.reason or (NO_DEDUCTION if s.value is not None else NOT_APPLICABLE)
            for k, s in self.parts.items()
        }

    def to_dict(self) -> VerdictDict:
        out: VerdictDict = {"reward": self.total, "parts": self.values(), "reasons": self.reasons()}
        if self.info:
            out["info"] = self.info
        return out
