"""EQA-RM rejective fine-tuning data (Eq. 1).

For an instance with ground-truth score ``s_gt`` and N auxiliary evaluations
``(c_i, s_i)``, evaluation i is *correct* when ``|s_gt − s_i| < τ`` (strict; τ = 2 by
default, so on the 0–10 scale a score off by 2 is wrong; differences within 1e-9 of
τ count as equal to τ, so float rounding cannot flip the boundary). The correct evaluations are
kept for supervised fine-tuning — unless all N are correct: such an instance is too easy
to teach anything and contributes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from groundrl.parse.numbers import parse_exact_number
from groundrl.parse.tags import find_tag

# |7.1 − 9.1| is 1.9999999999999991 in floats: a difference that equals τ up to rounding
# is not below τ.
_EPS = 1e-9


def read_score(value: Any) -> float | None:
    """A score given as a number, a numeric string (``"7"``, ``" 7.5 "``) or a text with a
    ``<score>`` tag (the last tag's content, which must itself be a plain number); ``None``
    when missing or unparseable. Booleans, NaN and infinities are not scores."""
    if isinstance(value, str) and "<score" in value.lower():
        value = find_tag(value, "score", which="last")
    parsed = parse_exact_number(value)
    return parsed.value if parsed.ok else None


def _eval_score(ev: Any) -> float | None:
    # The `score` field decides when present; without it, a <score> tag in the critique
    # (EQA-RM evaluations are "<critique>…</critique><score>s</score>" texts) is used.
    if not isinstance(ev, dict):
        return read_score(ev)
    if ev.get("score") is not None:
        return read_score(ev["score"])
    crit = ev.get("critique")
    return read_score(crit) if isinstance(crit, str) and "<score" in crit.lower() else None


class RejectiveResult(TypedDict):
    """:func:`rejective_filter`'s row (``error`` with ``reason: "error"``)."""

    id: object
    kept: list[int]
    reason: str
    error: NotRequired[str]


def rejective_filter(record: Mapping[str, object], tau: float = 2.0) -> RejectiveResult:
    """``{id, gt_score, evaluations: [{critique, score}, …]}`` → ``{id, kept, reason}``.

    ``kept`` lists the indices (ascending) of the evaluations to train on. ``reason``:

    * ``"kept"`` — at least one evaluation is correct and at least one is not;
    * ``"too_easy"`` — all N (N ≥ 1) are correct: nothing is kept;
    * ``"none_correct"`` — no evaluation is correct;
    * ``"error"`` — the record cannot be filtered, and an ``error`` field says why: it is
      not a mapping, has no ``evaluations`` list (or an empty one), or its ``gt_score``
      is missing or not a number. (Reporting these as ``"none_correct"`` would blame
      evaluations that were never there.)

    An evaluation's score is its ``score`` field (a number, a numeric string or a text
    with a ``<score>`` tag); when that field is absent or null, the last ``<score>`` tag
    of its ``critique``; an evaluation given as a bare string or number is read the same
    way. A missing or unparseable score makes the evaluation incorrect. Total on malformed
    records; only ``tau`` is validated (``ValueError`` unless a finite number > 0).

    >>> rejective_filter({"id": "x", "gt_score": 7, "evaluations": [{"score": 6}, {"score": 1}]})
    {'id': 'x', 'kept': [0], 'reason': 'kept'}
    >>> rejective_filter({"id": "y", "gt_score": 7})["error"]
    'no `evaluations` list: expected [{critique, score}, …]'
    """
    if isinstance(tau, bool) or not isinstance(tau, (int, float)) or not math.isfinite(tau) or tau <= 0:
        raise ValueError(f"tau must be a finite number > 0 (EQA-RM uses 2), got {tau!r}")
    if not isinstance(record, dict):
        return _error(None, f"a record must be a JSON object, got {type(record).__name__}")
    rid = record.get("id")
    evals = record.get("evaluations")
    if evals is None:
        return _error(rid, "no `evaluations` list: expected [{critique, score}, …]")
    if not isinstance(evals, (list, tuple)):
        return _error(rid, f"`evaluations` must be a list of {{critique, score}}, got {type(evals).__name__}")
    if not evals:
        return _error(rid, "`evaluations` is empty: nothing to keep or reject")
    gt = read_score(record.get("gt_score"))
    if gt is None:
        return _error(rid, f"`gt_score` missing or not a number: {record.get('gt_score')!r}")
    correct = []
    for i, ev in enumerate(evals):
        s = _eval_score(ev)
        if s is not None and abs(gt - s) < tau - _EPS:
            correct.append(i)
    if not correct:
        return {"id": rid, "kept": [], "reason": "none_correct"}
    if len(correct) == len(evals):
        return {"id": rid, "kept": [], "reason": "too_easy"}
    return {"id": rid, "kept": correct, "reason": "kept"}


def _error(rid: object, message: str) -> RejectiveResult:
    return {"id": rid, "kept": [], "reason": "error", "error": message}
