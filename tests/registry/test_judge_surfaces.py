"""One judge configuration reaches Proxy-GRM's proxy agent from every surface: the
score and serve CLIs' --judge-* flags, the server factory's `judge`, `judge=` in the
TRL / verl / OpenRLHF adapters, GROUNDRL_JUDGE_* on OpenRLHF workers, and a train
YAML's `judge:` block. The local chat server answers as the proxy agent."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest
from typer.testing import CliRunner

from groundrl.cli.main import app

SAMPLE = {
    "id": "s1",
    "completion": "<rubric>prefer the correct count</rubric><eval>1 counts right</eval><answer>1</answer>",
    "preferred": 1,
    "query": "How many cups?",
    "response_1": "Two cups.",
    "response_2": "Five cups.",
}
# accuracy +1 (answer 1 = preferred) + 0.5 * format 1 + proxy +1 (the agent answers 1)
WANT = {"accuracy": 1.0, "format": 1.0, "proxy": 1.0}
TOTAL = 2.5


@pytest.fixture
def proxy_server(chat_server):
    chat_server.responder = lambda msgs, body: "<think>rubric says count</think><answer>1</answer>"
    return chat_server


def _judge(srv) -> dict:
    return {"backend": "openai", "model": "proxy-m", "url": srv.base_url, "timeout": 5, "retries": 0}


def _flags(srv) -> list[str]:
    return ["--judge-backend", "openai", "--judge-model", "proxy-m", "--judge-url", srv.base_url]


def _asked(srv, before: int) -> list[str]:
    return [b.get("model") for b in srv.requests[before:]]


def test_score_cli(proxy_server, tmp_path):
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps(SAMPLE) + "\n")
    out = tmp_path / "out.jsonl"
    r = CliRunner().invoke(app, ["score", "proxy_grm", str(data), "-o", str(out), *_flags(proxy_server)])
    assert r.exit_code == 0, r.output
    row = json.loads(out.read_text())
    assert row["parts"] == WANT and row["reward"] == TOTAL
    assert _asked(proxy_server, 0) == ["proxy-m"]
    assert "judge: 1 calls, 0 failed" in r.output and "Unclosed" not in r.output


def test_serve_factory_and_cli_validation(proxy_server):
    from fastapi.testclient import TestClient

    from groundrl.serve.factory import build_app

    with TestClient(build_app({"recipe": "proxy_grm", "judge": _judge(proxy_server)})) as c:
        row = c.post("/score", json={"samples": [SAMPLE]}).json()["results"][0]
    assert row["parts"] == WANT and _asked(proxy_server, 0) == ["proxy-m"]
    # the serve CLI takes the same flags; a recipe without model-based parts refuses them
    r = CliRunner().invoke(app, ["serve", "--recipe", "eqa_rm", *_flags(proxy_server)])
    assert r.exit_code == 2 and "no model-based parts" in r.output


def test_trl_verl_openrlhf_adapters(proxy_server, monkeypatch):
    from groundrl.integrations import openrlhf, trl, verl

    judge = _judge(proxy_server)
    funcs, weights = trl.reward_funcs("proxy_grm", judge=judge)
    by_name = dict(zip([f.__name__ for f in funcs], funcs, strict=True))
    cols = {k: [v] for k, v in SAMPLE.items() if k != "completion"}
    # judge parts are async reward functions (TRL gathers them)
    got = asyncio.run(by_name["proxy"](prompts=[""], completions=[SAMPLE["completion"]], **cols))
    assert got == [1.0]
    assert weights == [1.0, 0.5, 1.0]

    extra = {k: v for k, v in SAMPLE.items() if k not in ("completion", "preferred")}
    bound = verl.make_compute_score("proxy_grm", judge=judge)
    assert bound("src", SAMPLE["completion"], 1, extra) == {"score": TOTAL, **WANT}
    dispatched = verl.compute_score("groundrl/proxy_grm", SAMPLE["completion"], 1, extra, judge=judge)
    assert dispatched == {"score": TOTAL, **WANT}

    label = json.dumps({k: v for k, v in SAMPLE.items() if k != "completion"})
    func = openrlhf.make_reward_func("proxy_grm", tensors=False, judge=judge)
    out = func(["Q " + SAMPLE["completion"]], ["Q "], [label])
    assert out["rewards"] == [TOTAL] and out["extra_logs"]["proxy"] == [1.0]
    monkeypatch.setenv("GROUNDRL_RECIPE", "proxy_grm")
    for key, value in (("BACKEND", "openai"), ("MODEL", "proxy-m"), ("URL", proxy_server.base_url)):
        monkeypatch.setenv(f"GROUNDRL_JUDGE_{key}", value)
    assert openrlhf.reward_func(["Q " + SAMPLE["completion"]], ["Q "], [label])["rewards"].tolist() == [TOTAL]
    assert _asked(proxy_server, 0) == ["proxy-m"] * 5  # TRL, verl ×2, OpenRLHF ×2


def test_train_yaml_judge_block(proxy_server, tmp_path, tiny_vlm_dir):
    import yaml

    from groundrl.train.config import load_train_config
    from groundrl.train.grpo import build_trainer

    data = tmp_path / "d.jsonl"
    rec = {k: v for k, v in SAMPLE.items() if k not in ("completion", "id")}
    data.write_text(json.dumps({"prompt": "Judge the pair.", **rec}) + "\n")
    cfg_file = tmp_path / "c.yaml"
    cfg_file.write_text(
        yaml.safe_dump({"model": str(tiny_vlm_dir), "data": str(data), "judge": _judge(proxy_server)})
    )
    settings = load_train_config(cfg_file, "proxy_grm").stages[0].settings
    trainer = build_trainer("proxy_grm", dataclasses.replace(settings, output_dir=str(tmp_path / "o")))
    names = [getattr(f, "__name__", "") for f in trainer.reward_funcs]
    assert names == ["accuracy", "format", "proxy"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        yaml.safe_dump({"data": str(data), "judge": {"backend": "openai", "model": "m", "colour": 1}})
    )
    with pytest.raises(ValueError, match="judge: unknown key 'colour'"):
        load_train_config(bad, "proxy_grm")
