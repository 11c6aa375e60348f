"""Grounding mentions in reasoning: 2-D points and frame / time references.

Both extractors are total (non-text → empty lists) and linear on adversarial text.
"""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from groundrl.parse.result import Parsed, fail
from groundrl.parse.tags import iter_tag_spans

# --- points -----------------------------------------------------------------

# name = "double" | 'single' | bare; a bare value stops at whitespace, quotes or '>'.
# As read: ([A-Za-z_][\w-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)). Tried from every
# position, a run of word characters without '=' costs its length at each of its letters
# (issue 41: '<points aaa…a>' was quadratic). Every letter of a run reaches the same
# end of run, so only the run's first letter can match: the pattern starts where a run
# starts, steps over its leading digits / '-' / non-ASCII word characters, and takes the
# name and the whitespace possessively (neither can give anything back that '=' or a
# value could start with). Same matches as the pattern as read under finditer, whose
# next try never starts inside a run it already took (tests/test_linear_shapes_argos.py).
_ATTR_RE = re.compile(
    r"""(?<![\w-])(?:[^\W_A-Za-z]|-)*+([A-Za-z_][\w-]*+)\s*+=\s*+(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))"""
)
_COORD_RE = re.compile(r"([xy])(\d*)")


@dataclass(frozen=True, slots=True)
class Point:
    """One cited point: coordinates as written, ``label`` (the tag content, or ``alt``
    when the content is empty) and ``alt`` (the attribute, ``""`` when absent)."""

    x: float
    y: float
    label: str
    alt: str = ""


def _attrs(tag_text: str) -> dict[str, str]:
    out = {}
    for m in _ATTR_RE.finditer(tag_text):
        val = next(v for v in m.groups()[1:] if v is not None)
        out[m.group(1).lower()] = val
    return out


def _float(s: str | None) -> float | None:
    if s is None:
        return None
    try:
        v = float(s.strip())
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def extract_points(text: Any) -> list[Point]:
    """Points from ``<points x1=".." y1=".." x2=".." y2=".." alt="..">label</points>``
    (Molmo-style: any index suffix, several points per tag) and the single-point
    ``<point x=".." y=".." alt="..">label</point>``, in text order.

    * Attribute names are case-insensitive; values in double, single or no quotes.
    * ``xN`` pairs with ``yN`` (``x``/``y`` without an index pair with each other);
      indices are read in numeric order. An index whose ``x`` or ``y`` is missing or
      not a finite number (``x1="a"``, ``x2="nan"``) is skipped; the others stay.
    * ``label`` is the tag content stripped, or ``alt`` when the content is empty.
    * Coordinates are returned as written: the unit (pixels, 0–100, 0–1000) is the
      caller's convention (see ``coord_scale`` in :func:`groundrl.rewards.grounding.spatial`).
    """
    if not isinstance(text, str):
        return []
    found: list[tuple[int, int, Point]] = []
    for tag in ("points", "point"):
        for open_start, c_start, c_end, _ in iter_tag_spans(text, tag):
            attrs = _attrs(text[open_start:c_start])
            alt = attrs.get("alt", "")
            label = text[c_start:c_end].strip() or alt.strip()
            coords: dict[str, dict[str, float | None]] = {}
            for key, val in attrs.items():
                m = _COORD_RE.fullmatch(key)
                if m:
                    coords.setdefault(m.group(2), {})[m.group(1)] = _float(val)
            for k, idx in enumerate(sorted(coords, key=lambda i: int(i) if i else -1)):
                x, y = coords[idx].get("x"), coords[idx].get("y")
                if x is not None and y is not None:
                    found.append((open_start, k, Point(x, y, label, alt)))
    found.sort(key=lambda t: (t[0], t[1]))
    return [p for _, _, p in found]


# --- frame and time mentions ---------------------------------------------------

Unit = Literal["frame", "second"]

