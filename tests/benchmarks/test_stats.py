"""The benchmark metrics in benchmarks/stats.py and groundrl.intervals, each on small
hand-made rows whose expected values are worked out by hand in the comments."""

import math

import pytest

from groundrl.benchmarks.stats import (
    all_right_chance,
    all_right_share,
    error_kinds,
    group_outcomes,
    macro_share,
    mean_chance_accuracy,
    rate_cell,
    rmse,
    score_accuracy,
    share,
    split_by,
    within,
)
from groundrl.intervals import bootstrap_ci, wilson_ci

# five pairs: category a has 2 right of 3, category b 1 right of 2
PAIRS = [
    {"category": "a", "group": "g1", "correct": True},
    {"category": "a", "group": "g1", "correct": True},
    {"category": "a", "group": "g2", "correct": False},
    {"category": "b", "group": "g2", "correct": True},
    {"category": "b", "correct": True, "correct_released": False},
]


def test_share_counts_true_rows():
    assert share(PAIRS) == 4 / 5
    assert share([{"ok": 1}, {"ok": 0}, {"ok": None}, {"ok": "yes"}], "ok") == 2 / 4


def test_macro_share_weighs_each_category_the_same():
    # a: 2/3, b: 2/2 -> (2/3 + 1) / 2 = 5/6, not the pooled 4/5
    assert macro_share(PAIRS) == pytest.approx(5 / 6)
    # rows without the field form one group "all": one group -> the pooled share
    assert macro_share([{"correct": True}, {"correct": False}], by="category") == 0.5


def test_group_outcomes_and_acc_plus():
    groups = group_outcomes(PAIRS)
    assert groups == {"g1": [True, True], "g2": [False, True]}  # the last pair has no group
    assert all_right_share(groups) == 0.5  # g1 all right, g2 not
    assert all_right_share({}) is None
    # coin flips: g1 and g2 have two pairs each -> 0.5^2 = 0.25 each
    assert all_right_chance(groups) == 0.25
    assert all_right_chance({"x": [True], "y": [True, True, True]}) == (0.5 + 0.125) / 2


def test_split_by_sorts_groups_and_skips_missing():
    rows = [{"s": "z", "i": 0}, {"s": None, "i": 1}, {"s": "a", "i": 2}, {"s": "z", "i": 3}, {"i": 4}]
    assert split_by(rows, "s") == {"a": [rows[2]], "z": [rows[0], rows[3]]}
    assert list(split_by(rows, "s")) == ["a", "z"]
    assert split_by([{"s": 1}, {"s": "1"}], "s") == {"1": [{"s": 1}, {"s": "1"}]}  # keyed by str


def test_rate_cell():
    cell = rate_cell(3, 4)
    assert (cell["n"], cell["hits"], cell["accuracy"]) == (4, 3, 0.75)
    assert [round(x, 3) for x in cell["accuracy_ci95"]] == [0.301, 0.954]  # Wilson, z = 1.96


SCORES = [  # gold, predicted
    {"gt_score": 7.0, "pred": 9.0},  # |Δ| = 2: right; squared error 4
    {"gt_score": 7.0, "pred": 4.0},  # |Δ| = 3: wrong; squared error 9
    {"gt_score": 0.0, "pred": None},  # no score: wrong, not in RMSE
    {"gt_score": 10.0, "pred": 10.0},  # right; squared error 0
]


def test_score_accuracy_and_rmse():
    assert within(9, 7) and not within(4, 7) and not within(None, 7)
    assert score_accuracy(SCORES) == 2 / 4
    assert rmse(SCORES) == pytest.approx(math.sqrt((4 + 9 + 0) / 3))
    assert rmse([{"gt_score": 1.0, "pred": None}]) is None


def test_mean_chance_accuracy():
    # uniform integer scores 0..10 within 2 of 7: 5..9 -> 5/11; of 0: 0..2 -> 3/11; of 10: 8..10 -> 3/11
    assert mean_chance_accuracy(SCORES) == pytest.approx((5 + 5 + 3 + 3) / 11 / 4)


def test_error_kinds_counts_by_message_head():
    bad = [
        {"error": "missing field 'query'"},
        {"error": "missing field 'image'"},
        {"error": "not JSON (Expecting value)"},
        {"line": 9},
    ]
    assert error_kinds(bad) == [("", 1), ("missing field", 2), ("not JSON", 1)]


def test_wilson_interval_by_hand():
    # k = 2, n = 4, z = 1.959964: p = 0.5, z^2 = 3.8415; den = 1 + 3.8415/4 = 1.96037
    # mid = (0.5 + 3.8415/8) / den = 0.5; half = z * sqrt(0.0625 + 0.060023) / den = 0.68605 / den = 0.34996
    lo, hi = wilson_ci(2, 4)
    assert lo == pytest.approx(0.5 - 0.34996, abs=1e-5) and hi == pytest.approx(0.5 + 0.34996, abs=1e-5)
    assert wilson_ci(0, 0) == (None, None)
    assert wilson_ci(5, 5)[1] == 1.0


def test_bootstrap_interval_by_hand():
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    assert bootstrap_ci([3.0] * 5, mean) == (3.0, 3.0)  # every resample has mean 3
    # a metric that cannot score any resample has no interval
    assert bootstrap_ci([1, 2], lambda xs: None) == (None, None)
    lo, hi = bootstrap_ci([0.0, 1.0], mean, n=2000, seed=1)
    assert (lo, hi) == (0.0, 1.0)  # two items: 1/4 of resamples are all 0, 1/4 all 1
    assert bootstrap_ci([0.0, 1.0], mean, seed=5) == bootstrap_ci([0.0, 1.0], mean, seed=5)
