"""XML-like tag extraction that never raises and stays linear on adversarial text.

Rules (the same for every recipe):

* Tag names match **case-insensitively** (``<Score>`` == ``<score>``); the content is
  returned exactly as written (case kept).
* An opening tag may carry attributes (``<points x1="3">``); a closing tag is
  ``</name>`` with optional inner whitespace.
* A *pair* is an opening tag and the first closing tag after it; pairs do not nest
  (``<a><a>x</a></a>`` yields ``"<a>x"`` as the first content), which is how
  model outputs are read in the papers' released code (non-greedy regex).
* ``which="first"`` takes the first complete pair, ``"last"`` the last one.
* Content is stripped of surrounding whitespace unless ``strip=False``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

Which = Literal["first", "last"]


@lru_cache(maxsize=256)
def _open_re(tag: str) -> re.Pattern[str]:
    # [^<>]* cannot backtrack across tags, so this stays linear on "<<<<<...".
    return re.compile(r"<\s*" + re.escape(tag) + r"(?:\s[^<>]*)?>", re.IGNORECASE)


@lru_cache(maxsize=256)
def _close_re(tag: str) -> re.Pattern[str]:
    return re.compile(r"</\s*" + re.escape(tag) + r"\s*>", re.IGNORECASE)


def iter_tag_spans(text: str, tag: str) -> list[tuple[int, int, int, int]]:
    """All non-overlapping complete pairs as ``(open_start, content_start, content_end, close_end)``."""
    if not isinstance(text, str):
        return []
    opener, closer = _open_re(tag), _close_re(tag)
    spans = []
    pos = 0
    while True:
        m = opener.search(text, pos)
        if m is None:
            break
        c = closer.search(text, m.end())
        if c is None:
            break
        spans.append((m.start(), m.end(), c.start(), c.end()))
        pos = c.end()
    return spans


def _last_span(text: str, tag: str) -> tuple[int, int] | None:
    """``(content_start, content_end)`` of the last pair of :func:`iter_tag_spans`, keeping
    only the last one (a list of every pair grew faster than the text, issue 41)."""
    search_open, search_close = _open_re(tag).search, _close_re(tag).search
    last = None
    pos = 0
    while (m := search_open(text, pos)) is not None and (c := search_close(text, m.end())) is not None:
        last = (m.end(), c.start())
        pos = c.end()
    return last


def find_tag(text: str, tag: str, which: Which = "first", strip: bool = True) -> str | None:
    """Content of the first (or last) complete ``<tag>…</tag>`` pair, or ``None``."""
    if not isinstance(text, str):
        return None
    if which == "first":
        m = _open_re(tag).search(text)
        if m is None:
            return None
        c = _close_re(tag).search(text, m.end())
        if c is None:
            return None
        content = text[m.end() : c.start()]
    else:
        span = _last_span(text, tag)
        if span is None:
            return None
        content = text[span[0] : span[1]]
    return content.strip() if strip else content


def find_all_tags(text: str, tag: str, strip: bool = True) -> list[str]:
    """Contents of every complete pair, in order."""
    out = [text[a:b] for _, a, b, _ in iter_tag_spans(text, tag)]
    return [s.strip() for s in out] if strip else out


def count_open_tags(text: str, tag: str) -> int:
    """How many opening tags ``<tag…>`` occur (used by strict format checks)."""
    if not isinstance(text, str):
        return 0
    return sum(1 for _ in _open_re(tag).finditer(text))


def has_tag_pair(text: str, tag: str) -> bool:
    """True when a complete ``<tag>…</tag>`` pair occurs."""
    return find_tag(text, tag, strip=False) is not None


def tags_in_order(text: str, tags: list[str]) -> bool:
    """True when complete pairs of ``tags`` occur one after another in that order
    (each first pair starting after the previous one closed)."""
    if not isinstance(text, str):
        return False
    pos = 0
    for tag in tags:
        m = _open_re(tag).search(text, pos)
        if m is None:
            return False
        c = _close_re(tag).search(text, m.end())
        if c is None:
            return False
        pos = c.end()
    return True
