"""Scores and pairwise verdicts written by generative reward models.

Every function here is total: any input (``None``, bytes, a megabyte of ``<``) gives a
value or a reason, never an exception. Only bad *configuration* (``lo > hi``, an unknown
``which``) raises, with a message saying what to change.

Choices where the papers are silent:

* **Which ``<score>``** (:func:`parse_score`): the **last** complete pair by default.
  Judges restate or revise a score inside their critique ("I first thought <score>2</score>
  …") and end with the final one, so the last pair is the judge's decision. Pairs are read
  by :mod:`groundrl.parse.tags` (tag names case-insensitive, non-nesting, content stripped).
* **What a score is**: a plain decimal and nothing else, ``"7"``, ``"7.5"``, ``" 7 "``,
  ``"10.0"``, ``"+7"``, ``"7."``, ``".5"``; optionally followed by ``/hi`` ("7/10" → 7 on a
  0–10 scale), since judges often restate the scale. A different denominator ("7/5",
  "8/100") is a different scale and is rejected rather than silently misread; so are
  exponents ("1e1"), words ("seven") and extra text ("7, maybe 8").
* **Range**: a score outside ``[lo, hi]`` is not a score (value ``None``, reason
  ``"score out of range: …"``); callers turn that into format 0 and accuracy 0.

:func:`parse_number` is the project's number reader (:mod:`groundrl.parse.numbers`),
re-exported here: the first number in the text as a float, accepting ``"7"``, ``"-3"``,
``"7.5"``, ``".5"``, ``"1e2"`` (= 100.0) and ``"1,234"``; ``"7/10"`` gives 7; ``inf``/``nan``
are never numbers.
"""

from __future__ import annotations

import math
import re
import reprlib
from numbers import Integral, Real
from typing import Any

from groundrl.parse.numbers import parse_number
from groundrl.parse.result import Parsed, fail
from groundrl.parse.tags import _close_re, find_tag

__all__ = [
    "answer_alnum",
    "parse_number",
    "parse_pairwise_verdict",
    "parse_preferred",
    "parse_score",
    "parse_unit_score",
]

# A decimal, then optionally "/ denominator". Applied with fullmatch to stripped tag
# content; no nested quantifiers, so it is linear on any content.
_SCORE_RE = re.compile(r"([-+]?(?:\d+(?:\.\d*)?|\.\d+))(?:\s*/\s*(\d+(?:\.\d+)?))?")
_NON_ALNUM_RE = re.compile(r"[^0-9A-Za-z]+")
_ANSWER_CLOSE = _close_re("answer")


def parse_score(
    text: Any, lo: float = 0.0, hi: float = 10.0, tag: str = "score", which: str = "last"
) -> Parsed:
    """The number inside ``<tag>…</tag>``: the ``which`` (``"last"`` or ``"first"``)
    complete pair; its content must be a decimal, optionally followed by ``/hi``, that
    lies in ``[lo, hi]`` (both ends included).

    Returns ``Parsed(float)``, or ``Parsed(None, reason)`` when the tag is absent, its
    content is not a number, or the number is out of range.

    Raises ``ValueError`` for bad configuration: non-finite or inverted bounds, an empty
    tag, ``which`` not ``"first"``/``"last"``.
    """
    if which not in ("first", "last"):
        raise ValueError(f"which must be 'first' or 'last', got {which!r}")
    if not (isinstance(tag, str) and tag.strip()):
        raise ValueError(f"tag must be a non-empty tag name such as 'score', got {tag!r}")
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise ValueError(f"need finite bounds with lo <= hi, got lo={lo!r}, hi={hi!r}")
    inner = find_tag(text, tag, which="first" if which == "first" else "last")
    if inner is None:
        return fail(f"no <{tag}>…</{tag}>")
    m = _SCORE_RE.fullmatch(inner)
    if m is None:
        return fail(f"<{tag}> is not a number: {inner[:40]!r}")
    v = float(m.group(1))
    if m.group(2) is not None and float(m.group(2)) != hi:
        return fail(f"<{tag}> is on another scale: {inner[:40]!r} (expected out of {hi:g})")
    if not lo <= v <= hi:
        return fail(f"score out of range: {v:g} not in [{lo:g}, {hi:g}]")
    return Parsed(v)


