import pytest

from groundrl.curate import categorize, consensus, consensus_batch, exact_judge


def test_categories_and_the_oracle_check():
    a = consensus({"id": 1, "gold": "Cup", "answers": ["cup", "the cup."], "q": "what?"}, keep_a=1.0)
    assert (a["category"], a["kept"], a["n_correct"], a["suspect_label"], a["q"]) == (
        "A",
        True,
        2,
        False,
        "what?",
    )
    b = consensus({"id": 2, "gold": "cup", "answers": ["mug", "cup", "bowl"]})
    assert (b["category"], b["kept"], b["n_correct"]) == ("B", True, 1)
    c = consensus({"id": 3, "gold": "cup", "answers": ["mug"], "strong_answer": "A cup"})
    assert (c["category"], c["kept"], c["suspect_label"]) == ("C", True, False)
    d = consensus({"id": 4, "gold": "cup", "answers": ["mug"], "strong_answer": "bowl"})
    assert (d["category"], d["kept"], d["suspect_label"]) == ("D", False, True)
    # no stronger answer: D and nothing to flag
    d2 = consensus({"id": 5, "gold": "cup", "answers": ["mug", "mug"]})
    assert (d2["category"], d2["kept"], d2["suspect_label"]) == ("D", False, False)
    # all baselines right but the stronger model disagrees: A, label flagged
    a2 = consensus({"id": 6, "gold": "cup", "answers": ["cup"], "strong_answer": "mug"}, keep_a=0.0)
    assert (a2["category"], a2["kept"], a2["suspect_label"]) == ("A", False, True)


def test_odd_inputs():
    # no baseline answers: none correct
    assert categorize({"id": 1, "gold": "cup", "answers": []})["category"] == "D"
    assert categorize({"id": 1, "gold": "cup", "strong_answer": "cup"})["category"] == "C"
    # one answer given as a string, not as letters
    assert categorize({"id": 1, "gold": "cup", "answers": "cup"})["n_correct"] == 1
    # an empty gold matches nothing
    assert categorize({"id": 1, "gold": "", "answers": ["", ""]})["category"] == "D"
    assert categorize("junk")["category"] == "D"


def test_exact_judge():
    assert exact_judge("The Cup!", "cup") and exact_judge(3, "3")
    assert not exact_judge("cups", "cup") and not exact_judge(None, None)


def test_pluggable_judge():
    def within_one(answer, gold):
        return abs(float(answer) - float(gold)) <= 1

    r = consensus({"id": 1, "gold": 5, "answers": [4, 6, 5.5]}, judge=within_one, keep_a=1.0)
    assert (r["category"], r["n_correct"]) == ("A", 3)
    r = consensus({"id": 1, "gold": 5, "answers": [1, 9], "strong_answer": 4}, judge=within_one)
    assert r["category"] == "C"


def test_keep_a_is_seeded_per_id_and_about_the_fraction():
    recs = [{"id": f"s{i}", "gold": "x", "answers": ["x"]} for i in range(2000)]
    kept = [consensus(r, keep_a=0.3, seed=7)["kept"] for r in recs]
    # Binomial(2000, 0.3): sd ≈ 20
    assert abs(sum(kept) - 600) < 100
    # the same decision whatever the order of the records, and again on a rerun
    assert [consensus(r, keep_a=0.3, seed=7)["kept"] for r in reversed(recs)] == kept[::-1]
    other = [consensus(r, keep_a=0.3, seed=8)["kept"] for r in recs]
    assert other != kept
    # a record kept at a small fraction stays kept at a larger one (one draw per id)
    low = [consensus(r, keep_a=0.1, seed=7)["kept"] for r in recs]
    assert all(k for lo, k in zip(low, kept, strict=True) if lo)


def test_consensus_batch_keeps_an_exact_number_of_a():
    recs = [{"id": i, "gold": "x", "answers": ["x", "x"]} for i in range(10)]
    recs += [{"id": "b", "gold": "x", "answers": ["x", "y"]}, {"id": "d", "gold": "x", "answers": ["y"]}]
    out = consensus_batch(recs, keep_a=0.3, seed=1)
    assert [r["id"] for r in out] == [r["id"] for r in recs]
    assert sum(r["kept"] for r in out[:10]) == 3 and out[10]["kept"] and not out[11]["kept"]
    assert out == consensus_batch(recs, keep_a=0.3, seed=1)
    assert sum(r["kept"] for r in consensus_batch(recs[:5], keep_a=0.5)) == 3  # 2.5 → 3
    assert sum(r["kept"] for r in consensus_batch(recs[:10], keep_a=0.0)) == 0


@pytest.mark.parametrize("keep_a", [-0.1, 1.1, float("nan"), True])
def test_bad_config_raises(keep_a):
    with pytest.raises(ValueError, match="keep_a"):
        consensus({"id": 1, "gold": "x", "answers": ["x"]}, keep_a=keep_a)
    with pytest.raises(ValueError, match="keep_a"):
        consensus_batch([], keep_a=keep_a)


def test_judge_must_be_callable():
    with pytest.raises(ValueError, match="judge"):
        consensus({"id": 1, "gold": "x", "answers": ["x"]}, judge="exact")
