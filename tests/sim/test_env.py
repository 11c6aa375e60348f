"""The Gymnasium environment: check_env, hand-worked episodes (rewards, budgets,
feedback), every vocabulary, and the vector form."""

from __future__ import annotations

import ast
import json

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from groundrl.sim.env import ENV_ID, HouseholdEnv, HouseholdVectorEnv  # noqa: E402
from groundrl.sim.generate import generate_tasks  # noqa: E402
from groundrl.sim.goals import Goal  # noqa: E402
from groundrl.sim.planner import expert_plan  # noqa: E402
from groundrl.sim.reward import sim_reward  # noqa: E402
from groundrl.sim.tasks import Task  # noqa: E402
from groundrl.sim.vocab import VOCABS, format_plan, render_plan  # noqa: E402
from groundrl.sim.world import Obj, Scene  # noqa: E402

OK = "Last action executed successfully."


def apple_task(tid: str = "A") -> Task:
    scene = Scene(
        "kitchen",
        [
            Obj("CounterTop_1", "CounterTop"),
            Obj("DiningTable_1", "DiningTable"),
            Obj("Fridge_1", "Fridge"),
            Obj("Apple_1", "Apple", "CounterTop_1"),
        ],
    )
    return Task(tid, "Put an apple in the fridge.", scene, Goal("pick_and_place_simple", "Apple", "Fridge"))


PLAN = [
    "find a Apple",
    "pick up the Apple",
    "find a Fridge",
    "open the Fridge",
    "put down the object in hand",
]


def test_check_env_passes_text_and_image():
    check_env(HouseholdEnv([apple_task()]), skip_render_check=True)
    check_env(HouseholdEnv([apple_task()], image=True, render_mode="rgb_array"))
    env = gym.make(ENV_ID, tasks=[apple_task()])
    obs, info = env.reset(seed=3)
    assert info["task_id"] == "A" and obs["instruction"] == "Put an apple in the fridge."


def test_progress_rewards_and_termination_hand_worked():
    env = HouseholdEnv([apple_task()], reward="progress", success_bonus=1.0)
    obs, info = env.reset(seed=0)
    assert obs["feedback"] == "" and info["conditions"] == (0, 1) and info["steps"] == 0
    assert "Apple on the CounterTop" in obs["text"]
    rewards = []
    for a in PLAN:
        obs, r, term, trunc, info = env.step(a)
        rewards.append(r)
        assert obs["feedback"] == OK and not trunc
    # one condition (apple in a fridge): reached on the last step, +1 progress, +1 bonus
    assert rewards == [0.0, 0.0, 0.0, 0.0, 2.0]
    assert term and info["success"] and info["end"] == "success" and info["steps"] == 5
    assert (info["max_steps"], info["max_invalid"], info["invalid_steps"]) == (30, 10, 0)
    with pytest.raises(RuntimeError):
        env.step("find a Apple")


def test_sparse_reward_and_one_turn_with_many_actions_stops_at_the_first_failure():
    env = HouseholdEnv([apple_task()], reward="sparse", success_bonus=1.0)
    env.reset(seed=0)
    # a three-action turn: the second fails, so the third does not run
    obs, r, term, trunc, info = env.step("find a Fridge\npick up the Fridge\nfind a Apple")
    assert info["actions"] == ["find a Fridge", "pick up the Fridge"]
    assert info["feedback"][0] == OK and info["feedback"][1].startswith("Last action is invalid")
    assert obs["feedback"] == info["feedback"][1]
    assert (info["steps"], info["invalid_steps"], r, term, trunc) == (2, 1, 0.0, False, False)
    *_, info = env.step("\n".join(PLAN))
    assert info["success"] and info["steps"] == 7


