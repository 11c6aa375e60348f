"""Issue 37 item 1: the silent reward changes, each held to the paper.

Argos [Argos §3.1, Eq. 9]: the gated mean's denominator is fixed (w_A + w_G + w_R), so a
right answer that cites no evidence on a sample with masks forfeits the grounding share.
Before the fix the grounding term was dropped with its weight: no points scored 1.0, as
high as a correctly grounded answer."""

from __future__ import annotations

from groundrl.recipes import get_recipe
from groundrl.rubric import gated_mean
from groundrl.verify.verifier import AgenticVerifier

MASKED = {"answer": "cup", "points_masks": {"cup": [[10, 5, 20, 15]]}}
UNGROUNDED = "<answer>cup</answer>"
GROUNDED = 'The cup is at <points x1="12" y1="8" alt="cup">cup</points>. <answer>cup</answer>'
HALF = (
    'Cup at <points x1="12" y1="8" alt="cup">cup</points> and '
    '<points x1="90" y1="90" alt="cup">cup</points>. <answer>cup</answer>'
)


def test_gated_mean_counts_an_unscored_term_in_the_denominator():
    # (w_A·1 + w_G·0) / (w_A + w_G) by hand: 1 / 2; and with w_G = 3: 1 / 4
    assert gated_mean(1.0, [(1.0, 1.0), (1.0, None)], 0.5) == 0.5
    assert gated_mean(1.0, [(1.0, 1.0), (3.0, None)], 0.5) == 0.25


def test_argos_recipe_ungrounded_right_answer_forfeits_the_grounding_share():
    rubric = get_recipe("argos").build()
    none = rubric.score(UNGROUNDED, **MASKED).total
    one = rubric.score(GROUNDED, **MASKED).total
    half = rubric.score(HALF, **MASKED).total
    assert none == 0.5  # (1·1 + 1·0) / (1 + 1)
    assert one == 1.0 and half == 0.75  # (1 + 0.5) / 2
    assert none < half < one


def test_argos_sample_without_masks_leaves_w_g_out():
    # no grounding references in the sample: the term is not called for [ours]
    rubric = get_recipe("argos").build()
    assert rubric.score("<answer>B</answer>", answer="B").total == 1.0


def test_agentic_verifier_ungrounded_right_answer_forfeits_the_grounding_share():
    v = AgenticVerifier()
    none, one = v.verify([UNGROUNDED, GROUNDED], [MASKED, MASKED])
    assert none.total == 0.5 and none.parts["grounding"].value == 0.0
    assert one.total == 1.0
    assert v.verify(["<answer>B</answer>"], [{"answer": "B"}])[0].total == 1.0
