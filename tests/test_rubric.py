import math

import pytest

from groundrl.rubric import Part, Rubric
from groundrl.types import Score, Verdict


def exact(completion, gold):
    return Score("acc", 1.0 if completion == gold else 0.0)


def fmt(completion):
    return 0.5 if completion.startswith("<") else 0.0


def test_sum_weights_and_metrics():
    r = Rubric([Part("acc", exact), Part("fmt", fmt, weight=0.5), Part("len", lambda c: len(c), weight=0.0)])
    v = r.score("<x>", gold="<x>")
    # 1·1 + 0.5·0.5 + 0·3
    assert v.total == pytest.approx(1.25)
    assert v.values() == {"acc": 1.0, "fmt": 0.5, "len": 3.0}
    assert r.weights == [1.0, 0.5, 0.0]


def test_argument_injection_passes_only_named_fields():
    seen = {}

    def part(completion, a, b=7):
        seen.update(a=a, b=b)
        return 1.0

    r = Rubric([Part("p", part)])
    r.score("c", a=1, unrelated=2)
    assert seen == {"a": 1, "b": 7}


def test_var_kwargs_part_receives_all_fields():
    got = {}

    def part(completion, **kw):
        got.update(kw)
        return 0.0

    Rubric([Part("p", part)]).score("c", x=1, y=2)
    assert got == {"x": 1, "y": 2}


def test_missing_required_field_scores_fallback_with_reason():
    r = Rubric([Part("acc", exact)])
    v = r.score("x")
    assert v.parts["acc"].value == 0.0
    assert "missing field 'gold'" in v.parts["acc"].reason
    assert r.required_fields() == {"gold"}


def test_raising_part_is_contained():
    def boom(completion):
        raise RuntimeError("bug")

    v = Rubric([Part("boom", boom, fallback=None), Part("f", fmt)]).score("<")
    assert v.parts["boom"].value is None and "RuntimeError: bug" in v.parts["boom"].reason
    assert v.total == 0.5


def test_none_parts_are_skipped_in_sum():
    r = Rubric([Part("a", lambda c: None), Part("b", lambda c: 2.0, weight=3)])
    assert r.score("x").total == 6.0


def test_gated_mean_below_and_above_gate():
    r = Rubric(
        [
            Part("outcome", lambda c, o: o),
            Part("spatial", lambda c, s=None: s, weight=1.0),
            Part("t", lambda c: 0.5, weight=2.0),
        ],
        aggregate="gated_mean",
        gate="outcome",
        tau=0.5,
    )
    assert r.score("x", o=0.0, s=1.0).total == 0.0  # gate closed: R = R_acc
    assert r.score("x", o=0.4, s=1.0).total == 0.4
    # gate open: (1·1 + 1·0 + 2·0.5) / (1 + 1 + 2)
    assert r.score("x", o=1.0, s=0.0).total == pytest.approx(0.5)
    # spatial not applicable: (1·1 + 2·0.5) / (1 + 2)
    assert r.score("x", o=1.0).total == pytest.approx(2 / 3)


def test_batched_part_called_once_per_batch():
    calls = []

    def judge(completions, samples):
        calls.append(len(completions))
        return [float(len(c)) for c in completions]

    r = Rubric([Part("j", judge, batched=True)])
    out = r.score_batch(["a", "bb", "ccc"], [{}, {}, {}])
    assert calls == [3]
    assert [v.total for v in out] == [1.0, 2.0, 3.0]


def test_batched_part_wrong_length_becomes_fallback():
    r = Rubric([Part("j", lambda cs, ss: [1.0], batched=True)])
    out = r.score_batch(["a", "b"], [{}, {}])
    assert all(v.parts["j"].value == 0.0 and "returned 1 values" in v.parts["j"].reason for v in out)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(parts=[]), "at least one Part"),
        (dict(parts=[Part("a", fmt), Part("a", fmt)]), "duplicate part names"),
        (dict(parts=[Part("a", fmt)], aggregate="max"), "aggregate must be"),
        (dict(parts=[Part("a", fmt)], aggregate="gated_mean", gate="zzz"), "gate= one of"),
    ],
)
def test_bad_configuration_raises_early(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Rubric(**kwargs)


def test_part_rejects_bad_weight_and_non_callable():
    with pytest.raises(ValueError, match="finite"):
        Part("a", fmt, weight=math.nan)
    with pytest.raises(TypeError, match="callable"):
        Part("a", 3)


def test_score_replaces_non_finite_values():
    s = Score("x", math.inf)
    assert s.value == 0.0 and "non-finite" in s.reason
    v = Verdict(1.0, {"x": s})
    assert v.to_dict() == {"reward": 1.0, "parts": {"x": 0.0}, "reasons": {"x": s.reason}}


def test_value_range_from_the_parts():
    """The total's range follows from the parts' declared ranges and the weights (a
    weight-0 metric does not count; a negative weight flips its part's range)."""
    import pytest

    from groundrl.recipes import get_recipe
    from groundrl.rubric import Part, Rubric

    def f(completion):
        return 0.0

    r = Rubric(
        [Part("a", f, value_range=(0.0, 1.0)), Part("b", f, weight=-0.5, value_range=(-1.0, 1.0)),
         Part("m", f, weight=0.0)]
    )  # fmt: skip
    assert r.value_range() == (-0.5, 1.5)
    gated = Rubric(
        [Part("g", f, value_range=(0.0, 1.0)), Part("s", f, value_range=(-1.0, 0.5))],
        aggregate="gated_mean",
        gate="g",
    )
    assert gated.value_range() == (-1.0, 1.0)
    assert Rubric([Part("a", f), Part("b", f, value_range=(0.0, 1.0))]).value_range() is None
    with pytest.raises(ValueError, match="value_range"):
        Part("x", f, value_range=(1.0, 0.0))
    # the papers' formulas: RR 0.5 + 1 with the -0.25 penalty; EQA-RM 1 + 1; Proxy-GRM ±1 + 0.5·[0, 1]
    assert get_recipe("reinforced_planning").rubric().value_range() == (-0.25, 1.5)
    assert get_recipe("eqa_rm").rubric().value_range() == (0.0, 2.0)
    assert get_recipe("proxy_grm").rubric().value_range() == (-1.0, 1.5)