# Mentions beyond this many (of each kind) are dropped: no real reasoning cites more,
# and each one later costs a judge call.
MAX_MENTIONS = 256
# A mention's context is its sentence, clipped to this many characters on each side.
CONTEXT_CHARS = 300


@dataclass(frozen=True, slots=True)
class FrameMention:
    """A single moment: ``frame 24`` (``at=24, unit="frame"``) or ``18.71 seconds``
    (``at=18.71, unit="second"``); ``text`` is the matched words, ``context`` the
    sentence they sit in."""

    at: float
    unit: Unit
    text: str
    context: str


@dataclass(frozen=True, slots=True)
class SegmentMention:
    """A span: ``frame 25 to frame 27`` (``start=25, end=27, unit="frame"``) or ``from
    4.47 to 16.11 seconds`` (``unit="second"``); ``start ≤ end`` always (a reversed
    span as written, "frames 27-25", is put in order)."""

    start: float
    end: float
    unit: Unit
    text: str
    context: str


# A number not glued to a word or another number ("v2", "1.2.3" are not read).
_NUM = r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.]\d)"
_FNUM = r"#?\s*(\d+(?:\.\d+)?)(?![\w]|\.\d)"
_SEC = r"(?:seconds?|secs?|s)\b"
_TO = r"\s*(?:[-–—~]|\bto\b|\bthrough\b|\bthru\b|\buntil\b|\btill\b)\s*"
_LIST_SEP = r"\s*(?:,\s*and\s+|,\s*|and\s+|&\s*)"
# The mention patterns, as read (tests/test_temporal_fast_path.py keeps them as the
# reference). Segments: "frame 25 to frame 27", "between frames 3 and 5"; "from 4.47 to
# 16.11 seconds", "between 2 and 4 seconds". Moments: "frame 24", "frames 3 and 5" (a list
# after the plural is one match holding several frames); "18.71 seconds".
#   segment frame:  (?:\bfrom\s+)?\bframes?\s*{_FNUM}{_TO}(?:frames?\s*)?{_FNUM}
#                   | \bbetween\s+frames?\s*{_FNUM}\s*(?:,\s*)?and\s+(?:frames?\s*)?{_FNUM}
#   segment second: (?:\bfrom\s+)?{_NUM}\s*(?:{_SEC})?{_TO}{_NUM}\s*{_SEC}
#                   | \bbetween\s+{_NUM}\s*(?:{_SEC})?\s*and\s+{_NUM}\s*{_SEC}
#   frame:          \bframe\s*{_FNUM} | \bframes\s*{_FNUM}(?:{_LIST_SEP}#?\s*\d+(?:\.\d+)?\b(?!\s*{_SEC}))*
#   second:         {_NUM}\s*{_SEC}                      (all case-insensitive)
# Compiled below in an equivalent form that starts with a character class, so the regex
# engine skips to the next f / b / digit in C instead of trying a match at every position
# (issue 30: 0.2-0.4 s per MB of text without one mention). The pattern has no global
# IGNORECASE (a class of cased letters would not lead the search then) and (?i) f and b
# match only f/F and b/B (tested over every code point); a leading word's \b becomes a
# lookbehind after its first letter, the other letters stay case-insensitive; a number's
# (?<![\w.]) moves after its first digit, and a lookbehind stepping back onto that
# digit captures the whole number.
_FROM_FRAME = r"(?<=f)(?:rom\s+f)?rames?"  # (?:\bfrom\s+)?\bframes? after its f
# {_NUM} after its first digit (and possessive, see _PNUM)
_DIGIT_NUM = r"(?<![\w.]\d)(?<=(?=(\d++(?:\.\d+)?+))\d)\d*+(?:\.\d+)?+(?![\w.]\d)"
# Possessive forms: giving digits back to a number leaves a digit or '.' next, and giving
# whitespace back leaves whitespace next, where nothing that follows can start, so no
# backtracking into them can succeed; without it a failed try retries every split.
_PNUM = r"(?<![\w.])(\d++(?:\.\d+)?+)(?![\w.]\d)"  # {_NUM}
_PTO = _TO.replace(r"\s*", r"\s*+")  # {_TO}
# Whitespace before something that cannot start with whitespace, taken possessively
# (issue 41): "frame", "between frames", "between 1" + a run of spaces tried every split
# of the run between two adjacent \s* (quadratic in the run, 1 s at 10 KB).
_PFNUM = r"\s*+#?\s*+(\d++(?:\.\d+)?+)(?![\w]|\.\d)"  # \s*{_FNUM}
_PLIST_SEP = r"\s*+(?:,\s*+and\s++|,\s*+|and\s++|&\s*+)"  # {_LIST_SEP}
# What must come next, past whitespace, where a span's first number is followed by {_TO}
# (or by an optional unit, then {_TO}): a lookahead that ends a hopeless try at once
# ("1 1 1 …" and "frames 1, frames 1, …" otherwise try every separator at every number).
_TO_NEXT = r"(?=\s*[-–—~tu])"
_SEC_TO_NEXT = r"(?=\s*[-–—~tus])"
_SEGMENT_FRAME_RE = re.compile(
    rf"[fFbB](?<!\w[fFbB])(?i:{_FROM_FRAME}{_PFNUM}{_TO_NEXT}{_PTO}(?:frames?)?{_PFNUM}"
    rf"|(?<=b)etween\s+frames?{_PFNUM}\s*+(?:,\s*+)?and\s++(?:frames?)?{_PFNUM})"
)
_SEGMENT_SECOND_RE = re.compile(
    rf"[fFbB\d](?:(?<=[fFbB])(?<!\w[fFbB])"
    rf"(?i:(?<=f)rom\s+{_PNUM}{_SEC_TO_NEXT}\s*+(?:{_SEC})?{_PTO}{_PNUM}\s*+{_SEC}"
    rf"|(?<=b)etween\s+{_PNUM}\s*+(?:{_SEC})?\s*+and\s++{_PNUM}\s*+{_SEC})"
    rf"|{_DIGIT_NUM}(?i:{_SEC_TO_NEXT}\s*+(?:{_SEC})?{_PTO}{_PNUM}\s*+{_SEC}))"
)
_FRAME_RE = re.compile(
    rf"[fF](?<!\w[fF])(?i:rame{_PFNUM}|rames{_PFNUM}(?:{_PLIST_SEP}#?\s*+\d+(?:\.\d+)?\b(?!\s*+{_SEC}))*)"
)
# a class of digits may lead under IGNORECASE, and the number's own group captures it
_SECOND_RE = re.compile(rf"(\d(?<![\w.]\d)\d*+(?:\.\d+)?+)(?![\w.]\d)\s*+{_SEC}", re.IGNORECASE)
_LIST_NUM_RE = re.compile(r"\d+(?:\.\d+)?")
_SENTENCE_END_RE = re.compile(r"[.!?](?=\s)|\n")


