"""Reasoning perturbation (EQA-RM C-GRPO): the steps of a reasoning trace shuffled."""

from __future__ import annotations

import random
import re
from typing import Any

from groundrl.augment.masking import check_rng
from groundrl.parse.tags import iter_tag_spans

# A step ends at . ! or ? (optionally followed by a closing quote or bracket) before
# whitespace, or at a line break. The separators stay where they are; only steps move.
_SEP_RE = re.compile(r"(?<=[.!?])\s+|(?<=[.!?][\"')\]])\s+|[ \t]*\n\s*")
# "1." / "Step 2)" and common abbreviations do not end a step: they are glued to the next.
_ENUM_RE = re.compile(r"(?:step\s*)?\(?\d{1,3}[.)]", re.IGNORECASE)
_ABBR_RE = re.compile(r"(?<!\w)(?:e\.g|i\.e|cf|vs|mr|mrs|ms|dr|fig)\.\Z", re.IGNORECASE)


def _glues(piece: str) -> bool:
    # only the last 8 characters are searched (the lookbehind still sees the one before)
    return bool(_ENUM_RE.fullmatch(piece) or _ABBR_RE.search(piece, max(0, len(piece) - 8)))


def split_steps(text: str) -> tuple[list[str], list[str]]:
    """``(steps, separators)`` with ``text == steps[0] + seps[0] + steps[1] + … + steps[-1]``
    for text without leading or trailing whitespace."""
    steps: list[str] = []
    seps: list[str] = []
    parts: list[str] = []  # the step being built: pieces glued with their separators
    pos = 0
    for m in _SEP_RE.finditer(text):
        piece = text[pos : m.start()]
        pos = m.end()
        if _glues(piece):
            parts += [piece, m.group(0)]
            continue
        steps.append("".join(parts) + piece)
        seps.append(m.group(0))
        parts = []
    steps.append("".join(parts) + text[pos:])
    return steps, seps


def _permuted(items: list[str], rng: random.Random) -> list[str]:
    """A random reordering that differs from ``items`` when it has ≥ 2 distinct values."""
    out = list(items)
    if len(set(items)) >= 2:
        while out == items:
            rng.shuffle(out)
    return out


def _shuffle_sentences(region: str, rng: random.Random) -> str:
    core = region.strip()
    if not core:
        return region
    lead = region[: len(region) - len(region.lstrip())]
    trail = region[len(region.rstrip()) :]
    steps, seps = split_steps(core)
    new = _permuted(steps, rng)
    body = "".join(s + sep for s, sep in zip(new, seps + [""], strict=True))
    return lead + body + trail


def shuffle_reasoning(text: Any, rng: random.Random) -> str:
    """``text`` with its reasoning steps in a random order (seeded by ``rng``).

    * Two or more complete ``<think>…</think>`` blocks with at least two different
      contents: the block contents are permuted among the blocks (tags stay in place).
    * Otherwise the reasoning is split into steps — sentences ending in ``.``/``!``/``?``
      before whitespace, and lines — and the steps are permuted among their slots, the
      whitespace between them staying where it was. Enumerators (``1.``, ``Step 2)``) and
      ``e.g.``/``i.e.``/``Dr.``-style abbreviations stay with the following words. The
      reasoning is the content of each ``<think>`` block (each shuffled on its own), else
      what follows an unclosed ``<think>``, else what precedes a lone ``</think>`` (chat
      templates that open the block in the prompt), else the whole text.

    Text outside the reasoning is returned untouched. Whenever the reasoning has at least
    two different steps the result differs from ``text``; otherwise ``text`` comes back
    unchanged. Total: ``None`` gives ``""`` and other non-strings their ``str()``.
    """
    check_rng(rng, "shuffle_reasoning(text, rng)")
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    spans = iter_tag_spans(text, "think")
    if len(spans) >= 2 and len({text[a:b] for _, a, b, _ in spans}) >= 2:
        new = _permuted([text[a:b] for _, a, b, _ in spans], rng)
        out, pos = [], 0
        for (_, a, b, _), content in zip(spans, new, strict=True):
            out += [text[pos:a], content]
            pos = b
        return "".join(out + [text[pos:]])
    if not spans:
        low = text.lower()
        start, end = low.find("<think>"), low.find("</think>")
        if start >= 0:
            spans = [(start, start + len("<think>"), len(text), len(text))]
        elif end >= 0:
            spans = [(0, 0, end, end)]
        else:
            spans = [(0, 0, len(text), len(text))]
    out, pos = [], 0
    for _, a, b, _ in spans:
        out += [text[pos:a], _shuffle_sentences(text[a:b], rng)]
        pos = b
    return "".join(out + [text[pos:]])
