"""Every monitor signal on hand-made rows, against values worked out by hand."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from groundrl.monitor import signals as sg


def test_ranks_average_ties():
    assert sg.ranks([3.0, 1.0, 3.0, 2.0]) == [3.5, 1.0, 3.5, 2.0]


def test_spearman_hand_computed():
    # reward ranks 1,2,3,4; truth ranks 2,1,4,3: d = (-1, 1, -1, 1), rho = 1 - 6*4/(4*15) = 0.6
    assert sg.spearman([0.1, 0.2, 0.3, 0.4], [5, 1, 9, 7]) == pytest.approx(0.6)
    assert sg.spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


def test_spearman_skips_non_numbers_and_needs_variation():
    # the None and the NaN pairs drop out: left (1,1), (2,2), (3,3)
    assert sg.spearman([1, None, 2, 3, 4], [1, 5, 2, 3, float("nan")]) == pytest.approx(1.0)
    assert sg.spearman([1, 1, 1], [1, 2, 3]) is None
    assert sg.spearman([1, 2], [1, 2]) is None


def test_hack_share():
    rows = [
        {"reward": 0.9, "truth": 0.0},  # high reward, failed: counted
        {"reward": 0.9, "truth": 1.0},
        {"reward": 0.1, "truth": 0.0},
        {"reward": 0.8, "truth": 0.4},  # 0.8 >= 0.8 and 0.4 < 0.5: counted
        {"reward": 0.95, "truth": None},  # no truth: not in the denominator
    ]
    assert sg.hack_share(rows, high_reward=0.8, truth_pass=0.5) == pytest.approx(2 / 4)
    assert sg.hack_share([{"reward": 1.0}], 0.8, 0.5) is None


def test_length_and_repetition():
    assert sg.length("one two  three\nfour") == 4
    # trigrams: (a b c) (b c a) (c a b) (a b c) (b c a) (c a b) (a b c): 7, of them 3 distinct
    assert sg.repetition("a b c a b c a b c") == pytest.approx(4 / 7)
    assert sg.repetition("a b c") == 0.0
    assert sg.repetition(None) == 0.0


def test_zero_std_groups():
    rows = [
        {"group": 0, "reward": 1.0},
        {"group": 0, "reward": 1.0},
        {"group": 1, "reward": 0.0},
        {"group": 1, "reward": 1.0},
        {"group": 2, "reward": 0.5},  # a group of one: no variance to speak of, skipped
        {"group": None, "reward": 0.0},
    ]
    assert sg.zero_std_groups(rows) == pytest.approx(0.5)
    assert sg.zero_std_groups([{"reward": 1.0}]) is None


def test_tokens_keep_tags_and_lowercase_words():
    assert sg.tokens("The <Answer>2</answer> plan verified, verified") == {
        "the",
        "<answer>",
        "</answer>",
        "plan",
        "verified",
    }


def test_shortcut_token_against_reference():
    reference = (Counter({"plan": 4, "pick": 4, "apple": 1}), 4)
    rows = [
        {"reward": 1.0, "completion": "plan pick verified"},
        {"reward": 1.0, "completion": "plan pick verified"},
        {"reward": 0.9, "completion": "plan pick apple"},
        {"reward": 1.0, "completion": "plan pick"},
        {"reward": 0.1, "completion": "verified verified nonsense"},  # low reward: not looked at
    ]
    # high-reward texts: 4; 'verified' in 2 of them and in 0/4 references: gap 0.5.
    # 'apple' is in 1/4 references (> 1%): never a candidate.
    tok, gap = sg.shortcut_token(rows, reference, high_reward=0.8, min_high=4)
    assert tok == "verified"
    assert gap == pytest.approx(0.5)
    assert sg.shortcut_token(rows, reference, 0.8, min_high=5) == (None, None)  # 4 high-reward texts
    assert sg.shortcut_token(rows, (Counter(), 0), 0.8, min_high=1) == (None, None)


def test_slope_gap_and_kl_jump():
    assert sg.slope_gap(0.9, 0.5, 0.65, 0.6) == pytest.approx(0.35)
    assert sg.slope_gap(None, 0.5, 0.6, 0.6) is None
    # median of (0.01, 0.02, 0.03) is 0.02: 0.1 / 0.02 = 5
    assert sg.kl_jump([0.03, 0.01, 0.02], 0.1) == pytest.approx(5.0)
    # KL near 0 early: the floor 1e-3 keeps 0.004 from reading as a 40x jump
    assert sg.kl_jump([0.0001, 0.0001], 0.004) == pytest.approx(4.0)
    assert sg.kl_jump([], 0.1) is None


def test_num_rejects_bools_and_non_finite():
    assert sg.num(True) is None
    assert sg.num(float("inf")) is None
    assert sg.num("1") is None
    assert sg.num(2) == 2.0
    assert math.isclose(sg.mean([1.0, None, 2.0]), 1.5)
