"""Policies: the expert in every vocabulary, gold, seeded random, the plans file, and
the model seam (a scripted backend, and the real OpenAI backend against a local server)."""

from __future__ import annotations

import json
import re

import pytest

from groundrl.judges.base import Generation
from groundrl.sim.evaluate import evaluate, run_episode, summarise
from groundrl.sim.generate import generate_tasks
from groundrl.sim.goals import Goal
from groundrl.sim.policies import (
    ExpertPolicy,
    FilePolicy,
    GoldPolicy,
    ModelPolicy,
    PolicyOptions,
    RandomPolicy,
    build_prompt,
    make_model_policy,
    make_policy,
)
from groundrl.sim.skills import Skill
from groundrl.sim.tasks import Task, load_tasks
from groundrl.sim.vocab import VOCABS, action_space
from groundrl.sim.world import Obj, Scene

FRIDGE_PLAN = [
    "find a Apple",
    "pick up the Apple",
    "find a Fridge",
    "open the Fridge",
    "put down the object in hand",
]


def apple_in_fridge(tid: str = "A") -> Task:
    scene = Scene(
        "kitchen",
        [
            Obj("CounterTop_1", "CounterTop"),
            Obj("Fridge_1", "Fridge"),
            Obj("Apple_1", "Apple", "CounterTop_1"),
        ],
    )
    return Task(tid, "Put an apple in the fridge.", scene, Goal("pick_and_place_simple", "Apple", "Fridge"))


@pytest.fixture(scope="module")
def tasks():
    return generate_tasks(12, seed=11)  # two per subset


@pytest.mark.parametrize("vocab", VOCABS)
def test_expert_succeeds_in_every_vocabulary(tasks, vocab):
    pol = ExpertPolicy(vocab)
    res = evaluate(tasks, pol)
    assert [r.success for r in res] == [True] * len(tasks)
    assert all(r.planner_calls == 1 and r.invalid_steps == 0 for r in res)
    assert len(pol.plan_seconds) == len(tasks)


def test_expert_plans_the_shortest_route_on_a_hand_task():
    r = run_episode(apple_in_fridge(), ExpertPolicy())
    assert (r.success, r.env_steps) == (True, 5)  # find, pick up, find, open, put
    assert [f.action for f in r.history] == FRIDGE_PLAN


def test_expert_replans_from_an_exact_snapshot_and_gives_up_otherwise():
    task = apple_in_fridge()
    env = task.env()
    env.step(Skill("find", "Fridge"))
    env.step(Skill("open", "Fridge"))
    pol = ExpertPolicy()
    pol.reset(task, env)
    # the fridge is already open: 4 steps remain (find, pick up, find, put)
    assert pol.plan(task.instruction, env.observation(), None, []) == [
        "find a Apple",
        "pick up the Apple",
        "find a Fridge",
        "put down the object in hand",
    ]
    env.step(Skill("find", "Apple"))
    env.step(Skill("pickup", "Apple"))  # a scene cannot hold "in hand"
    assert pol.plan(task.instruction, env.observation(), None, []) == []
    with pytest.raises(ValueError, match="expert vocab"):
        ExpertPolicy("klingon")


def test_gold_runs_the_tasks_own_plan_once(tasks):
    res = evaluate(tasks, GoldPolicy())
    assert all(r.success and r.planner_calls == 1 for r in res)
    no_gold = apple_in_fridge()
    r = run_episode(no_gold, GoldPolicy())
    assert (r.end, r.env_steps, r.planner_calls) == ("empty plan", 0, 1)


def test_gold_on_alfred_trajectories_and_splits(external_data):
    traj = load_tasks(external_data / "embodiedbrain" / "traj_data")
    res = evaluate(traj, GoldPolicy())
    assert len(res) == 11 and all(r.success for r in res) and {r.vocab for r in res} == {"high_pddl"}
    splits = load_tasks(external_data / "eb-alfred" / "splits.json", limit=5)
    assert [r.end for r in evaluate(splits, GoldPolicy())] == ["empty plan"] * 5


