"""The Argos gate [Argos §3.1, Eq. 9] is written once (``groundrl.rubric.gated_mean``):
the agentic verifier emits its terms' scores and a rubric aggregates them, so the
verifier's total and the Argos recipe's rubric agree on the same parts."""

import itertools

import pytest

from groundrl import get_recipe
from groundrl.rubric import gated_mean
from groundrl.verify import AgenticVerifier

BOXES = {"cup": [[0, 0, 5, 5]], "mug": [[10, 10, 20, 20]]}


def _completion(answer, points):
    cited = " ".join(f'<points x1="{x}" y1="{y}">{label}</points>' for label, x, y in points)
    return f"I look. {cited} <answer>{answer}</answer>"


def test_gated_mean_by_hand():
    assert gated_mean(0.4, [(1.0, 0.4), (5.0, 1.0)], 0.5) == 0.4  # gate closed: R = R_acc
    assert gated_mean(1.0, [(1.0, 1.0), (3.0, 0.0)], 0.5) == 0.25  # (1·1 + 3·0) / 4
    assert gated_mean(0.5, [(1.0, 0.5), (1.0, 1.0)], 0.5) == 0.75  # R_acc = τ opens the gate
    assert gated_mean(None, [(2.0, 1.0), (2.0, 0.0)], 0.5) == 0.5  # no gate score: the mean
    assert gated_mean(1.0, [], 0.5) == 0.0 and gated_mean(1.0, [(0.0, 1.0)], 0.5) == 0.0


@pytest.mark.parametrize(
    "weights,tau", [({"grounding": 3.0}, 0.5), ({"outcome": 2.0, "grounding": 0.5}, 1.0)]
)
def test_verifier_total_is_the_recipe_rubric_total_of_its_parts(weights, tau):
    verifier = AgenticVerifier(weights=weights, tau=tau)
    rubric = get_recipe("argos").rubric(weights=weights, tau=tau)
    points = [[], [("cup", 2, 2)], [("cup", 9, 9)], [("cup", 2, 2), ("mug", 1, 1)], [("mug", 15, 15)]]
    completions = [_completion(a, p) for a, p in itertools.product(["cup", "mug", "12"], points)]
    samples = [{"answer": "cup", "boxes": BOXES}] * len(completions)
    results = verifier.verify(completions, samples)
    totals = {r.total for r in results}
    assert len(totals) >= 3  # the gate closed, open with and without grounding
    for r in results:
        assert r.total == rubric.total(r.parts), r.parts
        # and by hand from the emitted terms
        acc = r.parts["outcome"].value
        terms = [(weights.get(k, 1.0), r.parts[k].value) for k in ("outcome", "grounding") if k in r.parts]
        assert r.total == (acc if acc < tau else sum(w * v for w, v in terms) / sum(w for w, _ in terms))


def test_verifier_without_an_outcome_scores_zero_and_refuses_negative_weights():
    # no gold answer: the outcome tool does not apply, nothing to gate on
    res = AgenticVerifier().verify([_completion("cup", [("cup", 2, 2)])], [{"boxes": BOXES}])[0]
    assert "outcome" not in res.parts and res.parts["grounding"].value == 1.0 and res.total == 0.0
    with pytest.raises(ValueError, match="weights must be numbers ≥ 0"):
        AgenticVerifier(weights={"grounding": -1.0})
