"""The rubric's batch fast paths give exactly what a plain per-sample reference gives
(issue 18: speed never changes a value): every part shape, missing fields, raising
parts, non-Score returns, and the summed totals."""

from hypothesis import given, settings
from hypothesis import strategies as st

from groundrl.rubric import Part, Rubric
from groundrl.types import Score


def no_field(completion):
    return len(completion) % 3


def one_field(completion, gold):
    if gold == "boom":
        raise RuntimeError("boom")
    return Score("one", float(completion == gold), "cmp")


def optional_field(completion, gold=None):
    return None if gold is None else 0.5


def two_fields(completion, gold, extra=1.0):
    return float(extra) if completion.startswith(str(gold)) else True


def every_field(completion, **fields):
    return float(len(fields))


PARTS = [
    Part("none", no_field),
    Part("one", one_field, weight=0.5),
    Part("opt", optional_field, weight=2.0, fallback=None),
    Part("two", two_fields, weight=-1.0),
    Part("all", every_field, weight=0.0),
]


def reference(part: Part, completion, sample) -> Score:
    """Straightforward: the field check, the call, the coercion, one sample at a time."""
    import inspect

    params = list(inspect.signature(part.fn).parameters.values())[1:]
    kwargs = {}
    for p in params:
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            kwargs.update({k: v for k, v in sample.items() if k != "completion"})
        elif p.name in sample:
            kwargs[p.name] = sample[p.name]
        elif p.default is inspect.Parameter.empty:
            return Score(part.name, part.fallback, f"missing field {p.name!r}")
    try:
        out = part.fn(completion, **kwargs)
    except Exception as e:
        return Score(part.name, part.fallback, f"error: {type(e).__name__}: {e}")
    if isinstance(out, Score):
        return Score(part.name, out.value, out.reason)
    if out is None:
        return Score(part.name, None, "not applicable")
    return Score(part.name, float(out))


samples_st = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "gold": st.sampled_from(["a", "ab", "boom", "x"]),
            "extra": st.floats(-3, 3),
            "completion": st.just("dup"),
            "id": st.integers(0, 5),
        },
    ),
    min_size=1,
    max_size=12,
)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(
    samples=samples_st, texts=st.lists(st.sampled_from(["a", "ab", "abc", "", "x"]), min_size=12, max_size=12)
)
def test_batch_paths_equal_the_reference(samples, texts):
    completions = texts[: len(samples)]
    rubric = Rubric(PARTS)
    verdicts = rubric.score_batch(completions, samples)
    for c, s, v in zip(completions, samples, verdicts, strict=True):
        want = {p.name: reference(p, c, s) for p in PARTS}
        assert v.parts == want
        total = sum(p.weight * want[p.name].value for p in PARTS if want[p.name].value is not None)
        assert v.total == float(total)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(
    samples=samples_st, texts=st.lists(st.sampled_from(["a", "ab", "abc", "", "x"]), min_size=12, max_size=12)
)
def test_single_sample_path_equals_the_reference(samples, texts):
    """``Rubric.score`` (verl's one-call-per-sample path) builds the verdict without the
    batch machinery (issue 41); the same parts and total as the reference, and for the
    gated aggregate the same verdict as ``score_batch``."""
    rubric = Rubric(PARTS)
    gated = Rubric(PARTS, aggregate="gated_mean", gate="one", tau=0.5)
    for c, s in zip(texts, samples, strict=False):
        v = rubric.score(c, **s)
        want = {p.name: reference(p, c, s) for p in PARTS}
        assert v.parts == want
        total = sum(p.weight * want[p.name].value for p in PARTS if want[p.name].value is not None)
        assert v.total == float(total)
        g, g_batch = gated.score(c, **s), gated.score_batch([c], [s])[0]
        assert (g.total, g.parts, g.info) == (g_batch.total, g_batch.parts, g_batch.info)


def test_single_sample_path_keeps_deadlines_and_batched_parts():
    """A rubric with a deadline or a batched part still goes through ``score_batch``:
    the batched part sees a one-item batch, a slow part times out with its reason."""
    import time

    seen = []

    def judge(completions, samples):
        seen.append(len(completions))
        return [1.0 for _ in completions]

    def slow(completion):
        time.sleep(0.5)
        return 1.0

    assert Rubric([Part("j", judge, batched=True)]).score("a").total == 1.0
    assert seen == [1]
    v = Rubric([Part("slow", slow, timeout=0.05)]).score("a")
    assert v.parts["slow"].reason.startswith("timeout")
