"""The verl / OpenRLHF adapters decode a prompt's label and ``extra_info`` text once for its
n responses (issue 41 item 2) and still hand every call objects of its own: a reward that
changes a field it was given (sorts a gold list in place, adds a key) never changes what
the next response of the group is scored against. The cache is bounded, and two texts
never share a decode."""

from __future__ import annotations

import json

from groundrl.integrations import common, openrlhf, verl
from groundrl.integrations.common import NOT_JSON, loads_fresh
from groundrl.rubric import Part, Rubric

TEXTS = [
    '{"gold": ["b", "a"], "meta": {"ids": [3, 1]}}',  # nested: a marshal copy
    '{"recipe": "eqa_rm", "index": 4}',  # scalars: a shallow copy
    '["find a apple", "pick up the apple"]',  # a list of scalars
    '[[1, 2], {"x": [3]}]',
    "7",
    "not json",
]


def _mutate(obj):
    if isinstance(obj, dict):
        for v in list(obj.values()):
            _mutate(v)
        obj["added"] = 1
    elif isinstance(obj, list):
        for v in obj:
            _mutate(v)
        obj.append("added")
        obj.reverse()


def test_every_call_gets_its_own_objects():
    for text in TEXTS:
        want = NOT_JSON if text == "not json" else json.loads(text)
        for _ in range(3):  # the first call (a miss) and hits
            got = loads_fresh(text)
            assert got is want if want is NOT_JSON else got == want
            _mutate(got)  # must not reach the cache


def test_the_cache_is_bounded_and_keeps_the_newest():
    common._fresh.clear()
    for i in range(common._FRESH_MAX + 50):
        assert loads_fresh(json.dumps({"i": i})) == {"i": i}
    assert len(common._fresh) == common._FRESH_MAX
    assert json.dumps({"i": common._FRESH_MAX + 49}) in common._fresh
    assert json.dumps({"i": 0}) not in common._fresh


def test_texts_never_share_a_decode():
    a, b = '{"gold": [1, 2]}', '{"gold": [1, 2] }'  # equal objects, different texts
    assert loads_fresh(a) == loads_fresh(b) == {"gold": [1, 2]}
    assert loads_fresh('{"gold": [2, 1]}') == {"gold": [2, 1]}
    x, y = loads_fresh(a), loads_fresh(a)
    assert x == y and x is not y and x["gold"] is not y["gold"]


def _sorting_rubric(seen: list) -> Rubric:
    def sorts_in_place(completion, gold, note=None):
        seen.append((list(gold), None if note is None else json.dumps(note)))
        gold.sort()  # a reward that changes its input
        if isinstance(note, dict):
            note["touched"] = True
        return 1.0

    return Rubric([Part("sorted", sorts_in_place)])


def test_a_reward_that_changes_its_fields_does_not_change_the_next_call():
    seen: list = []
    score = verl.make_compute_score(_sorting_rubric(seen), label="gold")
    gt = {"json": json.dumps(["c", "a", "b"])}  # write_dataset's JSON-encoded label
    extra = {"json": json.dumps({"note": {"k": [1]}}), "num_turns": 2, "rollout_reward_scores": {}}
    for _ in range(3):  # one prompt's responses: one ground truth, one extra_info dict
        score(None, "x", gt, extra)
    assert seen == [(["c", "a", "b"], '{"k": [1]}')] * 3
    assert extra == {"json": json.dumps({"note": {"k": [1]}}), "num_turns": 2, "rollout_reward_scores": {}}


def test_verl_reads_the_keys_verl_adds_to_extra_info():
    """verl's reward managers set num_turns and rollout_reward_scores on the extra_info
    dict before each call: they reach the sample beside the decoded fields."""
    extra = {
        "json": json.dumps({"recipe": "eqa_rm", "index": 0}),
        "num_turns": 2,
        "rollout_reward_scores": {},
    }
    sample = verl._sample_of("gt_score", 7, verl._extra(extra))
    assert sample == {
        "recipe": "eqa_rm",
        "index": 0,
        "num_turns": 2,
        "rollout_reward_scores": {},
        "gt_score": 7,
    }
    again = verl._sample_of("gt_score", 7, verl._extra(extra))
    assert again == sample and again is not sample
    assert again["rollout_reward_scores"] is not extra["rollout_reward_scores"]


def test_openrlhf_labels_of_a_group_are_copies():
    seen: list = []
    func = openrlhf.make_reward_func(_sorting_rubric(seen), tensors=False, score_range=None)
    label = json.dumps({"gold": ["c", "a", "b"], "note": {"k": [1]}})
    for _ in range(3):  # OpenRLHF 0.11 sends one response a call
        func(["p answer"], ["p "], [label])
    assert seen == [(["c", "a", "b"], '{"k": [1]}')] * 3


def test_openrlhf_one_response_a_call_equals_the_batch():
    """OpenRLHF 0.11 sends one response a call, scored without the batch machinery
    (Rubric.score_sample); tensors come from one float32 array: the same numbers, dtype
    and shapes as a torch.tensor per list."""
    import torch

    func = openrlhf.make_reward_func("eqa_rm")
    plain = openrlhf.make_reward_func("eqa_rm", tensors=False)
    prompt = "<|im_start|>user\nRate.<|im_end|>\n<|im_start|>assistant\n"
    outs = ["<critique>ok</critique><score>7</score>", "<score>3</score>", "no score", ""]
    queries = [prompt + o + "<|im_end|>" for o in outs]
    labels = [7, 7, "5", 9]
    batch = plain(queries, [prompt] * 4, labels)
    for i, q in enumerate(queries):
        one = func([q], [prompt], [labels[i]])
        want = {k: torch.tensor([batch[k][i]], dtype=torch.float32) for k in ("rewards", "scores")}
        for k in ("rewards", "scores"):
            assert one[k].dtype == torch.float32 and one[k].shape == (1,)
            assert torch.equal(one[k], want[k])
        assert set(one["extra_logs"]) == set(batch["extra_logs"])
        for k, col in batch["extra_logs"].items():
            assert torch.equal(one["extra_logs"][k], torch.tensor([col[i]], dtype=torch.float32))
    whole = func(queries, [prompt] * 4, labels)
    assert torch.equal(whole["rewards"], torch.tensor(batch["rewards"], dtype=torch.float32))
    whole["rewards"].add_(1)  # the rows share one array but not one element
    assert torch.equal(whole["scores"], torch.tensor(batch["scores"], dtype=torch.float32))
