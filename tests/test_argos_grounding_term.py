"""Argos' one grounding term [Argos §3.1, App. D, Eq. 9]: the within-category means of
points, frame-level and segment-level mentions averaged into G, which enters the gate
once with w_G. Hand-worked case: one point, one frame mention, one segment mention,
teachers on a real chat server on 127.0.0.1."""

import math

import pytest
from PIL import Image

from groundrl.judges.papers import ArgosTeachers
from groundrl.recipes import get_recipe
from groundrl.rewards.grounding import grounding_term
from groundrl.testing.judge_backend import make_backend
from groundrl.types import Score
from groundrl.verify import AgenticVerifier

# the point lands in the cup's box (hit); "frame 1" is one frame-level mention, "frames 1 to 2"
# one segment-level mention
TEXT = (
    'A <points x1="2" y1="2">cup</points> sits on the table. In frame 1 a red cup is visible. '
    "Frames 1 to 2 show the cup being lifted. <answer>cup</answer>"
)
RED, BLUE = Image.new("RGB", (8, 8), (255, 0, 0)), Image.new("RGB", (8, 8), (0, 0, 255))
SAMPLE = {
    "answer": "cup",
    "question": "What is lifted?",
    "frames": [RED, BLUE],
    "boxes": {"cup": [[0, 0, 5, 5]]},
    "points_masks": {"cup": {"boxes": [[0, 0, 5, 5]]}},
}


def _teachers(chat_server):
    def responder(msgs, body):
        images = [p for p in msgs[-1]["content"] if isinstance(p, dict) and p.get("type") == "image_url"]
        return "yes" if len(images) > 1 else "no"  # the segment (2 frames) holds, the frame does not

    chat_server.responder = responder
    return ArgosTeachers(make_backend("openai", "teacher", chat_server.base_url, backoff=0.01, max_retries=1))


def test_grounding_term_is_the_mean_of_category_means():
    # 3 points (2 hit) and 1 frame mention (0): categories 2/3 and 0 -> G = (2/3 + 0) / 2 = 1/3
    g = grounding_term({"spatial": Score("spatial", 2 / 3), "frame_grounding": Score("f", 0.0)})
    assert g.value == pytest.approx(1 / 3)
    # a category that does not apply is left out, not counted as 0
    g = grounding_term({"spatial": Score("spatial", None), "segment_grounding": Score("s", 1.0)})
    assert g.value == 1.0
    assert grounding_term({"spatial": Score("spatial", None)}).value is None


def test_recipe_hand_worked_point_frame_segment(chat_server):
    rubric = get_recipe("argos").rubric(judge=_teachers(chat_server))
    assert rubric.names == ["outcome", "grounding", "reasoning"]
    v = rubric.score(TEXT, **SAMPLE)
    # by hand: spatial 1/1, frame 0/1, segment 1/1 -> G = (1 + 0 + 1) / 3 = 2/3
    assert v.parts["grounding"].value == pytest.approx(2 / 3)
    # reasoning = P(" cup" | q, r, v) on the test server: one token "cup", log-prob -0.1·(1 + 3) = -0.4
    r = math.exp(-0.4)
    assert v.parts["reasoning"].value == pytest.approx(r)
    # Eq. 9, gate open (R_acc = 1 ≥ τ), weights 1: (1 + 2/3 + r) / 3 = 0.7790
    assert v.total == pytest.approx((1 + 2 / 3 + r) / 3)
    # the old three-part sum would have been (1 + 1 + 0 + 1 + r) / 5 = 0.7341
    assert v.total != pytest.approx((1 + 1 + 0 + 1 + r) / 5)


def test_verifier_hand_worked_point_frame_segment(chat_server):
    v = AgenticVerifier(_teachers(chat_server).backend, weights={"grounding": 2.0})
    res = v.verify([TEXT], [SAMPLE])[0]
    assert set(res.chosen) == {"outcome", "spatial", "frame_grounding", "segment_grounding", "reasoning"}
    assert [res.parts[k].value for k in ("spatial", "frame_grounding", "segment_grounding")] == [
        1.0,
        0.0,
        1.0,
    ]
    assert res.parts["grounding"].value == pytest.approx(2 / 3)
    r = math.exp(-0.4)
    # (w_A·1 + w_G·G + w_R·r) / (w_A + w_G + w_R) with w_G = 2: (1 + 4/3 + r) / 4
    assert res.total == pytest.approx((1 + 4 / 3 + r) / 4)
    with pytest.raises(ValueError, match="unknown term"):
        AgenticVerifier(weights={"spatial": 1.0})


def test_recipe_weights_name_the_terms():
    with pytest.raises(ValueError, match="grounding"):
        get_recipe("argos").rubric(weights={"spatial": 2.0})


# --- video points on their own frame [Argos §3.1 "Temporal rewards", App. D] ---------

VIDEO = (
    'In frame 1 the <points x1="2" y1="2" alt="cup">cup</points> is on the left. '
    'At frame 2 the <points x1="2" y1="2" alt="cup">cup</points> has moved. '
    'Later the <points x1="8" y1="8" alt="cup">cup</points> is gone. <answer>cup</answer>'
)
# the cup's box is at the top left on frame 1 and at the bottom right on frame 2
FRAME_MASKS = {"1": {"cup": [[0, 0, 4, 4]]}, "2": {"cup": [[6, 6, 9, 9]]}}


def test_video_points_are_scored_on_their_own_frame():
    from groundrl.rewards.grounding import point_frame_mentions, spatial_video

    pairs = point_frame_mentions(VIDEO)
    assert [None if m is None else int(m.at) for _, m in pairs] == [1, 2, None]
    s = spatial_video(VIDEO, FRAME_MASKS)
    # by hand: (2, 2) in frame 1's box -> hit; (2, 2) not in frame 2's box -> miss; the third
    # point's sentence names no frame -> 0. 1/3
    assert s.value == pytest.approx(1 / 3) and "no frame named" in s.reason
    # had the points been looked up on one image's masks (frame 1's), the second would hit: 2/3
    from groundrl.rewards.grounding import spatial

    assert spatial(VIDEO, FRAME_MASKS["1"]).value == pytest.approx(2 / 3)
    # seconds map through fps (frame 1 at 0 s): "at 0.5 seconds" at 2 fps is frame 2
    timed = 'At 0.5 seconds the <points x1="7" y1="7" alt="cup">cup</points> is there.'
    assert spatial_video(timed, FRAME_MASKS, n_frames=2, fps=2).value == 1.0
    assert spatial_video(timed, FRAME_MASKS, n_frames=2).value == 0.0  # no fps: cannot place it


def test_recipe_and_verifier_use_frame_masks():
    sample = {"answer": "cup", "frames": [RED, BLUE], "frame_masks": FRAME_MASKS}
    v = get_recipe("argos").rubric().score(VIDEO, **sample)
    assert v.parts["grounding"].value == pytest.approx(1 / 3)
    res = AgenticVerifier().verify([VIDEO], [sample])[0]
    assert res.parts["spatial"].value == pytest.approx(1 / 3)

    # a model provider (detector + segmenter) is asked on the cited frame's image
    class FrameProvider:
        def __init__(self):
            self.seen = []

        def __call__(self, label, s):
            self.seen.append(s["image"])
            return [[0, 0, 4, 4]] if s["image"] is RED else [[6, 6, 9, 9]]

    provider = FrameProvider()
    res = AgenticVerifier(mask_provider=provider).verify([VIDEO], [{"answer": "cup", "frames": [RED, BLUE]}])[
        0
    ]
    assert res.parts["spatial"].value == pytest.approx(1 / 3) and provider.seen == [RED, BLUE]
