"""``groundrl sim tasks`` and ``groundrl sim eval`` end to end (Typer's CliRunner)."""

from __future__ import annotations

import json
import re

import pytest
import typer
from typer.testing import CliRunner

from groundrl.cli.sim import app
from groundrl.sim.execute import execute
from groundrl.sim.goals import Goal
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import VOCABS
from groundrl.sim.world import Obj, Scene

runner = CliRunner()
WIDE = 4096  # PATH_MAX: no path in an error message wraps [ours]
KEYS = {"n_tasks", "success_rate", "progress_rate", "env_steps"}
FRIDGE_PLAN = [
    "find a Apple",
    "pick up the Apple",
    "find a Fridge",
    "open the Fridge",
    "put down the object in hand",
]


def run(*args: str):
    """The CLI on a terminal wider than any test path: error boxes hold whole lines, so
    a check on a message does not depend on where the checkout or tmp dir lies."""
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": str(WIDE)})


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    path = tmp_path_factory.mktemp("gen") / "sub" / "tasks.jsonl"
    r = run("tasks", "-o", path, "--n", 18, "--seed", 5)
    assert r.exit_code == 0, r.output
    return path


def test_tasks_export_gold_plans_in_every_vocabulary_that_succeed(generated):
    recs = [json.loads(line) for line in generated.read_text().splitlines()]
    assert len(recs) == 18 and len({r["id"] for r in recs}) == 18
    assert {r["subset"] for r in recs} == {
        "base", "common_sense", "complex_instruction", "spatial", "visual_appearance", "long_horizon"
    }  # fmt: skip
    for rec in recs:
        assert set(rec["gold_plans"]) == set(VOCABS)
        assert rec["action_map"]["0"].startswith("find a ")
        for vocab, plan in rec["gold_plans"].items():
            assert plan is not None, (rec["id"], vocab)
            res = execute(rec, plan)
            assert res.success and res.invalid_steps == 0, (rec["id"], vocab, res.feedback)
    again = generated.parent / "again.jsonl"
    assert run("tasks", "-o", again, "--n", 18, "--seed", 5).exit_code == 0
    assert again.read_text() == generated.read_text()  # same seed, same bytes


