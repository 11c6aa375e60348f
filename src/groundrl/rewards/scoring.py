"""EQA-RM: rewards for a generative reward model that writes
``<critique>…</critique><score>s</score>`` with ``s`` in [0, 10], plus the contrastive
boosts of C-GRPO and the benchmark metrics (accuracy within ±2, RMSE)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from groundrl.parse.numbers import parse_exact_number
from groundrl.parse.scores import parse_score
from groundrl.parse.tags import tags_in_order
from groundrl.types import Score

SCORE_MIN, SCORE_MAX = 0.0, 10.0


def score_accuracy(pred: float, gold: float) -> float:
    """``max(0, 1 − (|s − s*| / 10)²)`` (EQA-RM's score-accuracy reward)."""
    return max(0.0, 1.0 - (abs(pred - gold) / 10.0) ** 2)


def eqa_format(completion: Any) -> Score:
    """1 when ``<critique>…</critique>`` is followed by ``<score>…</score>`` and the
    score (the last ``<score>`` pair) is a number in [0, 10]; else 0."""
    if not isinstance(completion, str):
        return Score("format", 0.0, f"completion is {type(completion).__name__}, not text")
    if not tags_in_order(completion, ["critique", "score"]):
        return Score("format", 0.0, "needs <critique>…</critique> then <score>…</score>")
    s = parse_score(completion, SCORE_MIN, SCORE_MAX)
    if not s.ok:
        return Score("format", 0.0, s.error)
    return Score("format", 1.0)


def eqa_accuracy(completion: Any, gt_score: Any) -> Score:
    """``accuracy = max(0, 1 − (|s − s*|/10)²)`` with ``s`` the last ``<score>`` of the
    completion; 0 when there is no score in [0, 10]. ``gt_score`` may be a number or a
    numeric string; an unusable gold score gives 0 with a reason."""
    gold = parse_exact_number(gt_score)
    if not gold.ok:
        return Score("accuracy", 0.0, f"bad gt_score {gt_score!r}: {gold.error}")
    s = parse_score(completion, SCORE_MIN, SCORE_MAX)
    if not s.ok:
        return Score("accuracy", 0.0, s.error)
    return Score("accuracy", score_accuracy(s.value, gold.value), f"score {s.value:g} vs gold {gold.value:g}")


def contrastive_boost(
    orig_acc: Sequence[float],
    perturbed_acc: Sequence[float],
    delta: float = 0.95,
    mu: float = 0.3,
    min_acc: float = 0.1,
) -> list[float]:
    """EQA-RM's contrastive boost for one perturbation type (C-GRPO).

    Each original evaluation ``i`` gets ``mu`` if
    ``mean(orig_acc) ≥ delta · mean(perturbed_acc)`` and ``orig_acc[i] ≥ min_acc``, else 0.
    Empty ``orig_acc`` → ``[]``; empty ``perturbed_acc`` → no evidence of contrast, all 0.
    """
    if not (math.isfinite(delta) and delta >= 0):
        raise ValueError(f"delta must be a finite number ≥ 0, got {delta!r}")
    if not (math.isfinite(mu) and mu >= 0):
        raise ValueError(f"mu must be a finite number ≥ 0, got {mu!r}")
    if not math.isfinite(min_acc):
        raise ValueError(f"min_acc must be finite, got {min_acc!r}")
    orig = [float(a) for a in orig_acc]
    pert = [float(a) for a in perturbed_acc]
    if not orig:
        return []
    if not pert:
        return [0.0] * len(orig)
    if sum(orig) / len(orig) < delta * (sum(pert) / len(pert)):
        return [0.0] * len(orig)
    return [mu if a >= min_acc else 0.0 for a in orig]


def combine_boosts(boosts_by_type: Mapping[str, Sequence[float]]) -> list[float]:
    """Per evaluation, ``Σ_types boost / number of active types``, where the active types
    are those present in the mapping (the perturbations run for this batch)."""
    if not boosts_by_type:
        return []
    lists = [list(v) for v in boosts_by_type.values()]
    n = len(lists[0])
    if any(len(v) != n for v in lists):
        raise ValueError("every perturbation type needs one boost per original evaluation")
    return [sum(v[i] for v in lists) / len(lists) for i in range(n)]


def within_tolerance(pred: float, gold: float, tol: float = 2.0) -> bool:
    """``|pred − gold| ≤ tol`` (EQA-RM counts |Δ| = 2 as correct)."""
    return abs(float(pred) - float(gold)) <= tol


def _pairs(preds: Sequence[float], golds: Sequence[float]) -> list[tuple[float, float]]:
    if len(preds) != len(golds):
        raise ValueError(f"{len(preds)} predictions but {len(golds)} gold scores")
    if not preds:
        raise ValueError("no scores to evaluate")
    return [(float(p), float(g)) for p, g in zip(preds, golds, strict=True)]


def accuracy_within(preds: Sequence[float], golds: Sequence[float], tol: float = 2.0) -> float:
    """Fraction of predictions with ``|Δ| ≤ tol``."""
    pairs = _pairs(preds, golds)
    return sum(within_tolerance(p, g, tol) for p, g in pairs) / len(pairs)


def rmse(preds: Sequence[float], golds: Sequence[float]) -> float:
    """Root mean squared error."""
    pairs = _pairs(preds, golds)
    return math.sqrt(sum((p - g) ** 2 for p, g in pairs) / len(pairs))
