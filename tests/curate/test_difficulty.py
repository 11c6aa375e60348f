import math

import numpy as np
import pytest
from PIL import Image

from groundrl.curate import difficulty_weight, keep_by_difficulty, mask_difficulty
from groundrl.curate.difficulty import RATIOS


def test_ratios():
    assert RATIOS == (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def test_threshold_known_by_construction():
    # 10 × 10 image: λ masks exactly round(100 λ) pixels. The answer reads the pixels it gets
    # and is right while at most 30 are hidden: right for λ ≤ 0.3, wrong from 0.4 on.
    img = Image.new("L", (10, 10), 255)
    seen = []

    def honest(masked, sample):
        seen.append(masked)
        assert sample["id"] == "s"
        return int((np.array(masked) == 0).sum()) <= 30

    res = mask_difficulty({"id": "s", "image": img}, honest)
    assert res == {
        "id": "s",
        "curve": [{"ratio": r, "accuracy": 1.0 if r <= 0.3 else 0.0} for r in RATIOS],
        "lambda_star": 0.4,
    }
    assert len(seen) == 100  # K = 10 masks for each of the 10 ratios
    assert np.array(img).min() == 255  # the sample's image is not modified


def test_threshold_is_strictly_below_0_1():
    # a marker pixel hidden or not: the answer is right in exactly `right` of the K = 10 masks
    # at every ratio — counts decided by the mask index, checked through the masked pixels
    def make(right_by_ratio):
        calls = {}

        def answer(masked, sample):
            lam = round(int((np.array(masked) == 0).sum()) / 100, 1)
            calls[lam] = calls.get(lam, 0) + 1
            return calls[lam] <= right_by_ratio[lam]

        return answer

    img = np.full((10, 10), 9, np.uint8)
    # 1 right of 10 = 0.1 is not below 0.1; 0 of 10 at 0.7 is
    right = dict.fromkeys(RATIOS, 1) | {0.0: 10, 0.7: 0, 0.8: 1, 0.9: 0}
    res = mask_difficulty({"id": "m", "image": img}, make(right))
    assert res["lambda_star"] == 0.7 and res["curve"][1]["accuracy"] == 0.1
    never = dict.fromkeys(RATIOS, 1)
    assert mask_difficulty({"id": "m", "image": img}, make(never))["lambda_star"] is None
    assert mask_difficulty({"id": "m", "image": img}, make(never), threshold=0.2)["lambda_star"] == 0.0


def test_accuracy_curve_matches_the_hypergeometric_law():
    # the answer is right iff a 2 × 2 marker survives: P = C(96, k) / C(100, k) with k = 100 λ
    img = np.full((10, 10), 255, np.uint8)

    def marker_visible(masked, sample):
        return bool((masked[4:6, 4:6] > 0).all())

    k_rep = 400
    res = mask_difficulty({"id": "h", "image": img}, marker_visible, k=k_rep, seed=3)
    for c in res["curve"]:
        k = round(100 * c["ratio"])
        p = math.comb(96, k) / math.comb(100, k)
        assert abs(c["accuracy"] - p) <= 4 * math.sqrt(p * (1 - p) / k_rep) + 1e-9, c
    assert res["curve"][0]["accuracy"] == 1.0


def test_seeded_and_image_sources(tmp_path):
    img = Image.new("RGB", (8, 8), (200, 10, 10))
    img.save(tmp_path / "i.png")
    masks = []

    def record(masked, sample):
        masks.append(np.array(masked).tobytes())
        return True

    mask_difficulty({"id": "a", "image": str(tmp_path / "i.png")}, record, ratios=[0.5], k=3, seed=1)
    first = list(masks)
    masks.clear()
    mask_difficulty({"id": "a", "image": img}, record, ratios=[0.5], k=3, seed=1)
    assert masks == first and len(set(first)) > 1  # same masks from a path or a PIL image; K different
    masks.clear()
    mask_difficulty({"id": "a", "image": img}, record, ratios=[0.5], k=3, seed=2)
    assert masks != first


def test_unreadable_image_is_reported_not_raised(tmp_path):
    res = mask_difficulty({"id": "x", "image": str(tmp_path / "missing.png")}, lambda m, s: True)
    assert res["curve"] == [] and res["lambda_star"] is None and "image" in res["error"]
    assert "error" in mask_difficulty({"id": "y"}, lambda m, s: True)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"k": 0}, "k"),
        ({"k": 2.5}, "k"),
        ({"ratios": [0.1, 1.2]}, "ratio"),
        ({"ratios": []}, "ratios"),
        ({"threshold": 1.5}, "threshold"),
    ],
)
def test_bad_config_raises(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mask_difficulty({"id": "s", "image": np.zeros((4, 4))}, lambda m, s: True, **kwargs)


def test_filter_and_weight():
    assert [keep_by_difficulty({"lambda_star": v}) for v in (0.0, 0.1, 0.5, 0.9, None)] == [
        False,
        True,
        True,
        True,
        False,
    ]
    assert keep_by_difficulty({"lambda_star": 0.0}, lo=0.0) is True
    assert keep_by_difficulty({"lambda_star": 0.3, "error": "x"}) is False
    assert keep_by_difficulty("junk") is False
    with pytest.raises(ValueError, match="lo"):
        keep_by_difficulty({"lambda_star": 0.3}, lo=0.6, hi=0.5)
    assert difficulty_weight(0.1) == pytest.approx(0.9) and difficulty_weight(0.9) == pytest.approx(0.1)
    assert difficulty_weight(None) == 0.0 and difficulty_weight(None, never=0.5) == 0.5
    with pytest.raises(ValueError, match="lambda_star"):
        difficulty_weight(1.5)


def test_random_masks_hit_uniformly():
    # every pixel is hidden about equally often at λ = 0.5 (the masks are uniform)
    img = np.ones((6, 6), np.uint8)
    hidden = np.zeros((6, 6))

    def count(masked, sample):
        hidden[:] += masked == 0
        return True

    mask_difficulty({"id": "u", "image": img}, count, ratios=[0.5], k=2000)
    # Binomial(2000, 0.5) per pixel: sd ≈ 22
    assert np.abs(hidden - 1000).max() < 110 and hidden.sum() == 2000 * 18
