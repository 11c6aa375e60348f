"""Each adapter driven through its trainer's real calling convention."""

import json

import pytest

from groundrl.integrations.common import completion_text
from groundrl.integrations.openrlhf import make_reward_func, score_queries, strip_prompt
from groundrl.integrations.trl import reward_funcs
from groundrl.integrations.verl import make_compute_score
from groundrl.rubric import Part, Rubric
from groundrl.types import Score


def exact(completion, gold):
    return Score(
        "acc", float(completion.strip() == str(gold)), "" if completion.strip() == str(gold) else "mismatch"
    )


def length_metric(completion):
    return float(len(completion))


RUBRIC = Rubric(
    [Part("acc", exact), Part("len", length_metric, weight=0.0), Part("none", lambda c: None, weight=2.0)]
)


@pytest.mark.parametrize(
    "completion, text",
    [
        ("plain", "plain"),
        ([{"role": "assistant", "content": "chat"}], "chat"),
        (
            [
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                }
            ],
            "ab",
        ),
        (
            [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": "x"},
                {"role": "assistant", "content": "y"},
            ],
            "y",
        ),
        (None, ""),
        (42, ""),
    ],
)
def test_completion_text(completion, text):
    assert completion_text(completion) == text


def test_trl_reward_funcs_names_weights_and_values():
    funcs, weights = reward_funcs(RUBRIC)
    assert [f.__name__ for f in funcs] == ["acc", "len", "none"]
    assert weights == [1.0, 0.0, 2.0]
    logged = {}
    completions = [[{"role": "assistant", "content": "4"}], [{"role": "assistant", "content": "5"}]]
    kwargs = dict(
        gold=["4", "4"],
        trainer_state=None,
        log_extra=lambda k, v: logged.setdefault(k, v),
        log_metric=lambda k, v: None,
    )
    out = [
        f(prompts=["p1", "p2"], completions=completions, completion_ids=[[1], [2]], **kwargs) for f in funcs
    ]
    assert out == [[1.0, 0.0], [1.0, 1.0], [None, None]]
    assert logged["acc_reason"] == ["", "mismatch"]


def test_trl_column_length_mismatch_is_an_error():
    funcs, _ = reward_funcs(RUBRIC)
    with pytest.raises(ValueError, match="column 'gold' has 1 values for 2 completions"):
        funcs[0](prompts=["a", "b"], completions=["x", "y"], gold=["x"])


def test_trl_gated_rubric_gives_total_plus_zero_weight_parts():
    r = Rubric(
        [Part("outcome", exact), Part("extra", lambda c: 0.0)],
        aggregate="gated_mean",
        gate="outcome",
        tau=0.5,
    )
    funcs, weights = reward_funcs(r)
    assert [f.__name__ for f in funcs] == ["reward", "outcome", "extra"]
    assert weights == [1.0, 0.0, 0.0]
    comps = ["a", "b"]
    # gate open for "a": (1 + 0) / 2; closed for "b": 0
    assert funcs[0](prompts=["", ""], completions=comps, gold=["a", "a"]) == [0.5, 0.0]


def test_verl_compute_score_dict_with_every_part():
    compute_score = make_compute_score(RUBRIC, label="gold")
    out = compute_score(data_source="x", solution_str="7", ground_truth="7", extra_info={"split": "train"})
    assert out == {"score": 1.0, "acc": 1.0, "len": 1.0, "none": 0.0}


def test_openrlhf_reward_func_strips_prompt_and_reads_json_labels():
    assert strip_prompt("PROMPT answer", "PROMPT ") == "answer"
    assert strip_prompt("other", "PROMPT") == "other"
    fn = make_reward_func(RUBRIC, label="gold", tensors=False)
    out = fn(["Q: 4", "Q: 5"], ["Q: ", "Q: "], ["4", json.dumps({"gold": "5"})])
    assert out["rewards"] == [1.0, 1.0]
    assert out["extra_logs"]["len"] == [1.0, 1.0]
    with pytest.raises(ValueError, match="differ in length"):
        score_queries(RUBRIC, "gold", ["a"], ["a", "b"], None)


def test_openrlhf_tensors():
    torch = pytest.importorskip("torch")
    out = make_reward_func(RUBRIC, label="gold")(["x"], [""], ["x"])
    assert isinstance(out["rewards"], torch.Tensor) and out["rewards"].tolist() == [1.0]


def test_trl_batched_parts_are_async_and_overlap():
    import asyncio
    import inspect
    import threading

    # both judges must be inside their call at once to pass the barrier: run one after the
    # other, the first would wait for a partner that never comes (BrokenBarrierError)
    both_in = threading.Barrier(2, timeout=30)

    def slow_judge(completions, samples):
        both_in.wait()
        return [1.0] * len(completions)

    r = Rubric(
        [
            Part("rule", lambda c: 0.5),
            Part("j1", slow_judge, batched=True),
            Part("j2", slow_judge, batched=True),
        ]
    )
    funcs, weights = reward_funcs(r)
    assert [inspect.iscoroutinefunction(f) for f in funcs] == [False, True, True]
    assert [f.__name__ for f in funcs] == ["rule", "j1", "j2"]

    async def gather():
        return await asyncio.gather(*(f(prompts=["p"], completions=["c"]) for f in funcs[1:]))

    assert asyncio.run(gather()) == [[1.0], [1.0]]  # the two judges overlapped
    sync_funcs, _ = reward_funcs(r, async_judges=False)
    assert not any(inspect.iscoroutinefunction(f) for f in sync_funcs)


def test_hostile_labels_and_extra_info_are_scored_not_raised():
    """Issue 16 A1/A2: a label nested past the JSON parser's depth is read as a plain
    label string; a non-string key in verl's extra_info is dropped, not a TypeError."""
    from groundrl.integrations import openrlhf, verl

    deep = '{"gt_score":' + "[" * 100_000 + "]" * 100_000 + "}"
    assert openrlhf.label_to_sample(deep, "gt_score") == {"gt_score": deep}
    out = openrlhf.make_reward_func("eqa_rm", tensors=False)(["<score>7</score>"], [""], [deep])
    assert out["rewards"] == [0.0]  # gold unreadable: accuracy 0; no critique: format 0
    got = verl.make_compute_score("eqa_rm")(
        "s", "<critique>c</critique><score>7</score>", 5, {1: "x", "k": 2}
    )
    assert got["score"] == 0.96 + 1.0