def _context(text: str, start: int, end: int) -> str:
    """The sentence around ``[start, end)``: bounded by ``.``, ``!`` or ``?`` followed by
    whitespace, or a newline (a decimal point is not a boundary), clipped to
    :data:`CONTEXT_CHARS` on each side."""
    lo = max(0, start - CONTEXT_CHARS)
    left = lo
    for m in _SENTENCE_END_RE.finditer(text, lo, start):
        left = m.end()
    stop = _SENTENCE_END_RE.search(text, end, end + CONTEXT_CHARS)
    right = (
        stop.end()
        if stop and stop.group(0) != "\n"
        else (stop.start() if stop else min(len(text), end + CONTEXT_CHARS))
    )
    return text[left:right].strip()


def _numbers(m: re.Match[str]) -> list[float]:
    return [float(g) for g in m.groups() if g is not None]


def _ok(*vals: float) -> bool:
    return all(math.isfinite(v) for v in vals)


def extract_temporal_mentions(text: Any) -> tuple[list[FrameMention], list[SegmentMention]]:
    """Frame-level (moment) and segment-level (span) mentions, each in text order.

    Segments (unit ``frame``): "frame 25 to frame 27", "frames 25-27" (also –, —, ~),
    "from frame 3 through 5", "between frames 3 and 5". Segments (unit ``second``):
    "from 4.47 to 16.11 seconds", "4.47s - 16.11s", "between 2 and 4 seconds" — the
    unit must follow the second number ("from 4 to 5" alone is not a time).
    Moments: "frame 24", "Frame #3", "frames 3 and 5" / "frames 3, 5 and 7" (one
    mention per listed frame, a list needs the plural "frames"), "18.71 seconds",
    "at 3s", "5 sec". A number inside a segment is not also a moment; where a frame
    and a time overlap ("frame 3 s"), the frame wins
    ("frame 3s" is the time: a frame number glued to letters is not read). ``and`` makes a segment only
    after "between" ("at 2 and 4 seconds" is the moment 4 s).

    Not read: clock times ("0:12"), minutes, ordinals ("the 3rd frame"). Numbers are
    floats; non-finite ones are dropped. At most :data:`MAX_MENTIONS` of each kind.
    Each mention carries its sentence as ``context`` (see :func:`_context`).
    """
    if not isinstance(text, str):
        return [], []
    # Segments first; a later one overlapping an accepted one is dropped.
    seg_hits: list[tuple[int, int, Unit, re.Match[str]]] = []
    unit: Unit
    for regex, unit in ((_SEGMENT_FRAME_RE, "frame"), (_SEGMENT_SECOND_RE, "second")):
        for m in regex.finditer(text):
            seg_hits.append((m.start(), m.end(), unit, m))
            if len(seg_hits) > 4 * MAX_MENTIONS:
                break
    seg_hits.sort(key=lambda t: (t[0], t[2] != "frame"))
    segments: list[SegmentMention] = []
    taken: list[tuple[int, int]] = []
    for s, e, unit, m in seg_hits:
        if taken and s < taken[-1][1]:
            continue
        a, b = _numbers(m)
        if not _ok(a, b):
            continue
        taken.append((s, e))
        if len(segments) < MAX_MENTIONS:
            segments.append(
                SegmentMention(min(a, b), max(a, b), unit, m.group(0).strip(), _context(text, s, e))
            )

    # Moments outside every accepted segment; frames before seconds at equal starts.
    frame_hits: list[tuple[int, int, Unit, re.Match[str]]] = []
    for regex, unit in ((_FRAME_RE, "frame"), (_SECOND_RE, "second")):
        n = 0
        for m in regex.finditer(text):
            if _inside(m.start(), m.end(), taken):
                continue
            frame_hits.append((m.start(), m.end(), unit, m))
            n += 1
            if n >= 4 * MAX_MENTIONS:
                break
    frame_hits.sort(key=lambda t: (t[0], t[2] != "frame"))
    frames: list[FrameMention] = []
    last_end = -1
    for s, e, unit, m in frame_hits:
        if s < last_end:
            continue
        last_end = e
        words = m.group(0).strip()
        values = [float(v) for v in _LIST_NUM_RE.findall(words)] if unit == "frame" else _numbers(m)
        ctx = _context(text, s, e)
        for v in values:
            if _ok(v) and len(frames) < MAX_MENTIONS:
                frames.append(FrameMention(v, unit, words, ctx))
        if len(frames) >= MAX_MENTIONS:
            break
    return frames, segments


