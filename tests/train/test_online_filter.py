import pytest

from groundrl.train.online_filter import AccuracyRecorder, group_keep_mask


def test_group_keep_mask_bounds_inclusive():
    # groups of 4: fractions 1.0 (drop), 0.0 (drop), 0.5 (keep), 0.25 (keep)
    acc = [1, 1, 1, 1, 0, 0, 0, 0.5, 1, 0, 1, 0, 1, 0, 0, 0]
    assert group_keep_mask(acc, 4) == [False] * 8 + [True] * 8
    # 1 of 10 correct = 0.1: kept (inclusive); 9 of 10 = 0.9: kept
    assert group_keep_mask([1] + [0] * 9, 10) == [True] * 10
    assert group_keep_mask([1] * 9 + [0], 10) == [True] * 10
    assert group_keep_mask([None, 1], 2) == [True, True]


def test_group_keep_mask_config_errors():
    with pytest.raises(ValueError):
        group_keep_mask([1, 0, 1], 2)
    with pytest.raises(ValueError):
        group_keep_mask([1, 0], 2, lo=0.9, hi=0.1)
    with pytest.raises(ValueError):
        group_keep_mask([1], 0)


def test_recorder_keeps_last_batch_and_name():
    def accuracy(prompts=None, completions=None, **kw):
        return [float(c == "x") for c in completions]

    rec = AccuracyRecorder(accuracy)
    assert rec.__name__ == "accuracy"
    assert rec(completions=["x", "y"]) == [1.0, 0.0]
    assert rec.last == [1.0, 0.0]
