"""EmbodiedBrain's Step-GRPO guided precursors: with probability ``p`` the prompt carries a
random-length prefix of the gold plan, and the reward is computed on the completion of
the remaining steps. The prefix length k is uniform over 0 … T−1 (our reading of "random
length"; k = 0 means a hinted prompt with no steps)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any


def step_hint(
    gold_steps: Sequence[Any], rng: random.Random, p: float = 0.5
) -> tuple[list[Any], list[Any], bool]:
    """``(prefix, remaining, hinted)``; unhinted: ``([], gold, False)``."""
    if not 0 <= p <= 1:
        raise ValueError(f"p must be in [0, 1], got {p}")
    gold = list(gold_steps)
    if not gold or rng.random() >= p:
        return [], gold, False
    k = rng.randrange(len(gold))
    return gold[:k], gold[k:], True


def hinted_prompt(
    prompt: str, prefix: Sequence[Any], header: str = "Guided precursors (already done):"
) -> str:
    """The prompt with the prefix steps appended as guided precursors."""
    if not prefix:
        return prompt
    lines = "\n".join(f"{i + 1}. {s}" for i, s in enumerate(prefix))
    return f"{prompt}\n{header}\n{lines}\nContinue with the remaining steps."
