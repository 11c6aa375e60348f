"""Argos outcome reward: is the final answer right?

The answer type is read from the gold answer: a single choice letter → **mcq** (the
predicted letter must match), a number → **numeric** (``|ŷ − y| / max(|y|, 1) ≤ 0.05``),
anything else → **free** (exact match after normalisation — case, punctuation,
articles, whitespace — and, when that fails and a ``semantic`` judge is given,
the judge's equivalence score).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from groundrl.parse.answers import extract_answer, extract_choice, normalize_answer
from groundrl.parse.numbers import parse_exact_number, parse_number
from groundrl.types import Score

AnswerType = Literal["mcq", "numeric", "free"]
SemanticJudge = Callable[[str, str], "float | None"]
_LETTER_RE = re.compile(r"\s*\(?([A-Z])\)?\.?\s*")


def answer_type(gold: Any) -> AnswerType:
    """``mcq`` for a single upper-case letter (optionally "(B)" / "B."), ``numeric`` when
    the gold is a number, else ``free``."""
    if isinstance(gold, str) and _LETTER_RE.fullmatch(gold):
        return "mcq"
    if parse_exact_number(gold).ok:
        return "numeric"
    return "free"


def numeric_match(pred: float, gold: float, rel_tol: float = 0.05) -> bool:
    """``|ŷ − y| / max(|y|, 1) ≤ rel_tol`` (Argos' 5% numeric tolerance)."""
    return abs(pred - gold) / max(abs(gold), 1.0) <= rel_tol + 1e-12


def _one(pred_text: str, completion: str, gold: Any, semantic: SemanticJudge | None) -> tuple[float, str]:
    kind = answer_type(gold)
    if kind == "mcq":
        letter = _LETTER_RE.fullmatch(gold).group(1)  # type: ignore[union-attr]
        got = extract_choice(completion, choices="ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        if not got.ok:
            return 0.0, f"mcq: {got.error}"
        return (1.0, "mcq") if got.value == letter else (0.0, f"mcq: picked {got.value}, gold {letter}")
    if kind == "numeric":
        y = parse_exact_number(gold).value
        p = parse_exact_number(pred_text)
        if not p.ok:
            p = parse_number(pred_text)
        if not p.ok:
            return 0.0, "numeric: no number in the answer"
        return (1.0, "numeric") if numeric_match(p.value, y) else (0.0, f"numeric: {p.value:g} vs {y:g}")
    if normalize_answer(pred_text) == normalize_answer(gold):
        return 1.0, "free: exact"
    if semantic is None:
        return 0.0, "free: no exact match (no semantic judge)"
    try:
        v = semantic(pred_text, str(gold))
    except Exception as e:  # a judge must never crash a training step
        return 0.0, f"free: semantic judge failed ({type(e).__name__})"
    if v is None:
        return 0.0, "free: semantic judge failed"
    return max(0.0, min(1.0, float(v))), "free: semantic"


def outcome(completion: Any, answer: Any, semantic: SemanticJudge | None = None) -> Score:
    """Outcome accuracy in [0, 1] (see the module docstring). ``answer`` may be a string,
    a number, or a list of acceptable answers (the best match counts). ``semantic`` is
    an optional ``(pred, gold) -> float | None`` equivalence judge; ``None`` from it means
    the judge failed, and the exact-match value stands with the reason."""
    pred = extract_answer(completion)
    if not pred.ok:
        return Score("outcome", 0.0, pred.error)
    golds = answer if isinstance(answer, (list, tuple)) else [answer]
    golds = [g for g in golds if g is not None and (not isinstance(g, str) or g.strip())]
    if not golds:
        return Score("outcome", 0.0, "no gold answer")
    best, why = 0.0, ""
    for g in golds:
        v, reason = _one(
            pred.value,
            completion,
            g if not isinstance(g, (int, float)) or isinstance(g, bool) else str(g),
            semantic,
        )
        if v > best or not why:
            best, why = v, reason
        if best >= 1.0:
            break
    return Score("outcome", best, why)
