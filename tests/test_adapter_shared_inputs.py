"""Issue 41 item 3: the TRL adapter does no per-sample work the reward does not need.

The part functions of an additive rubric build the batch's texts and sample dicts once
and share them (counted here, not timed: the cost ratios are bench/rewards.py's), and a
new batch is never served from the cache. The rubric passes a part's one field by
position only where the function takes it by position.
"""

from __future__ import annotations

from groundrl.integrations import trl
from groundrl.rubric import Part, Rubric


def _rubric() -> Rubric:
    def exact(completion, gold):
        return float(completion == gold)

    def length(completion):
        return float(len(completion))

    def prefix(completion, gold=None):
        return float(gold is not None and completion.startswith(gold[:1]))

    return Rubric([Part("exact", exact), Part("length", length, weight=0.0), Part("prefix", prefix)])


def _call(funcs, completions, gold):
    prompts = ["p"] * len(completions)  # TRL hands every function the same lists
    return [
        f(prompts=prompts, completions=completions, completion_ids=None, gold=gold,
          trainer_state=None, log_extra=lambda *a: None, log_metric=lambda *a: None)
        for f in funcs
    ]  # fmt: skip


def test_part_functions_build_the_batch_once(monkeypatch):
    built = [0]
    real = trl._samples

    def counting(*args, **kwargs):
        built[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(trl, "_samples", counting)
    funcs, weights = trl.reward_funcs(_rubric())
    assert weights == [1.0, 0.0, 1.0]
    completions, gold = ["a", "b", "c"], ["a", "x", "c"]
    assert _call(funcs, completions, gold) == [[1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [1.0, 0.0, 1.0]]
    assert built[0] == 1  # three part functions, one build (it was one per function)


def test_a_new_batch_is_never_read_from_the_cache():
    funcs, _ = trl.reward_funcs(_rubric())
    completions = ["a", "b"]
    assert _call(funcs, completions, ["a", "b"])[0] == [1.0, 1.0]
    # the same completions list with another gold column: rebuilt
    assert _call(funcs, completions, ["b", "a"])[0] == [0.0, 0.0]
    # an equal but new list of completions: rebuilt, and a changed one is read as changed
    assert _call(funcs, ["a", "b"], ["b", "a"])[0] == [0.0, 0.0]
    assert _call(funcs, ["b", "a"], ["b", "a"])[0] == [1.0, 1.0]


def test_one_field_reaches_the_part_however_the_function_takes_it():
    def positional(completion, gold):
        return float(completion == gold)

    def keyword_only(completion, *, gold):
        return float(completion == gold)

    def after_an_option(completion, scale=1.0, *, gold):
        return scale * float(completion == gold)

    rubric = Rubric([Part("p", positional), Part("k", keyword_only), Part("o", after_an_option)])
    assert [p._positional for p in rubric.parts] == [True, False, False]
    v = rubric.score_batch(["x", "y"], [{"gold": "x"}, {"gold": "x"}])
    assert [x.values() for x in v] == [{"p": 1.0, "k": 1.0, "o": 1.0}, {"p": 0.0, "k": 0.0, "o": 0.0}]
    assert [x.total for x in v] == [3.0, 0.0]