def parse_unit_score(text: Any) -> float:
    """EmbodiedBrain planning-GRM score from ``<think>…</think><score>0.00-1.00</score>``.

    Rule: the first number inside the **first** ``<score>`` pair, clamped to ``[0, 1]``
    (``1.7`` → 1.0, ``-2`` → 0.0); ``0.0`` when there is no pair or no number in it. The
    number is read by :func:`parse_number`, so ``"0.85 (good)"`` → 0.85 and ``"1e2"`` → 1.0.
    """
    inner = find_tag(text, "score")
    if inner is None:
        return 0.0
    n = parse_number(inner)
    if not n.ok:
        return 0.0
    return min(1.0, max(0.0, n.value))


def unit_score_reason(text: Any) -> str:
    """Why :func:`parse_unit_score` read what it read, when the judge's answer was not a
    plain score in [0, 1]; ``""`` when it was (issue 26: ``<score>nan</score>`` and
    ``1e999`` scored 0 with no reason). Non-finite and missing scores are judge failures
    (the part's fallback); a score outside [0, 1] is clamped by the paper's rule, and
    said so.

    >>> unit_score_reason("<score>0.85</score>"), unit_score_reason("no tag")
    ('', 'no <score> in judge output')
    >>> unit_score_reason("<score>nan</score>"), unit_score_reason("<score>1e999</score>")
    ("judge score 'nan' is not finite (scored 0)", "judge score '1e999' is not finite (scored 0)")
    >>> unit_score_reason("<score>1.7</score>")
    'judge score 1.7 is outside [0, 1], clamped'
    """
    if not isinstance(text, str):
        return "no <score> in judge output"
    inner = find_tag(text, "score")
    if inner is None:
        return "no <score> in judge output"
    n = parse_number(inner)
    if n.ok:
        return "" if 0.0 <= n.value <= 1.0 else f"judge score {n.value!r} is outside [0, 1], clamped"
    head = inner.strip()[:40].split(maxsplit=1)
    if head:
        try:
            v = float(head[0])
        except ValueError:
            v = 0.0
        if not math.isfinite(v):
            return f"judge score {head[0]!r} is not finite (scored 0)"
    return f"no number in the judge's <score> ({reprlib.repr(inner.strip()[:40])}): scored 0"


def answer_alnum(text: Any) -> str:
    """The ASCII alphanumerics of the first ``<answer>`` content, or of the whole text
    when there is no complete ``<answer>`` pair; ``""`` for non-text."""
    if not isinstance(text, str):
        return ""
    inner = find_tag(text, "answer")
    return _NON_ALNUM_RE.sub("", text if inner is None else inner)


def parse_pairwise_verdict(text: Any) -> Parsed:
    """Which of two responses a judge prefers, by Proxy-GRM's rule.

    Take the alphanumerics of the first ``<answer>`` content (the whole text when there
    is no ``<answer>`` pair, as in the paper's code). The verdict is ``1`` or ``2`` when
    exactly one of the characters ``'1'`` and ``'2'`` occurs there: ``"Response 1"`` → 1,
    ``"2"`` → 2; ``"12"``, ``"1 or 2"``, ``""`` and ``"neither"`` → ``None`` with a reason.
    Other digits are ignored (``"Response 1 (score 9)"`` → 1).
    """
    # '1' / '2' occur in the alphanumerics of a region exactly when they occur in the
    # region itself, so no substitution; the results are shared constants (Parsed is
    # immutable). One regex call finds the first opening tag, its content and, in the
    # common case, the closing tag right after it (issue 30: the two searches of the
    # earlier form cost more than the released parser's one).
    if type(text) is not str:
        if not isinstance(text, str):
            return _VERDICT_NEITHER
        text = str.__str__(text)  # a plain copy: a subclass's methods are not consulted
    if len(text) > _HOP_FROM:
        m = _verdict_match_long(text)
    else:
        m = _VERDICT_SEARCH(text)
    if m is not None:
        inner = m[1]
        if inner is not None:  # the closing tag follows the content directly
            text = inner
        elif m.end() != len(text):  # a '<' inside the answer: find the first closing tag
            # the opening tag m starts with ends at its first '>' (the tag's pattern
            # has no other '>')
            start = text.find(">", m.start()) + 1
            c = _ANSWER_CLOSE_SEARCH(text, start)
            if c is not None:
                text = text[start : c.start()]
        # else: no '<' after the opening tag, so no closing tag: the whole text
    if "1" in text:
        return _VERDICT_BOTH if "2" in text else _VERDICT_1
    return _VERDICT_2 if "2" in text else _VERDICT_NEITHER


