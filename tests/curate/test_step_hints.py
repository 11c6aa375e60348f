import random
from collections import Counter

import pytest

from groundrl.curate import hint_sample, hinted_prompt, step_hint

GOLD = ["s1", "s2", "s3", "s4"]


def test_split_follows_the_documented_draws():
    # one random() < p decides the hint, then k = randrange(T): replayed on a twin generator
    for seed in range(40):
        twin = random.Random(seed)
        hinted = twin.random() < 0.5
        k = twin.randrange(4) if hinted else 0
        assert step_hint(GOLD, random.Random(seed), p=0.5) == (GOLD[:k], GOLD[k:], hinted)


def test_p_zero_and_one():
    rng = random.Random(0)
    assert all(step_hint(GOLD, rng, p=0.0) == ([], GOLD, False) for _ in range(50))
    outs = [step_hint(GOLD, rng, p=1.0) for _ in range(50)]
    assert all(h and pre + rest == GOLD and rest for pre, rest, h in outs)


def test_k_is_uniform_over_0_to_t_minus_1():
    rng = random.Random(1)
    n = 8000
    ks = Counter(len(pre) for pre, _, h in (step_hint(GOLD, rng, p=0.5) for _ in range(n)) if h)
    hinted = sum(ks.values())
    # Binomial(8000, 0.5): sd ≈ 45; each k ~ Binomial(hinted, 1/4): sd ≈ 27
    assert abs(hinted - 4000) < 200 and set(ks) == {0, 1, 2, 3}
    assert all(abs(c - hinted / 4) < 130 for c in ks.values())


def test_edge_plans():
    assert step_hint([], random.Random(0), p=1.0) == ([], [], False)
    assert step_hint(["only"], random.Random(0), p=1.0) == ([], ["only"], True)  # k ∈ {0}
    # a string is one step, not letters; tuples are accepted
    assert step_hint("Pick apple", random.Random(0), p=0.0) == ([], ["Pick apple"], False)
    assert step_hint(("a", "b"), random.Random(0), p=0.0) == ([], ["a", "b"], False)


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan"), True, "0.5"])
def test_bad_p_raises(p):
    with pytest.raises(ValueError, match="p"):
        step_hint(GOLD, random.Random(0), p=p)


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="random.Random"):
        step_hint(GOLD, 0)
    with pytest.raises(ValueError, match="sequence"):
        step_hint(None, random.Random(0))


def test_hinted_prompt_text():
    assert (
        hinted_prompt("Do it.", ["s1", "s2"])
        == "Do it.\nGuided precursors (already done):\n1. s1\n2. s2\nContinue with the remaining steps."
    )
    assert hinted_prompt("Do it.", []) == "Do it."
    assert (
        hinted_prompt("Q", [["Pick", "Apple"]], header="Done:", footer="") == "Q\nDone:\n1. ['Pick', 'Apple']"
    )


def test_hint_sample():
    # p = 1 and a twin generator: random() then randrange(3) gives k
    twin = random.Random(5)
    twin.random()
    k = twin.randrange(3)
    prompt, rest, got_k = hint_sample("Go.", ["a", "b", "c"], random.Random(5), p=1.0)
    assert got_k == k and rest == ["a", "b", "c"][k:]
    assert prompt == hinted_prompt("Go.", ["a", "b", "c"][:k])
    assert hint_sample("Go.", ["a"], random.Random(0), p=0.0) == ("Go.", ["a"], None)
