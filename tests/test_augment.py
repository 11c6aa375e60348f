import itertools
import random

import numpy as np
import pytest
from PIL import Image

from groundrl.augment import mask_patches, mask_pixels, shuffle_frames, shuffle_reasoning
from groundrl.augment.masking import round_half_up

# ---------------------------------------------------------------- shuffle_frames


def test_shuffle_frames_changes_order_deterministically_and_leaves_input():
    frames = list("abcdef")
    out, perm = shuffle_frames(frames, random.Random(0))
    assert sorted(out) == frames and out != frames
    assert out == [frames[i] for i in perm] and sorted(perm) == list(range(6))
    assert shuffle_frames(frames, random.Random(0)) == (out, perm)
    assert frames == list("abcdef")


def test_two_distinct_frames_are_always_swapped():
    # the only order of two distinct frames that differs from the original
    for seed in range(30):
        assert shuffle_frames(["a", "b"], random.Random(seed)) == (["b", "a"], [1, 0])


def test_every_non_identity_order_occurs_and_identity_never():
    seen = {tuple(shuffle_frames([0, 1, 2], random.Random(s))[1]) for s in range(300)}
    assert seen == set(itertools.permutations(range(3))) - {(0, 1, 2)}


def test_frames_with_nothing_to_reorder_come_back_in_order():
    assert shuffle_frames(["x"], random.Random(0)) == (["x"], [0])
    assert shuffle_frames([], random.Random(0)) == ([], [])
    # three separate but pixel-identical images: no reordering changes the clip
    same = [Image.new("RGB", (4, 4), (9, 9, 9)) for _ in range(3)]
    out, perm = shuffle_frames(same, random.Random(0))
    assert perm == [0, 1, 2] and all(a is b for a, b in zip(out, same, strict=True))


def test_duplicates_still_give_a_visible_change():
    # [a, a, b]: the two orders that move b are the only visible changes
    a, b = np.zeros((2, 2), np.uint8), np.ones((2, 2), np.uint8)
    for seed in range(20):
        out, _ = shuffle_frames([a, a.copy(), b], random.Random(seed))
        assert [int(f.max()) for f in out] in ([0, 1, 0], [1, 0, 0])


def test_shuffle_frames_rejects_bad_arguments():
    with pytest.raises(ValueError, match="random.Random"):
        shuffle_frames(["a", "b"], 0)
    with pytest.raises(ValueError, match="sequence"):
        shuffle_frames("abc", random.Random(0))


# ---------------------------------------------------------------- mask_patches


def _zeros(img):
    arr = np.array(img)
    return arr == 0 if arr.ndim == 2 else (arr == 0).all(axis=2)


def test_mask_patches_on_a_64x64_white_image():
    img = Image.new("RGB", (64, 64), (255, 255, 255))
    out, idx = mask_patches(img, random.Random(1))
    # 4 × 4 = 16 patches; round(0.15 · 16) = round(2.4) = 2 patches of 16 × 16 pixels
    assert len(idx) == 2 and idx == sorted(set(idx)) and all(0 <= i < 16 for i in idx)
    assert out.mode == "RGB" and out.size == (64, 64)
    zero = _zeros(out)
    assert int(zero.sum()) == 2 * 16 * 16
    assert int((np.array(out) == 0).any(axis=2).sum()) == 2 * 16 * 16  # no half-zeroed pixel
    expected = np.zeros((64, 64), bool)
    for i in idx:
        r, c = divmod(i, 4)
        expected[16 * r : 16 * r + 16, 16 * c : 16 * c + 16] = True
    assert np.array_equal(zero, expected)
    assert np.array(img).min() == 255  # input untouched
    again, idx2 = mask_patches(img, random.Random(1))
    assert idx2 == idx and np.array_equal(np.array(again), np.array(out))


@pytest.mark.parametrize(
    "h, w, k",
    [
        (64, 64, 2),  # 16 patches: 2.4 → 2
        (160, 160, 15),  # 100 patches: 15
        (16, 160, 2),  # 10 patches: 1.5 → 2 (halves round up)
        (16, 480, 5),  # 30 patches: 4.5 → 5
        (16, 48, 0),  # 3 patches: 0.45 → 0
        (8, 8, 0),  # 1 partial patch: 0.15 → 0
    ],
)
def test_number_of_masked_patches(h, w, k):
    arr = np.full((h, w, 3), 200, np.uint8)
    out, idx = mask_patches(arr, random.Random(0))
    assert len(idx) == k and int((out == 0).all(axis=2).sum()) == k * 256


