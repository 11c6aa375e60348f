"""The reward-model demo's world and its auxiliary evaluator: answers depend on frame order
and visibility; the evaluator's mistakes happen at the stated rates."""

import random

import pytest

from groundrl.augment import mask_patches, shuffle_frames
from groundrl.demos import rm_demo_world as W


def test_true_answers_follow_order_and_skip_empty_frames():
    blocks = ("none", "red", "blue", "none", "red")
    assert W.true_answer(blocks, "first") == "red"
    assert W.true_answer(blocks, "last") == "red"
    assert W.true_answer(blocks, "count", "red") == "2"
    assert W.true_answer(blocks, "count", "green") == "0"
    assert W.true_answer(("blue", "red", "none", "none", "red"), "first") == "blue"
    assert W.true_answer(("none",) * 5, "first") == "none"


def test_gold_is_high_for_a_right_answer_and_low_for_a_wrong_one():
    right = W.Episode("a", ("red", "blue", "none", "none", "green"), "first", "", "red")
    wrong = W.Episode("b", ("red", "blue", "none", "none", "green"), "last", "", "red")
    assert (right.gt_score, wrong.gt_score) == (9, 2)
    assert right.question == "What colour was the first block you saw?"


def test_episodes_are_seeded_and_wrong_order_answers_name_a_colour_that_was_seen():
    eps = W.make_episodes(400, 3)
    assert eps == W.make_episodes(400, 3) and eps != W.make_episodes(400, 4)
    wrong_order = [e for e in eps if e.kind != "count" and not e.correct]
    assert wrong_order and all(e.answer in e.blocks for e in wrong_order)
    share_right = sum(e.correct for e in eps) / len(eps)
    assert 0.4 < share_right < 0.6  # p_right 0.5: 400 draws, ±4 standard deviations ≈ ±0.1


def test_frames_read_back_and_a_masked_patch_hides_the_block_whole():
    for colour in [*W.COLOURS, W.EMPTY]:
        assert W.read_frame(W.render_frame(colour)) == colour
    frame = W.render_frame("blue")
    hidden = shown = 0
    for s in range(200):
        masked, cells = mask_patches(frame, random.Random(s), ratio=0.15, patch=16)
        assert len(cells) == 2  # 15 % of a 4×4 grid, rounded half up [EQA-RM §4.3]
        if 10 in cells:  # the block's cell: row 2, column 2
            hidden += 1
            assert W.read_frame(masked) == W.EMPTY
        else:
            shown += 1
            assert W.read_frame(masked) == "blue"
    assert hidden and shown


def test_shuffling_the_frames_changes_an_order_answer():
    ep = W.Episode("a", ("red", "blue", "green", "none", "yellow"), "first", "", "red")
    shuffled, perm = shuffle_frames(W.frames(ep), random.Random(1))
    seen = [W.read_frame(f) for f in shuffled]
    assert sorted(seen) == sorted(ep.blocks) and perm != list(range(5))
    assert W.true_answer(seen, "first") == seen[next(i for i, b in enumerate(seen) if b != "none")]


def _draws(n, blind, misread, seed=0):
    rng = random.Random(seed)
    ep = W.Episode("a", ("red", "blue", "green", "yellow", "red"), "count", "red", "2")
    return ep, [W.teacher_evaluation(ep, rng, blind, misread) for _ in range(n)]


def test_blind_guesses_come_at_the_stated_rate_and_say_they_did_not_look():
    _, evals = _draws(4000, 0.3, 0.0)
    blind = [e for e in evals if e["mode"] == "blind"]
    assert abs(len(blind) / 4000 - 0.3) < 4 * (0.3 * 0.7 / 4000) ** 0.5
    assert all("not checked" in e["critique"] and 5 <= e["score"] <= 10 for e in blind)
    reads = [e for e in evals if e["mode"] == "read"]
    assert all(e["score"] == 9 for e in reads)  # no misreads: every reading grades the right answer right


@pytest.mark.parametrize("misread", [0.1, 0.3])
def test_frames_are_misread_at_the_stated_rate(misread):
    ep, evals = _draws(3000, 0.0, misread, seed=1)
    changed = 0
    for e in evals:
        listed = e["critique"].split("frames: ")[1].split(".")[0].split(", ")
        changed += sum(a != b for a, b in zip(listed, ep.blocks, strict=True))
    # a misread draws uniformly from the 4 colours and "none": 4 of 5 draws change the frame
    expected = misread * 4 / 5
    n = 3000 * 5
    assert abs(changed / n - expected) < 4 * (expected * (1 - expected) / n) ** 0.5
