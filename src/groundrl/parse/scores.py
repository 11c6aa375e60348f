"""Scores and verdicts written by generative reward models."""

from __future__ import annotations

import re
from typing import Any

from groundrl.parse.numbers import parse_number
from groundrl.parse.result import Parsed, fail
from groundrl.parse.tags import find_tag

# "7", "7.5", " 7 ", "7/10", "7 / 10", "+7": a score and nothing else (an optional
# "/ max" suffix is tolerated because judges often write "8/10").
_SCORE_RE = re.compile(r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+))\s*(?:/\s*\d+(?:\.\d+)?)?\s*")
_ALNUM_RE = re.compile(r"[^0-9A-Za-z]+")


def parse_score(
    text: Any, lo: float = 0.0, hi: float = 10.0, tag: str = "score", which: str = "last"
) -> Parsed:
    """The number inside ``<tag>…</tag>`` (the last complete pair by default: judges that
    restate a score end with their final one). The content must be a number, optionally
    followed by ``/max``; it must lie in ``[lo, hi]``."""
    inner = find_tag(text, tag, which="last" if which == "last" else "first")
    if inner is None:
        return fail(f"no <{tag}>…</{tag}>")
    m = _SCORE_RE.fullmatch(inner)
    if m is None:
        return fail(f"<{tag}> is not a number: {inner[:40]!r}")
    v = float(m.group(1))
    if not lo <= v <= hi:
        return fail(f"score {v:g} outside [{lo:g}, {hi:g}]")
    return Parsed(v)


def parse_unit_score(text: Any) -> float:
    """EmbodiedBrain planning-GRM score: the first number inside the first ``<score>``,
    clamped to ``[0, 1]``; ``0.0`` when there is no tag or no number."""
    inner = find_tag(text, "score")
    if inner is None:
        return 0.0
    n = parse_number(inner)
    if not n.ok:
        return 0.0
    return min(1.0, max(0.0, n.value))


def answer_alnum(text: Any) -> str:
    """Alphanumerics of the first ``<answer>`` content (of the whole text if none)."""
    if not isinstance(text, str):
        return ""
    inner = find_tag(text, "answer")
    return _ALNUM_RE.sub("", text if inner is None else inner)


def parse_pairwise_verdict(text: Any) -> Parsed:
    """Which of two responses a judge prefers, by Proxy-GRM's rule: take the
    alphanumerics of the first ``<answer>`` content (the whole text when there is none);
    the verdict is 1 or 2 when exactly one of the characters '1' and '2' occurs there."""
    chars = answer_alnum(text)
    has1, has2 = "1" in chars, "2" in chars
    if has1 == has2:
        return fail("both '1' and '2' in the answer" if has1 else "no '1' or '2' in the answer")
    return Parsed(1 if has1 else 2)