def _inside(s: int, e: int, taken: list[tuple[int, int]]) -> bool:
    """Does ``[s, e)`` overlap any span of the sorted, disjoint ``taken``? Only the last
    span starting before ``e`` can (the earlier ones end before it starts)."""
    i = bisect.bisect_right(taken, (e, e)) - 1
    return i >= 0 and taken[i][0] < e and s < taken[i][1]


# --- frame references → frame indices (Argos' 1-based traces) -----------------


def _frame_times(n_frames: int, fps: Any, timestamps: Any) -> list[float] | str:
    if timestamps is not None:
        if not isinstance(timestamps, (list, tuple)) or len(timestamps) != n_frames:
            return f"timestamps must list one time per frame ({n_frames})"
        try:
            ts = [float(t) for t in timestamps]
        except (TypeError, ValueError):
            return "timestamps must be numbers (seconds)"
        if not all(math.isfinite(t) for t in ts):
            return "timestamps must be finite"
        return ts
    if fps is None:
        return "a mention in seconds needs the sample's fps or timestamps"
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not math.isfinite(fps) or fps <= 0:
        return f"fps must be a positive number, got {fps!r}"
    return [k / fps for k in range(n_frames)]


def _nearest(ts: list[float], t: float) -> int:
    """Index of the frame time nearest to ``t`` (ties: the earlier frame)."""
    return min(range(len(ts)), key=lambda k: (abs(ts[k] - t), k))


