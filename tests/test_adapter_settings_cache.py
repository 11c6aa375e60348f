"""verl's and OpenRLHF's reward paths resolve their settings once, not once per call
(issue 41 item 2), and stay right when the settings change: the environment cache
(:func:`groundrl.integrations.common.env_snapshot`), verl's per-setting cache, the
shared JSON decode of a group's labels and the stop-token table give what the plain
per-call code gave."""

from __future__ import annotations

import json
import random

import pytest

from groundrl.integrations import common, openrlhf, verl
from groundrl.integrations.common import env_snapshot, response_text, strip_stop_tokens

EQA = "<critique>fine</critique><score>7</score>"


def test_verl_reads_its_settings_once_for_many_calls(monkeypatch):
    """Ten calls with one setting read the environment's configuration once (it was read
    on every call: two scans of every variable, most of verl's per-call cost)."""
    monkeypatch.setenv("GROUNDRL_RECIPE", "eqa_rm")
    common._env_configs.clear()
    calls = []
    real = common.env_config

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(common, "env_config", counting)
    monkeypatch.setattr(verl, "env_config", counting, raising=False)  # the old import
    outs = [verl.compute_score("anything", EQA, 7, None) for _ in range(10)]
    assert len(calls) == 1
    assert all(o == outs[0] for o in outs)
    assert outs[0]["score"] > 0


def test_verl_sees_every_environment_change(monkeypatch):
    """A changed, added or removed GROUNDRL_* variable is seen on the next call."""
    monkeypatch.delenv("GROUNDRL_APPLICABILITY", raising=False)
    monkeypatch.setenv("GROUNDRL_RECIPE", "eqa_rm")
    first = verl.compute_score(None, EQA, 7, None)
    assert not any(k.endswith("/applies") for k in first)
    monkeypatch.setenv("GROUNDRL_APPLICABILITY", "1")  # added
    assert any(k.endswith("/applies") for k in verl.compute_score(None, EQA, 7, None))
    monkeypatch.setenv("GROUNDRL_APPLICABILITY", "0")  # changed
    assert verl.compute_score(None, EQA, 7, None) == first
    monkeypatch.setenv("GROUNDRL_RECIPE", "proxy_grm")  # changed: another recipe's keys
    assert "accuracy" in verl.compute_score(None, "<answer>1</answer>", 1, None)
    monkeypatch.delenv("GROUNDRL_RECIPE")  # removed: no recipe is a configuration error
    with pytest.raises(ValueError, match="cannot tell the groundrl recipe"):
        verl.compute_score(None, EQA, 7, None)


def test_env_snapshot_tracks_groundrl_variables_only(monkeypatch):
    before = env_snapshot()
    monkeypatch.setenv("SOMETHING_ELSE_41", "x")
    assert env_snapshot() == before
    monkeypatch.setenv("GROUNDRL_OPTION_LENIENT", "true")
    after = env_snapshot()
    assert after != before and len(after) == len(before) + 1
    monkeypatch.setenv("GROUNDRL_OPTION_LENIENT", "false")
    assert env_snapshot() != after
    monkeypatch.delenv("GROUNDRL_OPTION_LENIENT")
    assert env_snapshot() == before


def test_verl_settings_by_value_not_by_object():
    """Two reward_kwargs dicts with the same content share a setting; a different one
    does not (the options decide the rubric)."""
    plan = "[{'action_id': 1, 'action_name': 'find a apple'}]"
    amap = {"1": "find a apple", "2": "pick up the apple"}
    out = '{"executable_plan": [{"action_id": 1, "action_name": "find a apple"}]}'
    kw = {"recipe": "reinforced_planning"}
    a = verl.compute_score(None, out, plan, None, recipe_options={"action_map": dict(amap)}, **kw)
    b = verl.compute_score(None, out, plan, None, recipe_options={"action_map": dict(amap)}, **kw)
    other = {"1": "open the fridge", "2": "pick up the apple"}
    c = verl.compute_score(None, out, plan, None, recipe_options={"action_map": other}, **kw)
    assert a == b
    assert c["format"] != a["format"]  # id 1 names another action in that map
    # the same reward_kwargs object changed in place between calls: the new options count
    opts = {"action_map": dict(amap)}
    assert verl.compute_score(None, out, plan, None, recipe_options=opts, **kw) == a
    opts["action_map"] = other
    assert verl.compute_score(None, out, plan, None, recipe_options=opts, **kw) == c