def test_partial_edge_patches_are_patches():
    # 20 × 40: a 2 × 3 grid; row heights 16, 4; column widths 16, 16, 8
    sizes = {0: 256, 1: 256, 2: 128, 3: 64, 4: 64, 5: 32}
    arr = np.full((20, 40), 7, dtype=np.uint8)
    for seed in range(12):
        out, idx = mask_patches(arr, random.Random(seed), ratio=1 / 6)  # round(1.0) = 1 patch
        assert len(idx) == 1 and int((out == 0).sum()) == sizes[idx[0]]
    out, idx = mask_patches(arr, random.Random(3), ratio=1.0)
    assert idx == list(range(6)) and int(out.sum()) == 0
    assert int(arr.min()) == 7 and out.dtype == np.uint8


@pytest.mark.parametrize(
    "mode, fill",
    [
        ("L", 200),
        ("1", 1),
        ("I;16", 4000),
        ("F", 0.5),
        ("RGBA", (1, 2, 3, 255)),
        ("LA", (9, 9)),
        ("CMYK", (5, 5, 5, 5)),
    ],
)
def test_mask_patches_keeps_any_mode(mode, fill):
    img = Image.new(mode, (64, 32), fill)  # 4 × 2 = 8 patches: 1.2 → 1
    out, idx = mask_patches(img, random.Random(0))
    assert out.mode == mode and len(idx) == 1
    arr = np.array(out)
    zero = arr == 0 if arr.ndim == 2 else (arr == 0).all(axis=2)
    assert int(zero.sum()) == 256
    assert np.array_equal(np.array(img), np.array(Image.new(mode, (64, 32), fill)))


def test_palette_image_keeps_its_palette():
    img = Image.new("P", (32, 32), 5)
    img.putpalette([10, 20, 30] * 256)
    out, idx = mask_patches(img, random.Random(0), ratio=0.5)  # 4 patches → 2
    assert out.mode == "P" and out.getpalette()[:6] == [10, 20, 30, 10, 20, 30]
    assert len(idx) == 2 and int((np.array(out) == 0).sum()) == 512 and int((np.array(out) == 5).sum()) == 512


def test_arrays_keep_dtype_and_shape():
    f = np.full((32, 32, 3), 0.7, np.float32)
    out, idx = mask_patches(f, random.Random(0), ratio=0.5)
    assert out.dtype == np.float32 and out.shape == (32, 32, 3) and len(idx) == 2
    assert int((out == 0).all(axis=2).sum()) == 512 and float(f.min()) == pytest.approx(0.7)
    b = np.ones((16, 32), bool)
    out, idx = mask_patches(b, random.Random(0), ratio=0.5)
    assert out.dtype == bool and int((~out).sum()) == 256


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"ratio": 1.5}, "ratio"),
        ({"ratio": -0.1}, "ratio"),
        ({"ratio": float("nan")}, "ratio"),
        ({"ratio": True}, "ratio"),
        ({"patch": 0}, "patch"),
        ({"patch": 16.0}, "patch"),
    ],
)
def test_mask_patches_rejects_bad_config(kwargs, match):
    with pytest.raises(ValueError, match=match):
        mask_patches(np.zeros((16, 16)), random.Random(0), **kwargs)


def test_mask_patches_rejects_non_images_and_missing_rng():
    with pytest.raises(ValueError, match="random.Random"):
        mask_patches(np.zeros((16, 16)), 0.15)
    with pytest.raises(ValueError, match="PIL image or a numpy array"):
        mask_patches([[1, 2], [3, 4]], random.Random(0))
    with pytest.raises(ValueError, match="H×W"):
        mask_patches(np.zeros((2, 16, 16, 3)), random.Random(0))


# ---------------------------------------------------------------- mask_pixels