def test_random_is_seeded_per_task_and_uses_the_scene_actions(tasks):
    def plans(pol, order):
        out = {}
        for t in order:
            pol.reset(t, t.env())
            out[t.id] = [pol.plan("", "", None, []) for _ in range(3)]
        return out

    a = plans(RandomPolicy(seed=4, length=6), tasks)
    b = plans(RandomPolicy(seed=4, length=6), list(reversed(tasks)))
    c = plans(RandomPolicy(seed=5, length=6), tasks)
    assert a == b  # independent of which tasks ran before
    assert a != c
    for t in tasks:
        names = set(action_space(t.scene).values())
        assert all(len(p) == 6 and set(p) <= names for p in a[t.id])
    with pytest.raises(ValueError, match="length"):
        RandomPolicy(length=0)


def test_random_does_worse_than_the_expert(tasks):
    rnd = summarise(evaluate(tasks, RandomPolicy(seed=0)))
    exp = summarise(evaluate(tasks, ExpertPolicy()))
    assert exp["success_rate"] == 1.0 and rnd["success_rate"] < 0.5
    assert rnd["progress_rate"] < exp["progress_rate"]
    assert rnd["invalid_steps"] > 0


def test_file_policy_hand_plans(tmp_path):
    p = tmp_path / "plans.jsonl"
    lines = [
        {"id": "A", "plan": "\n".join(FRIDGE_PLAN)},  # text
        {"id": "B", "plan": ["pick up the Apple", *FRIDGE_PLAN]},  # fails at once: open loop, no re-plan
        {"id": "C", "plan": [["Pick", "Apple"], ["Place", "Apple", "Fridge"]], "vocab": "embodied_brain"},
    ]
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    pol = FilePolicy(p)
    res = evaluate([apple_in_fridge(t) for t in ("A", "B", "C", "D")], pol)
    # C: Pick walks to the apple (find + pickup), Place walks to the fridge (find) but it is closed
    assert [(r.success, r.env_steps, r.invalid_steps, r.end) for r in res] == [
        (True, 5, 0, "success"),
        (False, 1, 1, "empty plan"),
        (False, 4, 1, "empty plan"),
        (False, 0, 0, "empty plan"),
    ]
    assert pol.missing == ["D"]


@pytest.mark.parametrize(
    "content, match",
    [
        ('{"id": "A"}\n', "line|:1"),
        ("not json\n", ":1"),
        ('{"id": "A", "plan": []}\n{"id": "A", "plan": []}\n', "second plan"),
        ('{"id": "A", "plan": [], "vocab": "morse"}\n', "unknown vocab"),
    ],
)
def test_file_policy_rejects_bad_files(tmp_path, content, match):
    p = tmp_path / "plans.jsonl"
    p.write_text(content)
    with pytest.raises(ValueError, match=match):
        FilePolicy(p)


