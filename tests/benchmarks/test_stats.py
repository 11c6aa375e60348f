"""The benchmark metrics in benchmarks/stats.py and groundrl.intervals, each on small
hand-made rows whose expected values are worked out by hand in the comments."""

import math

import pytest

from groundrl.benchmarks.stats import (
    CALIBRATION_BINS,
    accuracy_block,
    accuracy_by_category,
    accuracy_by_source,
    all_right_chance,
    all_right_share,
    calibration,
    column_means,
    error_kinds,
    group_outcomes,
    macro_share,
    mean_chance_accuracy,
    mean_or_none,
    mode_share,
    position_counts,
    position_metrics,
    protocol_block,
    proxy_agreement,
    rate_cell,
    rmse,
    score_accuracy,
    score_bin,
    score_group,
    score_spread,
    self_consistency,
    share,
    spearman,
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


# -- pairwise-rm blocks ---------------------------------------------------------------------

# the headline protocol's verdict beside the released one (preferred: 1, 1, 2, 1)
PROTO = [
    {"category": "x", "source": "s1", "verdict": 1, "verdict_released": 1, "correct": True, "correct_released": True},
    {"category": "x", "source": "s2", "verdict": None, "verdict_released": 1, "correct": False, "correct_released": True},
    {"category": "x", "source": "s1", "verdict": 2, "verdict_released": None, "correct": True, "correct_released": False},
    {"category": "y", "verdict": 2, "verdict_released": 1, "correct": False, "correct_released": False},
]  # fmt: skip


def test_accuracy_block_on_hand_rows():
    block = accuracy_block(PAIRS, "correct", seed=0)
    assert block["accuracy"] == 4 / 5 and block["macro_accuracy"] == pytest.approx(5 / 6)
    assert block["acc_plus"] == 0.5 and block["n_groups"] == 2 and block["chance_acc_plus"] == 0.25
    assert block["acc_plus_ci95"] == list(wilson_ci(1, 2))  # one group of two all right
    right = [{**r, "correct": True} for r in PAIRS]
    assert accuracy_block(right, "correct", seed=0)["accuracy_ci95"] == [1.0, 1.0]  # every resample 1
    assert "acc_plus_ci95" not in accuracy_block(PROTO, "correct", seed=0)  # no groups


def test_protocol_block_counts_differences():
    block = protocol_block(PROTO, "released", seed=0)
    assert block["accuracy"] == 2 / 4
    assert block["unparseable"] == 1  # the third row
    assert block["n_differ"] == 3  # rows 2, 3, 4 (None vs 1 differs too)
    assert block["n_correct_differ"] == 2  # rows 2 and 3; row 4 is wrong under both


def test_accuracy_by_category_and_source():
    cats = accuracy_by_category(PROTO, ["released"])
    assert list(cats) == ["x", "y"]
    assert (cats["x"]["n"], cats["x"]["hits"], cats["x"]["accuracy"]) == (3, 2, 2 / 3)
    assert cats["x"]["accuracy_released"] == 2 / 3 and cats["x"]["accuracy_ci95"] == list(wilson_ci(2, 3))
    assert (cats["y"]["hits"], cats["y"]["accuracy"], cats["y"]["accuracy_released"]) == (0, 0.0, 0.0)
    src = accuracy_by_source(PROTO)  # the fourth row has no source
    assert src == {
        "s1": {"n": 2, "accuracy": 1.0, "accuracy_ci95": list(wilson_ci(2, 2))},
        "s2": {"n": 1, "accuracy": 0.0, "accuracy_ci95": list(wilson_ci(0, 1))},
    }


def test_proxy_agreement():
    rows = [
        {"proxy_agree": True, "proxy_verdict": 1, "preferred": 1, "correct": True},
        {"proxy_agree": True, "proxy_verdict": 2, "preferred": 1, "correct": False},
        {"proxy_agree": False, "proxy_verdict": None, "preferred": 2, "correct": False},
        {"proxy_agree": False, "proxy_verdict": 2, "preferred": 2, "correct": True},
    ]
    m = proxy_agreement(rows)
    assert (m["n"], m["n_agree"], m["agree_rate"], m["accuracy_when_agree"]) == (4, 2, 0.5, 0.5)
    assert m["proxy_accuracy"] == 0.5  # rows 1 and 4
    assert m["agree_rate_ci95"] == list(wilson_ci(2, 4)) == m["proxy_accuracy_ci95"]


# -- judge-reliability ------------------------------------------------------------------------

# pair rows as reliability.pair_rows writes them (slot = the position picked)
ORDERS = [
    # picks 1 then (swapped) slot 1 = response 2: disagree; preferred 1: right only in the original order
    {"slot_original": 1, "slot_swapped": 1, "agree": False, "right_original": True, "right_swapped": False,
     "samples_original": [1, 1, 2], "samples_swapped": [1, 1, 1]},
    # picks 2 both ways: agree; preferred 2: right in both orders
    {"slot_original": 2, "slot_swapped": 1, "agree": True, "right_original": True, "right_swapped": True,
     "samples_original": [2, None], "samples_swapped": [1]},
    # the original call failed (no samples); swapped slot 2 = response 1 = preferred
    {"slot_original": None, "slot_swapped": 2, "agree": None, "right_original": False, "right_swapped": True,
     "samples_original": [], "samples_swapped": [2, 2]},
]  # fmt: skip


def test_position_metrics():
    assert position_counts(ORDERS) == {
        "verdicts": 5,
        "first": 3,
        "both_parsed": 2,
        "agree": 1,
        "right_both": 1,
    }
    m = position_metrics(ORDERS)
    assert (m["first_slot_rate"], m["n_verdicts"]) == (3 / 5, 5)
    assert (m["swap_agreement"], m["n_pairs_both_parsed"]) == (1 / 2, 2)
    assert m["accuracy_both_orders"] == 1 / 3 and m["accuracy_both_orders_ci95"] == list(wilson_ci(1, 3))
    assert m["accuracy_original_order"] == 2 / 3 == m["accuracy_swapped_order"]
    assert position_metrics([{**ORDERS[2], "slot_swapped": None}])["first_slot_rate"] is None


def test_self_consistency_and_mode_share():
    assert mode_share([1, 1, 2]) == (2 / 3, False) and mode_share([2, None]) == (0.5, False)
    assert mode_share([]) == (0.0, False) and mode_share([None, None]) == (1.0, True)
    m = self_consistency(ORDERS, seed=0)
    # five presentations with samples: 2/3, 1, 1/2, 1, 1 -> mean 25/30; unanimous 3 of 5
    assert m["self_consistency"] == pytest.approx((2 / 3 + 1 + 0.5 + 1 + 1) / 5)
    assert (m["n_presentations"], m["n_unanimous"], m["unanimous_rate"]) == (5, 3, 0.6)
    assert mean_or_none([]) is None and mean_or_none([1, 2]) == 1.5


def test_calibration_bins_by_hand():
    assert CALIBRATION_BINS == ((0, 2), (3, 4), (5, 6), (7, 8), (9, 10))
    # half up: 2.5 -> 3, 1.6 -> 2; outside 0..10 goes to the end bins
    assert [score_bin(x) for x in (1.6, 2.5, 4.4, 12, -1)] == [(0, 2), (3, 4), (3, 4), (9, 10), (0, 2)]
    rows = [
        {"pred": 1.6, "gt_score": 3.0},  # |Δ| 1.4: within 2
        {"pred": 2.5, "gt_score": 8.0},  # miss
        {"pred": 4.4, "gt_score": 5.0},
        {"pred": None, "gt_score": 1.0},  # no score: in no bin
        {"pred": 12.0, "gt_score": 10.0},
        {"pred": -1.0, "gt_score": 0.0},
    ]
    calib = {c["bin"]: c for c in calibration(rows, seed=0)}
    assert list(calib) == ["0-2", "3-4", "5-6", "7-8", "9-10"]
    low = calib["0-2"]
    assert (low["n"], low["mean_pred"], low["mean_gold"], low["within_2"]) == (
        2,
        pytest.approx(0.3),
        1.5,
        1.0,
    )
    mid = calib["3-4"]
    assert (mid["n"], mid["mean_pred"], mid["mean_gold"], mid["within_2"]) == (
        2,
        pytest.approx(3.45),
        6.5,
        0.5,
    )
    assert calib["5-6"] == {
        "bin": "5-6", "n": 0, "mean_pred": None, "mean_gold": None, "mean_gold_ci95": [None, None],
        "within_2": None, "within_2_ci95": [None, None],
    }  # fmt: skip
    assert calib["9-10"]["mean_gold_ci95"] == [10.0, 10.0]  # one item: every resample is it


def test_score_spread_by_hand():
    rows = [{"samples": [3, 5, None]}, {"samples": [7, 7]}, {"samples": [None, 4]}, {"samples": [2]}]
    m = score_spread(rows, seed=0)
    # only the first two have two scores: SDs sqrt(2) (3 and 5 around 4, n - 1 = 1) and 0
    assert m["n_self_consistency"] == 2
    assert m["score_sd"] == pytest.approx(math.sqrt(2) / 2)
    assert m["identical_rate"] == 0.5


# -- score-rm ---------------------------------------------------------------------------------


def test_score_group_and_spearman():
    g = score_group(SCORES)
    assert (g["n"], g["hits"], g["accuracy"]) == (4, 2, 0.5)
    assert g["rmse"] == pytest.approx(math.sqrt(13 / 3))
    assert g["chance_accuracy"] == pytest.approx(16 / 44)
    # ranks [1, 2, 3] and [1, 3, 2]: covariance 1, variances 2 and 2 -> 0.5
    assert spearman([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5)
    assert spearman([1, 2, 3], [5, 5, 5]) is None and spearman([1], [1]) is None


def test_column_means():
    rows = [{"llm_f1": 1.0, "f1": 0.5}, {"llm_f1": 0.0, "f1": 0.5}, {"llm_f1": 0.5, "f1": 0.5}]
    m = column_means(rows, ["f1"], prefix="llm_")
    assert m["f1"]["value"] == 0.5  # (1 + 0 + 0.5) / 3
    assert column_means(rows, ["f1"])["f1"] == {"value": 0.5, "ci95": [0.5, 0.5]}  # constant column
    assert column_means([], ["f1"])["f1"] == {"value": None, "ci95": [None, None]}