def test_eval_expert_and_random_on_generated_tasks(generated, tmp_path):
    out = {}
    for policy in ("expert", "random"):
        d = tmp_path / "runs" / policy
        r = run("eval", "--tasks", generated, "--policy", policy, "-o", d)
        assert r.exit_code == 0, r.output
        m = json.loads((d / "metrics.json").read_text())
        assert set(m) >= KEYS and set(m["by_subset"]) == {
            "base", "common_sense", "complex_instruction", "spatial", "visual_appearance", "long_horizon"
        }  # fmt: skip
        for group in (*m["by_subset"].values(), *m["by_task_type"].values()):
            assert set(group) >= KEYS
        assert sum(g["n_tasks"] for g in m["by_subset"].values()) == 18
        assert (d / "success.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "## By subset" in (d / "report.md").read_text()
        assert len((d / "results.jsonl").read_text().splitlines()) == 18
        assert "overall" in r.output and "success" in r.output
        out[policy] = m
    assert out["expert"]["success_rate"] == 1.0 and out["expert"]["progress_rate"] == 1.0
    assert out["random"]["success_rate"] < out["expert"]["success_rate"]
    assert out["random"]["progress_rate"] < 0.5


def hand_tasks(path):
    scene = Scene(
        "kitchen",
        [
            Obj("CounterTop_1", "CounterTop"),
            Obj("Fridge_1", "Fridge"),
            Obj("Apple_1", "Apple", "CounterTop_1"),
        ],
    )
    tasks = [
        Task(
            "A",
            "Put an apple in the fridge.",
            scene,
            Goal("pick_and_place_simple", "Apple", "Fridge"),
            "base",
        ),
        Task(
            "B",
            "Chill an apple.",
            scene,
            Goal("pick_cool_then_place_in_recep", "Apple", "CounterTop"),
            "base",
        ),
        Task(
            "C",
            "Put an apple in the fridge.",
            scene,
            Goal("pick_and_place_simple", "Apple", "Fridge"),
            "spatial",
        ),
    ]
    path.write_text("".join(json.dumps(t.to_json()) + "\n" for t in tasks))
    return path


def test_eval_file_policy_hand_computed(tmp_path):
    tasks = hand_tasks(tmp_path / "hand.jsonl")
    plans = tmp_path / "plans.jsonl"
    plans.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {"id": "A", "plan": FRIDGE_PLAN},  # success in 5 steps
                {
                    "id": "B",
                    "plan": "\n".join([*FRIDGE_PLAN, "close the Fridge"]),
                },  # cooled only: 1/3, 6 steps
                {"id": "C", "plan": ["pick up the Apple", *FRIDGE_PLAN]},  # fails at step 1, open loop ends
            ]
        )
    )
    d = tmp_path / "file"
    r = run("eval", "--tasks", tasks, "--policy", "file", "--plans", plans, "-o", d)
    assert r.exit_code == 0, r.output
    m = json.loads((d / "metrics.json").read_text())
    assert m["n_tasks"] == 3
    assert m["success_rate"] == pytest.approx(1 / 3)
    assert m["progress_rate"] == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert m["env_steps"] == pytest.approx((5 + 6 + 1) / 3)
    assert m["invalid_steps"] == pytest.approx(1 / 3)
    assert m["by_subset"]["base"]["success_rate"] == 0.5
    assert m["by_subset"]["spatial"] == {
        "n_tasks": 1,
        "success_rate": 0.0,
        "success_ci95": pytest.approx([0.0, 0.7935], abs=1e-4),  # Wilson, 0 of 1
        "progress_rate": 0.0,
        "env_steps": 1.0,
        "invalid_steps": 1.0,
        "planner_calls": 2.0,  # the plan, then the empty answer that ends the episode
    }
    assert m["by_task_type"]["pick_cool_then_place_in_recep"]["progress_rate"] == pytest.approx(1 / 3)
    rows = [json.loads(line) for line in (d / "results.jsonl").read_text().splitlines()]
    assert rows[2]["history"][0]["feedback"] == "Last action is invalid. You are not near the Apple."
    # a task with no line in the plans file is scored as an empty plan, and said so
    plans.write_text(json.dumps({"id": "A", "plan": FRIDGE_PLAN}) + "\n")
    r = run("eval", "--tasks", tasks, "--policy", "file", "--plans", plans, "-o", d)
    assert r.exit_code == 0 and "2 task(s) had no plan" in r.output
    assert json.loads((d / "metrics.json").read_text())["tasks_without_plan"] == 2


def test_eval_on_the_eb_alfred_splits(external_data, tmp_path):
    splits = external_data / "eb-alfred" / "splits.json"
    d = tmp_path / "expert"
    r = run("eval", "--tasks", splits, "--policy", "expert", "--per-subset", 5, "-o", d)
    assert r.exit_code == 0, r.output
    m = json.loads((d / "metrics.json").read_text())
    assert m["n_tasks"] == 30 and m["success_rate"] == 1.0 and m["progress_rate"] == 1.0
    assert {k: v["n_tasks"] for k, v in m["by_subset"].items()} == {
        s: 5
        for s in (
            "base",
            "common_sense",
            "complex_instruction",
            "long_horizon",
            "spatial",
            "visual_appearance",
        )
    }
    d = tmp_path / "random"
    r = run("eval", "--tasks", splits, "--policy", "random", "--seed", 1, "-o", d)
    assert r.exit_code == 0, r.output
    rnd = json.loads((d / "metrics.json").read_text())
    assert rnd["n_tasks"] == 300 and rnd["success_rate"] < 0.1 and rnd["progress_rate"] < 0.2
    assert m["config"]["policy"] == "expert" and rnd["config"]["seed"] == 1
    # splits carry no gold plan: asking for it is an error that says what to do
    r = run("eval", "--tasks", splits, "--policy", "gold", "-o", tmp_path / "g")
    assert r.exit_code != 0 and "no gold plan" in r.output


