"""Grounding mentions in reasoning: 2-D points and frame / time references."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from groundrl.parse.tags import iter_tag_spans

_ATTR_RE = re.compile(r"""([A-Za-z_][\w-]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_COORD_RE = re.compile(r"([xy])(\d*)$")


@dataclass(frozen=True)
class Point:
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
    try:
        v = float(s) if s is not None else None
    except ValueError:
        return None
    return v if v is not None and v == v and abs(v) != float("inf") else None


def extract_points(text: Any) -> list[Point]:
    """Points from ``<points x1=".." y1=".." x2=".." y2=".." alt="..">label</points>``
    (any index suffix; single or double quotes; floats) and ``<point x=".." y="..">``.
    Coordinates pair by index; an index with a missing or non-numeric coordinate is
    skipped. The label is the tag content, or ``alt`` when the content is empty."""
    if not isinstance(text, str):
        return []
    points: list[Point] = []
    for tag in ("points", "point"):
        for open_start, c_start, c_end, _ in iter_tag_spans(text, tag):
            attrs = _attrs(text[open_start:c_start])
            label = text[c_start:c_end].strip()
            alt = attrs.get("alt", "")
            coords: dict[str, dict[str, float | None]] = {}
            for key, val in attrs.items():
                m = _COORD_RE.match(key)
                if m:
                    coords.setdefault(m.group(2), {})[m.group(1)] = _float(val)
            for idx in sorted(coords, key=lambda k: int(k) if k else 0):
                x, y = coords[idx].get("x"), coords[idx].get("y")
                if x is not None and y is not None:
                    points.append(Point(x, y, label or alt, alt))
    return points


Unit = Literal["frame", "second"]


@dataclass(frozen=True)
class FrameMention:
    """A single moment: ``frame 24`` (unit frame) or ``18.71 seconds`` (unit second)."""

    at: float
    unit: Unit
    text: str
    context: str


@dataclass(frozen=True)
class SegmentMention:
    """A span: ``frame 25 to frame 27`` or ``from 4.47 to 16.11 seconds``."""

    start: float
    end: float
    unit: Unit
    text: str
    context: str


_NUM = r"(\d+(?:\.\d+)?)"
_SEC = r"(?:s|secs?|seconds?)\b"
_RANGE = r"\s*(?:-|–|—|to|through|until|till)\s*"
_SEG_FRAME_RE = re.compile(rf"\bframes?\s*#?{_NUM}{_RANGE}(?:frame\s*#?)?{_NUM}", re.IGNORECASE)
_SEG_SEC_RE = re.compile(
    rf"(?:\b(?:from|between)\s+)?{_NUM}\s*(?:{_SEC})?(?:{_RANGE}|\s+and\s+){_NUM}\s*{_SEC}", re.IGNORECASE
)
_FRAME_RE = re.compile(rf"\bframes?\s*#?{_NUM}", re.IGNORECASE)
_SEC_RE = re.compile(rf"(?<![\d.]){_NUM}\s*{_SEC}", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+|\n")


def _context(text: str, start: int, end: int) -> str:
    """The sentence around ``[start, end)``: bounded by ". ", "! ", "? " or a newline
    (a decimal point is not a boundary)."""
    left = 0
    for m in _SENTENCE_END_RE.finditer(text, max(0, start - 500), start):
        left = m.end()
    m = _SENTENCE_END_RE.search(text, end, end + 500)
    right = m.start() if m else min(len(text), end + 500)
    return text[left:right].strip()


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < b and a < span[1] for a, b in taken)


def extract_temporal_mentions(text: Any) -> tuple[list[FrameMention], list[SegmentMention]]:
    """Frame-level and segment-level mentions, in text order.

    Segments: "frame 25 to frame 27", "frames 25-27", "frames 3 through 5",
    "from 4.47 to 16.11 seconds", "between 3 and 5 seconds", "4.47s - 16.11s".
    Moments: "frame 24", "Frame #3", "18.71 seconds", "at 3s" — outside any segment.
    "frames 3 and 5" is read as the single frame 3 (a list is not a segment).
    """
    if not isinstance(text, str):
        return [], []
    taken: list[tuple[int, int]] = []
    segments: list[tuple[int, SegmentMention]] = []
    for regex, unit in ((_SEG_FRAME_RE, "frame"), (_SEG_SEC_RE, "second")):
        for m in regex.finditer(text):
            if _overlaps(m.span(), taken):
                continue
            a, b = float(m.group(1)), float(m.group(2))
            taken.append(m.span())
            segments.append(
                (m.start(), SegmentMention(a, b, unit, m.group(0).strip(), _context(text, *m.span())))
            )
    frames: list[tuple[int, FrameMention]] = []
    for regex, unit in ((_FRAME_RE, "frame"), (_SEC_RE, "second")):
        for m in regex.finditer(text):
            if _overlaps(m.span(), taken):
                continue
            taken.append(m.span())
            frames.append(
                (
                    m.start(),
                    FrameMention(float(m.group(1)), unit, m.group(0).strip(), _context(text, *m.span())),
                )
            )
    return [f for _, f in sorted(frames, key=lambda t: t[0])], [
        s for _, s in sorted(segments, key=lambda t: t[0])
    ]


def extract_frame_mentions(text: Any) -> list[FrameMention]:
    return extract_temporal_mentions(text)[0]


def extract_segment_mentions(text: Any) -> list[SegmentMention]:
    return extract_temporal_mentions(text)[1]
