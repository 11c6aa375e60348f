"""parse_pairwise_verdict's fast paths (issue 30) give what the plain rule gives: one regex
for the opening tag, its content and the closing tag right after it; str.find hops over
the prose of long texts. The reference below is the rule read plainly: the first opening
tag, then the first closing tag after it, each found by its own regex."""

from __future__ import annotations

import re
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundrl.parse import scores
from groundrl.parse.scores import parse_pairwise_verdict

SETTINGS = settings(
    derandomize=True, max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
OPEN = re.compile(r"<\s*answer(?:\s[^<>]*)?>", re.IGNORECASE)
CLOSE = re.compile(r"</\s*answer\s*>", re.IGNORECASE)
LONG = "x" * (scores._HOP_FROM + 1)  # a filler that sends the text down the str.find path


def ref_verdict(text):
    if not isinstance(text, str):
        return None
    m = OPEN.search(text)
    if m is not None:
        c = CLOSE.search(text, m.end())
        if c is not None:
            text = text[m.end() : c.start()]
    chars = re.sub(r"[^0-9A-Za-z]+", "", text)
    has1, has2 = "1" in chars, "2" in chars
    return None if has1 == has2 else (1 if has1 else 2)


PIECES = st.sampled_from(
    [
        "<answer>", "</answer>", "<ANSWER x=1>", "<Answer>", "</ answer >", "</ANSWER>", "< answer>",
        "<\u3000answer>", "<\x85answer>", "<anſwer>", "</anſwer>", "<answer\n>", "<answerx>", "<answer",
        "<a", "<A", "</", "<", ">", "/", "1", "2", "3", "12", "a", " ", "\n", "\u2028",
        "<rubric>", "</rubric>", "<rubric id=1>", "<eval>", "</eval>", "<think>", "</think>",
        "<<<", "<b>", "Response 1", LONG,
    ]
)  # fmt: skip
TAGGY = st.lists(PIECES, max_size=16).map("".join)


@SETTINGS
@given(TAGGY)
def test_verdict_equals_reference(text):
    assert parse_pairwise_verdict(text).value == ref_verdict(text)


@SETTINGS
@given(TAGGY, TAGGY)
def test_verdict_equals_reference_on_long_texts(head, tail):
    # every text here is past the length where the parser hops with str.find
    text = head + LONG + tail
    assert parse_pairwise_verdict(text).value == ref_verdict(text)


@SETTINGS
@given(st.text(max_size=40), st.integers(0, 3))
def test_verdict_equals_reference_on_arbitrary_text(text, pad):
    for t in (text, LONG * (pad > 0) + text + LONG * (pad > 1)):
        assert parse_pairwise_verdict(t).value == ref_verdict(t)


def test_many_tags_before_the_answer_pass_the_hop_limit():
    # more '<' than the hop limit, then the answer: the regex takes over where hops stop
    for n in (31, 32, 33, 100):
        text = "<b>" * n + LONG + "<Answer>Response 2</answer> 1"
        assert parse_pairwise_verdict(text).value == ref_verdict(text) == 2
    text = "<b>" * 40 + LONG + "<"  # a '<' as the last character opens nothing
    assert parse_pairwise_verdict(text).value == ref_verdict(text) is None


def test_open_first_is_every_character_that_can_follow_the_opening_less_than():
    # the set the str.find path checks, derived from the opening tag's regex itself
    can_follow = re.compile(r"(?i)a|\s").fullmatch
    want = {chr(cp) for cp in range(sys.maxunicode + 1) if can_follow(chr(cp))}
    assert want == scores._OPEN_FIRST


def test_non_text_and_str_subclasses():
    class Text(str):
        def __contains__(self, item):  # not consulted: the parser reads a plain copy
            raise AssertionError

    assert parse_pairwise_verdict(Text("<answer>Response 2</answer>")).value == 2
    for value in (None, 12, b"<answer>1</answer>", ["<answer>1</answer>"]):
        assert parse_pairwise_verdict(value).value is None