def _seconds_to_index(t: float, ts: list[float]) -> int | None:
    # a time before the first frame or past the last frame's interval is out of the video
    step = (ts[-1] - ts[0]) / (len(ts) - 1) if len(ts) > 1 else 0.0
    if t < ts[0] - 1e-9 or t > ts[-1] + max(step, 0.0) + 1e-9:
        return None
    return _nearest(ts, t)


def frame_index(mention: FrameMention, n_frames: int, fps: Any = None, timestamps: Any = None) -> Parsed:
    """The 0-based list index of the frame a mention refers to.

    Argos' traces number frames from 1 ("frame 1 at 0.00 seconds"), so ``frame k`` is
    index ``k − 1``; ``frame 0`` and frames past the last are out of range. A mention in
    seconds maps through the sample's ``timestamps`` (seconds of each sampled frame) or
    ``fps`` (sampled frames per second, frame 1 at 0.00 s): the frame nearest in time
    (ties: the earlier one); a time before the first frame or more than one frame
    interval past the last is out of range.

    >>> m = FrameMention(18.71, "second", "18.71 seconds", "")
    >>> frame_index(FrameMention(1, "frame", "frame 1", ""), 8).value, frame_index(m, 40, fps=2).value
    (0, 37)
    """
    if isinstance(n_frames, bool) or not isinstance(n_frames, int) or n_frames < 1:
        return fail("the sample has no frames")
    if mention.unit == "frame":
        k = mention.at
        if k != int(k) or not 1 <= k <= n_frames:
            return fail(f"frame {k:g} is not one of frames 1..{n_frames} (1-based)")
        return Parsed(int(k) - 1)
    ts = _frame_times(n_frames, fps, timestamps)
    if isinstance(ts, str):
        return fail(ts)
    idx = _seconds_to_index(mention.at, ts)
    if idx is None:
        return fail(f"{mention.at:g} s is outside the video ({ts[0]:g}–{ts[-1]:g} s)")
    return Parsed(idx)


def segment_indices(
    mention: SegmentMention, n_frames: int, fps: Any = None, timestamps: Any = None
) -> Parsed:
    """``(first, last)`` 0-based frame indices (inclusive) of a segment mention: frames
    1-based as in :func:`frame_index`; seconds map each end to its nearest frame.

    >>> seg = SegmentMention(4.47, 16.11, "second", "from 4.47 to 16.11 seconds", "")
    >>> segment_indices(seg, 20, fps=1).value, segment_indices(SegmentMention(2, 4, "frame", "", ""), 5).value
    ((4, 16), (1, 3))
    """
    a = frame_index(
        FrameMention(mention.start, mention.unit, mention.text, mention.context), n_frames, fps, timestamps
    )
    b = frame_index(
        FrameMention(mention.end, mention.unit, mention.text, mention.context), n_frames, fps, timestamps
    )
    if not a.ok:
        return a
    if not b.ok:
        return b
    return Parsed((a.value, b.value))
