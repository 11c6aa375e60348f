"""Issue 39 item 1: a run stopped mid-stage resumes at its checkpoint (weights, optimizer,
scheduler, RNG — Trainer's own resume — and TRL's generation buffer, which its checkpoint
leaves out), appends to log.jsonl, skips finished stages, and ends where an uninterrupted
run ends."""

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.train import runlog, stages
from groundrl.train.config import ConfigError, build_train_config, check_paths

ROOT = Path(__file__).resolve().parents[2]
RR_DATA = str(ROOT / "configs/data/reinforced_planning.jsonl")


class Killed(Exception):
    """Stands for the process dying right after checkpoint-k was written."""


def _length(completions, **kw):
    # a reward that varies between completions: the tiny random model gets a gradient
    return [len(str(c)) / 100 for c in completions]


def _cfg(out: Path, **grpo) -> dict:
    # steps_per_generation 2: one generated batch feeds two optimiser steps, so a checkpoint
    # after step 1 lies inside a buffer (TRL alone would regenerate it on resume)
    args = {"max_steps": 3, "num_generations": 2, "per_device_train_batch_size": 2, "steps_per_generation": 2}
    args.update({"save_strategy": "steps", "save_steps": 1, **grpo})
    return {
        "recipe": "reinforced_planning",
        "model": "tiny",
        "data": RR_DATA,
        "output_dir": str(out),
        "grpo": args,
    }


def _run(cfg: dict, **kw):
    return stages.run_config(
        None,
        build_train_config(cfg),
        echo=lambda m: None,
        extra_reward_funcs=[_length],
        extra_weights=[1.0],
        **kw,
    )


def _kill_after_save(monkeypatch, at_step: int) -> None:
    from transformers import TrainerCallback

    class Kill(TrainerCallback):
        def on_save(self, args, state, control, **kw):
            if state.global_step == at_step:
                raise Killed(at_step)

    real = stages._attach_callbacks

    def attach(trainer, *a, **kw):
        watch = real(trainer, *a, **kw)
        trainer.add_callback(Kill())  # after ours: the buffer file is already beside the checkpoint
        return watch

    monkeypatch.setattr(stages, "_attach_callbacks", attach)


def _weights(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


def _train_rows(out: Path) -> list[dict]:
    return [r for r in runlog.read_log(out / "log.jsonl") if "loss" in r and "train_runtime" not in r]


@pytest.mark.slow
def test_a_killed_run_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch):
    import torch

    whole = tmp_path / "whole"
    _run(_cfg(whole))
    cut = tmp_path / "cut"
    _kill_after_save(monkeypatch, at_step=1)
    with pytest.raises(Killed):
        _run(_cfg(cut))
    assert not (cut / "final").exists() and (cut / "checkpoint-1" / "groundrl_buffer_rank0.pt").is_file()
    # the killed process had logged a step past its checkpoint: the resumed run logs it again
    with (cut / "log.jsonl").open("a") as f:
        f.write(json.dumps({"stage": "grpo", "step": 2, "loss": 9.0}) + "\n")
    monkeypatch.undo()
    _run(_cfg(cut), resume=True)

    rows = _train_rows(cut)
    assert [r["step"] for r in rows] == [1, 2, 3]  # once each, the first from the killed run
    assert not list(cut.glob("log.*.jsonl"))  # appended to, not set aside
    ref = _train_rows(whole)
    for a, b in zip(rows, ref, strict=True):
        # a step inside a buffer logs no reward (TRL logs it with the generation): null or absent
        assert a.get("reward") == pytest.approx(b.get("reward"), abs=1e-6), (a, b)
        assert a["grad_norm"] == pytest.approx(b["grad_norm"], rel=1e-4, abs=1e-6), (a, b)
    assert any(r["grad_norm"] for r in ref), "the reference run must move the weights"
    got, want = _weights(cut / "final"), _weights(whole / "final")
    start = _weights(whole / "checkpoint-1")
    assert any(not torch.equal(want[k], start[k]) for k in want)  # steps 2-3 changed something
    for k in want:
        torch.testing.assert_close(got[k], want[k], rtol=1e-5, atol=1e-6, msg=k)


