import math
import time

import pytest

from groundrl.parse.scores import parse_pairwise_verdict, parse_score, parse_unit_score
from groundrl.rewards.preference import proxy_accuracy, proxy_format, rubric_text
from groundrl.rewards.scoring import (
    accuracy_within,
    combine_boosts,
    contrastive_boost,
    eqa_accuracy,
    eqa_format,
    rmse,
    score_accuracy,
    within_tolerance,
)


def eqa(score, critique="The answer matches the scene."):
    return f"<critique>{critique}</critique><score>{score}</score>"


# ---- EQA-RM ---------------------------------------------------------------


@pytest.mark.parametrize(
    "score, gold, expected",
    [
        ("8", 8, 1.0),
        ("5", 8, 1 - 0.09),
        ("10", 0, 0.0),
        ("7.5", 7, 1 - 0.0025),
        ("6", "9", 0.91),
        (" 9/10 ", 9, 1.0),
    ],
)
def test_eqa_accuracy_formula(score, gold, expected):
    assert eqa_accuracy(eqa(score), gold).value == pytest.approx(expected)


def test_eqa_reads_the_last_score():
    c = "<critique>I first thought <score>2</score> but</critique><score>9</score>"
    assert eqa_accuracy(c, 9).value == 1.0


@pytest.mark.parametrize(
    "completion, why",
    [
        ("<critique>x</critique>", "then <score>"),
        ("<score>7</score><critique>x</critique>", "then <score>"),
        (eqa("11"), "outside [0, 10]"),
        (eqa("-1"), "outside"),
        (eqa("seven"), "not a number"),
    ],
)
def test_eqa_format_zero(completion, why):
    s = eqa_format(completion)
    assert s.value == 0.0 and why in s.reason


def test_eqa_format_one_and_accuracy_zero_without_score():
    assert eqa_format(eqa("0")).value == 1.0
    assert eqa_format(eqa("10.0")).value == 1.0
    assert eqa_accuracy("<critique>x</critique>", 5).value == 0.0
    assert eqa_accuracy(eqa("11"), 10).value == 0.0  # out of range → no score
    bad = eqa_accuracy(eqa("5"), "n/a")
    assert bad.value == 0.0 and "bad gt_score" in bad.reason


def test_contrastive_boost():
    # mean(orig) = 0.5 ≥ 0.95 · mean(pert) = 0.95·0.4 = 0.38 → mu for items ≥ 0.1
    assert contrastive_boost([0.9, 0.05, 0.55], [0.4, 0.4]) == [0.3, 0.0, 0.3]
    # mean(orig) = 0.5 < 0.95·0.6 = 0.57 → no boost
    assert contrastive_boost([0.5, 0.5], [0.6, 0.6]) == [0.0, 0.0]
    # boundary: mean(orig) = 0.95 = 0.95 · mean(pert) = 0.95·1
    assert contrastive_boost([0.95], [1.0], mu=0.2) == [0.2]
    assert contrastive_boost([], [0.1]) == []
    assert contrastive_boost([0.5], []) == [0.0]
    with pytest.raises(ValueError, match="mu"):
        contrastive_boost([1.0], [1.0], mu=-1)


def test_combine_boosts():
    assert combine_boosts({"temporal": [0.3, 0.0]}) == [0.3, 0.0]
    assert combine_boosts({"temporal": [0.3, 0.0], "spatial": [0.3, 0.3]}) == pytest.approx([0.3, 0.15])
    assert combine_boosts({"t": [0.3], "s": [0.0], "r": [0.3]}) == pytest.approx([0.2])
    assert combine_boosts({}) == []
    with pytest.raises(ValueError):
        combine_boosts({"t": [0.3], "s": []})


def test_tolerance_boundary_and_metrics():
    assert within_tolerance(5, 7)  # |Δ| = 2 is within
    assert not within_tolerance(4.9, 7)
    assert accuracy_within([5, 4, 7], [7, 7, 7]) == pytest.approx(2 / 3)
    assert rmse([1, 3], [1, 7]) == pytest.approx(math.sqrt(8))
    assert score_accuracy(3, 3) == 1.0
    with pytest.raises(ValueError):
        rmse([1], [1, 2])
    with pytest.raises(ValueError):
        accuracy_within([], [])


# ---- parsers --------------------------------------------------------------


def test_parse_unit_score():
    assert parse_unit_score("<think>x</think><score>0.75</score>") == 0.75
    assert parse_unit_score("<score>1.7</score>") == 1.0
    assert parse_unit_score("<score>-2</score>") == 0.0
    assert parse_unit_score("<score>good</score>") == 0.0
    assert parse_unit_score("score: 0.9") == 0.0
    assert parse_unit_score("<score>0.2</score><score>0.9</score>") == 0.2  # first


def test_parse_score_range():
    assert parse_score("<score>3</score>", 1, 10).value == 3
    assert parse_score("<score>0</score>", 1, 10).value is None


# ---- Proxy-GRM ------------------------------------------------------------

GOOD = "<rubric>1. counts chairs</rubric>\n<eval>R1 is right</eval>\n<answer>1</answer>"


def test_proxy_format():
    assert proxy_format(GOOD).value == 1.0
    assert proxy_format("<think>a</think><summary>b</summary><answer>2</answer>").value == 1.0
    assert proxy_format("<rubric></rubric><eval></eval><answer></answer>").value == 1.0
    assert proxy_format(" " + GOOD).value == 0.0  # must match fully
    assert proxy_format("<rubric>a<rubric>b</rubric><eval>c</eval><answer>1</answer>").value == 0.0
    assert proxy_format("<rubric>a</rubric> <eval>c</eval><answer>1</answer>").value == 0.0
    assert proxy_format("<rubric>a</rubric><answer>1</answer><eval>c</eval>").value == 0.0
    assert proxy_format("<RUBRIC>a</RUBRIC><eval>c</eval><answer>1</answer>").value == 0.0


@pytest.mark.parametrize(
    "completion, preferred, expected",
    [
        (GOOD, 1, 1.0),
        (GOOD, "2", -1.0),
        ("<answer>12</answer>", 1, -1.0),
        ("<answer>Response 1</answer>", 1, 1.0),
        ("<answer>Response 1</answer>", 2, -1.0),
        ("<answer></answer>", 1, -1.0),
        ("I prefer response 2 overall", 2, 1.0),  # no <answer>: whole text
        ("<answer>2</answer> though 1 was close", 2, 1.0),  # only the first <answer> counts
        ("", 1, -1.0),
    ],
)
def test_proxy_accuracy(completion, preferred, expected):
    assert proxy_accuracy(completion, preferred).value == expected


def test_proxy_accuracy_bad_preferred_does_not_apply():
    s = proxy_accuracy(GOOD, 3)
    assert s.value is None and "preferred must be 1 or 2" in s.reason
    assert proxy_accuracy(GOOD, True).value is None
    assert parse_pairwise_verdict("<answer>1, 2</answer>").value is None


def test_rubric_text():
    assert rubric_text(GOOD) == "<rubric>1. counts chairs</rubric>"
    assert rubric_text("no rubric") == "no rubric"


def test_adversarial_megabyte():
    texts = [
        "<rubric>" + "</rubric><eval>" * 60_000 + "</eval>" * 60_000 + "<answer>1",
        "<" * 1_000_000,
        "<critique>" * 100_000 + "<score>" * 40_000,
    ]
    t = time.perf_counter()
    for s in texts:
        proxy_format(s)
        proxy_accuracy(s, 1)
        eqa_format(s)
        eqa_accuracy(s, 5)
    assert time.perf_counter() - t < 1.0
