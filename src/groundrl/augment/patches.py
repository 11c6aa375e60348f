"""Spatial perturbations: 16×16 patches set to 0 (EQA-RM, 15%), and random pixel masking
(EmbodiedBrain's masking-sensitivity difficulty)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np


def _as_array(image: Any) -> tuple[np.ndarray, Any]:
    from PIL import Image

    if isinstance(image, Image.Image):
        return np.array(image), image.mode
    arr = np.asarray(image)
    if arr.ndim not in (2, 3):
        raise ValueError(f"expected an H×W or H×W×C image, got shape {arr.shape}")
    return arr.copy(), None


def _back(arr: np.ndarray, mode: Any) -> Any:
    from PIL import Image

    return Image.fromarray(arr, mode=mode) if mode is not None else arr


def mask_patches(
    image: Any, rng: random.Random, ratio: float = 0.15, patch: int = 16
) -> tuple[Any, list[int]]:
    """Set ``round(ratio · n_patches)`` patches of ``patch × patch`` pixels to 0, chosen
    uniformly without replacement; patches tile the image from the top-left, and partial
    patches at the right/bottom edges count as patches (their in-image pixels are zeroed).
    Returns the new image (PIL in → PIL out, same mode) and the masked patch indices
    (row-major)."""
    if not 0 <= ratio <= 1:
        raise ValueError(f"ratio must be in [0, 1], got {ratio}")
    if patch < 1:
        raise ValueError(f"patch must be ≥ 1, got {patch}")
    arr, mode = _as_array(image)
    h, w = arr.shape[:2]
    rows, cols = -(-h // patch), -(-w // patch)
    n = rows * cols
    chosen = sorted(rng.sample(range(n), round(ratio * n)))
    for k in chosen:
        r, c = divmod(k, cols)
        arr[r * patch : (r + 1) * patch, c * patch : (c + 1) * patch] = 0
    return _back(arr, mode), chosen


def mask_pixels(image: Any, rng: random.Random, ratio: float) -> Any:
    """Set ``round(ratio · H · W)`` pixel positions (all channels) to 0, uniformly without
    replacement."""
    if not 0 <= ratio <= 1:
        raise ValueError(f"ratio must be in [0, 1], got {ratio}")
    arr, mode = _as_array(image)
    h, w = arr.shape[:2]
    k = round(ratio * h * w)
    idx = np.array(rng.sample(range(h * w), k), dtype=np.int64)
    arr.reshape(h * w, -1)[idx] = 0
    return _back(arr, mode)
