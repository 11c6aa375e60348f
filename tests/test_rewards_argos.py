import numpy as np
import pytest

from groundrl.parse.answers import extract_answer, extract_choice, normalize_answer
from groundrl.parse.grounding import extract_points, extract_temporal_mentions
from groundrl.rewards.grounding import masks_from_boxes, spatial
from groundrl.rewards.outcome import answer_type, numeric_match, outcome
from groundrl.rewards.perception import box_iou, counting_reward, detection_reward

# ---- answers and choices --------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "B",
        "B.",
        "(B)",
        "Answer: B",
        "<|begin_of_box|>B<|end_of_box|>",
        "B) a red mug",
        "**B**",
        "<answer> (B) </answer>",
        "the answer is B",
    ],
)
def test_choice_forms(text):
    assert extract_choice(text).value == "B"


def test_article_is_not_a_choice():
    assert extract_choice("A cat sits on the mat").value is None
    assert extract_choice("Z", choices="ABCD").value is None


def test_extract_answer_rules():
    assert extract_answer("<answer>one</answer> <answer>two</answer>").value == "two"
    assert extract_answer("so \\boxed{42} it is").value == "42"
    assert extract_answer("Reasoning...\nFinal answer: the kitchen\n").value == "the kitchen"
    assert extract_answer("  just this  ").value == "just this"
    assert extract_answer("<answer> </answer>").value is None


def test_normalize_answer():
    assert normalize_answer("The  Red, Mug!") == "red mug"
    assert normalize_answer(None) == ""


# ---- outcome --------------------------------------------------------------


def test_answer_types():
    assert [answer_type(g) for g in ["B", "(C)", "12", 3.5, "red mug"]] == [
        "mcq",
        "mcq",
        "numeric",
        "numeric",
        "free",
    ]


def test_numeric_five_percent_boundary():
    assert numeric_match(105, 100) and not numeric_match(105.01, 100)
    assert numeric_match(0.55, 0.5)  # max(|y|, 1) = 1 → tolerance 0.05
    assert not numeric_match(0.56, 0.5)
    assert outcome("<answer>There are 105 chairs</answer>", "100").value == 1.0
    assert outcome("<answer>106</answer>", 100).value == 0.0


def test_outcome_mcq_and_free():
    assert outcome("I think (C).", "C").value == 1.0
    assert outcome("<answer>D</answer>", "C").value == 0.0
    assert outcome("<answer>The Kitchen.</answer>", "kitchen").value == 1.0
    assert outcome("<answer>dining room</answer>", ["kitchen", "dining room"]).value == 1.0
    assert outcome("<answer>x</answer>", []).value == 0.0


def test_semantic_hook_only_for_free_misses():
    calls = []

    def judge(pred, gold):
        calls.append((pred, gold))
        return 1.0

    assert outcome("<answer>kitchen</answer>", "kitchen", semantic=judge).value == 1.0
    assert outcome("<answer>B</answer>", "C", semantic=judge).value == 0.0
    assert calls == []
    assert outcome("<answer>the cooking room</answer>", "kitchen", semantic=judge).value == 1.0
    assert calls == [("the cooking room", "kitchen")]
    failed = outcome("<answer>the cooking room</answer>", "kitchen", semantic=lambda p, g: None)
    assert failed.value == 0.0 and "judge failed" in failed.reason


# ---- points and temporal mentions -----------------------------------------


def test_points_index_suffixes_and_quotes():
    text = '<points x1="10" y1=\'20\' x2="30.5" y2="40" x3="1" y3="2" alt="cup">cup</points><points x1="a" y1="1">bad</points><points x1=5 y1=6 alt="mug"></points>'
    pts = extract_points(text)
    assert [(p.x, p.y, p.label) for p in pts] == [
        (10, 20, "cup"),
        (30.5, 40, "cup"),
        (1, 2, "cup"),
        (5, 6, "mug"),
    ]


def test_temporal_mentions():
    frames, segs = extract_temporal_mentions(
        "At frame 24 the cup appears. Frame 25 to frame 27 show it moving. From 4.47 to 16.11 seconds he walks. At 18.71 seconds he sits."
    )
    assert [(f.at, f.unit) for f in frames] == [(24, "frame"), (18.71, "second")]
    assert [(s.start, s.end, s.unit) for s in segs] == [(25, 27, "frame"), (4.47, 16.11, "second")]
    assert frames[1].context == "At 18.71 seconds he sits."
    _, segs = extract_temporal_mentions("frames 3-5 and between 2 and 4 seconds")
    assert [(s.start, s.end) for s in segs] == [(3, 5), (2, 4)]