def test_invalid_and_step_budgets_truncate():
    env = HouseholdEnv([apple_task()], max_invalid=2, invalid_penalty=0.5)
    env.reset(seed=0)
    _, r1, te, tr, info = env.step("fly to the moon")
    assert (r1, te, tr, info["invalid_steps"]) == (-0.5, False, False, 1)
    _, r2, te, tr, info = env.step("")
    assert (r2, te, tr, info["end"], info["invalid_steps"]) == (-0.5, False, True, "invalid budget", 2)

    env = HouseholdEnv([apple_task()], max_steps=3)
    env.reset(seed=0)
    flags = [env.step("find a Apple")[2:4] for _ in range(3)]
    assert flags == [(False, False), (False, False), (False, True)]
    assert env._info([], [], None)["end"] == "step budget"


def test_plan_reward_equals_sim_reward_of_the_whole_plan():
    task = apple_task()
    env = HouseholdEnv([task], reward="plan", success_bonus=1.0, max_steps=7)
    env.reset(seed=0)
    turns = [
        "find a Apple\npick up the Fridge",
        "pick up the Apple\nfind a Fridge",
        "put down the object in hand",
    ]
    rewards = []
    for a in turns:
        _, r, term, trunc, info = env.step(a)
        rewards.append(r)
    # the fridge is closed, so the put fails: 5 of 7 steps spent, 2 of them invalid
    assert rewards == [0.0, 0.0, 0.0] and not (term or trunc)
    _, r, term, trunc, info = env.step("open the Fridge\nput down the object in hand")
    assert term and (info["steps"], info["invalid_steps"]) == (7, 2)
    whole = sim_reward("\n".join(env.plan), task, max_steps=7)
    assert r == whole.value == 2.0


def test_every_vocabulary_one_action_per_turn():
    for task in generate_tasks(6, seed=5):
        for v in VOCABS:
            steps = format_plan(render_plan(expert_plan(task, macros=v == "reinforced"), v, task.scene), v)
            if v == "embodied_brain":
                inner = ast.literal_eval(steps[len("<actions>") : -len("</actions>")])
                steps = [f"<actions>[{s!r}]</actions>" for s in inner]
            env = HouseholdEnv([task], vocab=v)
            env.reset(seed=0)
            for s in steps:
                _, _, term, trunc, info = env.step(s if isinstance(s, str) else json.dumps(s))
                assert not trunc, (task.id, v, info["feedback"])
            assert term and info["invalid_steps"] == 0, (task.id, v)


def test_reset_draws_from_the_pool_with_the_seed():
    tasks = generate_tasks(8, seed=1)
    env = HouseholdEnv(tasks)
    a = [env.reset(seed=s)[1]["task_id"] for s in range(6)]
    b = [env.reset(seed=s)[1]["task_id"] for s in range(6)]
    assert a == b and len(set(a)) > 1
    assert env.reset(options={"task": tasks[3].id})[1]["task_id"] == tasks[3].id
    assert env.reset(options={"task": tasks[2].to_json()})[1]["task_id"] == tasks[2].id
    with pytest.raises(ValueError):
        env.reset(options={"task": "nope"})


def test_vector_env_steps_many_episodes_and_keeps_finished_ones_finished():
    tasks = [apple_task("A"), apple_task("B"), apple_task("C")]
    venv = HouseholdVectorEnv(3, tasks, reward="progress")
    obs, infos = venv.reset(seed=0, options={"tasks": ["A", "B", "C"]})
    assert infos["task_id"] == ["A", "B", "C"] and len(obs["text"]) == 3
    obs, r, term, trunc, infos = venv.step(["\n".join(PLAN), "find a Apple", "dance"])
    assert r.tolist() == [2.0, 0.0, 0.0] and term.tolist() == [True, False, False]
    assert infos["invalid_steps"] == [0, 0, 1]
    obs, r, term, trunc, infos = venv.step(["find a Apple", "pick up the Apple", "find a Apple"])
    assert r.tolist() == [0.0, 0.0, 0.0] and term.tolist() == [True, False, False]
    assert infos["_done"] == [True, False, False] and infos["steps"][0] is None
    assert venv.done.tolist() == [True, False, False]
    venv.reset(options={"reset_mask": np.array([True, False, False]), "tasks": ["B", None, None]})
    assert venv.done.tolist() == [False, False, False]
    assert venv.envs[0].task.id == "B" and venv.envs[1].sim.steps == 2
