"""Spatial perturbation (EQA-RM C-GRPO): 15% of the 16×16 patches of a frame set to 0."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from groundrl.augment.masking import (
    check_image,
    check_ratio,
    check_rng,
    image_hw,
    round_half_up,
    zero_pixels,
)


def patch_grid(height: int, width: int, patch: int = 16) -> tuple[int, int]:
    """``(rows, cols)`` of the patch grid: ``ceil(H / patch) × ceil(W / patch)``."""
    return -(-height // patch), -(-width // patch)


def mask_patches(
    image: Any, rng: random.Random, ratio: float = 0.15, patch: int = 16
) -> tuple[Any, list[int]]:
    """Zero ``k = round_half_up(ratio · n_patches)`` of the image's ``patch × patch``
    patches, chosen uniformly without replacement (EQA-RM: ratio 0.15, patch 16).

    Patches tile the image from the top-left corner; patch ``i`` is at grid row
    ``i // cols``, column ``i % cols`` (row-major). Edge rule (the paper is silent): when
    ``H`` or ``W`` is not a multiple of ``patch``, the partial patches along the right and
    bottom edges are patches too, and masking one zeroes the pixels it has (a 40×40 image
    has 3×3 = 9 patches, the last row and column 8 pixels deep). Halves round up
    (``0.15 · 10 = 1.5`` → 2 patches).

    Returns ``(new_image, masked_patch_indices)`` with the indices ascending; PIL in → PIL
    out (same mode and palette), array in → array out (same dtype). ``image`` is not
    modified.
    """
    check_rng(rng, "mask_patches(image, rng, ratio=0.15, patch=16)")
    ratio = check_ratio(ratio)
    if isinstance(patch, bool) or not isinstance(patch, int) or patch < 1:
        raise ValueError(f"patch must be an int ≥ 1 (pixels per patch side), got {patch!r}")
    check_image(image)
    h, w = image_hw(image)
    rows, cols = patch_grid(h, w, patch)
    n = rows * cols
    chosen = sorted(rng.sample(range(n), round_half_up(ratio * n)))
    mask = np.zeros((h, w), dtype=bool)
    for i in chosen:
        r, c = divmod(i, cols)
        mask[r * patch : (r + 1) * patch, c * patch : (c + 1) * patch] = True
    return zero_pixels(image, mask), chosen