# ---- spatial --------------------------------------------------------------

MASK = np.zeros((10, 10), dtype=bool)
MASK[2:5, 3:6] = True  # rows y 2..4, cols x 3..5


def pts(*xy, label="cup"):
    return "".join(f'<points x1="{x}" y1="{y}">{label}</points>' for x, y in xy)


def test_spatial_array_mask():
    assert spatial(pts((3, 2), (5, 4), (6, 4)), {"cup": MASK}).value == pytest.approx(2 / 3)
    assert spatial(pts((30, 2)), {"cup": MASK}).value == 0.0  # out of bounds
    assert spatial(pts((3, 2)), {"Cup ": {"mask": MASK.tolist()}}).value == 1.0


def test_spatial_boxes_unknown_label_and_not_applicable():
    masks = masks_from_boxes({"cup": [[0, 0, 10, 10]]})
    assert spatial(pts((10, 10)), masks).value == 1.0  # edges inclusive
    s = spatial(pts((1, 1)) + pts((1, 1), label="mug"), {"cup": [[0, 0, 10, 10]]})
    assert s.value == 0.5 and "'mug'" in s.reason
    assert spatial("no points here", {"cup": MASK}).value is None
    assert spatial(pts((1, 1)), None).value is None


def test_spatial_provider_and_coord_scale():
    assert (
        spatial(pts((400, 300)), lambda label: MASK if label == "cup" else None, coord_scale=1000).value
        == 1.0
    )
    assert spatial(pts((100, 100)), lambda label: MASK, coord_scale=1000).value == 0.0


# ---- perception -----------------------------------------------------------


def test_box_iou():
    assert box_iou([0, 0, 2, 2], [0, 0, 2, 2]) == 1.0
    assert box_iou([0, 0, 1, 1], [2, 2, 3, 3]) == 0.0
    assert box_iou([0, 0, 2, 2], [1, 0, 3, 2]) == pytest.approx(1 / 3)
    assert box_iou([2, 2, 1, 1], [0, 0, 3, 3]) == 0.0
    assert box_iou("x", [0, 0, 1, 1]) == 0.0


def test_detection_reward_misses_and_extras():
    gold = [{"bbox_2d": [0, 0, 2, 2], "label": "cup"}, {"bbox_2d": [10, 10, 12, 12], "label": "cup"}]
    assert (
        detection_reward(
            '```json\n[{"bbox_2d": [0, 0, 2, 2], "label": "cup"}, {"bbox_2d": [10, 10, 12, 12], "label": "cup"}]\n```',
            gold,
        ).value
        == 1.0
    )
    # one miss of two equal-area gold boxes: (4·1 + 4·0) / 8
    assert detection_reward([{"bbox_2d": [0, 0, 2, 2], "label": "cup"}], gold).value == pytest.approx(0.5)
    # an extra (wrong-label) box: 1 · min(1, 2/3)
    extra = gold + [{"bbox_2d": [5, 5, 6, 6], "label": "mug"}]
    assert detection_reward(extra, gold).value == pytest.approx(2 / 3)
    # half-overlap on the first, exact on the second, areas equal: (1/3 + 1) / 2
    shifted = [{"bbox_2d": [1, 0, 3, 2], "label": "cup"}, {"bbox_2d": [10, 10, 12, 12], "label": "cup"}]
    assert detection_reward(shifted, gold).value == pytest.approx((1 / 3 + 1) / 2)
    assert detection_reward("no boxes", gold).value == 0.0
    assert detection_reward([], []).value == 1.0


def test_counting():
    assert counting_reward("<answer>3</answer>", 3).value == 1.0
    assert counting_reward("I see 4 mugs", "3").value == 0.0
    assert counting_reward("none", 2).value == 0.0
    assert counting_reward("3", 2.5).value is None


def test_adversarial_megabyte():
    # time budgets for these inputs: bench/adversarial.py (tests assert no wall-clock time)
    texts = ["<" * 1_000_000, "<points x1=" * 90_000, "frame " * 150_000 + "1", "<answer>" * 120_000]
    for s in texts:
        assert outcome(s, "B").value == 0.0
        assert outcome(s, "kitchen").value == 0.0
        assert spatial(s, {"cup": MASK}).value is None  # no complete point: not applicable
        assert detection_reward(s, [[0, 0, 1, 1]]).value == 0.0
        extract_temporal_mentions(s)
    frames, _ = extract_temporal_mentions(texts[2])
    assert [m.at for m in frames] == [1.0]  # only the trailing "frame 1" is a mention
