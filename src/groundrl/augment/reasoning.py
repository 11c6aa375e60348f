"""Reasoning perturbation: reasoning steps shuffled (EQA-RM's jumbled reasoning)."""

from __future__ import annotations

import random
import re

from groundrl.parse.tags import iter_tag_spans

_SENT_RE = re.compile(r"(?<=[.!?])\s+")


def _shuffled(items: list[str], rng: random.Random) -> list[str]:
    if len(set(items)) < 2:
        return items
    out = list(items)
    while out == items:
        rng.shuffle(out)
    return out


def shuffle_reasoning(text: str, rng: random.Random) -> str:
    """Several ``<think>…</think>`` blocks: their contents are permuted among the blocks.
    Otherwise the sentences of the reasoning (inside the one ``<think>`` block if there
    is one, else the whole text) are permuted. Text outside the reasoning is kept; with
    fewer than two distinct steps the text comes back unchanged."""
    if not isinstance(text, str):
        return text
    spans = iter_tag_spans(text, "think")
    if len(spans) >= 2:
        contents = [text[a:b] for _, a, b, _ in spans]
        new = _shuffled(contents, rng)
        out, pos = [], 0
        for (_, a, b, _), c in zip(spans, new, strict=True):
            out.append(text[pos:a])
            out.append(c)
            pos = b
        out.append(text[pos:])
        return "".join(out)
    a, b = (spans[0][1], spans[0][2]) if spans else (0, len(text))
    inner = text[a:b]
    lead = inner[: len(inner) - len(inner.lstrip())]
    trail = inner[len(inner.rstrip()) :]
    sents = _SENT_RE.split(inner.strip())
    return text[:a] + lead + " ".join(_shuffled(sents, rng)) + trail + text[b:]
