import random

import numpy as np
import pytest
from PIL import Image

from groundrl.train.cgrpo import contrastive_reward, expand


def test_expand_makes_three_seeded_perturbations():
    frames = [Image.new("RGB", (32, 32), (i * 40 + 20, 10, 10)) for i in range(4)]
    rec = {"id": "a", "frames": frames, "reasoning": "I look. I count. I answer.", "gt_score": 7}
    rows = expand(rec, random.Random(0))
    assert [r["perturbation"] for r in rows] == ["none", "temporal", "spatial", "reasoning"]
    assert [f.getpixel((0, 0)) for f in rows[1]["frames"]] != [f.getpixel((0, 0)) for f in frames]
    # 32×32 → 4 patches, round(0.15·4) = 1 zeroed patch of 16×16 per frame
    assert all(int((np.array(f).sum(axis=2) == 0).sum()) == 256 for f in rows[2]["frames"])
    assert rows[3]["reasoning"] != rec["reasoning"] and rows[0] == {**rec, "perturbation": "none"}
    again = expand(rec, random.Random(0))
    assert again[3]["reasoning"] == rows[3]["reasoning"]


def score(s):
    return f"<critique>c</critique><score>{s}</score>"


def test_contrastive_reward_boosts_originals_only():
    f = contrastive_reward()
    kinds = ["none", "none", "temporal", "temporal", "spatial", "spatial"]
    comps = [score(7), score(0), score(2), score(3), score(7), score(7)]
    out = f(completions=comps, perturbation=kinds, gt_score=[7] * 6)
    # orig accs: 1.0, 0.51 → mean 0.755; temporal accs 0.75, 0.84 → mean 0.795: 0.755 < 0.95·0.795 → no boost
    # spatial: mean 1.0 → no boost; combined = 0 for both
    assert out == [0.0, 0.0, None, None, None, None]
    comps[2:4] = [score(0), score(1)]  # temporal means 0.51, 0.64 → 0.575; 0.755 ≥ 0.546 → mu
    out = f(completions=comps, perturbation=kinds, gt_score=[7] * 6)
    # temporal gives 0.3 to both originals (both accs ≥ 0.1), spatial 0 → averaged over 2 types
    assert out[:2] == pytest.approx([0.15, 0.15]) and out[2:] == [None] * 4


def test_contrastive_reward_min_acc_and_config():
    f = contrastive_reward(mu=0.5, min_acc=0.5)
    out = f(
        completions=[score(7), score(0), score(0)],
        perturbation=["none", "none", "reasoning"],
        gt_score=[7, 7, 7],
    )
    # orig accs 1.0, 0.51; mean 0.755 ≥ 0.95·0.51; both ≥ 0.5 → 0.5 each
    assert out == [0.5, 0.5, None]
    with pytest.raises(ValueError):
        contrastive_reward(mu=-1)
