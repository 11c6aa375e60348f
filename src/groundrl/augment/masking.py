"""Setting pixels to 0 in any image, and random pixel masking (EmbodiedBrain's
masking-sensitivity sweep, :func:`groundrl.curate.difficulty.mask_difficulty`).

Images are PIL images of any mode or numpy arrays ``H×W`` / ``H×W×C`` (channels last).
"Set to 0" is literal: every band of a masked pixel becomes 0 in the image's own mode
(black for L/RGB, transparent black for RGBA, palette index 0 for P, white for CMYK).
The input is never modified; a new image of the same type, mode, palette and dtype is
returned.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np


def check_image(image: Any) -> None:
    """Raise ``ValueError`` unless ``image`` is a PIL image or an ``H×W``/``H×W×C`` array."""
    # lazy: Pillow loads only when an image is perturbed
    from PIL import Image

    if isinstance(image, Image.Image):
        return
    if not isinstance(image, np.ndarray):
        raise ValueError(f"expected a PIL image or a numpy array, got {type(image).__name__}")
    if image.ndim not in (2, 3):
        raise ValueError(f"expected an H×W or H×W×C array, got shape {image.shape}")


def image_hw(image: Any) -> tuple[int, int]:
    """``(height, width)`` of a checked image."""
    if isinstance(image, np.ndarray):
        return int(image.shape[0]), int(image.shape[1])
    w, h = image.size
    return int(h), int(w)


def round_half_up(x: float) -> int:
    """``floor(x + 0.5)``, with a 1e-9 allowance so ``0.15 · 30`` (4.4999… in floats)
    counts as 4.5 → 5. Python's ``round`` would send halves to the even neighbour."""
    return math.floor(x + 0.5 + 1e-9)


def check_ratio(ratio: Any, name: str = "ratio") -> float:
    if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0 <= ratio <= 1:
        raise ValueError(f"{name} must be a number in [0, 1], got {ratio!r}")
    return float(ratio)


def check_rng(rng: Any, call: str) -> None:
    if not isinstance(rng, random.Random):
        raise ValueError(
            f"rng must be a random.Random (e.g. random.Random(0)), got {type(rng).__name__}; call {call}"
        )


def zero_pixels(image: Any, mask: np.ndarray) -> Any:
    """A copy of ``image`` with every band of the pixels where ``mask`` (``H×W`` bool) is
    True set to 0."""
    # lazy: Pillow loads only when an image is perturbed
    from PIL import Image

    if isinstance(image, np.ndarray):
        out = image.copy()
        out[mask] = 0
        return out
    out = image.copy()
    if mask.any():
        # paste(colour, box, mask) fills in the image's own mode: keeps "P" palettes,
        # "I;16"/"F" depths and the alpha band's layout, which a numpy round trip would not
        out.paste(0, (0, 0, out.size[0], out.size[1]), Image.fromarray(mask.astype(np.uint8) * 255))
    return out


def mask_pixels(image: Any, rng: random.Random, ratio: float) -> Any:
    """Random pixel masking: ``k = round_half_up(ratio · H · W)`` pixel positions, chosen
    uniformly without replacement, are set to 0 in every band.

    The choice is drawn by a numpy generator seeded from one ``rng.getrandbits(64)``
    (one draw per call, whatever ``ratio``), so it is fast on large images and fixed by
    ``rng``. Returns the new image (PIL in → PIL out, same mode; array in → array out).
    """
    check_rng(rng, "mask_pixels(image, rng, ratio)")
    ratio = check_ratio(ratio)
    check_image(image)
    h, w = image_hw(image)
    n = h * w
    k = round_half_up(ratio * n)
    gen = np.random.default_rng(rng.getrandbits(64))
    mask = np.zeros(n, dtype=bool)
    if k:
        mask[gen.choice(n, size=k, replace=False)] = True
    return zero_pixels(image, mask.reshape(h, w))
