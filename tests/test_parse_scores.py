"""Score and verdict parsers (groundrl.parse.scores). Expected values are worked by hand."""

import pytest

from groundrl.parse.scores import (
    answer_alnum,
    parse_number,
    parse_pairwise_verdict,
    parse_preferred,
    parse_score,
    parse_unit_score,
)

# ---- parse_number (re-exported from groundrl.parse.numbers) ---------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("7", 7.0),
        ("-3", -3.0),
        ("7.5", 7.5),
        (".5", 0.5),
        ("1e2", 100.0),
        ("score: 7/10", 7.0),  # a fraction gives its numerator
        ("between 3 and 4", 3.0),  # the first number
        (8, 8.0),
        (2.5, 2.5),
    ],
)
def test_parse_number(text, expected):
    assert parse_number(text).value == expected


@pytest.mark.parametrize("text", ["no digits", "", "inf", "nan", None, True, b"7", float("nan")])
def test_parse_number_none(text):
    p = parse_number(text)
    assert p.value is None and p.error


# ---- parse_score ------------------------------------------------------------


@pytest.mark.parametrize(
    "inner, expected",
    [
        ("7", 7.0),
        (" 7 ", 7.0),
        ("\n7\n", 7.0),
        ("7.5", 7.5),
        ("10.0", 10.0),
        ("10", 10.0),
        ("0", 0.0),
        ("+7", 7.0),
        ("7.", 7.0),
        (".5", 0.5),
        ("7/10", 7.0),
        ("7 / 10", 7.0),
        ("7/10.0", 7.0),
    ],
)
def test_parse_score_numbers(inner, expected):
    assert parse_score(f"<score>{inner}</score>").value == expected


@pytest.mark.parametrize(
    "inner, why",
    [
        ("seven", "not a number"),
        ("", "not a number"),
        ("1e1", "not a number"),  # exponents are not scores
        ("7, maybe 8", "not a number"),
        ("7 points", "not a number"),
        ("7/5", "another scale"),
        ("8/100", "another scale"),
        ("11", "score out of range"),
        ("10.01", "score out of range"),
        ("-1", "score out of range"),
        ("-0.5", "score out of range"),
    ],
)
def test_parse_score_rejects(inner, why):
    p = parse_score(f"<score>{inner}</score>")
    assert p.value is None and why in p.error


def test_parse_score_which_pair():
    text = "<critique>first <score>2</score> then</critique><score>9</score>"
    assert parse_score(text).value == 9.0  # default: the last complete pair
    assert parse_score(text, which="first").value == 2.0
    # an unclosed trailing <score> is not a pair: the last complete one is read
    assert parse_score("<score>4</score> and <score>8").value == 4.0
    # the last pair decides even when it is not a number
    assert "not a number" in parse_score("<score>4</score><score>x</score>").error


def test_parse_score_absent_and_non_text():
    for text in ["", "score: 7", "<score>7", "7</score>", None, 7, b"<score>7</score>", ["<score>7</score>"]]:
        p = parse_score(text)
        assert p.value is None and p.error


def test_parse_score_tag_case_and_custom_range_and_tag():
    assert parse_score("<Score>6</SCORE>").value == 6.0
    assert parse_score("<score>3</score>", 1, 10).value == 3.0
    assert parse_score("<score>0</score>", 1, 10).value is None
    assert parse_score("<score>1</score>", 1, 5).value == 1.0
    assert parse_score("<score>5</score>", 1, 5).value == 5.0
    assert parse_score("<score>4/5</score>", 1, 5).value == 4.0
    assert parse_score("<score>4/10</score>", 1, 5).value is None
    assert parse_score("<rating>0.25</rating>", 0, 1, tag="rating").value == 0.25


@pytest.mark.parametrize(
    "kwargs, what",
    [
        ({"which": "middle"}, "which"),
        ({"lo": 5, "hi": 1}, "lo <= hi"),
        ({"lo": float("nan")}, "finite"),
        ({"hi": float("inf")}, "finite"),
        ({"tag": ""}, "tag"),
        ({"tag": None}, "tag"),
    ],
)
def test_parse_score_bad_config_raises(kwargs, what):
    with pytest.raises(ValueError, match=what):
        parse_score("<score>5</score>", **kwargs)


