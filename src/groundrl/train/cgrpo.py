"""EQA-RM's contrastive GRPO (C-GRPO) on TRL.

Each training instance is expanded into four rows: the original context and three
perturbed ones — frames shuffled in time (``temporal``), 15% of 16×16 patches zeroed in
every frame (``spatial``), reasoning steps shuffled (``reasoning``) — all seeded. The
reward model is prompted with each; its accuracy reward ``max(0, 1 − (|s − s*|/10)²)``
is computed on every row, and the **per-type batch means** decide the contrastive boost
(:func:`groundrl.rewards.scoring.contrastive_boost`) each *original* evaluation gets:
``mu`` when ``mean(orig) ≥ delta · mean(perturbed)`` and its own accuracy ≥ ``min_acc``.
The ``contrastive`` reward function returns the averaged boost for original rows and
``None`` (not applicable) for perturbed ones; it sits beside the recipe's accuracy and
format parts (weight 1), so ``total = accuracy + format + boost`` as in the paper.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from groundrl.augment import mask_patches, shuffle_frames, shuffle_reasoning
from groundrl.integrations.common import completion_text
from groundrl.rewards.scoring import combine_boosts, contrastive_boost, eqa_accuracy

PERTURBATIONS = ("temporal", "spatial", "reasoning")


def expand(
    record: dict[str, Any], rng: random.Random, types: Sequence[str] = PERTURBATIONS
) -> list[dict[str, Any]]:
    """One instance (``frames``: list of images, ``reasoning``: text, …) → the original row
    plus one row per perturbation type, each tagged with ``perturbation``."""
    rows = [{**record, "perturbation": "none"}]
    frames = list(record.get("frames") or [])
    for t in types:
        row = {**record, "perturbation": t}
        if t == "temporal":
            row["frames"] = shuffle_frames(frames, rng)[0]
        elif t == "spatial":
            row["frames"] = [mask_patches(f, rng, ratio=0.15, patch=16)[0] for f in frames]
        elif t == "reasoning":
            row["reasoning"] = shuffle_reasoning(str(record.get("reasoning", "")), rng)
        else:
            raise ValueError(f"unknown perturbation {t!r}; choose from {PERTURBATIONS}")
        rows.append(row)
    return rows


def _acc(completion: Any, gt: Any) -> float:
    # the same accuracy (and the same handling of bad or out-of-range gold) as the recipe
    return eqa_accuracy(completion_text(completion), gt).value or 0.0


def contrastive_reward(delta: float = 0.95, mu: float = 0.3, min_acc: float = 0.1):
    """A TRL reward function computing the C-GRPO boost over the batch (see module doc)."""
    contrastive_boost([1.0], [1.0], delta, mu, min_acc)  # validate the constants now

    def contrastive(
        prompts=None, completions=None, perturbation=None, gt_score=None, **kwargs
    ) -> list[float | None]:
        n = len(completions)
        kinds = perturbation or ["none"] * n
        golds = gt_score or [None] * n
        accs = [_acc(c, g) for c, g in zip(completions, golds, strict=True)]
        orig = [i for i in range(n) if kinds[i] == "none"]
        boosts = {}
        for t in sorted(set(kinds) - {"none"}):
            pert = [accs[i] for i in range(n) if kinds[i] == t]
            boosts[t] = contrastive_boost([accs[i] for i in orig], pert, delta, mu, min_acc)
        combined = combine_boosts(boosts) if boosts else [0.0] * len(orig)
        out: list[float | None] = [None] * n
        for j, i in enumerate(orig):
            out[i] = combined[j]
        return out

    return contrastive
