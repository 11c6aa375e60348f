"""EmbodiedBrain's masking-sensitivity difficulty.

For masking ratios λ ∈ {0.0, 0.1, …, 0.9} the sample's image is pixel-masked
(:func:`groundrl.augment.mask_pixels`: ``round(λ · H · W)`` pixels set to 0) K = 10 times
with different seeded masks, a model answers each masked image, and the accuracy
``P_c(λ) = (#correct) / K`` is recorded. The failure threshold is

    λ* = min{λ : P_c(λ) < 0.1}

(strictly below 0.1). A sample whose accuracy never drops below 0.1, even with 90% of
its pixels hidden, has ``λ* = None``: it can be answered without looking (or the answer
is guessable), which makes it the easiest kind. A small λ* is a hard sample (it fails
under little masking); λ* = 0.0 means the model fails on the unmasked image.

Filtering and weighting (the paper says samples are filtered or weighted by λ*; the rules
below are ours): :func:`keep_by_difficulty` keeps samples with ``lo ≤ λ* ≤ hi``
(default 0.1 … 0.9: drops samples the model cannot answer unmasked and samples that never
fail), :func:`difficulty_weight` gives ``1 − λ*`` (harder → heavier; ``None`` → 0).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NotRequired, TypedDict

import numpy as np

from groundrl.augment import mask_pixels
from groundrl.judges.images import to_pil

RATIOS: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(10))
"""0.0, 0.1, …, 0.9."""


def _number_in(x: Any, lo: float, hi: float, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not lo <= x <= hi:
        raise ValueError(f"{name} must be a number in [{lo}, {hi}], got {x!r}")
    return float(x)


def _image(value: Any) -> Any:
    # lazy: Pillow loads only when an image is masked
    from PIL import Image

    if isinstance(value, (Image.Image, np.ndarray)):
        return value

    return to_pil(value)  # a path, data URL or base64 text


class CurvePoint(TypedDict):
    ratio: float
    accuracy: float  # share of the k masked images answered right


class DifficultyResult(TypedDict):
    """:func:`mask_difficulty`'s row (``error`` when the image cannot be read)."""

    id: object
    curve: list[CurvePoint]
    lambda_star: float | None
    error: NotRequired[str]


def mask_difficulty(
    sample: Mapping[str, Any],
    answer_fn: Callable[[Any, Mapping[str, Any]], bool],
    ratios: Sequence[float] = RATIOS,
    k: int = 10,
    seed: int = 0,
    threshold: float = 0.1,
) -> DifficultyResult:
    """``{id, image, …}`` → ``{id, curve: [{ratio, accuracy}, …], lambda_star}``.

    ``answer_fn(masked_image, sample) -> bool`` says whether the model's answer on the
    masked image is correct (it is called ``k`` times per ratio, also at λ = 0 where the
    image is the same each time: a sampling model may still vary). The masks for ratio λ
    come from ``random.Random(f"{seed}|{id}|{λ}")``, so a sample's curve does not depend
    on the other samples or their order. The image may be a PIL image, a numpy array, a
    path, a data URL or base64 text; one that cannot be read gives
    ``{id, curve: [], lambda_star: None, error}`` instead of stopping a curation run.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k (masks per ratio) must be an int ≥ 1, got {k!r}")
    ratios = [_number_in(r, 0.0, 1.0, "every masking ratio") for r in ratios]
    if not ratios:
        raise ValueError("ratios must not be empty")
    threshold = _number_in(threshold, 0.0, 1.0, "threshold")
    if not callable(answer_fn):
        raise ValueError("answer_fn must be a callable answer_fn(masked_image, sample) -> bool")
    sid = sample.get("id") if isinstance(sample, dict) else None
    try:
        image = _image(sample["image"])
    except (KeyError, TypeError, ValueError, OSError) as e:
        return {"id": sid, "curve": [], "lambda_star": None, "error": f"image not readable: {e}"}
    curve: list[CurvePoint] = []
    for lam in ratios:
        rng = random.Random(f"{seed}|{sid}|{lam}")
        correct = sum(1 for _ in range(k) if answer_fn(mask_pixels(image, rng, lam), sample))
        curve.append({"ratio": lam, "accuracy": correct / k})
    failing = [c["ratio"] for c in curve if c["accuracy"] < threshold]
    return {"id": sid, "curve": curve, "lambda_star": min(failing) if failing else None}


def keep_by_difficulty(result: Mapping[str, object], lo: float = 0.1, hi: float = 0.9) -> bool:
    """Keep a sample when its ``lambda_star`` lies in ``[lo, hi]`` (inclusive). ``None``
    (never fails) and results with an ``error`` are not kept."""
    lo, hi = _number_in(lo, 0.0, 1.0, "lo"), _number_in(hi, 0.0, 1.0, "hi")
    if lo > hi:
        raise ValueError(f"lo must be ≤ hi, got lo={lo}, hi={hi}")
    lam = result.get("lambda_star") if isinstance(result, dict) else None
    if lam is None or result.get("error") or not isinstance(lam, (int, float)) or math.isnan(lam):
        return False
    return lo - 1e-9 <= lam <= hi + 1e-9


def difficulty_weight(lambda_star: float | None, never: float = 0.0) -> float:
    """A training weight ``1 − λ*`` (λ* = 0.1 → 0.9, λ* = 0.9 → 0.1); ``never`` (0 by
    default) for a sample that never fails (``None``)."""
    if lambda_star is None:
        return float(never)
    return 1.0 - _number_in(lambda_star, 0.0, 1.0, "lambda_star")
