"""Argos outcome reward: is the final answer right?

``R_acc ∈ [0, 1]``. The answer type is read from the gold answer (:func:`answer_type`)
and named at the start of the reason:

* **mcq** — gold is one upper-case letter ("B", "(B)", "B."): 1 when the letter read
  by :func:`~groundrl.parse.answers.extract_choice` (letters A–Z) equals it;
* **numeric** — gold is a number (``3``, ``"12"``, ``"1,000"``, ``"-2.5"``):
  1 when ``|ŷ − y| / max(|y|, 1) ≤ 0.05`` (Argos' 5% tolerance; the ``max(·, 1)``
  keeps small golds from demanding absurd precision: gold 0.5 accepts 0.45–0.55),
  ``ŷ`` read by :func:`~groundrl.parse.answers.parse_answer_number`;
* **free** — anything else: 1 on exact match after
  :func:`~groundrl.parse.answers.normalize_answer` (case, punctuation, articles,
  whitespace); otherwise, when a ``semantic(pred, gold) -> float | None`` judge is
  given, its score clipped to [0, 1]. A judge that returns ``None``, a non-number or
  raises has failed: the exact-match value (0) stands and the reason says so.

The gold may be a list of acceptable answers (OpenEQA's ``answer`` +
``extra_answers``): every gold is first tried by its own rule, and the judge is asked
only when none matched, gold by gold until one scores 1 (the best score counts).
The paper leaves open how the final answer is delimited; we read it with
:func:`~groundrl.parse.answers.extract_answer`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Literal

from groundrl.parse.answers import choice_in_answer, extract_answer, normalize_answer, parse_answer_number
from groundrl.parse.numbers import parse_exact_number
from groundrl.types import Score

AnswerType = Literal["mcq", "numeric", "free"]
SemanticJudge = Callable[[str, str], "float | None"]
_GOLD_LETTER_RE = re.compile(r"\s*[(\[]?([A-Z])[)\]]?\.?\s*")
_ALL_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
# A standalone capital letter; "A" and "I" are words unless bracketed or followed by . ) ] : or the end.
_NAMED_LETTER_RE = re.compile(
    r"(?<![\w(\[])([B-HJ-Z])(?!\w)|[(\[]([A-Z])[)\]]|(?<![\w(\[])([AI])(?=[.)\]:]|$)"
)


def _named_letters(answer: str) -> set[str]:
    """The distinct choice letters an answer names as tokens (linear)."""
    return {next(g for g in m.groups() if g) for m in _NAMED_LETTER_RE.finditer(answer or "")}


NUMERIC_REL_TOL = 0.05


def _golds(answer: Any) -> list[Any]:
    """The acceptable answers: a list/tuple is flattened one level; ``None`` and blank
    strings are dropped."""
    items = list(answer) if isinstance(answer, (list, tuple)) else [answer]
    return [g for g in items if g is not None and not (isinstance(g, str) and not g.strip())]


def answer_type(gold: Any) -> AnswerType:
    """``"mcq"`` for one upper-case letter (optionally "(B)", "[B]", "B."), ``"numeric"``
    when the whole gold is a number (``bool`` is not; any ``int`` is, even one too
    large for a float, which then scores 0 with the reason), else ``"free"``. For a list of
    golds, the type of its first usable gold (``"free"`` when there is none)."""
    if isinstance(gold, (list, tuple)):
        usable = _golds(gold)
        return answer_type(usable[0]) if usable else "free"
    if isinstance(gold, str) and _GOLD_LETTER_RE.fullmatch(gold):
        return "mcq"
    if parse_exact_number(gold).ok or (isinstance(gold, int) and not isinstance(gold, bool)):
        return "numeric"
    return "free"


def numeric_match(pred: Any, gold: Any, rel_tol: float = NUMERIC_REL_TOL) -> bool:
    """``|ŷ − y| / max(|y|, 1) ≤ rel_tol`` for numbers or numeric strings; ``False`` when
    either side is not a finite number. A tiny slack (1e-12) keeps the boundary exact
    under float rounding (gold 0.5, prediction 0.55 is a match)."""
    if isinstance(rel_tol, bool) or not isinstance(rel_tol, (int, float)) or not (rel_tol >= 0):
        raise ValueError(f"rel_tol must be a non-negative number, got {rel_tol!r}")
    p, g = parse_exact_number(pred), parse_exact_number(gold)
    if not (p.ok and g.ok):
        return False
    return abs(p.value - g.value) / max(abs(g.value), 1.0) <= rel_tol + 1e-12


def _rule(pred: str, gold: Any) -> tuple[float, str, AnswerType]:
    kind = answer_type(gold)
    if kind == "mcq":
        letter = _GOLD_LETTER_RE.fullmatch(gold).group(1)  # type: ignore[union-attr]  # mcq: it matched
        got = choice_in_answer(pred, _ALL_LETTERS)  # pred: this completion's extract_answer
        if not got.ok:
            return 0.0, f"mcq: {got.error}", kind
        named = _named_letters(pred)
        if len(named) > 1:  # "B and A" names both options: not Eq. 6's one answer [issue 37]
            return 0.0, f"mcq: the answer names several options {sorted(named)}", kind
        if got.value == letter:
            return 1.0, f"mcq: {letter}", kind
        return 0.0, f"mcq: picked {got.value}, gold {letter}", kind
    if kind == "numeric":
        g = parse_exact_number(gold)
        if not g.ok:  # an int beyond the float range (10**400): no answer can be within 5%
            return 0.0, f"numeric: gold ({gold.bit_length()}-bit integer) {g.error}", kind
        y = g.value
        p = parse_answer_number(pred)
        if not p.ok:
            return 0.0, f"numeric: no number in the answer (gold {y:g})", kind
        if numeric_match(p.value, y):
            return 1.0, f"numeric: {p.value:g} within 5% of {y:g}", kind
        return 0.0, f"numeric: {p.value:g} vs gold {y:g}", kind
    if normalize_answer(pred) == normalize_answer(gold):
        return 1.0, "free: exact match", kind
    return 0.0, "free: no exact match", kind


def _ask(semantic: SemanticJudge, pred: str, gold: Any) -> float | None:
    try:
        v = semantic(pred, str(gold))
    except Exception:  # a judge must never crash a training step
        return None
    if isinstance(v, bool):
        return float(v)
    if not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return min(1.0, max(0.0, float(v)))


def outcome(completion: Any, answer: Any, semantic: SemanticJudge | None = None) -> Score:
    """Outcome accuracy in [0, 1] (see the module docstring); always a number, never
    ``None``: an unreadable answer or a sample without a usable gold scores 0 with the
    reason. ``answer``: a string, a number, or a list of acceptable answers."""
    golds = _golds(answer)
    if not golds:
        return Score("outcome", 0.0, "no usable gold answer")
    first_kind = answer_type(golds[0])
    pred = extract_answer(completion)
    if not pred.ok:
        return Score("outcome", 0.0, f"{first_kind}: {pred.error}")
    reasons = []
    free = []
    for g in golds:
        v, why, kind = _rule(pred.value, g)
        if v >= 1.0:
            return Score("outcome", 1.0, why)
        if why not in reasons:
            reasons.append(why)
        if kind == "free":
            free.append(g)
    if semantic is None or not free:
        suffix = "" if not free else " (no semantic judge)"
        return Score("outcome", 0.0, "; ".join(reasons) + suffix)
    best, answered = 0.0, 0
    for g in free:
        judged = _ask(semantic, pred.value, g)
        if judged is None:
            continue
        answered += 1
        best = max(best, judged)
        if best >= 1.0:
            break
    if answered == 0:
        return Score("outcome", 0.0, "; ".join(reasons) + "; semantic judge failed")
    return Score("outcome", best, f"free: semantic judge {best:g}")
