"""Temporal perturbation (EQA-RM C-GRPO): the frames of a clip shuffled in time."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from groundrl.augment.masking import check_rng


def _content_key(frame: Any) -> Any:
    """Equal keys ⇔ frames that look the same (PIL and numpy compared by pixels)."""
    # lazy: Pillow loads only when frames are compared
    from PIL import Image

    if isinstance(frame, Image.Image):
        return ("pil", frame.mode, frame.size, frame.tobytes())
    if isinstance(frame, np.ndarray):
        return ("np", frame.dtype.str, frame.shape, frame.tobytes())
    try:
        hash(frame)
    except TypeError:
        return ("id", id(frame))  # unhashable and not an image: distinct unless the same object
    return ("obj", frame)


def shuffle_frames(frames: Sequence[Any], rng: random.Random) -> tuple[list[Any], list[int]]:
    """A uniformly random reordering of ``frames`` and the permutation used:
    ``out[i] = frames[perm[i]]``.

    When the clip has at least two *distinct* frames (PIL images and arrays compared by
    their pixels, other items by ``==``), the order is redrawn until the shuffled clip
    differs from the original, so the perturbation always changes what the model sees
    (each draw succeeds with probability ≥ 1/2). With 0 or 1 frames, or when every frame
    is the same, no reordering can change the clip: the frames come back in their
    original order with the identity permutation. Returns a new list; the frames
    themselves are not copied or modified.
    """
    check_rng(rng, "shuffle_frames(frames, rng)")
    if isinstance(frames, (str, bytes)) or not isinstance(frames, Sequence):
        raise ValueError(f"frames must be a sequence of frames, got {type(frames).__name__}")
    n = len(frames)
    keys: dict[Any, int] = {}
    labels = [keys.setdefault(_content_key(f), len(keys)) for f in frames]
    perm = list(range(n))
    if len(keys) >= 2:
        while [labels[i] for i in perm] == labels:
            rng.shuffle(perm)
    return [frames[i] for i in perm], perm
