"""Reinforced Reasoning SFT data from simulator tasks: the paper's JSON with ids from the
action map, only plans that succeed when executed, per-step decomposition, reasoning
distilled from an OpenAI-compatible teacher."""

import json

from groundrl.rewards.planning import reinforced_accuracy, reinforced_format
from groundrl.sim.tasks import generate_tasks
from groundrl.train import rr_sft_data
from groundrl.train.rr_sft_data import KEYS, rr_sft_records


def test_records_are_the_papers_json_and_execute():
    tasks = generate_tasks(3, seed=0)
    recs, amap, counts = rr_sft_records(tasks)
    assert counts["kept_tasks"] == 3 and counts["records"] == 3 and counts["template_reasoning"] == 3
    for r in recs:
        obj = json.loads(r["target"])
        assert tuple(obj) == KEYS
        assert [s["action_name"] for s in obj["executable_plan"]] == r["gold"]
        assert all(amap[s["action_id"]] == s["action_name"] for s in obj["executable_plan"])
        assert obj["language_plan"].splitlines()[0] == f"1. {r['gold'][0]}"
        # the prompt lists every action with its id (EB-ALFRED style), the plan's among them
        lines = r["prompt"].splitlines()
        assert lines[0].startswith("Available actions (id: name)")
        assert all(f"{s['action_id']}: {s['action_name']}" in lines for s in obj["executable_plan"])
        assert sum(1 for x in lines if x.split(":", 1)[0].isdigit()) == len(amap)
        assert "executable_plan" in r["prompt"] and r["prompt"].endswith("Plan:")
        # the recipe's own rewards give the maximum: format 0.5, accuracy 1.0
        assert reinforced_format(r["target"], amap).value == 0.5
        assert reinforced_accuracy(r["target"], r["gold"]).value == 1.0


def test_failing_plans_are_dropped(monkeypatch):
    tasks = generate_tasks(3, seed=0)
    real = rr_sft_data.target

    def broken(task, amap):  # the second task's plan loses its last step: the goal is not reached
        completion, names = real(task, amap)
        return (completion, names[:-1]) if task.id == tasks[1].id else (completion, names)

    monkeypatch.setattr(rr_sft_data, "target", broken)
    recs, _, counts = rr_sft_records(tasks)
    assert counts["failed_execution"] == 1 and counts["kept_tasks"] == 2
    assert [r["id"] for r in recs] == [tasks[0].id, tasks[2].id]


def test_per_step_decomposition():
    tasks = generate_tasks(2, seed=1)
    whole, amap, _ = rr_sft_records(tasks)
    steps, _, counts = rr_sft_records(tasks, per_step=True, amap=amap)
    assert counts["records"] == sum(len(r["gold"]) for r in whole)
    first = whole[0]["gold"]
    mine = [r for r in steps if r["id"].startswith(f"{tasks[0].id}/step")]
    assert [r["gold"] for r in mine] == [first[t:] for t in range(len(first))]
    assert "Done so far:\n1. " + first[0] in mine[1]["prompt"]
    # the state described is the one after the executed prefix: it differs from the start state
    assert (
        json.loads(mine[1]["target"])["visual_state_description"]
        != json.loads(mine[0]["target"])["visual_state_description"]
    )


def test_teacher_reasoning_from_an_openai_compatible_server(chat_server):
    from groundrl.judges.config import JudgeConfig

    chat_server.responder = lambda msgs, body: "I open the cabinet first because the knife is inside."
    backend = JudgeConfig.from_mapping(
        {"backend": "openai", "model": "teacher", "url": chat_server.base_url, "retries": 0}
    ).make_backend()
    try:
        recs, _, counts = rr_sft_records(generate_tasks(2, seed=0), teacher=backend)
    finally:
        backend.close()
    assert counts["teacher_reasoning"] == 2
    assert {json.loads(r["target"])["reasoning_and_reflection"] for r in recs} == {
        "I open the cabinet first because the knife is inside."
    }
    assert "Plan:" in chat_server.requests[0]["messages"][0]["content"]


def test_cli_writes_records_and_action_map(tmp_path):
    from typer.testing import CliRunner

    from groundrl.cli.main import app

    out = tmp_path / "rr.jsonl"
    r = CliRunner().invoke(app, ["curate", "rr-sft", "-o", str(out), "--n", "2", "--per-step"])
    assert r.exit_code == 0, r.output
    amap = json.loads((tmp_path / "rr.action_map.json").read_text())
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and all({"id", "prompt", "target", "gold"} <= set(x) for x in rows)
    assert all(str(s["action_id"]) in amap for x in rows for s in json.loads(x["target"])["executable_plan"])


def test_short_prompt_without_the_action_list():
    from groundrl.sim.episode_prompt import prompt

    tasks = generate_tasks(1, seed=0)
    recs, _, _ = rr_sft_records(tasks, list_actions=False)
    assert recs[0]["prompt"] == prompt(tasks[0]) and "Available actions" not in recs[0]["prompt"]
