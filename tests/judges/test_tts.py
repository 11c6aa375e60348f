import math

import pytest

from groundrl.judges.tts import aggregate_scores, plot_tts, tts_curve


def test_vote_mean_and_ties():
    assert aggregate_scores([7, 7, 3], "vote") == 7
    assert aggregate_scores([7, 7, 3], "mean") == pytest.approx(17 / 3)
    # tie between 2 and 8, mean 5.5 → 8 is closer (|8-5.5| = 2.5 < |2-5.5| = 3.5)
    assert aggregate_scores([2, 8, 9, 2, 8, 4], "vote") == 8
    # tie equally close to the mean → the lower
    assert aggregate_scores([4, 6], "vote") == 4
    # 6.5 rounds half up to 7, 6.4 to 6: a tie; the mean 6.45 is closer to 6
    assert aggregate_scores([6.5, 6.4, None], "vote") == 6
    assert aggregate_scores([None, None]) is None
    with pytest.raises(ValueError):
        aggregate_scores([1], "median")


def test_tts_curve_uses_prefixes_of_one_sample_set(tmp_path):
    samples = [[9, 2, 2, 2], [5, 5, None, 1]]
    golds = [2, 5]
    rows = tts_curve(samples, golds, ks=(1, 2, 4))
    # K=1: preds 9, 5 → acc 1/2, rmse sqrt((49 + 0)/2)
    assert rows[0]["accuracy"] == 0.5 and rows[0]["rmse"] == pytest.approx(math.sqrt(24.5))
    # K=2: [9,2] tie → mean 5.5 → 2 (|2-5.5|=3.5 vs |9-5.5|=3.5 → lower) ; [5,5] → 5
    assert rows[1]["accuracy"] == 1.0 and rows[1]["rmse"] == 0.0
    # K=4: [9,2,2,2] → 2 ; [5,5,1] → 5
    assert rows[2]["accuracy"] == 1.0
    plot_tts(rows, str(tmp_path / "tts.png"))
    assert (tmp_path / "tts.png").stat().st_size > 1000


def test_missing_predictions_count_as_wrong():
    rows = tts_curve([[None], [4]], [3, 4], ks=(1,))
    assert rows[0]["accuracy"] == 0.5 and rows[0]["n_missing"] == 1 and rows[0]["rmse"] == 0.0
