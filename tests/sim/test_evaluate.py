"""The EB-ALFRED evaluation loop: re-planning after a failed step, budgets, unreadable
answers, empty plans, batching, and the metrics — on hand-built tasks with hand-worked
numbers."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundrl.sim.evaluate import EpisodeResult, evaluate, run_episode, summarise
from groundrl.sim.execute import execute
from groundrl.sim.generate import generate_tasks
from groundrl.sim.goals import Goal
from groundrl.sim.planner import expert_plan
from groundrl.sim.policies import Feedback
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import VOCABS, action_space, format_plan, render_plan
from groundrl.sim.world import Obj, Scene

OK = "Last action executed successfully."
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


def apple_in_fridge(tid: str = "A", subset: str = "base") -> Task:
    return Task(
        tid,
        "Put an apple in the fridge.",
        kitchen(),
        Goal("pick_and_place_simple", "Apple", "Fridge"),
        subset,
    )


def cool_apple(tid: str = "B", subset: str = "base") -> Task:
    goal = Goal("pick_cool_then_place_in_recep", "Apple", "CounterTop")
    return Task(tid, "Chill an apple and put it on the counter.", kitchen(), goal, subset)


class Scripted:
    """Answers the given plans in order, then the empty plan; records what it saw."""

    name = "scripted"

    def __init__(self, *answers, vocab: str = "auto", needs_image: bool = False) -> None:
        self.answers = list(answers)
        self.vocab, self.needs_image = vocab, needs_image
        self.seen: list[tuple] = []

    def plan(self, instruction, observation, image, feedback_history):
        self.seen.append((instruction, observation, image, tuple(feedback_history)))
        return self.answers.pop(0) if self.answers else []


def test_replans_after_the_first_failed_step_with_the_feedback():
    pol = Scripted(
        ["find a Apple", "put down the object in hand", "this step never runs"],
        ["pick up the Apple", "find a Fridge", "open the Fridge", "put down the object in hand"],
    )
    r = run_episode(apple_in_fridge(), pol)
    # round 1: find (ok), put (invalid: hand empty) -> stop; round 2: four steps -> success
    assert (r.success, r.progress, r.env_steps, r.invalid_steps, r.planner_calls, r.end) == (
        True,
        1.0,
        6,
        1,
        2,
        "success",
    )
    instruction, observation, image, history = pol.seen[1]
    assert instruction == "Put an apple in the fridge." and image is None
    assert "You are next to the Apple." in observation and "Your hand is empty." in observation
    assert [(f.action, f.feedback) for f in history] == [
        ("find a Apple", OK),
        ("put down the object in hand", "Last action is invalid. You are not holding anything."),
    ]
    assert pol.seen[0][3] == ()  # the first call has no history
    assert [f.ok for f in r.history] == [True, False, True, True, True, True]


def test_unreadable_answers_are_invalid_actions_without_env_steps():
    pol = Scripted("{not json", 42, "I would rather not.", FRIDGE_PLAN)
    r = run_episode(apple_in_fridge(), pol, max_invalid=3)
    assert (r.env_steps, r.invalid_steps, r.output_errors, r.planner_calls, r.success, r.end) == (
        0,
        3,
        3,
        3,
        False,
        "invalid budget",
    )
    assert all(f.feedback.startswith("Last action is invalid. No plan could be read") for f in r.history)


def test_an_unreadable_answer_then_a_good_plan_succeeds():
    r = run_episode(apple_in_fridge(), Scripted({"no": "plan"}, FRIDGE_PLAN))
    assert (r.success, r.env_steps, r.invalid_steps, r.output_errors, r.planner_calls) == (True, 5, 1, 1, 2)


@pytest.mark.parametrize("answer", [[], "", None, ["NoOp"], {"executable_plan": []}])
def test_an_empty_plan_ends_the_episode(answer):
    r = run_episode(apple_in_fridge(), Scripted(answer, FRIDGE_PLAN))
    assert (r.env_steps, r.planner_calls, r.end, r.success, r.progress) == (0, 1, "empty plan", False, 0.0)


def test_the_step_budget_truncates_a_plan():
    r = run_episode(apple_in_fridge(), Scripted(FRIDGE_PLAN), max_steps=3)
    assert (r.env_steps, r.end, r.success, r.progress, r.conditions) == (3, "step budget", False, 0.0, (0, 1))


def test_partial_progress_and_open_loop_end():
    # the apple is cooled (closing the fridge) but never put back on the counter: 1 of 3
    r = run_episode(cool_apple(), Scripted([*FRIDGE_PLAN, "close the Fridge"]))
    assert (r.success, r.conditions, r.env_steps, r.planner_calls, r.end) == (
        False,
        (1, 3),
        6,
        2,
        "empty plan",
    )
    assert r.progress == pytest.approx(1 / 3)


def test_a_policy_that_never_finishes_stops_at_the_step_budget():
    class Wander:
        name = "wander"

        def plan(self, *args):
            return ["find a Fridge"]

    r = run_episode(apple_in_fridge(), Wander())
    assert (r.env_steps, r.planner_calls, r.end, r.invalid_steps) == (30, 30, "step budget", 0)


def test_reset_is_called_and_images_are_rendered_when_asked():
    calls = []

    class WithReset(Scripted):
        def reset(self, task, env):
            calls.append((task.id, env.steps))

    pol = WithReset(FRIDGE_PLAN, needs_image=True)
    run_episode(apple_in_fridge("T7"), pol)
    assert calls == [("T7", 0)]
    assert pol.seen[0][2].size == (448, 448)


def test_action_ids_alone_are_looked_up_in_the_scene_action_list():
    amap = {name: k for k, name in action_space(kitchen()).items()}
    plan = {"executable_plan": [{"action_id": amap[a]} for a in FRIDGE_PLAN]}
    r = run_episode(apple_in_fridge(), Scripted(plan))
    assert (r.success, r.env_steps) == (True, 5)


def test_one_round_agrees_with_execute_in_every_vocabulary():
    # a valid plan runs in one round, so the loop and execute() must see the same world
    for task in generate_tasks(6, seed=3):
        for vocab in VOCABS:
            skills = expert_plan(task, macros=vocab == "reinforced")
            plan = format_plan(render_plan(skills, vocab, task.scene), vocab)
            ex = execute(task, plan)
            r = run_episode(task, Scripted(plan))
            assert (r.success, r.progress, r.env_steps, r.invalid_steps) == (
                ex.success,
                ex.progress,
                ex.steps,
                ex.invalid_steps,
            ), (task.id, vocab)
            # JSON plans are read as the EB-ALFRED action names they carry
            assert r.success and r.vocab == ("eb_alfred" if vocab == "eb_alfred_json" else vocab)


class Batched:
    """plan_batch over per-task scripts; records the size of every batch."""

    name = "batched"

    def __init__(self, scripts: dict[str, list]) -> None:
        self.scripts = {k: list(v) for k, v in scripts.items()}
        self.batches: list[list[str]] = []

    def plan(self, *args):  # pragma: no cover - the evaluator uses plan_batch
        raise AssertionError("plan_batch expected")

    def plan_batch(self, requests):
        self.batches.append([r.task.id for r in requests])
        out = []
        for r in requests:
            s = self.scripts[r.task.id]
            out.append(s.pop(0) if s else [])
        return out


def test_batched_policies_run_in_lockstep_with_the_same_results():
    tasks = [apple_in_fridge("A"), cool_apple("B"), apple_in_fridge("C")]
    scripts = {
        "A": [FRIDGE_PLAN],
        "B": [["find a Apple", "pick up the Apple"], ["find a Fridge", "open the Fridge"]],
        "C": [["pick up the Apple"], FRIDGE_PLAN],
    }
    pol = Batched(scripts)
    done: list[str] = []
    got = evaluate(tasks, pol, batch_size=2, on_result=lambda r: done.append(r.id))
    # round 1: A and B; A ends, C joins; ... results come back in task order
    assert pol.batches[0] == ["A", "B"] and pol.batches[1] == ["B", "C"]
    assert max(len(b) for b in pol.batches) == 2
    assert [r.id for r in got] == ["A", "B", "C"] and sorted(done) == ["A", "B", "C"]
    want = [run_episode(t, Scripted(*scripts[t.id])) for t in tasks]
    key = lambda r: (r.success, r.progress, r.env_steps, r.invalid_steps, r.planner_calls, r.end)  # noqa: E731
    assert [key(r) for r in got] == [key(r) for r in want]
    assert [key(r) for r in got] == [
        (True, 1.0, 5, 0, 1, "success"),
        (False, 0.0, 4, 0, 3, "empty plan"),
        (True, 1.0, 6, 1, 2, "success"),
    ]


def _res(tid, subset, tt, success, progress, steps, invalid=0, calls=1, end="success"):
    return EpisodeResult(tid, subset, tt, "", success, progress, (0, 0), steps, invalid, 0, calls, end)


def test_summarise_hand_values():
    rows = [
        _res("1", "base", "pick_and_place_simple", True, 1.0, 6),
        _res(
            "2",
            "base",
            "pick_cool_then_place_in_recep",
            False,
            1 / 3,
            30,
            invalid=2,
            calls=3,
            end="step budget",
        ),
        _res(
            "3", "spatial", "pick_and_place_simple", False, 0.0, 3, invalid=10, calls=10, end="invalid budget"
        ),
        _res("4", "spatial", "pick_and_place_simple", True, 1.0, 8, calls=2),
    ]
    m = summarise(rows)
    assert m["n_tasks"] == 4
    assert m["success_rate"] == 0.5
    assert m["progress_rate"] == pytest.approx((1 + 1 / 3 + 0 + 1) / 4)
    assert m["env_steps"] == (6 + 30 + 3 + 8) / 4
    assert m["invalid_steps"] == 3.0 and m["planner_calls"] == 4.0
    assert list(m["by_subset"]) == ["base", "spatial"]
    assert m["by_subset"]["base"] == {
        "n_tasks": 2,
        "success_rate": 0.5,
        "success_ci95": pytest.approx([0.0945, 0.9055], abs=1e-4),  # Wilson, 1 of 2
        "progress_rate": pytest.approx(2 / 3),
        "env_steps": 18.0,
        "invalid_steps": 1.0,
        "planner_calls": 2.0,
    }
    assert m["by_task_type"]["pick_and_place_simple"]["success_rate"] == pytest.approx(2 / 3)
    assert m["by_task_type"]["pick_and_place_simple"]["env_steps"] == pytest.approx(17 / 3)
    assert m["episode_ends"] == {"invalid budget": 1, "step budget": 1, "success": 2}
    assert summarise([])["n_tasks"] == 0 and summarise([])["success_rate"] == 0.0


def test_bad_settings_raise():
    with pytest.raises(ValueError, match="max_steps"):
        evaluate([apple_in_fridge()], Scripted(), max_steps=0)
    with pytest.raises(ValueError, match="no plan"):
        evaluate([apple_in_fridge()], object())


def test_results_serialise_with_their_history():
    r = run_episode(apple_in_fridge(), Scripted(["pick up the Apple"]))
    d = r.to_dict()
    assert d["history"] == [
        {
            "action": "pick up the Apple",
            "feedback": "Last action is invalid. You are not near the Apple.",
            "skill": "pickup(Apple)",
        }
    ]
    assert d["conditions"] == [0, 1] and "history" not in r.to_dict(history=False)
    assert isinstance(r.history[0], Feedback)


_ANSWER = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(max_size=60), st.sampled_from(FRIDGE_PLAN)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.dictionaries(st.sampled_from(["executable_plan", "action_id", "x"]), inner),
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_ANSWER, max_size=6))
def test_any_answers_end_in_a_result_within_the_budgets(answers):
    r = run_episode(cool_apple(), Scripted(*answers), max_steps=12, max_invalid=4)
    assert r.env_steps <= 12 and r.invalid_steps <= 4 and r.planner_calls <= len(answers) + 1
    assert 0.0 <= r.progress <= 1.0 and r.end in {"success", "empty plan", "step budget", "invalid budget"}
