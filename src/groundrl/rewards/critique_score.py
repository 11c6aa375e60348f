"""EQA-RM: rule rewards for a generative reward model that writes
``<critique>…</critique><score>s</score>`` with ``s`` in [0, 10], the contrastive boosts
of C-GRPO, and the benchmark metrics (accuracy within ±2, RMSE).

The paper's per-completion reward is::

    total = accuracy + format + (Σ_{active types t} boost_t) / (number of active types)
    accuracy = max(0, 1 − (|s − s*| / 10)²)      (0 when there is no valid score)
    format   = 1 if <critique>…</critique> then <score>…</score> and s is a number in [0, 10]

The sum itself lives in the recipe's rubric (:mod:`groundrl.recipes.eqa_rm`) and in
:mod:`groundrl.train.cgrpo`; this module provides the parts.

Which ``<score>`` is read and what counts as a number is decided in
:func:`groundrl.parse.scores.parse_score`: the **last** complete ``<score>`` pair, a plain
decimal optionally followed by ``/10``; out of [0, 10] is no score.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Mapping, Sequence
from typing import Any

from groundrl.parse.numbers import parse_exact_number
from groundrl.parse.scores import parse_score
from groundrl.parse.tags import tags_in_order
from groundrl.types import Score

SCORE_MIN, SCORE_MAX = 0.0, 10.0
# Scores are often decimals ("7.3"); |7.3 − 5.3| is 2.0000000000000004 in floats. A
# difference this close to the tolerance is the boundary, which counts as within.
_TOL_EPS = 1e-9


def score_accuracy(pred: float, gold: float) -> float:
    """EQA-RM's score accuracy ``max(0, 1 − (|s − s*| / 10)²)``.

    Examples: ``|Δ| = 0`` → 1, ``|Δ| = 3`` → 0.91, ``|Δ| = 10`` → 0. A non-finite input
    gives 0 (the reward must never be NaN).
    """
    d = abs(float(pred) - float(gold))
    if not math.isfinite(d):
        return 0.0
    return max(0.0, 1.0 - (d / 10.0) ** 2)


def eqa_format(completion: Any) -> Score:
    """EQA-RM format reward (0/1): 1 when a complete ``<critique>…</critique>`` pair is
    followed by a complete ``<score>…</score>`` pair and the score read for accuracy (the
    last ``<score>`` pair) is a number in [0, 10]; else 0 with the reason.

    Tag names match case-insensitively (:mod:`groundrl.parse.tags`); text before, between
    and after the tags is allowed (the paper only asks for the two tags in order).
    """
    if not isinstance(completion, str):
        return Score("format", 0.0, f"completion is {type(completion).__name__}, not text")
    if not tags_in_order(completion, ["critique", "score"]):
        return Score("format", 0.0, "needs <critique>…</critique> then <score>…</score>")
    s = parse_score(completion, SCORE_MIN, SCORE_MAX)
    if not s.ok:
        return Score("format", 0.0, s.error)
    return Score("format", 1.0)


def _gold(gt_score: Any) -> tuple[float | None, str]:
    g = parse_exact_number(gt_score)
    if not g.ok:
        try:
            shown = reprlib.repr(gt_score)
        except ValueError:  # an int past the str() digit limit
            shown = f"({gt_score.bit_length()}-bit integer)"
        return None, f"bad gt_score {shown}: {g.error}"
    if not SCORE_MIN <= g.value <= SCORE_MAX:
        return None, f"bad gt_score {g.value:g}: outside [{SCORE_MIN:g}, {SCORE_MAX:g}]"
    return g.value, ""


def eqa_accuracy(completion: Any, gt_score: Any) -> Score:
    """EQA-RM accuracy reward ``max(0, 1 − (|s − s*|/10)²)``.

    ``s`` is the last ``<score>`` of the completion (anywhere in it, as the paper's
    extraction does; the order of tags is the format reward's business). No score, a
    non-numeric score or one outside [0, 10] gives 0 with the reason.

    ``gt_score`` (``s*``) may be an int, a float or a numeric string (``"7"``, ``" 7.5 "``);
    anything else (``None``, ``"n/a"``, ``True``, NaN) or a number outside [0, 10] is a
    data error and gives 0 with a ``"bad gt_score"`` reason — never an exception.
    """
    gold, why = _gold(gt_score)
    if gold is None:
        return Score("accuracy", 0.0, why)
    s = parse_score(completion, SCORE_MIN, SCORE_MAX)
    if not s.ok:
        return Score("accuracy", 0.0, s.error)
    return Score("accuracy", score_accuracy(s.value, gold), f"score {s.value:g} vs gold {gold:g}")


def contrastive_boost(
    orig_acc: Sequence[float],
    perturbed_acc: Sequence[float],
    delta: float = 0.95,
    mu: float = 0.3,
    min_acc: float = 0.1,
) -> list[float]:
    """EQA-RM's contrastive boost for one perturbation type (C-GRPO).

    For each original evaluation ``i``::

        boost_i = mu   if mean(orig_acc) ≥ delta · mean(perturbed_acc) and orig_acc[i] ≥ min_acc
                  0    otherwise

    (paper constants ``delta = 0.95``, ``mu = 0.3``, ``min_acc = 0.1``). Both ``≥`` include
    equality. Empty ``orig_acc`` → ``[]``; empty ``perturbed_acc`` gives no evidence of a
    contrast, so all 0. A NaN accuracy makes the mean condition false (all 0).

    Raises ``ValueError`` for bad constants: ``delta`` or ``mu`` negative or non-finite,
    ``min_acc`` non-finite.
    """
    if not (math.isfinite(delta) and delta >= 0):
        raise ValueError(f"delta must be a finite number >= 0 (paper: 0.95), got {delta!r}")
    if not (math.isfinite(mu) and mu >= 0):
        raise ValueError(f"mu must be a finite number >= 0 (paper: 0.3), got {mu!r}")
    if not math.isfinite(min_acc):
        raise ValueError(f"min_acc must be a finite number (paper: 0.1), got {min_acc!r}")
    orig = [float(a) for a in orig_acc]
    pert = [float(a) for a in perturbed_acc]
    if not orig:
        return []
    if not pert:
        return [0.0] * len(orig)
    # Written as "not (… ≥ …)" so that a NaN mean means no boost.
    if not (sum(orig) / len(orig) >= delta * (sum(pert) / len(pert))):
        return [0.0] * len(orig)
    return [mu if a >= min_acc else 0.0 for a in orig]


def combine_boosts(boosts_by_type: Mapping[str, Sequence[float]]) -> list[float]:
    """Per original evaluation ``i``: ``Σ_t boosts_by_type[t][i] / (number of active types)``.

    An *active type* is a perturbation type present in the mapping, i.e. one that was
    run for this batch, whether or not it earned any boost (a type that earned nothing
    still counts in the denominator: ``{"temporal": [0.3], "spatial": [0.0]}`` → 0.15).
    An empty mapping → ``[]``.

    Raises ``ValueError`` when the types hold different numbers of boosts (each type must
    give one boost per original evaluation).
    """
    if not boosts_by_type:
        return []
    lists = {t: [float(b) for b in v] for t, v in boosts_by_type.items()}
    sizes = {t: len(v) for t, v in lists.items()}
    if len(set(sizes.values())) > 1:
        raise ValueError(f"every perturbation type needs one boost per original evaluation, got {sizes}")
    n = next(iter(sizes.values()))
    k = len(lists)
    return [sum(v[i] for v in lists.values()) / k for i in range(n)]


def within_tolerance(pred: float, gold: float, tol: float = 2.0) -> bool:
    """``|pred − gold| ≤ tol`` (EQA-RM's benchmark accuracy; ``|Δ| = 2`` counts as
    correct). Differences within 1e-9 of ``tol`` count as the boundary, so decimal scores
    such as 7.3 vs 5.3 are within 2 despite float rounding. NaN is never within.

    Raises ``ValueError`` when ``tol`` is negative or non-finite.
    """
    if not (math.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}")
    return abs(float(pred) - float(gold)) <= tol + _TOL_EPS


def _pairs(preds: Sequence[float], golds: Sequence[float]) -> list[tuple[float, float]]:
    if len(preds) != len(golds):
        raise ValueError(f"{len(preds)} predictions but {len(golds)} gold scores; pass one per item")
    if len(preds) == 0:
        raise ValueError("no scores to evaluate; pass at least one prediction")
    return [(float(p), float(g)) for p, g in zip(preds, golds, strict=True)]


def accuracy_within(preds: Sequence[float], golds: Sequence[float], tol: float = 2.0) -> float:
    """``(1/n) Σ_i [|pred_i − gold_i| ≤ tol]`` (see :func:`within_tolerance`).

    Raises ``ValueError`` on a length mismatch or empty input.
    """
    pairs = _pairs(preds, golds)
    return sum(within_tolerance(p, g, tol) for p, g in pairs) / len(pairs)


def rmse(preds: Sequence[float], golds: Sequence[float]) -> float:
    """Root mean squared error ``sqrt((1/n) Σ_i (pred_i − gold_i)²)``.

    Raises ``ValueError`` on a length mismatch or empty input.
    """
    pairs = _pairs(preds, golds)
    return math.sqrt(sum((p - g) ** 2 for p, g in pairs) / len(pairs))
