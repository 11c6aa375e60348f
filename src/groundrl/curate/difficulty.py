"""EmbodiedBrain's masking-sensitivity difficulty: for masking ratios λ = 0.0 … 0.9 (pixel
masking, K seeded repeats each) estimate the accuracy P_c(λ) of a model's answers, and the
failure threshold ``λ* = min{λ : P_c(λ) < 0.1}`` (``None`` when the model never drops below
0.1 — the sample stays easy however much is hidden). Small λ* = hard sample."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from groundrl.augment import mask_pixels

RATIOS = tuple(round(0.1 * i, 1) for i in range(10))


def mask_difficulty(
    sample: dict[str, Any],
    answer_fn: Callable[[Any, dict[str, Any]], bool],
    ratios: Sequence[float] = RATIOS,
    k: int = 10,
    seed: int = 0,
    threshold: float = 0.1,
) -> dict[str, Any]:
    """``answer_fn(masked_image, sample) -> correct?``; the sample's ``image`` is masked."""
    if k < 1:
        raise ValueError(f"k must be ≥ 1, got {k}")
    from groundrl.judges.images import to_pil

    image = to_pil(sample["image"])
    curve = []
    for lam in ratios:
        rng = random.Random(f"{seed}|{sample.get('id')}|{lam}")
        correct = sum(bool(answer_fn(mask_pixels(image, rng, lam), sample)) for _ in range(k))
        curve.append({"ratio": lam, "accuracy": correct / k})
    lam_star = next((c["ratio"] for c in curve if c["accuracy"] < threshold), None)
    return {"id": sample.get("id"), "curve": curve, "lambda_star": lam_star}
