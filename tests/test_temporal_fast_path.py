"""The temporal-mention patterns of groundrl.parse.grounding are compiled in a form that
starts with a character class (issue 30: the regex engine then skips to the next f / b /
digit in C). Here the patterns as read are the reference: on random mention-like text,
the fast form gives the same matches, spans and numbers as ``finditer`` of the plain one."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundrl.parse import grounding as g

SETTINGS = settings(
    derandomize=True, max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

NUM = r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.]\d)"
FNUM = r"#?\s*(\d+(?:\.\d+)?)(?![\w]|\.\d)"
SEC = r"(?:seconds?|secs?|s)\b"
TO = r"\s*(?:[-–—~]|\bto\b|\bthrough\b|\bthru\b|\buntil\b|\btill\b)\s*"
LIST_SEP = r"\s*(?:,\s*and\s+|,\s*|and\s+|&\s*)"
PLAIN = {
    "segment frame": re.compile(
        rf"(?:\bfrom\s+)?\bframes?\s*{FNUM}{TO}(?:frames?\s*)?{FNUM}"
        rf"|\bbetween\s+frames?\s*{FNUM}\s*(?:,\s*)?and\s+(?:frames?\s*)?{FNUM}",
        re.IGNORECASE,
    ),
    "segment second": re.compile(
        rf"(?:\bfrom\s+)?{NUM}\s*(?:{SEC})?{TO}{NUM}\s*{SEC}"
        rf"|\bbetween\s+{NUM}\s*(?:{SEC})?\s*and\s+{NUM}\s*{SEC}",
        re.IGNORECASE,
    ),
    "frame": re.compile(
        rf"\bframe\s*{FNUM}|\bframes\s*{FNUM}(?:{LIST_SEP}#?\s*\d+(?:\.\d+)?\b(?!\s*{SEC}))*", re.IGNORECASE
    ),
    "second": re.compile(rf"{NUM}\s*{SEC}", re.IGNORECASE),
}
FAST = {
    "segment frame": g._SEGMENT_FRAME_RE,
    "segment second": g._SEGMENT_SECOND_RE,
    "frame": g._FRAME_RE,
    "second": g._SECOND_RE,
}

WORDS = st.sampled_from(
    [
        "frame", "Frames", "FRAME", "frames", "from", "FROM", "From", "between", "Between", "and",
        "to", "through", "thru", "until", "till", "-", "–", "—", "~", "seconds", "second", "secs",
        "sec", "s", "S", "SEC", "#", ",", "&", ".", " ", "  ", "\n", "\t", "x", "_", "v", "é",
        "0", "1", "2", "3", "12", "4.5", "1.2.3", "٣", "７", "ſ", "ﬀ", "at", "the",
    ]
)  # fmt: skip
TEXT = st.lists(WORDS, max_size=24).map("".join)
SPACED = st.lists(WORDS, max_size=24).map(" ".join)


def plain(kind, text):
    return [
        (m.start(), m.end(), [x for x in m.groups() if x is not None]) for m in PLAIN[kind].finditer(text)
    ]


def fast(kind, text):
    return [(m.start(), m.end(), [x for x in m.groups() if x is not None]) for m in FAST[kind].finditer(text)]


@pytest.mark.parametrize("kind", sorted(PLAIN))
@SETTINGS
@given(st.one_of(TEXT, SPACED, st.text(max_size=30)))
def test_fast_patterns_match_as_the_plain_ones(kind, text):
    assert fast(kind, text) == plain(kind, text)


@pytest.mark.parametrize(
    "text",
    [
        "from 3 to 5 s, frames 3, 5 and 7; between frame 2 and frame 9 and 18.71 seconds",
        "From frame 4 - 6 then between 2 and 4 SECONDS, from 1.5 to 2 secs",
        "xfrom 3 to 5 s v2 to 4 s 1.2 to 3 s _frame 3 frame #4 Frames 1 & 2",
        "from from 3 to 5 s; from frame frame 2 to 3",
    ],
)
def test_fast_patterns_on_written_examples(text):
    for kind in PLAIN:
        assert fast(kind, text) == plain(kind, text), kind
    assert fast("segment second", "from 3 to 5 s")[0][:2] == (0, 13)  # the from-regex wins at 0


def test_leading_classes_are_what_the_case_insensitive_letters_match():
    # [fF] and [bB] stand for (?i)f and (?i)b: no other code point matches them
    for letter, cls in (("f", "fF"), ("b", "bB")):
        r = re.compile(f"(?i){letter}").fullmatch
        assert {chr(c) for c in range(0x110000) if r(chr(c))} == set(cls)