def test_verl_shared_label_decode_gives_each_call_its_own_sample():
    """The n responses of one prompt share one extra_info / ground-truth text, decoded
    once; each call still gets its own top-level sample dict, and a sample's fields are
    the decoded values."""
    extra = {"json": json.dumps({"recipe": "eqa_rm", "index": 0, "note": [1, 2]})}
    s1 = verl._sample_of("gt_score", 7, verl._extra(extra))
    s1["gt_score"] = 0
    s1["new"] = 1
    s2 = verl._sample_of("gt_score", 7, verl._extra(extra))
    assert s2 == {"recipe": "eqa_rm", "index": 0, "note": [1, 2], "gt_score": 7}
    assert verl._sample_of("gt_score", {"json": "[3]"}, verl._extra(extra))["gt_score"] == [3]
    assert verl._sample_of(None, '{"gt_score": 3}', verl._extra(extra))["gt_score"] == 3


def _old_strip(text, stop_tokens=None):
    """strip_stop_tokens as it was before issue 41 (every token tried at every step)."""
    tokens = common.DEFAULT_STOP_TOKENS if stop_tokens is None else stop_tokens
    tokens = tuple(t for t in tokens if t)
    if not tokens:
        return text
    end = len(text)
    while True:
        bare = end
        while bare > 0 and text[bare - 1].isspace():
            bare -= 1
        for tok in tokens:
            if text.endswith(tok, 0, bare):
                end = bare - len(tok)
                break
        else:
            return text[:end] if end < len(text) else text


def test_stop_token_table_strips_what_every_token_tried_stripped():
    rng = random.Random(41)
    pieces = [*common.DEFAULT_STOP_TOKENS, " ", "\n", "a", ">", "|>", "s>", "<", "x</s"]
    custom = ("</s>", "", "<|im_end|>", "s>", ">", "x", "a", "|>")
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        assert strip_stop_tokens(text) == _old_strip(text)
        assert strip_stop_tokens(text, custom) == _old_strip(text, custom)
        assert strip_stop_tokens(text, ()) == text
        assert strip_stop_tokens(text, ("a", "</s>", "s")) == _old_strip(text, ("a", "</s>", "s"))


def test_openrlhf_batch_equals_one_response_at_a_time():
    """score_queries collapses each distinct prompt once: the responses and the scores
    are what response_text gives one query at a time, prompts of any type included."""
    img = "<|vision_start|>" + "<|image_pad|>" * 5 + "<|vision_end|>"
    p1 = "<|im_start|>user\n" + img + "Rate.<|im_end|>\n<|im_start|>assistant\n"
    p2 = "<|im_start|>user\nOther.<|im_end|>\n<|im_start|>assistant\n"
    queries = [p1 + EQA + "<|im_end|>", p1 + "<score>2</score>", p2 + EQA, "no prompt " + EQA, 5]
    prompts = [p1, p1, p2, None, p2]
    labels = [7, 7, "7", 3, 7]
    from groundrl.recipes import get_recipe

    rubric = get_recipe("eqa_rm").rubric()
    out = openrlhf.score_queries(rubric, "gt_score", queries, prompts, labels, score_range=None)
    for i, (q, p, lab) in enumerate(zip(queries, prompts, labels, strict=True)):
        one = rubric.score(response_text(q, p), gt_score=lab)
        assert out["rewards"][i] == one.total
        assert out["scores"][i] == one.total
        for name, col in out["extra_logs"].items():
            value = one.parts[name].value
            assert col[i] == (0.0 if value is None else value)
    assert out["scores"] is not out["rewards"]


def test_openrlhf_json_labels_are_decoded_once_and_copied():
    label = json.dumps({"gt_score": 7, "x": [1]})
    a = openrlhf.label_to_sample(label, "gt_score")
    a["gt_score"] = 0
    assert openrlhf.label_to_sample(label, "gt_score") == {"gt_score": 7, "x": [1]}
