"""EQA-RM rewards, C-GRPO contrastive boosts and score metrics (groundrl.rewards.critique_score).
Every expected value is worked by hand in the comment beside it."""

import math

import pytest

from groundrl.rewards.critique_score import (
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


# ---- score_accuracy: max(0, 1 − (|s − s*|/10)²) -----------------------------


@pytest.mark.parametrize(
    "pred, gold, expected",
    [
        (8, 8, 1.0),  # Δ 0
        (5, 8, 0.91),  # Δ 3: 1 − 0.3² = 0.91
        (8, 5, 0.91),  # symmetric
        (9, 2, 0.51),  # Δ 7: 1 − 0.49
        (7.5, 7, 0.9975),  # Δ 0.5: 1 − 0.05² = 1 − 0.0025
        (10, 0, 0.0),  # Δ 10: 1 − 1 = 0
        (0, 10, 0.0),
        (15, 0, 0.0),  # Δ 15: 1 − 2.25 < 0 → clipped to 0
        (float("nan"), 5, 0.0),  # never NaN
    ],
)
def test_score_accuracy(pred, gold, expected):
    assert score_accuracy(pred, gold) == pytest.approx(expected)


# ---- eqa_accuracy -----------------------------------------------------------


@pytest.mark.parametrize(
    "score, gold, expected",
    [
        ("8", 8, 1.0),
        ("5", 8, 0.91),
        ("10", 0, 0.0),  # score 10 vs gt 0
        ("7.5", 7, 0.9975),
        ("6", "9", 0.91),  # numeric-string gold, Δ 3
        ("6", " 9.0 ", 0.91),
        ("4", 6.0, 0.96),  # Δ 2: 1 − 0.04
        (" 9/10 ", 9, 1.0),
        ("10.0", 10, 1.0),
    ],
)
def test_eqa_accuracy_formula(score, gold, expected):
    s = eqa_accuracy(eqa(score), gold)
    assert s.name == "accuracy"
    assert s.value == pytest.approx(expected)


def test_eqa_accuracy_reads_the_last_score():
    c = "<critique>I first thought <score>2</score> but no.</critique><score>9</score>"
    assert eqa_accuracy(c, 9).value == 1.0  # the last pair (9), not the first (2 → 0.51)


@pytest.mark.parametrize(
    "completion, why",
    [
        ("<critique>x</critique>", "no <score>"),  # missing score tag
        ("<critique>x</critique><score>8", "no <score>"),  # unclosed
        (eqa("11"), "score out of range"),  # out of range is no score, even vs gold 10
        (eqa("-1"), "score out of range"),
        (eqa("seven"), "not a number"),
        (None, "no <score>"),
        (42, "no <score>"),
    ],
)
def test_eqa_accuracy_zero_without_a_valid_score(completion, why):
    s = eqa_accuracy(completion, 10)
    assert s.value == 0.0 and why in s.reason


@pytest.mark.parametrize("gold", [None, "n/a", "", "7/10", True, float("nan"), float("inf"), [7], 11, -0.5])
def test_eqa_accuracy_bad_gold_is_zero_with_reason(gold):
    s = eqa_accuracy(eqa("5"), gold)
    assert s.value == 0.0 and "bad gt_score" in s.reason


def test_eqa_accuracy_ignores_tag_order():
    # Order is the format reward's concern; the score is still read for accuracy.
    c = "<score>7</score><critique>x</critique>"
    assert eqa_accuracy(c, 7).value == 1.0
    assert eqa_format(c).value == 0.0


# ---- eqa_format -------------------------------------------------------------


@pytest.mark.parametrize(
    "completion",
    [
        eqa("0"),
        eqa("10"),
        eqa("10.0"),
        eqa("7.5"),
        eqa("7/10"),
        "Let me look.\n<critique>\nfine\n</critique>\n<score> 6 </score>\nDone.",
        "<CRITIQUE>x</CRITIQUE><Score>3</Score>",  # tag names are case-insensitive
        "<critique>x</critique><score>2</score><score>8</score>",  # restated, last valid
    ],
)
def test_eqa_format_one(completion):
    s = eqa_format(completion)
    assert s.name == "format" and s.value == 1.0


@pytest.mark.parametrize(
    "completion, why",
    [
        ("<critique>x</critique>", "then <score>"),  # missing score tag
        ("<score>7</score>", "then <score>"),  # missing critique
        ("<score>7</score><critique>x</critique>", "then <score>"),  # tags out of order
        ("<critique>x <score>7</score></critique>", "then <score>"),  # score only inside the critique
        ("<critique>x<score>7</score>", "then <score>"),  # unclosed critique
        (eqa("11"), "score out of range"),  # score > 10
        (eqa("10.5"), "score out of range"),
        (eqa("-1"), "score out of range"),
        (eqa("seven"), "not a number"),
        (eqa("7/5"), "another scale"),
        ("<critique>x</critique><score>7</score><score>x</score>", "not a number"),  # last pair decides
        ("", "then <score>"),
        (None, "not text"),
        (b"<critique>x</critique><score>7</score>", "not text"),
    ],
)
def test_eqa_format_zero(completion, why):
    s = eqa_format(completion)
    assert s.value == 0.0 and why in s.reason


# ---- contrastive_boost ------------------------------------------------------


def test_contrastive_boost_mean_condition_true():
    # mean(orig) = (0.9 + 0.05 + 0.55)/3 = 0.5 ≥ 0.95 · mean(0.4, 0.4) = 0.38:
    # items ≥ 0.1 get mu = 0.3, the 0.05 item gets 0.
    assert contrastive_boost([0.9, 0.05, 0.55], [0.4, 0.4]) == [0.3, 0.0, 0.3]


def test_contrastive_boost_mean_condition_false():
    # mean(orig) = 0.5 < 0.95 · 0.6 = 0.57: nobody is boosted, however accurate.
    assert contrastive_boost([0.5, 0.5], [0.6, 0.6]) == [0.0, 0.0]
    # mean(orig) = 0.2 < 0.95 · 0.9 = 0.855 even though item 0 is perfect
    assert contrastive_boost([1.0, 0.0, 0.0, 0.0, 0.0], [0.9]) == [0.0] * 5


def test_contrastive_boost_boundaries_are_inclusive():
    # mean(orig) = 0.95 = 0.95 · mean(pert) = 0.95 · 1.0 → boost (≥)
    assert contrastive_boost([0.95], [1.0], mu=0.2) == [0.2]
    # min_acc per item: 0.1 ≥ 0.1 → mu; 0.09 < 0.1 → 0.
    # mean(orig) = (0.1 + 0.09 + 1.0)/3 ≈ 0.397 ≥ 0.95 · 0.1 = 0.095
    assert contrastive_boost([0.1, 0.09, 1.0], [0.1]) == [0.3, 0.0, 0.3]


def test_contrastive_boost_groups_of_different_sizes_and_custom_constants():
    # mean(orig) = 1.0 ≥ 0.95 · mean(0.2, 0.4, 0.6) = 0.38
    assert contrastive_boost([1.0], [0.2, 0.4, 0.6]) == [0.3]
    # delta = 1, mu = 0.5, min_acc = 0.5: mean(orig) = 0.6 ≥ 1 · 0.6 → items ≥ 0.5
    assert contrastive_boost([0.4, 0.8], [0.6], delta=1.0, mu=0.5, min_acc=0.5) == [0.0, 0.5]
    # delta = 0: any non-negative mean passes; only min_acc filters
    assert contrastive_boost([0.0, 0.2], [1.0], delta=0.0) == [0.0, 0.3]


def test_contrastive_boost_empty_and_nan():
    assert contrastive_boost([], [0.1]) == []
    assert contrastive_boost([], []) == []
    assert contrastive_boost([0.5, 0.7], []) == [0.0, 0.0]
    assert contrastive_boost([float("nan"), 1.0], [0.1]) == [0.0, 0.0]
    assert contrastive_boost([1.0], [float("nan")]) == [0.0]


@pytest.mark.parametrize(
    "kwargs, what",
    [
        ({"mu": -1}, "mu"),
        ({"mu": float("inf")}, "mu"),
        ({"delta": -0.1}, "delta"),
        ({"delta": float("nan")}, "delta"),
        ({"min_acc": float("nan")}, "min_acc"),
    ],
)
def test_contrastive_boost_bad_constants_raise(kwargs, what):
    with pytest.raises(ValueError, match=what):
        contrastive_boost([1.0], [1.0], **kwargs)
    with pytest.raises(ValueError, match=what):
        contrastive_boost([], [], **kwargs)  # even with nothing to boost


# ---- combine_boosts ---------------------------------------------------------


def test_combine_boosts_one_type():
    assert combine_boosts({"temporal": [0.3, 0.0]}) == [0.3, 0.0]


def test_combine_boosts_two_types():
    # i=0: (0.3 + 0.3)/2 = 0.3; i=1: (0.0 + 0.3)/2 = 0.15
    assert combine_boosts({"temporal": [0.3, 0.0], "spatial": [0.3, 0.3]}) == pytest.approx([0.3, 0.15])


def test_combine_boosts_three_types():
    # (0.3 + 0.0 + 0.3)/3 = 0.2; (0 + 0 + 0.3)/3 = 0.1; (0.3·3)/3 = 0.3
    got = combine_boosts(
        {"temporal": [0.3, 0.0, 0.3], "spatial": [0.0, 0.0, 0.3], "reasoning": [0.3, 0.3, 0.3]}
    )
    assert got == pytest.approx([0.2, 0.1, 0.3])


def test_combine_boosts_active_type_without_boost_still_counts():
    # "spatial" ran (present) but earned nothing: 0.3 / 2 active types = 0.15
    assert combine_boosts({"temporal": [0.3], "spatial": [0.0]}) == pytest.approx([0.15])


def test_combine_boosts_edges():
    assert combine_boosts({}) == []
    assert combine_boosts({"temporal": [], "spatial": []}) == []
    with pytest.raises(ValueError, match="one boost per original evaluation"):
        combine_boosts({"t": [0.3], "s": []})


def test_total_reward_composition_example():
    # total = accuracy + format + combined boost for one original evaluation:
    # score 5 vs gold 8 → 1 − 0.3² = 0.91; format 1;
    # temporal: mean(orig) 0.91 ≥ 0.95·0.5 = 0.475 → 0.3; spatial: 0.91 < 0.95·1.0 → 0;
    # combined (0.3 + 0)/2 = 0.15 → total 0.91 + 1 + 0.15 = 2.06
    c = eqa("5")
    acc = eqa_accuracy(c, 8).value
    boost = combine_boosts(
        {"temporal": contrastive_boost([acc], [0.5]), "spatial": contrastive_boost([acc], [1.0])}
    )
    assert acc + eqa_format(c).value + boost[0] == pytest.approx(2.06)


# ---- metrics ----------------------------------------------------------------


@pytest.mark.parametrize(
    "pred, gold, tol, expected",
    [
        (5, 7, 2.0, True),  # |Δ| = 2 is within
        (9, 7, 2.0, True),
        (4.9, 7, 2.0, False),  # |Δ| = 2.1
        (7.3, 5.3, 2.0, True),  # |Δ| = 2 despite float rounding (2.0000000000000004)
        (2.2, 0.2, 2.0, True),
        (0, 10, 2.0, False),
        (6, 7, 0.5, False),
        (7, 7, 0.0, True),
        (float("nan"), 7, 2.0, False),
    ],
)
def test_within_tolerance(pred, gold, tol, expected):
    assert within_tolerance(pred, gold, tol) is expected


@pytest.mark.parametrize("tol", [-1.0, float("nan"), float("inf")])
def test_within_tolerance_bad_tol_raises(tol):
    with pytest.raises(ValueError, match="tol"):
        within_tolerance(5, 5, tol)


def test_accuracy_within():
    # |Δ| = 2, 3, 0 → within, out, within → 2/3
    assert accuracy_within([5, 4, 7], [7, 7, 7]) == pytest.approx(2 / 3)
    assert accuracy_within([5, 4, 7], [7, 7, 7], tol=3) == 1.0
    assert accuracy_within((1.0,), (9.0,)) == 0.0


def test_rmse():
    # diffs 0, −4 → sqrt((0 + 16)/2) = sqrt(8)
    assert rmse([1, 3], [1, 7]) == pytest.approx(math.sqrt(8))
    # diffs 1, 0, −2 → sqrt((1 + 0 + 4)/3) = sqrt(5/3)
    assert rmse([2, 4, 6], [1, 4, 8]) == pytest.approx(math.sqrt(5 / 3))
    assert rmse([5], [5]) == 0.0


@pytest.mark.parametrize("metric", [rmse, accuracy_within])
def test_metrics_reject_mismatch_and_empty(metric):
    with pytest.raises(ValueError, match="1 predictions but 2"):
        metric([1], [1, 2])
    with pytest.raises(ValueError, match="no scores"):
        metric([], [])


def test_eqa_rewards_total_on_adversarial_megabyte():
    # time budgets for these inputs: bench/adversarial.py (tests assert no wall-clock time)
    texts = [
        "<" * 1_000_000,
        "<critique>" * 100_000,
        "<critique>" * 60_000 + "<score>" * 60_000,
        "<critique></critique>" + "<score>" * 140_000,
        ("<critique>" + "</critique" * 3 + "<score>") * 20_000,
    ]
    for text in texts:  # no closed <critique>…</critique><score>…</score> pair: 0 and 0
        assert eqa_format(text).value == 0.0, text[:20]
        assert eqa_accuracy(text, 5).value == 0.0, text[:20]