def test_eval_gold_on_alfred_trajectories(external_data, tmp_path):
    r = run(
        "eval", "--tasks", external_data / "embodiedbrain" / "traj_data", "--policy", "gold", "-o", tmp_path
    )
    assert r.exit_code == 0, r.output
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert m["n_tasks"] == 11 and m["success_rate"] == 1.0


def test_eval_model_policy_against_a_local_server(chat_server, tmp_path):
    tasks = hand_tasks(tmp_path / "hand.jsonl")
    chat_server.responder = lambda msgs, body: json.dumps(
        {"executable_plan": [{"action_name": a} for a in FRIDGE_PLAN]}
    )
    d = tmp_path / "model"
    r = run(
        "eval", "--tasks", tasks, "--policy", "model", "--judge-backend", "openai", "--judge-model", "m",
        "--judge-url", chat_server.base_url, "--no-image", "-o", d,
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    m = json.loads((d / "metrics.json").read_text())
    # A and C succeed with the fridge plan; B never gets cold (the fridge stays open) and the
    # same plan, asked again and again, fails early each time until a budget ends the episode
    assert m["by_task_type"]["pick_and_place_simple"]["success_rate"] == 1.0
    assert m["by_task_type"]["pick_cool_then_place_in_recep"]["success_rate"] == 0.0
    assert m["episode_ends"] == {"invalid budget": 1, "success": 2}
    assert all(p.get("type") != "image_url" for p in chat_server.requests[0]["messages"][1]["content"])


@pytest.mark.parametrize(
    "args, message",
    [
        (["--policy", "model"], "--judge-backend"),
        (["--policy", "file"], "--plans"),
        (["--policy", "telepathy"], "choose one of"),
        (["--policy", "expert", "--subsets", "nothing_like_this"], "no tasks"),
        (["--policy", "expert", "--expert-vocab", "morse"], "expert vocab"),
    ],
)
def test_eval_bad_options_say_what_to_change(tmp_path, args, message):
    tasks = hand_tasks(tmp_path / "hand.jsonl")
    r = run("eval", "--tasks", tasks, "-o", tmp_path / "o", *args)
    assert r.exit_code != 0
    assert message in re.sub(r"[\s│╭╮╰╯─]+", " ", r.output).replace("' ", "'")


def test_eval_and_tasks_reject_bad_sources(tmp_path):
    (tmp_path / "empty").mkdir()
    assert run("eval", "--tasks", tmp_path / "empty", "--policy", "expert").exit_code != 0
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "tasks"}')
    assert run("eval", "--tasks", bad, "--policy", "expert").exit_code != 0
    assert run("tasks", "-o", tmp_path / "t.jsonl", "--subsets", "nope").exit_code != 0


def test_every_option_has_help():
    cmd = typer.main.get_command(app)
    for name, sub in cmd.commands.items():
        assert sub.help, name
        for p in sub.params:
            assert getattr(p, "help", None), f"{name} {p.name}"
    r = run("eval", "--help")
    assert r.exit_code == 0 and "--per-subset" in r.output and "--max-invalid" in r.output


def test_tasks_from_an_existing_source(external_data, tmp_path):
    out = tmp_path / "eb.jsonl"
    r = run("tasks", "--from", external_data / "eb-alfred" / "splits.json", "--subsets", "spatial", "--limit", 4,
            "-o", out)  # fmt: skip
    assert r.exit_code == 0, r.output
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in recs] == ["spatial/0", "spatial/1", "spatial/2", "spatial/3"]
    r = run("tasks", "--from", external_data / "eb-alfred" / "splits.json", "--limit", 3, "-o", out)
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(recs) == 3 and recs[0]["id"] == "base/0" and recs[0]["gold_vocab"] == "eb_alfred"
    assert all(execute(rec, rec["gold_plan"]).success for rec in recs)
