"""Every stage kind on 2 processes (torchrun, gloo on CPU) with the tiny model (issue 35 item 4).

Each launch runs ``groundrl train`` as 2 ranks of one job, as ``accelerate launch`` /
``torchrun`` do on a GPU node. What must hold there and no 1-process test sees:

* the tiny model is built once per folder (the ranks used to write it at the same time
  and one read a half-written folder);
* side work (RFT's evaluator calls, the verifier filter) runs once, on the main process,
  and every rank trains on the same kept rows;
* C-GRPO refuses a batch that would split a group across ranks before any generation.

The launches cover all eight built-in stage kinds: rft, cgrpo (EQA-RM); verifier_filter,
sft, grpo (Argos); proxy_sft, proxy_rl, proxy_grpo (Proxy-GRM).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from groundrl.train.config import read_config

pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[2]
# the stage kinds each launch runs (each test checks its config against its line)
LAUNCHED = {
    "eqa_rm": ["rft", "cgrpo"],
    "argos": ["verifier_filter", "sft", "grpo"],
    "proxy_grm": ["proxy_sft", "proxy_rl", "proxy_grpo"],
}


def _launch(cfg: dict, tmp_path: Path, recipe: str | None = None) -> subprocess.CompletedProcess[str]:
    if recipe is not None:
        assert [st["kind"] for st in cfg["stages"]] == LAUNCHED[recipe]
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    cmd += ["-m", "groundrl", "train", "--config", str(path)]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)


def _log(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]


def _ok(res: subprocess.CompletedProcess[str]) -> None:
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]


def test_eqa_rm_rft_then_cgrpo_on_two_ranks(tmp_path, chat_server):
    scores = [8, 8, 1, 5]  # per sample index: as tests/train/test_rft_stage.py's preset run
    chat_server.responder = lambda msgs, body: (
        f"<critique>c</critique><score>{scores[body['sample_index']]}</score>"
    )
    cfg = read_config(ROOT / "configs/cpu-tiny/eqa_rm_pipeline.yaml")
    cfg["data"] = str(ROOT / cfg["data"])
    cfg["output_dir"] = str(tmp_path / "run")
    rft, cg = cfg["stages"]
    rft["rft"]["sampler"] = {"backend": "openai", "model": "aux", "url": chat_server.base_url, "retries": 0}
    rft["sft"]["max_steps"] = 1
    cg["grpo"].update(max_steps=1, per_device_train_batch_size=2)  # 2 × 1 = one whole group of 2 per rank
    res = _launch(cfg, tmp_path, "eqa_rm")
    _ok(res)
    out = tmp_path / "run"
    rows = _log(out)
    rft_rows = [r for r in rows if "rft/sampled" in r]
    # the evaluator was asked once per instance (3 instances, k = 4 samples each), not once per rank
    assert len(rft_rows) == 1 and rft_rows[0]["rft/sampled"] == 12 and rft_rows[0]["rft/kept"] == 3
    questions = [str(r["messages"]) for r in chat_server.requests]
    assert sum("Where is the mug" in q for q in questions) == len(questions) // 3
    assert len(questions) in (3, 12)  # one request per instance (n = 4) or per sample, once
    assert any(r["stage"] == "rft" and "loss" in r for r in rows)
    assert any(r["stage"] == "cgrpo" and "cgrpo/boost_rate/spatial" in r for r in rows)
    assert (out / "cgrpo" / "final" / "config.json").is_file()


def test_cgrpo_refuses_groups_split_across_ranks(tmp_path):
    cfg = read_config(ROOT / "configs/cpu-tiny/eqa_rm_pipeline.yaml")
    cfg["data"] = str(ROOT / cfg["data"])
    cfg["output_dir"] = str(tmp_path / "run")
    cg = cfg["stages"][1]
    cg["grpo"].update(max_steps=1, per_device_train_batch_size=1)  # a group of 2 over 2 ranks
    cfg["stages"] = [cg]
    res = _launch(cfg, tmp_path)
    assert res.returncode != 0
    assert "C-GRPO needs whole prompt groups on each device" in res.stdout + res.stderr
    assert "per_device_train_batch_size" in res.stdout + res.stderr
    assert not (tmp_path / "run" / "final").exists()


def test_argos_verifier_filter_sft_grpo_on_two_ranks(tmp_path):
    from groundrl.train.config import build_train_config
    from groundrl.train.stages import run_verifier_filter

    cfg = read_config(ROOT / "configs/cpu-tiny/argos.yaml")
    cfg["output_dir"] = str(tmp_path / "run")
    curate, sft, grpo = cfg["stages"]
    curate["data"] = str(ROOT / curate["data"])
    grpo["data"] = str(ROOT / grpo["data"])
    sft["sft"]["max_steps"] = 1
    grpo["grpo"].update(max_steps=1, num_generations=2, per_device_train_batch_size=2)
    res = _launch(cfg, tmp_path, "argos")
    _ok(res)
    out = tmp_path / "run"
    # the kept file is the one a single process writes (and was written once)
    one, _ = run_verifier_filter(
        "argos", build_train_config(cfg, "argos").stages[0].settings, tmp_path / "one"
    )
    assert (out / "curate" / "sft.jsonl").read_text() == one.read_text()
    assert (res.stdout + res.stderr).count("[curate] verifier_filter: kept") == 2  # each rank got the counts
    rows = _log(out)
    assert {r["stage"] for r in rows if "loss" in r} == {"sft", "grpo"}
    assert (out / "final" / "config.json").is_file()


def test_proxy_grm_stages_on_two_ranks(tmp_path, chat_server):
    chat_server.responder = lambda msgs, body: "<answer>1</answer>"
    agent = read_config(ROOT / "configs/cpu-tiny/proxy_agent.yaml")
    pipe = read_config(ROOT / "configs/cpu-tiny/proxy_grm_pipeline.yaml")
    proxy_sft, proxy_rl = agent["stages"]
    proxy_sft["sft"]["max_steps"] = 1
    proxy_rl["data"] = str(ROOT / agent["data"])
    proxy_rl["grpo"].update(max_steps=1, num_generations=2, per_device_train_batch_size=2)
    (policy,) = pipe["stages"]
    policy["data"] = str(ROOT / pipe["data"])
    policy["judge"] = {**pipe["judge"], "url": chat_server.base_url}
    policy["grpo"].update(max_steps=1, num_generations=2, per_device_train_batch_size=2)
    cfg = {
        "recipe": "proxy_grm",
        "model": "tiny",
        "data": str(ROOT / agent["data"]),
        "output_dir": str(tmp_path / "run"),
        "stages": [proxy_sft, proxy_rl, policy],
    }
    res = _launch(cfg, tmp_path, "proxy_grm")
    _ok(res)
    rows = _log(tmp_path / "run")
    assert {r["stage"] for r in rows if "loss" in r} == {"proxy_sft", "proxy_rl", "policy"}
    # the proxy reward ran on the policy's step (a random policy writes no <rubric>, so it
    # may never reach the server: the part is logged either way)
    assert any(r["stage"] == "policy" and "rewards/proxy/mean" in r for r in rows)


def test_the_launches_cover_every_built_in_stage_kind():
    from groundrl.train.stage_kinds import STAGE_KINDS

    launched = {k for kinds in LAUNCHED.values() for k in kinds}
    builtin = set(STAGE_KINDS.builtin_names())
    assert launched == builtin, f"not launched on 2 processes: {sorted(builtin - launched)}"
