"""Proxy-GRM: the proxy reward in policy training (live, dead and unparseable proxy),
proxy-agent data steps and the Proxy-SFT → Proxy-RL preset."""

import json
import socket
from pathlib import Path

import pytest
import yaml

from groundrl.train.config import read_config

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path, preset, recipe, edit):
    from typer.testing import CliRunner

    from groundrl.cli.main import app

    cfg = read_config(ROOT / preset)
    cfg["data"] = str(ROOT / cfg["data"])
    cfg["output_dir"] = str(tmp_path / "run")
    edit(cfg)
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    res = CliRunner().invoke(app, ["train", recipe, "--config", str(path)])
    assert res.exit_code == 0, res.output
    return [json.loads(x) for x in (tmp_path / "run" / "log.jsonl").read_text().splitlines()]


def _one_step(cfg):
    cfg["stages"][0]["grpo"]["max_steps"] = 1


@pytest.fixture
def rubric_first(monkeypatch):
    """The random tiny policy never closes a rubric, and a rubric-less completion never
    reaches the proxy (-1 without a call, Proxy-GRM Eq. 7): give every completion a
    rubric block so the proxy path itself runs."""
    import groundrl.train.proxy_reward as pr

    real = pr.completion_text
    monkeypatch.setattr(pr, "completion_text", lambda c: "<rubric>count the chairs</rubric>" + real(c))


def test_policy_grpo_with_the_proxy_on_a_local_server(tmp_path, chat_server, rubric_first):
    chat_server.responder = lambda msgs, body: "<think>by the rubric</think><answer>1</answer>"

    def edit(cfg):
        _one_step(cfg)
        cfg["judge"]["url"] = chat_server.base_url

    rows = _run(tmp_path, "configs/cpu-tiny/proxy_grm_pipeline.yaml", "proxy_grm", edit)
    step = next(r for r in rows if "loss" in r)
    # every sample prefers response 1 and the proxy always picks 1: proxy = +1
    assert step["rewards/proxy/mean"] == pytest.approx(1.0) and step["proxy/failures"] == 0
    assert len(chat_server.requests) == 4  # one proxy call per completion of the batch
    text = chat_server.requests[0]["messages"][-1]["content"][-1]["text"]
    assert "[Rubric]" in text and "How many chairs?" in text


def test_dead_proxy_leaves_rows_unscored_counted_and_training_continues(tmp_path, rubric_first):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    def edit(cfg):
        _one_step(cfg)
        cfg["judge"]["url"] = f"http://127.0.0.1:{port}/v1"

    rows = _run(tmp_path, "configs/cpu-tiny/proxy_grm_pipeline.yaml", "proxy_grm", edit)
    step = next(r for r in rows if "loss" in r)
    # retried, then unscored: no proxy reward at all (never a silent 0), counted
    assert step["proxy/failures"] == 4.0 and step["proxy/unscored"] == 4.0
    assert step["rewards/proxy/mean"] != 0.0  # NaN: no row was scored
    assert (tmp_path / "run" / "final").is_dir()


class StubAgent:
    def __init__(self, answers):
        self.answers = answers
        self.seen = []

    def verdicts(self, items, rubrics):
        self.seen.append(rubrics)
        return self.answers


def test_unparseable_answers_penalty_zero_or_released():
    from groundrl.train.proxy_reward import proxy_reward

    answers = [(1, ""), (2, ""), (None, "proxy answer unparseable: x"), (None, "proxy call failed: down")]
    cols = {
        "query": ["q"] * 4,
        "response_1": ["a"] * 4,
        "response_2": ["b"] * 4,
        "preferred": [1, 1, 1, 1],
    }
    comps = ["<rubric>R</rubric><eval>E</eval><answer>1</answer>"] * 4
    for mode, bad in (("penalty", -1.0), ("zero", 0.0), ("released", -1.0)):
        agent = StubAgent(answers)
        logged = {}
        f = proxy_reward(agent, mode, retries=0)
        assert f(completions=comps, log_metric=logged.__setitem__, **cols) == [1.0, -1.0, bad, None]
        assert logged == {
            "proxy/failures": 1.0,
            "proxy/unscored": 1.0,
            "proxy/unparseable": 1.0,
            "proxy/policy_failures": 0.0,
        }
        assert agent.seen[0] == ["<rubric>R</rubric>"] * 4  # the rubric only, never the evaluation
    with pytest.raises(ValueError):
        proxy_reward(StubAgent([]), "minus")


def test_proxy_records_and_teacher_distillation_from_the_cli(tmp_path):
    from typer.testing import CliRunner

    from groundrl.cli.main import app

    pair = {"query": "q", "response_1": "a", "response_2": "b", "preferred": 2}
    grm = [
        {"id": "0", **pair, "output": "<rubric>check b</rubric><eval>b is right</eval><answer>2</answer>"},
        {"id": "1", **pair, "output": "<eval>no rubric</eval><answer>2</answer>"},
    ]
    src = tmp_path / "grm.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in grm))
    out = tmp_path / "proxy.jsonl"
    res = CliRunner().invoke(app, ["curate", "proxy-records", str(src), "-o", str(out), "-q"])
    assert res.exit_code == 0, res.output
    recs = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["status"] for r in recs] == ["kept", "no_rubric"]
    assert recs[0]["rubric"] == "<rubric>check b</rubric>" and "eval" not in json.dumps(recs[0])
    teach = [
        {
            **recs[0],
            "id": "t0",
            "teacher_outputs": ["<think>t</think><answer>1</answer>", "<think>t</think><answer>2</answer>"],
        },
        {**recs[0], "id": "t1", "teacher_output": "<answer>2</answer>"},
        {**recs[0], "id": "t2", "teacher_output": "<think>t</think><answer>1</answer>"},
    ]
    src2 = tmp_path / "teach.jsonl"
    src2.write_text("".join(json.dumps(r) + "\n" for r in teach))
    out2 = tmp_path / "distilled.jsonl"
    res = CliRunner().invoke(app, ["curate", "proxy-distill", str(src2), "-o", str(out2), "-q"])
    assert res.exit_code == 0, res.output
    got = [json.loads(x) for x in out2.read_text().splitlines()]
    assert [g["status"] for g in got] == ["kept", "bad_format", "wrong_verdict"]
    assert got[0]["target"] == "<think>t</think><answer>2</answer>"


def test_proxy_agent_preset_runs_sft_then_rl(tmp_path):
    def edit(cfg):
        cfg["stages"][1]["grpo"]["max_steps"] = 1

    rows = _run(tmp_path, "configs/cpu-tiny/proxy_agent.yaml", "proxy_grm", edit)
    assert any(r["stage"] == "proxy_sft" and "loss" in r for r in rows)
    rl = next(r for r in rows if r["stage"] == "proxy_rl" and "loss" in r)
    assert "rewards/accuracy/mean" in rl and not any("format" in k for k in rl)
    assert (tmp_path / "run" / "proxy_rl" / "final").is_dir()