def test_mask_pixels_zeroes_exactly_the_fraction():
    img = Image.new("L", (10, 10), 200)
    out = mask_pixels(img, random.Random(0), 0.3)
    assert int((np.array(out) == 0).sum()) == 30 and np.array(img).min() == 200
    rgb = Image.new("RGB", (64, 64), (255, 255, 255))
    out = np.array(mask_pixels(rgb, random.Random(4), 0.25))
    # whole pixels: every band of 1024 positions is 0, no position partly zeroed
    assert int((out == 0).all(axis=2).sum()) == 1024 and int((out == 0).any(axis=2).sum()) == 1024
    # 10 × 3 = 30 pixels at 0.15: 4.5 → 5
    assert int((mask_pixels(np.ones((10, 3)), random.Random(0), 0.15) == 0).sum()) == 5


def test_mask_pixels_extremes_and_determinism():
    arr = np.arange(1, 101, dtype=np.int32).reshape(10, 10)
    same = mask_pixels(arr, random.Random(0), 0.0)
    assert np.array_equal(same, arr) and same is not arr
    assert int(mask_pixels(arr, random.Random(0), 1.0).sum()) == 0
    a = mask_pixels(arr, random.Random(7), 0.5)
    assert np.array_equal(a, mask_pixels(arr, random.Random(7), 0.5))
    assert not np.array_equal(a, mask_pixels(arr, random.Random(8), 0.5))
    assert int(arr.min()) == 1


def test_mask_pixels_rejects_bad_config():
    with pytest.raises(ValueError, match="ratio"):
        mask_pixels(np.zeros((4, 4)), random.Random(0), 2)
    with pytest.raises(ValueError, match="random.Random"):
        mask_pixels(np.zeros((4, 4)), 0.3, random.Random(0))


def test_round_half_up():
    assert [round_half_up(x) for x in (0.0, 0.45, 0.5, 1.5, 2.4, 2.5, 0.15 * 30)] == [0, 0, 1, 2, 2, 3, 5]


# ---------------------------------------------------------------- shuffle_reasoning


@pytest.mark.parametrize(
    "text, expected",
    [
        # two steps: the only other order
        ("<think>First. Second.</think> 3", "<think>Second. First.</think> 3"),
        ("One.\nTwo.", "Two.\nOne."),  # separators stay in their place
        ("<think>x</think>mid<think>y</think>end", "<think>y</think>mid<think>x</think>end"),
        ("1. Go left.\n2. Pick the cup.", "2. Pick the cup.\n1. Go left."),  # enumerators stay
        ("Use e.g. the mug. Then stop!", "Then stop! Use e.g. the mug."),
        ("A. B.</think>C. D.", "B. A.</think>C. D."),  # template opened the block
        ("pre <think>A. B.", "pre <think>B. A."),  # unclosed block
        ("<think> Why? Because. </think>", "<think> Because. Why? </think>"),
        ("<think>A. B.</think><think>A. B.</think>", "<think>B. A.</think><think>B. A.</think>"),
    ],
)
def test_shuffle_reasoning_two_step_cases(text, expected):
    for seed in range(5):
        assert shuffle_reasoning(text, random.Random(seed)) == expected


@pytest.mark.parametrize(
    "text", ["Only one sentence.", "Same. Same.", "<think>A.</think><think>A.</think>", "", "Pi is 3.14 here"]
)
def test_shuffle_reasoning_leaves_unshufflable_text(text):
    assert shuffle_reasoning(text, random.Random(0)) == text


def test_shuffle_reasoning_three_steps_all_orders_but_the_original():
    text = "<answer>7</answer><think>A. B. C.</think>"
    outs = {shuffle_reasoning(text, random.Random(s)) for s in range(200)}
    orders = {" ".join(p) for p in itertools.permutations(["A.", "B.", "C."])} - {"A. B. C."}
    assert outs == {f"<answer>7</answer><think>{o}</think>" for o in orders}
    assert shuffle_reasoning(text, random.Random(3)) == shuffle_reasoning(text, random.Random(3))


def test_shuffle_reasoning_is_total():
    assert shuffle_reasoning(None, random.Random(0)) == ""
    assert shuffle_reasoning(12, random.Random(0)) == "12"
    with pytest.raises(ValueError, match="random.Random"):
        shuffle_reasoning("A. B.", None)


def test_shuffle_reasoning_on_large_text():
    # time budgets for these inputs: bench/adversarial.py (tests assert no wall-clock time)
    big = "This is a step. " * 60_000 + "Last."  # ~1 MB
    out = shuffle_reasoning(big, random.Random(0))
    assert len(out) == len(big) and out.count("Last.") == 1 and out != big
