import json

from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.sim.generate import generate_tasks
from groundrl.sim.render import render_scene
from groundrl.sim.reward import sim_reward

runner = CliRunner()


def test_tasks_then_eval_expert_random_and_file(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    r = runner.invoke(app, ["sim", "tasks", "-o", str(tasks), "--n", "12", "--seed", "5"])
    assert r.exit_code == 0, r.output
    recs = [json.loads(line) for line in tasks.read_text().splitlines()]
    assert len(recs) == 12 and set(recs[0]["gold_plans"]) == {
        "eb_alfred",
        "eb_alfred_json",
        "reinforced",
        "embodied_brain",
        "high_pddl",
    }
    out = {}
    for policy in ("expert", "random"):
        d = tmp_path / policy
        r = runner.invoke(app, ["sim", "eval", "--tasks", str(tasks), "--policy", policy, "-o", str(d)])
        assert r.exit_code == 0, r.output
        out[policy] = json.loads((d / "metrics.json").read_text())
        assert {"n_tasks", "success_rate", "progress_rate", "env_steps", "by_subset"} <= set(out[policy])
        assert (d / "report.md").exists() and (d / "success.png").stat().st_size > 1000
    assert out["expert"]["success_rate"] == 1.0 and out["expert"]["n_tasks"] == 12
    assert out["random"]["success_rate"] < 0.5
    # file policy: the first task gets its gold, the second an empty plan, the rest nothing
    plans = tmp_path / "plans.jsonl"
    plans.write_text(
        json.dumps({"id": recs[0]["id"], "plan": recs[0]["gold_plans"]["reinforced"]})
        + "\n"
        + json.dumps({"id": recs[1]["id"], "plan": []})
        + "\n"
    )
    r = runner.invoke(
        app,
        [
            "sim",
            "eval",
            "--tasks",
            str(tasks),
            "--policy",
            "file",
            "--plans",
            str(plans),
            "-o",
            str(tmp_path / "f"),
            "--limit",
            "2",
        ],
    )
    assert r.exit_code == 0, r.output
    m = json.loads((tmp_path / "f" / "metrics.json").read_text())
    assert m["n_tasks"] == 2 and m["success_rate"] == 0.5


def test_eval_on_alfred_trajectories_with_gold(tmp_path, external_data):
    r = runner.invoke(
        app,
        [
            "sim",
            "eval",
            "--tasks",
            str(external_data / "embodiedbrain" / "traj_data"),
            "--policy",
            "gold",
            "-o",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 0, r.output
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert m["n_tasks"] == 11 and m["success_rate"] == 1.0 and m["env_steps"] == 10


def test_eval_bad_inputs(tmp_path):
    r = runner.invoke(app, ["sim", "eval", "--tasks", str(tmp_path), "--policy", "expert"])
    assert r.exit_code != 0
    t = tmp_path / "t.jsonl"
    t.write_text("")
    r = runner.invoke(app, ["sim", "eval", "--tasks", str(t), "--policy", "file"])
    assert r.exit_code != 0 and "--plans" in r.output


def test_sim_reward():
    task = generate_tasks(1, seed=9)[0]
    gold = "\n".join(task.gold_plan)
    s = sim_reward(gold, task.to_json())
    assert s.value == 2.0  # progress 1 + success bonus 1
    assert sim_reward(gold, task, success_bonus=0.5).value == 1.5
    assert sim_reward("", task).value == 0.0
    assert sim_reward("find a Unicorn", task).value == 0.0
    assert sim_reward(gold, None).value is None


def test_render_scene():
    env = generate_tasks(1, seed=2)[0].env()
    img = render_scene(env)
    assert img.size == (448, 448) and len(set(img.getdata())) > 3
