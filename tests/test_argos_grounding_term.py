"""Argos' one grounding term [Argos §3.1, App. D, Eq. 9]: the within-category means of
points, frame-level and segment-level mentions averaged into G, which enters the gate
once with w_G. Hand-worked case: one point, one frame mention, one segment mention,
teachers on a real chat server on 127.0.0.1."""

import math

import pytest
from PIL import Image

from groundrl.judges import make_backend
from groundrl.judges.papers import ArgosTeachers
from groundrl.recipes import get_recipe
from groundrl.rewards.grounding import grounding_term
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
