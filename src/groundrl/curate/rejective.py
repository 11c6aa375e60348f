"""EQA-RM rejective fine-tuning data (Eq. 1): keep the auxiliary evaluations that are
correct, ``|s_gt − s_aux| < τ`` (strict, τ = 2 by default), unless all N of the instance
are correct — such an instance is too easy to teach anything."""

from __future__ import annotations

from typing import Any

from groundrl.parse.numbers import parse_exact_number
from groundrl.parse.tags import find_tag


def _score(value: Any) -> float | None:
    if isinstance(value, str) and "<score" in value.lower():
        value = find_tag(value, "score", which="last")
    r = parse_exact_number(value)
    return r.value if r.ok else None


def rejective_filter(record: dict[str, Any], tau: float = 2.0) -> dict[str, Any]:
    """``{id, gt_score, evaluations: [{critique, score}, …]}`` → ``{id, kept, reason}``.

    An evaluation whose score is missing or unparseable (a number, a numeric string, or
    text with a ``<score>`` tag; the critique is searched when ``score`` is absent) is
    incorrect. ``reason``: ``kept``, ``too_easy`` (all correct: nothing kept) or
    ``none_correct``."""
    if tau <= 0:
        raise ValueError(f"tau must be > 0, got {tau}")
    gt = _score(record.get("gt_score"))
    evals = record.get("evaluations") or []
    correct = []
    for i, ev in enumerate(evals):
        s = _score(ev.get("score")) if isinstance(ev, dict) and ev.get("score") is not None else None
        if s is None and isinstance(ev, dict):
            s = _score(ev.get("critique"))
        if gt is not None and s is not None and abs(gt - s) < tau:
            correct.append(i)
    if evals and len(correct) == len(evals):
        return {"id": record.get("id"), "kept": [], "reason": "too_easy"}
    if not correct:
        return {"id": record.get("id"), "kept": [], "reason": "none_correct"}
    return {"id": record.get("id"), "kept": correct, "reason": "kept"}
