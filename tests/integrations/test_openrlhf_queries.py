"""OpenRLHF 0.11 sends `decode(prompt_ids + response_ids, skip_special_tokens=False)`:
the response ends in EOS/end-of-turn tokens and image pads are expanded. The same
completions scored clean and as OpenRLHF sends them give identical rewards."""

from __future__ import annotations

import json

import pytest

from groundrl.integrations.common import (
    collapse_vision,
    normalise,
    response_text,
    reward_range,
    strip_stop_tokens,
)
from groundrl.integrations.openrlhf import make_reward_func
from groundrl.recipes import get_recipe

RP_GOLD = ["find a Apple", "pick up the Apple"]
RP_GOOD = json.dumps(
    {
        "reasoning_and_reflection": "r",
        "visual_state_description": "v",
        "language_plan": "l",
        "executable_plan": [
            {"action_id": 1, "action_name": "find a Apple"},
            {"action_id": 2, "action_name": "pick up the Apple"},
        ],
    }
)
RP_MAP = {"1": "find a Apple", "2": "pick up the Apple"}
PROMPT = "<|im_start|>system\nYou plan.<|im_end|>\n<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>Put the apple away.<|im_end|>\n<|im_start|>assistant\n"


def openrlhf_query(prompt: str, completion: str, pads: int = 64, eos: str = "<|im_end|>") -> str:
    """What OpenRLHF's executor decodes: the processor-expanded prompt + response + EOS."""
    expanded = prompt.replace("<|image_pad|>", "<|image_pad|>" * pads)
    return expanded + completion + eos


def test_helpers_hand_worked():
    assert strip_stop_tokens("x<|im_end|>") == "x"
    assert strip_stop_tokens("x<|eot_id|><|end_of_text|>") == "x"  # Llama 3
    assert strip_stop_tokens("x\n") == "x\n"  # no token: the text is left alone
    assert strip_stop_tokens("x<|im_end|>", ("</s>",)) == "x<|im_end|>"  # configurable set
    assert collapse_vision("<|vision_start|>" + "<|image_pad|>" * 5 + "<|vision_end|>") == (
        "<|vision_start|><|image_pad|><|vision_end|>"
    )
    # prompt matched after collapsing; unmatched prompt: after the last assistant header
    assert response_text(openrlhf_query(PROMPT, "ANS"), PROMPT) == "ANS"
    other = "<|im_start|>user\nsomething else<|im_end|>\n<|im_start|>assistant\nANS<|im_end|>"
    assert response_text(other, "a prompt that is not there") == "ANS"
    assert response_text("OTHER no", "PROMPT ") == "OTHER no"  # no header: the whole query


def test_reward_ranges_hand_worked():
    want = {
        "reinforced_planning": (-0.25, 1.5),  # format ≤ 0.5, accuracy -0.25..1
        "eqa_rm": (0.0, 2.0),
        "proxy_grm": (-1.0, 1.5),  # accuracy ±1 + 0.5 × format
        "embodied_brain": (0.0, 1.0),  # metrics weigh 0
        "argos": (0.0, 1.0),  # gated mean of [0,1] parts
    }
    assert set(want) == {case[0] for case in _cases()}
    for name, rng in want.items():
        rec = get_recipe(name)
        assert reward_range(rec, rec.rubric()) == rng, name
    assert normalise(1.5, (-0.25, 1.5)) == 1.0 and normalise(2.0, (0.0, 2.0)) == 1.0
    assert normalise(0.0, (-1.0, 1.5)) == pytest.approx(0.4)


def _cases() -> list[tuple[str, dict, str, str]]:
    """(recipe, rubric options, label, completion) per recipe."""
    return [
        ("reinforced_planning", {"action_map": RP_MAP}, json.dumps(RP_GOLD), RP_GOOD),
        ("eqa_rm", {}, "7", "<critique>the answer is right</critique><score>7</score>"),
        ("proxy_grm", {}, "1", "<rubric>count</rubric><eval>1 is right</eval><answer>1</answer>"),
        (
            "embodied_brain",
            {},
            json.dumps({"gold": "<plans>1.[Navigate] table</plans>"}),
            "<response>ok</response><plans>1.[Navigate] table</plans><actions>[['Navigate','table']]</actions>",
        ),
        ("argos", {}, "apple", "The answer is apple"),
    ]


def test_every_builtin_recipe_has_a_hand_worked_case():
    # the cases above are written per recipe: a new built-in recipe must add its own here
    # (and its range to test_reward_ranges_hand_worked) rather than be silently left out
    # (built-ins only: an installed recipe plugin is not ours to hand-work)
    from groundrl.recipes import builtin_recipe_names

    assert {case[0] for case in _cases()} == set(builtin_recipe_names())


@pytest.mark.parametrize(
    "pads,eos", [(1, "<|im_end|>"), (256, "<|im_end|>"), (64, "<|im_end|><|endoftext|>")]
)
def test_100_completions_clean_vs_as_openrlhf_sends_them(pads, eos):
    """100 completions (20 per recipe, varied) score identically as clean text (prompt
    prefix removed by hand) and as OpenRLHF's decoded query with EOS and image pads."""
    total = 0
    for recipe, opts, label, good in _cases():
        fn = make_reward_func(recipe, tensors=False, **opts)
        completions = [
            good[: len(good) * k // 20] if k % 3 == 0 else good + " " * (k % 2) for k in range(1, 21)
        ]
        clean = fn([PROMPT + c for c in completions], [PROMPT] * 20, [label] * 20)
        sent = fn([openrlhf_query(PROMPT, c, pads, eos) for c in completions], [PROMPT] * 20, [label] * 20)
        assert sent == clean, recipe
        assert all(0.0 <= s <= 1.0 for s in sent["scores"]), recipe
        total += len(completions)
    assert total == 100


def test_before_the_fix_the_eos_zeroed_reinforced_planning():
    """The reproducer: with EOS left on, the JSON plan does not parse (0); stripped: 1.5."""
    fn = make_reward_func("reinforced_planning", tensors=False, action_map=RP_MAP, stop_tokens=())
    out = fn([openrlhf_query(PROMPT, RP_GOOD, pads=1)], [PROMPT], [json.dumps(RP_GOLD)])
    fixed = make_reward_func("reinforced_planning", tensors=False, action_map=RP_MAP)
    got = fixed([openrlhf_query(PROMPT, RP_GOOD, pads=1)], [PROMPT], [json.dumps(RP_GOLD)])
    assert got["rewards"] == [1.5] and got["scores"] == [1.0]
    assert out["rewards"] == [0.0]


def test_score_range_override_and_env(monkeypatch):
    fn = make_reward_func("eqa_rm", tensors=False, score_range=(0.0, 4.0))
    assert fn(["<critique>c</critique><score>7</score>"], [""], ["7"])["scores"] == [0.5]
    monkeypatch.setenv("GROUNDRL_RECIPE", "eqa_rm")
    monkeypatch.setenv("GROUNDRL_SCORE_RANGE", "0,8")
    monkeypatch.setenv("GROUNDRL_STOP_TOKENS", '["<END>"]')
    from groundrl.integrations.openrlhf import reward_func

    out = reward_func(["Q <critique>c</critique><score>7</score><END>"], ["Q "], ["7"])
    assert out["rewards"].tolist() == [2.0] and out["scores"].tolist() == [0.25]
