"""The demo's imperfect teacher: mistakes at their stated rates, and the trace counter."""

import math
import random

import pytest

from groundrl.sim.teacher import (
    DEFAULT_RATES,
    MISTAKES,
    TeacherPolicy,
    Trace,
    check_rates,
    count_mistakes,
    draw_habits,
    expert_steps,
    replay,
    teacher_plan,
)

OK = "Last action executed successfully."


@pytest.fixture(scope="module")
def tasks():
    from groundrl.demos.planner import demo_tasks

    return demo_tasks(300, seed=11)


def _task_with(tasks, task_type, step_prefix):
    for t in tasks:
        plan = expert_steps(t, t.env())
        if t.task_type == task_type and any(s.startswith(step_prefix) for s in plan):
            return t, plan
    raise AssertionError(f"no {task_type} task with a {step_prefix!r} step")


def test_habits_drawn_at_the_stated_rates(tasks):
    """On a fixed task set, each mistake is a habit of its stated share of episodes
    (within 4 binomial standard deviations), independently of the other kinds."""
    rates = {"skip_open": 0.6, "skip_switch": 0.25, "stop_early": 0.1}
    habits = [draw_habits(random.Random(f"0:{t.id}"), rates) for t in tasks]
    n = len(habits)
    for kind, p in rates.items():
        share = sum(kind in h for h in habits) / n
        assert abs(share - p) <= 4 * math.sqrt(p * (1 - p) / n), (kind, share)
    both = sum({"skip_open", "skip_switch"} <= h for h in habits) / n
    assert abs(both - 0.6 * 0.25) <= 4 * math.sqrt(0.15 * 0.85 / n)


def test_a_habit_is_applied_to_every_plan_it_fits(tasks):
    """skip_open drops exactly the first open step, skip_switch the Faucet/Microwave
    switch, stop_early the last step; the plan is otherwise the expert's."""
    t, plan = _task_with(tasks, "pick_heat_then_place_in_recep", "open the ")
    got, made = teacher_plan(t, t.env(), {"skip_open"})
    i = next(i for i, s in enumerate(plan) if s.startswith("open the "))
    assert made == ("skip_open",) and got == plan[:i] + plan[i + 1 :]
    got, made = teacher_plan(t, t.env(), {"skip_switch"})
    assert made == ("skip_switch",) and got == [s for s in plan if s != "turn on the Microwave"]
    got, made = teacher_plan(t, t.env(), {"stop_early"})
    assert made == ("stop_early",) and got == plan[:-1]
    got, made = teacher_plan(t, t.env(), set(MISTAKES))
    assert len(got) == len(plan) - 3 and made == tuple(MISTAKES)
    # a habit that does not fit is not applied: look_at tasks switch on a lamp, not an appliance
    t2, plan2 = _task_with(tasks, "look_at_obj_in_light", "turn on the ")
    assert teacher_plan(t2, t2.env(), {"skip_switch"}) == (plan2, ())


def test_teacher_success_and_habits_over_a_fixed_task_set(tasks):
    """The teacher in the sim eval loop: with no habits it is the expert (every episode
    succeeds); with the default rates the share of episodes carrying each mistake
    matches its rate among the episodes whose plan it fits."""
    from groundrl.sim.evaluate import evaluate

    sub = tasks[:60]
    perfect = evaluate(sub, TeacherPolicy({k: 0.0 for k in MISTAKES}))
    assert all(r.success for r in perfect)
    pol = TeacherPolicy(DEFAULT_RATES, seed=3)
    applied = {k: 0 for k in MISTAKES}
    fits = {k: 0 for k in MISTAKES}
    for t in tasks:
        pol.reset(t, t.env())
        first = expert_steps(t, t.env())
        pol.plan(t.instruction, "", None, ())
        for k in MISTAKES:
            if teacher_plan(t, t.env(), {k})[1]:  # the kind fits this task's first plan
                fits[k] += 1
                applied[k] += k in pol.made[0]
        assert len(pol.made[0]) <= 3 and first  # every task has an expert plan
    for k, p in DEFAULT_RATES.items():
        share = applied[k] / fits[k]
        assert abs(share - p) <= 4 * math.sqrt(p * (1 - p) / fits[k]), (k, share, fits[k])
    res = evaluate(sub, TeacherPolicy(DEFAULT_RATES, seed=3))
    assert 0 < sum(r.success for r in res) < len(sub)  # imperfect, not useless


def test_counter_on_hand_built_traces():
    closed = "Last action is invalid. The Ladle is inside the closed Cabinet."
    assert count_mistakes(Trace(["find a Cabinet", "pick up the Ladle"], [OK, closed])) == {"skip_open"}
    rinse_skipped = Trace(
        ["find a Faucet", "put down the object in hand", "pick up the Mug", "find a Cabinet"],
        [OK, OK, OK, OK],
    )
    assert count_mistakes(rinse_skipped) == {"skip_switch"}
    rinsed = Trace(
        ["find a Faucet", "put down the object in hand", "turn on the Faucet", "pick up the Mug"], [OK] * 4
    )
    assert count_mistakes(rinsed) == set()
    # put down elsewhere and picked again: no appliance skipped
    assert (
        count_mistakes(Trace(["find a Shelf", "put down the object in hand", "pick up the Mug"], [OK] * 3))
        == set()
    )
    # a failed switch does not count as switching on
    failed_switch = Trace(
        ["find a Microwave", "put down the object in hand", "turn on the Microwave", "pick up the Mug"],
        [OK, OK, "Last action is invalid. The Microwave is open.", OK],
    )
    assert count_mistakes(failed_switch) == {"skip_switch"}
    assert count_mistakes(Trace(["find a Shelf"], [OK], success=False, remaining=1)) == {"stop_early"}
    assert count_mistakes(Trace(["find a Shelf"], [OK], success=False, remaining=2)) == set()
    assert count_mistakes(Trace([], [], success=True, remaining=0)) == set()
    both = Trace(
        ["find a Fridge", "put down the object in hand"],
        [OK, "Last action is invalid. The Fridge is closed."],
    )
    both.remaining = 1
    assert count_mistakes(both) == {"skip_open", "stop_early"}


def test_counter_on_replayed_hand_written_plans(tasks):
    """Plans written by hand, run in the environment, read back as the mistake made."""
    t, plan = _task_with(tasks, "pick_heat_then_place_in_recep", "open the Cabinet")
    assert count_mistakes(replay(t, ["\n".join(plan)])) == set()
    assert replay(t, ["\n".join(plan)]).success
    no_open = [s for s in plan if s != "open the Cabinet"]
    assert count_mistakes(replay(t, ["\n".join(no_open)])) == {"skip_open"}
    no_switch = [s for s in plan if s != "turn on the Microwave"]
    assert count_mistakes(replay(t, ["\n".join(no_switch)])) == {"skip_switch"}
    short = replay(t, ["\n".join(plan[:-1]), ""])  # one step short, then an empty re-plan
    assert short.remaining == 1 and count_mistakes(short) == {"stop_early"}
    assert count_mistakes(replay(t, ["\n".join(plan[:-2])])) == set()  # two short: another failure


def test_bad_rates_name_the_key():
    with pytest.raises(ValueError, match="skip_opn"):
        check_rates({"skip_opn": 0.5})
    with pytest.raises(ValueError, match="stop_early=1.5"):
        check_rates({"stop_early": 1.5})
    with pytest.raises(ValueError, match="skip_open"):
        TeacherPolicy({"skip_open": -0.1})
