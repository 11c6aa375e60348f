"""EmbodiedBrain spatial rewards [EmbodiedBrain §4.2.2 item 3]: MCQ strictness by answer
form, descriptive relations with synonyms, antonyms and subject/object swaps, verbosity
penalised; all worked by hand."""

import pytest

from groundrl.rewards.spatial import relation_triple, spatial_descriptive_reward, spatial_mcq_reward


def A(text):
    return f"<think>looking</think><answer>{text}</answer>"


@pytest.mark.parametrize(
    ("pred", "gold", "value"),
    [
        ("B", "B", 1.0),
        ("(C)", "B", 0.0),
        ("the left side", "left", 1.0),  # a word: found as whole words -> lenient
        ("leftover", "left", 0.0),  # not as a whole word
        ("The mug is on the shelf.", "The mug is on the shelf", 1.0),  # a sentence: normalised exact
        ("The mug is on the top shelf.", "The mug is on the shelf", 0.0),  # strict for sentences
    ],
)
def test_mcq_by_answer_form(pred, gold, value):
    assert spatial_mcq_reward(A(pred), gold).value == value


def test_mcq_verbosity_by_hand():
    # gold "left" (1 word): limit max(6, 2) = 6; 12 words -> 1 × 6/12 = 0.5
    pred = "it is on the left side of the table near the door"
    assert len(pred.split()) == 12
    s = spatial_mcq_reward(A(pred), "left")
    assert s.value == pytest.approx(0.5) and "verbose: 12 words > 6" in s.reason


@pytest.mark.parametrize(
    ("pred", "value", "why"),
    [
        ("The cup is left of the plate.", 1.0, "same relation"),
        ("The cup is to the left of the plate.", 1.0, "same relation"),
        ("The plate is to the right of the cup.", 1.0, "the same fact"),  # antonym + swap
        ("The cup is right of the plate.", 0.0, "antonym"),
        ("The plate is left of the cup.", 0.0, "swapped"),
    ],
)
def test_descriptive_relations(pred, value, why):
    s = spatial_descriptive_reward(A(pred), "The cup is left of the plate.")
    assert s.value == value and why in s.reason


def test_descriptive_synonyms_and_fallback():
    gold = "The cat is under the table."
    assert spatial_descriptive_reward(A("The cat is beneath the table."), gold).value == 1.0
    assert spatial_descriptive_reward(A("The cat is above the table."), gold).value == 0.0
    # bare relations: "below" vs "under" agree
    assert spatial_descriptive_reward(A("below"), "under").value == 1.0
    # no relation in the answer: judged as a free answer, then by the semantic judge
    assert spatial_descriptive_reward(A("two"), "three").value == 0.0
    assert spatial_descriptive_reward(A("a pair"), "two", semantic=lambda p, g: 1.0).value == 1.0


def test_descriptive_verbosity_by_hand():
    # gold 7 words -> limit max(12, 14) = 14; the answer has 18 words -> 1 × 14/18
    gold = "The cup is left of the plate."
    pred = "The cup is left of the plate, which I can see clearly because the lighting is very good"
    assert len(pred.split()) == 18
    assert spatial_descriptive_reward(A(pred), gold).value == pytest.approx(14 / 18)


def test_total_on_odd_and_huge_inputs():
    for bad in (None, 3, "", "<answer></answer>"):
        assert spatial_mcq_reward(bad, "B").value == 0.0
        assert spatial_descriptive_reward(bad, "The cup is left of the plate.").value == 0.0
    assert spatial_mcq_reward("B", None).value is None
    huge = "left of " * 125_000  # 1 MB: parsed in one pass
    assert spatial_descriptive_reward(huge, "The cup is left of the plate.").value >= 0.0
    assert relation_triple("no relation here") is None