def _verdict_match_long(text: str) -> re.Match[str] | None:
    """:data:`_VERDICT_SEARCH` on a long text, started at the first ``'<'`` that can open
    an ``<answer>`` tag (``'<'`` then whitespace or ``a``/``A``): ``str.find`` skips the
    prose between tags many times faster than the regex scan does. At most
    ``_MAX_HOPS`` hops (a text of many ``'<'`` goes back to the regex), so linear."""
    find = text.find
    k = find("<")
    try:
        for _ in _MAX_HOPS:
            if k < 0 or text[k + 1] in _OPEN_FIRST:
                break
            k = find("<", k + 1)
    except IndexError:  # a '<' as the last character opens nothing
        return None
    return None if k < 0 else _VERDICT_SEARCH(text, k)


# The first <answer> opening tag (as tags._open_re("answer"): `(?:>|\s[^<>]*>)` is
# `(?:\s[^<>]*)?>` spelled as two disjoint branches), then either its content up to the
# next '<' (possessive: no backtracking) as group 1 when a closing tag starts at that '<'
# (the first closing tag after the opening one starts at a '<'), or, group 1 unset, the
# content run alone. Linear: an attempt at a '<' that opens nothing stops at the next '<',
# and the content is read at most twice.
_VERDICT_SEARCH = re.compile(
    r"<\s*answer(?:>|\s[^<>]*>)(?:([^<]*+)(?:</answer>|</\s*answer\s*>)|[^<]*+)", re.IGNORECASE
).search
_ANSWER_CLOSE_SEARCH = _ANSWER_CLOSE.search
# The characters that may follow the '<' of an opening tag: those matching (?i)a or \s
# (tests/test_verdict_fast_path.py derives the set from the regex over every code point).
_OPEN_FIRST = frozenset(
    "Aa\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
# [ours: measured on bench/rewards.py's proxy corpus, issue 30] below ~4,000 characters
# the regex scan costs less than the Python loop around str.find; 32 hops bound the loop.
_HOP_FROM, _MAX_HOPS = 4000, range(32)
_VERDICT_1, _VERDICT_2 = Parsed(1), Parsed(2)
_VERDICT_BOTH = fail("both '1' and '2' in the answer")
_VERDICT_NEITHER = fail("no '1' or '2' in the answer")


def parse_preferred(value: Any) -> Parsed:
    """A pairwise label (which response is preferred) as ``1`` or ``2``.

    Accepts the ints ``1``/``2`` (numpy integers too), the integral floats ``1.0``/``2.0``
    (dataset columns holding a missing value turn into floats) and the strings ``"1"``/
    ``"2"`` with surrounding whitespace. Anything else, ``True`` included, is
    ``Parsed(None, "preferred must be 1 or 2, got …")``.
    """
    if type(value) is int:  # the common case, before the slower ABC checks
        v: Any = value
    elif isinstance(value, bool):
        v = None
    elif isinstance(value, Integral):
        v = int(value)
    elif isinstance(value, Real):
        f = float(value)
        v = int(f) if f in (1.0, 2.0) else None
    elif isinstance(value, str):
        v = int(value.strip()) if value.strip() in ("1", "2") else None
    else:
        v = None
    if v not in (1, 2):
        return fail(f"preferred must be 1 or 2, got {reprlib.repr(value)}")
    return Parsed(v)
