import random

import pytest

from groundrl.curate import decompose, hinted_prompt, rejective_filter, step_hint


def rec(gt, scores):
    return {"id": "x", "gt_score": gt, "evaluations": [{"critique": "c", "score": s} for s in scores]}


def test_rejective_filter():
    # |7-6| = 1 < 2 kept; |7-9| = 2 not < 2; "7" kept; None incorrect
    assert rejective_filter(rec(7, [6, 9, "7", None])) == {"id": "x", "kept": [0, 2], "reason": "kept"}
    assert rejective_filter(rec(7, [7, 8, 6])) == {"id": "x", "kept": [], "reason": "too_easy"}
    assert rejective_filter(rec(7, [1, "bad", 10])) == {"id": "x", "kept": [], "reason": "none_correct"}
    assert rejective_filter(rec(7, ["<score>8</score>", 0]), tau=2)["kept"] == [0]
    assert rejective_filter(
        {"id": "y", "gt_score": 5, "evaluations": [{"critique": "so <score>5</score>"}, {"score": 0}]}
    )["kept"] == [0]
    with pytest.raises(ValueError):
        rejective_filter(rec(1, [1]), tau=0)


def test_decompose():
    out = decompose(
        {"id": "t", "instruction": "do", "actions": ["a", "b", "c"], "observations": ["o0", "o1", "o2"]}
    )
    assert [r["id"] for r in out] == ["t/step0", "t/step1", "t/step2"]
    assert out[1] == {
        "id": "t/step1",
        "instruction": "do",
        "history": ["a"],
        "observation": "o1",
        "target": ["b", "c"],
    }
    assert decompose({"id": "e", "actions": []}) == []
    with pytest.raises(ValueError):
        decompose({"id": "t", "actions": ["a"], "observations": []} | {"observations": ["x", "y"]})


def test_step_hint_distribution_and_prompt():
    rng = random.Random(0)
    gold = ["s1", "s2", "s3", "s4"]
    ks = []
    for _ in range(400):
        prefix, rest, hinted = step_hint(gold, rng, p=0.5)
        assert prefix + rest == gold
        if hinted:
            ks.append(len(prefix))
    assert 150 < len(ks) < 250 and set(ks) == {0, 1, 2, 3}
    assert step_hint(gold, random.Random(0), p=0.0) == ([], gold, False)
    assert (
        hinted_prompt("Do it.", ["s1", "s2"])
        == "Do it.\nGuided precursors (already done):\n1. s1\n2. s2\nContinue with the remaining steps."
    )
    assert hinted_prompt("Do it.", []) == "Do it."