@pytest.mark.slow
def test_resume_skips_finished_stages_and_trims_the_log(tmp_path):
    """Two stages: the first finished (final/), the second killed with no checkpoint. The
    resumed run trains only the second, from the first's final/, logs it once."""
    out = tmp_path / "run"
    sft_data = ROOT / "configs/data/reinforced_planning_sft.jsonl"
    cfg = {
        "recipe": "reinforced_planning",
        "model": "tiny",
        "output_dir": str(out),
        "stages": [
            {"name": "sft", "kind": "sft", "data": str(sft_data), "sft": {"max_steps": 1}},
            {
                "name": "grpo",
                "kind": "grpo",
                "data": RR_DATA,
                "grpo": {"max_steps": 1, "num_generations": 2, "per_device_train_batch_size": 2},
            },
        ],
    }
    _run(cfg)
    sft_final = _weights(out / "sft" / "final")
    (out / "grpo" / "final").rename(out / "grpo" / "old")  # as if killed before the save
    with (out / "log.jsonl").open("a") as f:
        f.write(json.dumps({"stage": "grpo", "step": 1, "loss": 9.0}) + "\n")
    echoed: list[str] = []
    res = stages.run_config(
        None,
        build_train_config(cfg),
        echo=echoed.append,
        extra_reward_funcs=[_length],
        extra_weights=[1.0],
        resume=True,
    )
    assert any("[sft] sft: finished before" in m for m in echoed), echoed
    assert (out / "grpo" / "final").is_dir() and res["final"] == out / "final"
    assert [s.get("notes", {}).get("resumed") for s in res["stages"]] == ["finished before", None]
    for k, v in _weights(out / "sft" / "final").items():  # not retrained
        assert v.equal(sft_final[k])
    rows = runlog.read_log(out / "log.jsonl")
    assert [r["step"] for r in rows if r["stage"] == "grpo" and "loss" in r and "train_runtime" not in r] == [
        1
    ]
    assert 9.0 not in [r.get("loss") for r in rows]


def test_trim_log_drops_the_resumed_stages_later_rows(tmp_path):
    rows = [
        {"stage": "sft", "step": 5, "loss": 1.0},
        {"stage": "grpo", "step": 1, "loss": 2.0},
        {"stage": "grpo", "step": 2, "loss": 3.0},
        {"stage": "grpo", "step": 3, "loss": 4.0},
    ]
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"stage": "grpo", "st')
    assert runlog.trim_log(tmp_path, "grpo", 1) == 3  # steps 2, 3 and the cut line
    assert runlog.read_log(tmp_path / "log.jsonl") == rows[:2]


def test_resume_keys_are_checked_at_load(tmp_path):
    cfg = {"recipe": "reinforced_planning", "model": "tiny", "data": RR_DATA, "output_dir": str(tmp_path)}
    with pytest.raises(ConfigError, match="resume_from_checkpoint must be"):
        build_train_config({**cfg, "resume_from_checkpoint": 3})
    tc = build_train_config({**cfg, "resume_from_checkpoint": str(tmp_path / "checkpoint-9")})
    with pytest.raises(ConfigError, match="not a checkpoint folder"):
        check_paths(tc)
    check_paths(build_train_config({**cfg, "resume_from_checkpoint": "latest"}))
    # the TRL field of the same name was accepted and silently ignored before (issue 39)
    with pytest.raises(ConfigError, match="grpo.resume_from_checkpoint is not read by the trainer"):
        build_train_config({**cfg, "grpo": {"resume_from_checkpoint": "latest"}})


def test_cli_resume_flag_reaches_the_run(tmp_path, monkeypatch):
    seen = {}

    def fake(recipe, cfg, echo=print, verbose=False, resume=False, **kw):
        seen["resume"] = resume
        return {"output_dir": tmp_path, "final": None, "stages": []}

    monkeypatch.setattr(stages, "run_config", fake)
    f = tmp_path / "c.yaml"
    f.write_text(
        yaml.safe_dump(
            {
                "recipe": "reinforced_planning",
                "model": "tiny",
                "data": RR_DATA,
                "output_dir": str(tmp_path / "o"),
            }
        )
    )
    r = CliRunner().invoke(app, ["train", "--config", str(f), "--resume"])
    assert r.exit_code == 0, r.output
    assert seen == {"resume": True}


def test_the_online_filters_refill_sampler_and_buffer_log_round_trip(tmp_path):
    """What a checkpoint of an online-filter stage carries beside TRL's files: the refill
    sampler continues with the same draws, the buffer log and TRL's buffer come back."""
    import random
    from types import SimpleNamespace

    from groundrl.train.online_filter import load_buffer_state, save_buffer_state

    def trainer():
        return SimpleNamespace(
            _step=0, _buffered_inputs=None, _refill_rng=random.Random(7), buffers=[], accelerator=None
        )

    a = trainer()
    a._refill_rng.random()
    a._step, a._buffered_inputs, a.buffers = 6, [{"x": [1, 2]}], [{"kept": 3, "generated": 5, "rows": 6}]
    assert save_buffer_state(a, tmp_path).name == "groundrl_buffer_rank0.pt"
    b = trainer()
    assert load_buffer_state(b, tmp_path)
    assert (b._step, b._buffered_inputs, b.buffers) == (6, [{"x": [1, 2]}], a.buffers)
    assert [b._refill_rng.random() for _ in range(3)] == [a._refill_rng.random() for _ in range(3)]
    assert not load_buffer_state(trainer(), tmp_path / "none")  # an older checkpoint: TRL regenerates
    assert save_buffer_state(SimpleNamespace(), tmp_path) is None  # an SFT trainer has no buffer
