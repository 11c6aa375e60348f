"""Proxy-GRM rewards (groundrl.rewards.preference). Expected values are worked by hand;
the format check is also compared with the paper's regex on small generated texts."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundrl.rewards.preference import proxy_accuracy, proxy_format, rubric_text

GOOD = "<rubric>1. counts chairs\n2. names the room</rubric>\n<eval>R1 is right</eval>\n<answer>1</answer>"

# ---- proxy_format -----------------------------------------------------------


@pytest.mark.parametrize(
    "completion",
    [
        GOOD,  # newlines between and inside tags are removed first
        "<rubric>a</rubric><eval>b</eval><answer>2</answer>",
        "<rubric></rubric><eval></eval><answer></answer>",  # .*? may be empty
        "<think>a</think><summary>b</summary><answer>2</answer>",  # the think/summary variant
        "<think>a\n</think>\n\n<summary>b</summary>\n<answer>\n1\n</answer>\n",
        # only *opening* tags are counted: .*? spans the stray closing tag
        "<rubric>a</rubric>b</rubric><eval>c</eval><answer>1</answer>",
    ],
)
def test_proxy_format_one(completion):
    s = proxy_format(completion)
    assert s.name == "format" and s.value == 1.0


@pytest.mark.parametrize(
    "completion",
    [
        " " + GOOD,  # must match fully: nothing before the first tag
        GOOD + " ",  # nor after </answer>
        GOOD + "\nDone.",
        "<rubric>a</rubric> <eval>c</eval><answer>1</answer>",  # a space between tags
        "<rubric>a</rubric><answer>1</answer><eval>c</eval>",  # out of order
        "<rubric>a</rubric><answer>1</answer>",  # missing eval
        "<rubric>a</rubric><eval>c</eval><answer>1",  # unclosed answer
        "<RUBRIC>a</RUBRIC><eval>c</eval><answer>1</answer>",  # case-sensitive, as the regex
        "<think>a</think><eval>c</eval><answer>1</answer>",  # layouts do not mix
        "<rubric>a</rubric><summary>c</summary><answer>1</answer>",
        "",
        None,
        1,
    ],
)
def test_proxy_format_zero(completion):
    assert proxy_format(completion).value == 0.0


@pytest.mark.parametrize(
    "completion, tag",
    [
        ("<rubric>a<rubric>b</rubric><eval>c</eval><answer>1</answer>", "<rubric>"),
        ("<rubric>a</rubric><eval>c<eval>d</eval><answer>1</answer>", "<eval>"),
        ("<rubric>a</rubric><eval>c</eval><answer>1<answer>2</answer>", "<answer>"),
    ],
)
def test_proxy_format_duplicated_opening_tag_is_zero(completion, tag):
    # Each of these fully matches the regex (.*? spans the duplicate); the count rule rejects it.
    s = proxy_format(completion)
    assert s.value == 0.0 and tag in s.reason


def test_proxy_format_duplicated_think_tag_is_zero():
    assert proxy_format("<think>a<think>b</think><summary>c</summary><answer>1</answer>").value == 0.0


def _paper_format(text: str) -> float:
    s = text.replace("\n", "")
    for a, b, c in (("rubric", "eval", "answer"), ("think", "summary", "answer")):
        pattern = f"<{a}>.*?</{a}><{b}>.*?</{b}><{c}>.*?</{c}>"
        if re.fullmatch(pattern, s) and all(s.count(f"<{t}>") == 1 for t in (a, b, c)):
            return 1.0
    return 0.0


_PIECES = [
    "<rubric>",
    "</rubric>",
    "<eval>",
    "</eval>",
    "<answer>",
    "</answer>",
    "<think>",
    "</think>",
    "<summary>",
    "</summary>",
    "x",
    "1",
    " ",
    "\n",
    "<",
    "/",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14))
def test_proxy_format_agrees_with_the_papers_regex(pieces):
    text = "".join(pieces)
    assert proxy_format(text).value == _paper_format(text)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from([("rubric", "eval"), ("think", "summary")]),
    st.lists(st.sampled_from(_PIECES), max_size=4),
    st.lists(st.sampled_from(_PIECES), max_size=4),
    st.lists(st.sampled_from(_PIECES), max_size=4),
)
def test_proxy_format_agrees_on_near_valid_texts(layout, x, y, z):
    a, b = layout
    text = f"<{a}>{''.join(x)}</{a}><{b}>{''.join(y)}</{b}><answer>{''.join(z)}</answer>"
    assert proxy_format(text).value == _paper_format(text)


# ---- proxy_accuracy ---------------------------------------------------------


@pytest.mark.parametrize(
    "completion, preferred, expected",
    [
        (GOOD, 1, 1.0),
        (GOOD, 2, -1.0),
        (GOOD, "1", 1.0),
        (GOOD, " 2 ", -1.0),
        (GOOD, 1.0, 1.0),
        ("<answer>2</answer>", "2", 1.0),
        ("<answer>12</answer>", 1, -1.0),  # both '1' and '2' occur
        ("<answer>12</answer>", 2, -1.0),
        ("<answer>Response 1</answer>", 1, 1.0),  # alphanumerics "Response1": only '1'
        ("<answer>Response 1</answer>", 2, -1.0),
        ("<answer></answer>", 1, -1.0),  # empty
        ("<answer>  </answer>", 2, -1.0),
        ("<answer>tie</answer>", 1, -1.0),
        ("I prefer response 2 overall", 2, 1.0),  # no <answer>: whole-text fallback
        ("I prefer response 2 overall", 1, -1.0),
        ("<rubric>1. accuracy 2. safety</rubric><eval>x</eval>", 1, -1.0),  # whole text has both
        ("<answer>2</answer> though 1 was close", 2, 1.0),  # only the first <answer> counts
        ("<rubric>1. a 2. b</rubric><eval>e</eval><answer>2</answer>", 2, 1.0),
        ("", 1, -1.0),
        (None, 1, -1.0),
        (2, 2, -1.0),  # not text: nothing is read
    ],
)
def test_proxy_accuracy(completion, preferred, expected):
    s = proxy_accuracy(completion, preferred)
    assert s.name == "accuracy" and s.value == expected


def test_proxy_accuracy_reasons():
    assert "both '1' and '2'" in proxy_accuracy("<answer>12</answer>", 1).reason
    assert "picked 2, preferred 1" in proxy_accuracy("<answer>2</answer>", 1).reason


@pytest.mark.parametrize("preferred", [3, 0, "3", "A", "Response 1", None, True, 1.5, float("nan")])
def test_proxy_accuracy_bad_preferred_does_not_apply(preferred):
    s = proxy_accuracy(GOOD, preferred)
    assert s.value is None and "preferred must be 1 or 2" in s.reason


# ---- rubric_text ------------------------------------------------------------


def test_rubric_text():
    assert rubric_text(GOOD) == "<rubric>1. counts chairs\n2. names the room</rubric>"
    # the proxy sees the rubric block only [Proxy-GRM §3.3]: no preamble, no eval, no verdict
    assert rubric_text("Sure, 1. <rubric>a</rubric><eval>b</eval>") == "<rubric>a</rubric>"
    assert rubric_text("<rubric>a</rubric>b</rubric>") == "<rubric>a</rubric>"  # the first close
    assert rubric_text("no rubric here <answer>1</answer>") == ""
    assert rubric_text("<rubric>unclosed <answer>1</answer>") == ""
    assert rubric_text("</rubric> 1 <rubric>x") == ""  # a close before any open is not a block
    assert rubric_text(None) == ""


# ---- adversarial input ------------------------------------------------------

_ADVERSARIAL = {
    "1M '<'": "<" * 1_000_000,
    "unclosed rubric openers": "<rubric>" * 125_000,
    "many separators": "<rubric>" + "</rubric><eval>" * 60_000 + "</eval>" * 20_000 + "<answer>1",
    "near-miss separators": "<rubric>" + "</rubric><eval" * 70_000 + "</answer>",
    "deep nesting": "<rubric><eval><answer>" * 45_000 + "</answer></eval></rubric>" * 10_000,
    "think layout": "<think>" + "</think><summary>" * 55_000 + "</summary><answer" * 5_000 + "</answer>",
}


@pytest.mark.parametrize("name", list(_ADVERSARIAL))
def test_megabyte_adversarial_text_is_scored(name):
    # time budgets for these inputs: bench/adversarial.py (tests assert no wall-clock time)
    text = _ADVERSARIAL[name]
    assert len(text) >= 900_000
    fmt = proxy_format(text)
    acc = proxy_accuracy(text, 1)
    rubric_text(text)
    assert fmt.value == 0.0 and acc.value in (1.0, -1.0)
