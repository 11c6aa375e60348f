"""Temporal perturbation: frames shuffled in time."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any


def shuffle_frames(frames: Sequence[Any], rng: random.Random) -> tuple[list[Any], list[int]]:
    """A random order of ``frames`` and the permutation used (``out[i] = frames[perm[i]]``).

    With two or more frames the permutation always differs from the identity (a shuffle
    that changes nothing is no perturbation); one or zero frames come back unchanged.
    """
    n = len(frames)
    perm = list(range(n))
    if n >= 2:
        while perm == list(range(n)):
            rng.shuffle(perm)
    return [frames[i] for i in perm], perm