def test_file_policy_missing_file(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        FilePolicy(tmp_path / "nope.jsonl")


class ScriptedBackend:
    """A judge backend stand-in: answers from a function of the request."""

    def __init__(self, answer) -> None:
        self.answer, self.requests = answer, []

    def generate(self, requests, params=None):
        self.requests.extend(requests)
        return [self.answer(r) for r in requests]


def _text_of(request) -> str:
    return "\n".join(p["text"] for p in request[-1]["content"] if p.get("type") == "text")


def test_model_policy_prompt_replans_and_failures():
    task = apple_in_fridge()
    answers = iter(
        [
            Generation([], "HTTP 503"),  # a failed request: an unreadable answer
            Generation(['{"executable_plan": [{"action_id": 0, "action_name": "pick up the Apple"}]}']),
            Generation(
                [
                    json.dumps(
                        {"language_plan": "go", "executable_plan": [{"action_name": a} for a in FRIDGE_PLAN]}
                    )
                ]
            ),
        ]
    )
    backend = ScriptedBackend(lambda r: next(answers))
    pol = ModelPolicy(backend, image=True)
    r = run_episode(task, pol)
    assert (r.success, r.planner_calls, r.output_errors, r.env_steps, r.invalid_steps) == (True, 3, 1, 6, 2)
    assert pol.failures == ["HTTP 503"]
    first, third = backend.requests[0], backend.requests[2]
    assert first[0]["role"] == "system" and "find a X" in first[0]["content"]
    assert first[1]["content"][0]["image"].size == (448, 448)
    text = _text_of(first)
    for k, name in action_space(task.scene).items():
        assert f"{k}: {name}" in text
    assert "Instruction: Put an apple in the fridge." in text and "Action history" not in text
    hist = _text_of(third)
    assert "Step 2: pick up the Apple -> Last action is invalid. You are not near the Apple." in hist
    with pytest.raises(ValueError, match="generate"):
        ModelPolicy(object())


def test_build_prompt_keeps_the_last_history_entries():
    from groundrl.sim.policies import Feedback

    hist = [Feedback(f"find a X{i}", "Last action executed successfully.") for i in range(30)]
    msgs = build_prompt("do it", "obs", hist, {0: "find a Apple"}, image=None, max_history=3)
    text = _text_of(msgs)
    assert "Step 28: find a X27" in text and "Step 30: find a X29" in text and "X26" not in text
    assert all(p["type"] == "text" for p in msgs[1]["content"])


def test_model_policy_through_the_openai_backend(chat_server, tasks):
    """The real HTTP path: a local OpenAI-compatible server answers each request with
    the expert's plan for the instruction it reads in the prompt."""
    gold = {t.instruction: t.gold_plan for t in tasks}

    def respond(messages, body):
        text = _text_of(messages)
        instr = re.search(r"^Instruction: (.*)$", text, re.M).group(1)
        return json.dumps({"executable_plan": [{"action_name": a} for a in gold[instr]]})

    chat_server.responder = respond
    chat_server.delay = 0.05  # so that a batch's requests overlap
    pol = make_model_policy("openai", "planner", chat_server.base_url, image=True, max_tokens=64)
    res = evaluate(tasks[:4], pol, batch_size=3)
    assert [r.success for r in res] == [True] * 4
    assert len(chat_server.requests) == 4 and chat_server.max_in_flight >= 2  # batched, concurrent
    parts = chat_server.requests[0]["messages"][1]["content"]
    assert parts[0]["type"] == "image_url" and parts[0]["image_url"]["url"].startswith("data:image/png")
    assert chat_server.requests[0]["max_tokens"] == 64


def test_make_policy_names_and_errors(tmp_path):
    assert isinstance(make_policy("expert"), ExpertPolicy)
    assert make_policy("expert", PolicyOptions(expert_vocab="reinforced")).name == "expert[reinforced]"
    assert isinstance(make_policy("gold"), GoldPolicy)
    assert make_policy("random", PolicyOptions(seed=3, random_length=2)).length == 2
    with pytest.raises(ValueError, match="--plans"):
        make_policy("file")
    with pytest.raises(ValueError, match="--judge-backend"):
        make_policy("model")
    with pytest.raises(ValueError, match="choose one of"):
        make_policy("oracle")
    with pytest.raises(ValueError, match="--judge-url"):
        make_policy("model", PolicyOptions(judge_backend="openai", judge_model="m"))


def test_model_policy_takes_a_registered_plugin_backend(tmp_path):
    """--policy model builds its backend through JudgeConfig and the judge-backend registry,
    so a plugin backend plans episodes too (it used to go through judges.factory, which
    knew only openai and transformers)."""
    from groundrl.judges.registry import register_judge_backend, unregister_judge_backend

    tasks = generate_tasks(2, seed=0)
    gold = {t.instruction: [f"find a {t.goal.obj}"] for t in tasks}
    seen = []

    class Scripted:
        def __init__(self, config):
            seen.append(config.model)

        def generate(self, requests, params):
            out = []
            for msgs in requests:
                text = _text_of(msgs)
                instr = re.search(r"^Instruction: (.*)$", text, re.M).group(1)
                plan = {"executable_plan": [{"action_name": a} for a in gold[instr]]}
                out.append(Generation(texts=[json.dumps(plan)]))
            return out

    register_judge_backend("scripted-planner", Scripted)
    try:
        pol = make_model_policy("scripted-planner", "my-model", image=False)
        res = evaluate(tasks, pol, batch_size=2)
    finally:
        unregister_judge_backend("scripted-planner")
    assert seen == ["my-model"] and len(res) == 2
    assert all(r.env_steps >= 1 and r.output_errors == 0 for r in res)  # each plan ran in the simulator
    with pytest.raises(ValueError, match="unknown judge backend .scripted-planner.; choose one of"):
        make_model_policy("scripted-planner", "m")  # unregistered again
