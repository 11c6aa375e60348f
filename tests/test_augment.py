import random

import numpy as np
import pytest
from PIL import Image

from groundrl.augment import mask_patches, mask_pixels, shuffle_frames, shuffle_reasoning


def test_shuffle_frames_changes_order_deterministically():
    frames = list("abcdef")
    out, perm = shuffle_frames(frames, random.Random(0))
    assert sorted(out) == frames and out != frames and [frames[i] for i in perm] == out
    assert shuffle_frames(frames, random.Random(0)) == (out, perm)
    assert shuffle_frames(["x"], random.Random(0)) == (["x"], [0])
    assert frames == list("abcdef")  # input untouched


def test_mask_patches_counts_on_a_real_image():
    img = Image.new("RGB", (64, 64), (255, 255, 255))
    out, idx = mask_patches(img, random.Random(1))
    # 4×4 = 16 patches, round(0.15·16) = 2 patches of 16×16 pixels
    arr = np.array(out)
    assert len(idx) == 2 and out.mode == "RGB"
    assert int((arr.sum(axis=2) == 0).sum()) == 2 * 16 * 16
    assert np.array(img).min() == 255  # input untouched
    again, idx2 = mask_patches(img, random.Random(1))
    assert idx2 == idx and np.array_equal(np.array(again), arr)


def test_mask_patches_partial_edges_and_arrays():
    arr = np.full((20, 40), 7, dtype=np.uint8)  # patches: 2 rows × 3 cols, last col 8 px wide
    out, idx = mask_patches(arr, random.Random(3), ratio=1.0)
    assert idx == list(range(6)) and out.sum() == 0
    with pytest.raises(ValueError):
        mask_patches(arr, random.Random(0), ratio=1.5)


def test_mask_pixels_fraction():
    img = Image.new("L", (10, 10), 200)
    out = mask_pixels(img, random.Random(0), 0.3)
    assert int((np.array(out) == 0).sum()) == 30


def test_shuffle_reasoning_blocks_and_sentences():
    text = "<think>A.</think><think>B.</think><think>C.</think><answer>x</answer>"
    out = shuffle_reasoning(text, random.Random(0))
    assert out != text and out.endswith("<answer>x</answer>")
    assert out.count("<think>") == 3 and {"A.", "B.", "C."} == {
        seg.split("</think>")[0] for seg in out.split("<think>")[1:]
    }
    one = "<think>First I look. Then I count. Finally I answer.</think> 3"
    out = shuffle_reasoning(one, random.Random(2))
    assert out != one and out.endswith("</think> 3")
    assert sorted(out[7:-10].split(" ")) == sorted(
        ["First", "I", "look.", "Then", "I", "count.", "Finally", "I", "answer."]
    )
    assert shuffle_reasoning("Only one sentence.", random.Random(0)) == "Only one sentence."