# ---- parse_unit_score (EmbodiedBrain planning GRM) --------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<think>steps look right</think><score>0.75</score>", 0.75),
        ("<score>1.00</score>", 1.0),
        ("<score>0.00</score>", 0.0),
        ("<score>1.7</score>", 1.0),  # clamped
        ("<score>-2</score>", 0.0),  # clamped
        ("<score>1e2</score>", 1.0),  # 100 → clamped
        ("<score>0.85 (good plan)</score>", 0.85),  # first number inside
        ("<score>0.2</score><score>0.9</score>", 0.2),  # first pair
        ("<score>good</score>", 0.0),
        ("<score></score>", 0.0),
        ("score: 0.9", 0.0),  # no tag
        ("<score>0.9", 0.0),  # unclosed
        (None, 0.0),
        (0.9, 0.0),
    ],
)
def test_parse_unit_score(text, expected):
    assert parse_unit_score(text) == expected


# ---- parse_pairwise_verdict -------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<answer>1</answer>", 1),
        ("<answer>2</answer>", 2),
        ("<answer>Response 1</answer>", 1),  # "Response1": only '1'
        ("<answer> [[2]] </answer>", 2),
        ("<answer>Response 1 (score 9)</answer>", 1),  # other digits do not count
        ("<answer>2</answer> though 1 was close", 2),  # only the first <answer>
        ("<answer>1</answer><answer>2</answer>", 1),
        ("I prefer Response 2.", 2),  # no <answer>: the whole text
        ("<answer>1", 1),  # unclosed: the whole text "<answer>1"
    ],
)
def test_parse_pairwise_verdict(text, expected):
    assert parse_pairwise_verdict(text).value == expected


@pytest.mark.parametrize(
    "text, why",
    [
        ("<answer>12</answer>", "both"),
        ("<answer>1 or 2</answer>", "both"),
        ("<answer>Response 1, 2</answer>", "both"),
        ("<answer></answer>", "no '1' or '2'"),
        ("<answer>neither</answer>", "no '1' or '2'"),
        ("", "no '1' or '2'"),
        ("Response 1 beats Response 2", "both"),  # whole-text fallback sees both
        (None, "no '1' or '2'"),
        (12, "no '1' or '2'"),  # not text: nothing is read
    ],
)
def test_parse_pairwise_verdict_none(text, why):
    p = parse_pairwise_verdict(text)
    assert p.value is None and why in p.error


def test_answer_alnum():
    assert answer_alnum("<answer> Response #1! </answer>") == "Response1"
    assert answer_alnum("no tag: R-2") == "notagR2"
    assert answer_alnum(None) == ""


# ---- parse_preferred --------------------------------------------------------


@pytest.mark.parametrize("value, expected", [(1, 1), (2, 2), ("1", 1), (" 2\n", 2), (1.0, 1), (2.0, 2)])
def test_parse_preferred(value, expected):
    assert parse_preferred(value).value == expected


def test_parse_preferred_numpy_integer():
    np = pytest.importorskip("numpy")
    assert parse_preferred(np.int64(2)).value == 2


@pytest.mark.parametrize(
    "value", [0, 3, -1, "3", "12", "one", "Response 1", "", 1.5, float("nan"), True, False, None, [1]]
)
def test_parse_preferred_rejects(value):
    p = parse_preferred(value)
    assert p.value is None and "preferred must be 1 or 2" in p.error


def test_parsers_total_on_adversarial_megabyte():
    # time budgets for these inputs: bench/adversarial.py (tests assert no wall-clock time)
    texts = [
        "<" * 1_000_000,
        "<score>" * 140_000,  # ~1 MB of unclosed openers
        "<score " * 140_000,  # openers that never close their '>'
        "<answer>" * 60_000 + "</answer" * 60_000,
        ("<score>" + "9" * 200 + "/") * 4_900,
    ]
    for text in texts:  # none holds a closed <score> or a 1/2 verdict
        assert parse_score(text).value is None and "no <score>" in parse_score(text).error, text[:20]
        assert parse_score(text, which="first").value is None, text[:20]
        assert parse_unit_score(text) == 0.0, text[:20]
        assert parse_pairwise_verdict(text).value is None, text[:20]
