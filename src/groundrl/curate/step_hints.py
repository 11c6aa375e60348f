"""EmbodiedBrain's Step-GRPO guided precursors.

With probability ``p`` a training prompt carries a random-length prefix of the gold
plan as "guided precursors" (steps already done) and the reward is computed on the
completion of the remaining steps. The paper says only "random length"; we draw the
prefix length k uniformly from {0, …, T−1} for a plan of T steps, so at least one step is
always left to generate. k = 0 is a hint with no steps — the prompt is unchanged — so the
prompt visibly changes with probability ``p · (T − 1) / T``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

DEFAULT_HEADER = "Guided precursors (already done):"
DEFAULT_FOOTER = "Continue with the remaining steps."


def _check(rng: Any, p: Any) -> None:
    if not isinstance(rng, random.Random):
        raise ValueError(f"rng must be a random.Random (e.g. random.Random(0)), got {type(rng).__name__}")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise ValueError(f"p (the hint probability) must be a number in [0, 1], got {p!r}")


def step_hint(
    gold_steps: Sequence[Any], rng: random.Random, p: float = 0.5
) -> tuple[list[Any], list[Any], bool]:
    """``(prefix, remaining, hinted)`` with ``prefix + remaining == list(gold_steps)``.

    One ``rng.random()`` draw decides the hint (``< p``); a hinted plan then draws
    ``k = rng.randrange(T)`` and splits at k. Unhinted, or an empty plan:
    ``([], gold, False)``. ``hinted`` tells a k = 0 hint from no hint (both leave the
    prompt as it is). A string is one step, not a sequence of characters.
    """
    _check(rng, p)
    if isinstance(gold_steps, (str, bytes)):
        gold = [gold_steps]
    elif isinstance(gold_steps, Sequence):
        gold = list(gold_steps)
    else:
        raise ValueError(f"gold_steps must be a sequence of steps, got {type(gold_steps).__name__}")
    if not gold or rng.random() >= p:
        return [], gold, False
    k = rng.randrange(len(gold))
    return gold[:k], gold[k:], True


def hinted_prompt(
    prompt: str,
    prefix: Sequence[Any],
    header: str = DEFAULT_HEADER,
    footer: str = DEFAULT_FOOTER,
) -> str:
    """``prompt`` followed by the prefix steps as a numbered list of guided precursors::

        <prompt>
        Guided precursors (already done):
        1. <step 1>
        …
        Continue with the remaining steps.

    Steps are written with ``str()``. An empty prefix returns ``prompt`` unchanged.
    """
    if not prefix:
        return prompt
    lines = "\n".join(f"{i + 1}. {s}" for i, s in enumerate(prefix))
    return "\n".join(part for part in (prompt, header, lines, footer) if part)


def hint_sample(
    prompt: str, gold_steps: Sequence[Any], rng: random.Random, p: float = 0.5, **format_kw: str
) -> tuple[str, list[Any], int | None]:
    """One Step-GRPO training sample: ``(prompt_text, remaining_gold, k)``; ``k`` is the
    number of hinted steps, ``None`` when the sample was not hinted. ``format_kw`` goes to
    :func:`hinted_prompt` (``header``, ``footer``)."""
    prefix, remaining, hinted = step_hint(gold_steps, rng, p)
    return hinted_prompt(prompt, prefix, **format_kw), remaining, (len(prefix) if hinted else None)
