"""sim_reward = progress rate + success bonus, on hand-built tasks with hand-worked
values, and total on any completion."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundrl.sim.goals import Goal
from groundrl.sim.reward import sim_reward
from groundrl.sim.tasks import Task
from groundrl.sim.world import Obj, Scene

FRIDGE_PLAN = [
    "find a Apple",
    "pick up the Apple",
    "find a Fridge",
    "open the Fridge",
    "put down the object in hand",
]


def kitchen() -> Scene:
    return Scene(
        "kitchen",
        [
            Obj("CounterTop_1", "CounterTop"),
            Obj("Fridge_1", "Fridge"),
            Obj("Apple_1", "Apple", "CounterTop_1"),
        ],
    )


APPLE_IN_FRIDGE = Task(
    "A", "Put an apple in the fridge.", kitchen(), Goal("pick_and_place_simple", "Apple", "Fridge")
)
COOL_APPLE = Task(
    "B", "Chill an apple.", kitchen(), Goal("pick_cool_then_place_in_recep", "Apple", "CounterTop")
)


def test_perfect_plan_scores_one_plus_the_bonus():
    text = "\n".join(FRIDGE_PLAN)
    s = sim_reward(text, APPLE_IN_FRIDGE)
    assert s.name == "sim" and s.value == 2.0 and "success" in s.reason
    assert sim_reward(text, APPLE_IN_FRIDGE, success_bonus=0.5).value == 1.5
    assert sim_reward(text, APPLE_IN_FRIDGE, success_bonus=0).value == 1.0


def test_partial_progress_without_bonus():
    # cooled in the closed fridge (1 of 3 conditions), never put on the counter
    s = sim_reward("\n".join([*FRIDGE_PLAN, "close the Fridge"]), COOL_APPLE)
    assert s.value == pytest.approx(1 / 3)
    # the same plan with the apple then brought back to the counter: all 3 + bonus
    full = [*FRIDGE_PLAN, "close the Fridge", "open the Fridge", "pick up the Apple", "find a CounterTop",
            "put down the object in hand"]  # fmt: skip
    assert sim_reward("\n".join(full), COOL_APPLE).value == 2.0


def test_task_as_dict_or_json_string_gives_the_same_value():
    text = "\n".join(FRIDGE_PLAN[:2])  # picked up, not placed: 0 of 1
    d = APPLE_IN_FRIDGE.to_json()
    vals = {sim_reward(text, t).value for t in (APPLE_IN_FRIDGE, d, json.dumps(d))}
    assert vals == {0.0}
    assert sim_reward("\n".join(FRIDGE_PLAN), json.dumps(d)).value == 2.0


def test_every_vocabulary_form_of_a_completion():
    json_plan = json.dumps(
        {
            "language_plan": "x",
            "executable_plan": [{"action_id": i, "action_name": a} for i, a in enumerate(FRIDGE_PLAN)],
        }
    )
    assert sim_reward(json_plan, APPLE_IN_FRIDGE).value == 2.0
    reinforced = "goto apple\npickup apple\ngoto fridge\nput fridge"  # opens the fridge on the way
    assert sim_reward(reinforced, APPLE_IN_FRIDGE).value == 2.0
    brain = "<response>ok</response><actions>[['Pick', 'Apple'], ['Open', 'Fridge'], ['Place', 'Apple', 'Fridge']]</actions>"
    assert sim_reward(brain, APPLE_IN_FRIDGE).value == 2.0
    chat = [{"role": "user", "content": "plan?"}, {"role": "assistant", "content": "\n".join(FRIDGE_PLAN)}]
    assert sim_reward(chat, APPLE_IN_FRIDGE).value == 2.0


@pytest.mark.parametrize(
    "completion, reason",
    [
        ("", "empty completion"),
        ("   \n\t", "empty completion"),
        (None, "not text"),
        (12, "not text"),
        ([{"role": "assistant", "content": None}], "not text"),
    ],
)
def test_empty_or_non_text_completions_score_zero_with_a_reason(completion, reason):
    s = sim_reward(completion, APPLE_IN_FRIDGE)
    assert s.value == 0.0 and reason in s.reason


def test_prose_and_invalid_plans_score_zero():
    s = sim_reward("I think the apple should go somewhere cold.", APPLE_IN_FRIDGE)
    assert s.value == 0.0 and "1 invalid" in s.reason
    assert sim_reward("find a Unicorn\npick up the Unicorn", APPLE_IN_FRIDGE).value == 0.0


@pytest.mark.parametrize(
    "task", [None, {"id": "x"}, "not json", 3.5, {"id": "x", "instruction": "", "scene": 1, "goal": {}}]
)
def test_missing_or_unreadable_task_is_not_applicable(task):
    s = sim_reward("\n".join(FRIDGE_PLAN), task)
    assert s.value is None and s.reason


def test_huge_and_adversarial_completions_are_total():
    # its time budget lives in bench/adversarial.py (--only sim), not in a test
    junk = ("pick up the Apple\n" * 50_000) + "{" * 10_000 + "<actions>[[" * 1000
    s = sim_reward(junk, APPLE_IN_FRIDGE)
    assert s.value == 0.0 and s.reason
    assert sim_reward("\x00\ud800 find a Apple", APPLE_IN_FRIDGE).value == 0.0


def test_bad_settings_raise():
    with pytest.raises(ValueError, match="success_bonus"):
        sim_reward("x", APPLE_IN_FRIDGE, success_bonus=-1)
    with pytest.raises(ValueError, match="success_bonus"):
        sim_reward("x", APPLE_IN_FRIDGE, success_bonus=float("nan"))
    with pytest.raises(ValueError, match="vocab"):
        sim_reward("x", APPLE_IN_FRIDGE, vocab="semaphore")
    with pytest.raises(ValueError, match="max_steps"):
        sim_reward("x", APPLE_IN_FRIDGE, max_steps=0)


def test_the_step_budget_applies():
    # 5 steps needed, 4 allowed: the apple is held, not placed
    assert sim_reward("\n".join(FRIDGE_PLAN), APPLE_IN_FRIDGE, max_steps=4).value == 0.0


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=400),
        st.lists(
            st.sampled_from(FRIDGE_PLAN + ["close the Fridge", "goto fridge", "NoOp", "}{", "[["]),
            max_size=12,
        ).map("\n".join),
        st.none(),
        st.integers(),
        st.lists(st.dictionaries(st.sampled_from(["role", "content"]), st.text(max_size=30)), max_size=3),
    )
)
def test_total_on_any_completion(completion):
    s = sim_reward(completion, APPLE_IN_FRIDGE)
    assert s.name == "sim" and isinstance(s.reason, str)
    assert s.value is not None and 0.0 <= s.value <= 2.0
