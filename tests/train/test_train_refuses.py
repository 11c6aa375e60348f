"""Issue 42 items 3-4: training refuses what cannot train. Non-finite or absurd settings,
stage names that leave output_dir and YAML aliases that expand are config errors (exit 2,
the key named, nothing written); a run whose loss or weights turn non-finite stops with a
non-zero exit and leaves no final/; final/ appears whole or not at all; log.jsonl survives."""

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.train.config import ConfigError, load_train_config

ROOT = Path(__file__).resolve().parents[2]
RR_DATA = str(ROOT / "configs/data/reinforced_planning.jsonl")


def _base(tmp_path, **over):
    cfg = {
        "recipe": "reinforced_planning",
        "model": "tiny",
        "data": RR_DATA,
        "output_dir": str(tmp_path / "out"),
    }
    return {**cfg, **over}


def _train_file(tmp_path, text):
    f = tmp_path / "c.yaml"
    f.write_text(text)
    return CliRunner().invoke(app, ["train", "--config", str(f)])


BAD = [
    ("beta .inf", "grpo:\n  beta: .inf\n", ["grpo.beta", "finite"]),
    ("beta .nan", "grpo:\n  beta: .nan\n", ["grpo.beta", "finite"]),
    ("beta huge", "grpo:\n  beta: 1.0e300\n", ["grpo.beta", "[0, 1000]"]),
    ("learning_rate 1e308", "grpo:\n  learning_rate: 1.0e308\n", ["grpo.learning_rate", "> 0 and ≤ 1"]),
    ("learning_rate -inf", "grpo:\n  learning_rate: -.inf\n", ["grpo.learning_rate"]),
    ("sft lr inf", "stages:\n  - {kind: sft, sft: {learning_rate: .inf}}\n", ["learning_rate", "finite"]),
    (
        "a non-finite judge setting",
        "judge: {backend: openai, model: m, timeout: .inf}\n",
        ["judge.timeout", "finite"],
    ),
    (
        "a stage leaving output_dir",
        "stages:\n  - {name: ../../../../x, kind: grpo}\n",
        ["'../../../../x'", "plain folder name"],
    ),
    (
        "an absolute stage name",
        "stages:\n  - {name: /tmp/x, kind: grpo}\n",
        ["'/tmp/x'", "plain folder name"],
    ),
    ("a dot stage name", "stages:\n  - {name: '..', kind: grpo}\n", ["'..'", "plain folder name"]),
    ("a stage name that is a number", "stages:\n  - {name: 7, kind: grpo}\n", ["7", "plain folder name"]),
]


@pytest.mark.parametrize("what,extra,words", BAD, ids=[b[0] for b in BAD])
def test_bad_numbers_and_stage_names_exit_2_naming_the_key(tmp_path, what, extra, words):
    text = yaml.safe_dump(_base(tmp_path)) + extra
    r = _train_file(tmp_path, text)
    assert r.exit_code == 2, (what, r.output)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    for w in words:
        assert w in r.output, (what, w, r.output)
    assert not (tmp_path / "out").exists() and not (tmp_path / "x").exists()


def test_sane_numbers_and_names_still_load(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text(
        yaml.safe_dump(_base(tmp_path))
        + "stages:\n  - {name: sft-1.a_b, kind: grpo, grpo: {beta: 0.04, learning_rate: 1.0}}\n"
    )
    cfg = load_train_config(f)
    assert cfg.stages[0].name == "sft-1.a_b" and cfg.stages[0].args["beta"] == 0.04


def _laughs(levels):
    """Billion laughs: each level an alias list of nine of the one before (9**levels strings)."""
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels + 1):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_billion_laughs_is_refused_before_it_expands(tmp_path):
    # under recipe_options so only the alias bound can refuse it (an unknown option would too,
    # later: the bound must fire first, in read_yaml)
    text = (
        yaml.safe_dump(_base(tmp_path))
        + "recipe_options:\n"
        + "".join("  " + line + "\n" for line in _laughs(9).splitlines())
    )
    r = _train_file(tmp_path, text)
    assert r.exit_code == 2, r.output
    assert "aliases expand to more than" in r.output, r.output
    f = tmp_path / "c.yaml"
    with pytest.raises(ConfigError, match="aliases expand"):
        load_train_config(f)


def test_a_recursive_alias_is_refused(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(_base(tmp_path)) + "recipe_options: &r {x: *r}\n")
    with pytest.raises(ConfigError, match="recursive"):
        load_train_config(f)


def test_a_few_aliases_still_load(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text(
        yaml.safe_dump(_base(tmp_path))
        + "stages:\n  - {name: a, kind: grpo, grpo: &g {max_steps: 3}}\n  - {name: b, kind: grpo, grpo: *g}\n"
    )
    cfg = load_train_config(f)
    assert [s.args["max_steps"] for s in cfg.stages] == [3, 3]


# -- the run: non-finite values stop it, final/ is whole or absent, the log is kept -----------


class _Trainer:
    """What stages._save calls: save_model writes config.json, then (cut) raises."""

    def __init__(self, cut: bool):
        self.cut, self.processing_class = cut, None

    def save_model(self, path):
        Path(path).mkdir(parents=True, exist_ok=True)
        (Path(path) / "config.json").write_text("{}")
        if self.cut:
            raise KeyboardInterrupt  # killed half-way through the weights


def test_an_interrupted_save_leaves_no_final_and_the_old_one_whole(tmp_path):
    from groundrl.train.stages import _save

    final = tmp_path / "final"
    with pytest.raises(KeyboardInterrupt):
        _save(_Trainer(cut=True), final)
    assert not final.exists()  # old code: final/ with config.json and no weights
    _save(_Trainer(cut=False), final)
    assert (final / "config.json").is_file()
    (final / "weights").write_text("old")
    with pytest.raises(KeyboardInterrupt):
        _save(_Trainer(cut=True), final)
    assert (final / "weights").read_text() == "old"  # the earlier model, untouched
    _save(_Trainer(cut=False), final)  # the leftover .final.partial is cleaned, then replaced
    assert not (final / "weights").exists() and (final / "config.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["final"]


def test_a_new_run_keeps_the_old_log(tmp_path):
    from groundrl.train import runlog

    (tmp_path / "log.jsonl").write_text('{"step": 1}\n')
    assert runlog.keep_old_log(tmp_path) == tmp_path / "log.1.jsonl"
    (tmp_path / "log.jsonl").write_text('{"step": 2}\n')
    assert runlog.keep_old_log(tmp_path) == tmp_path / "log.2.jsonl"
    assert (tmp_path / "log.1.jsonl").read_text() == '{"step": 1}\n' and not (tmp_path / "log.jsonl").exists()
    assert runlog.keep_old_log(tmp_path) is None


def test_guard_stops_on_a_non_finite_loss_or_weight():
    import torch

    from groundrl.train.finite import NonFiniteTraining, finite_guard_callback

    guard = finite_guard_callback("grpo")
    state = type("S", (), {"global_step": 3})()
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
    guard.on_log(None, state, None, logs={"loss": 0.5, "grad_norm": 1.0, "reward": float("nan")}, model=model)
    with pytest.raises(NonFiniteTraining, match="stage grpo: loss is nan at step 3"):
        guard.on_log(None, state, None, logs={"loss": float("nan")}, model=model)
    with pytest.raises(NonFiniteTraining, match="grad_norm is inf"):
        guard.on_log(None, state, None, logs={"grad_norm": float("inf")}, model=model)
    with torch.no_grad():
        model[1].bias[0] = float("-inf")
    with pytest.raises(NonFiniteTraining, match=r"weight 1\.bias is not finite"):
        guard.on_log(None, state, None, logs={"loss": 0.5}, model=model)
    with pytest.raises(NonFiniteTraining, match="1.bias"):
        guard.on_train_end(None, state, None, model=model)


@pytest.mark.slow
def test_a_run_whose_weights_turn_nan_exits_non_zero_without_final(tmp_path, monkeypatch):
    """A real tiny GRPO run through the CLI; after its first optimiser step a callback sets one
    weight to NaN (standing for a divergence the validator cannot foresee). The run stops
    with a message, exit non-zero, no final/, and the earlier run's log.jsonl is kept."""
    from transformers import TrainerCallback

    from groundrl.train import stages

    class Poison(TrainerCallback):
        def on_step_end(self, args, state, control, model=None, **kw):
            with __import__("torch").no_grad():
                next(model.parameters()).view(-1)[0] = float("nan")

    real = stages._attach_callbacks

    def attach(trainer, *a, **kw):
        trainer.add_callback(Poison())
        return real(trainer, *a, **kw)

    monkeypatch.setattr(stages, "_attach_callbacks", attach)
    out = tmp_path / "out"
    out.mkdir()
    (out / "log.jsonl").write_text('{"stage": "grpo", "step": 1, "loss": 0.1}\n')
    cfg = _base(tmp_path, grpo={"max_steps": 2, "num_generations": 2, "per_device_train_batch_size": 2})
    r = _train_file(tmp_path, yaml.safe_dump(cfg))
    assert r.exit_code != 0, r.output
    assert "not finite at step 1" in r.output and "was not saved" in r.output, r.output
    assert not (out / "final").exists() and not (out / ".final.partial").exists()
    assert (out / "log.1.jsonl").read_text() == '{"stage": "grpo", "step": 1, "loss": 0.1}\n'


def _two_ranks(rank, port, results):
    import torch
    import torch.distributed as dist

    from groundrl.train.finite import first_non_finite_weight

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    try:
        model = torch.nn.Linear(2, 2)
        if rank == 1:  # only this process's shard went bad (as under ZeRO-3)
            with torch.no_grad():
                model.weight[0, 0] = float("nan")
        results[rank] = first_non_finite_weight(model)
    finally:
        dist.destroy_process_group()


def test_every_process_agrees_that_a_weight_went_bad():
    """One all-reduce: the process without the bad shard stops too (else it would wait
    for the other at the next collective until the timeout)."""
    import socket

    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with mp.Manager() as manager:
        results = manager.dict()
        mp.spawn(_two_ranks, args=(port, results), nprocs=2, join=True)
        assert dict(results) == {0: "held by another process", 1: "weight"}


@pytest.mark.parametrize("lr", ["inf", "nan", "1e308", "-1", "0"])
def test_sft_refuses_a_learning_rate_that_cannot_train(tmp_path, lr):
    data = tmp_path / "d.jsonl"
    data.write_text('{"prompt": "p", "target": "t"}\n')
    r = CliRunner().invoke(app, ["sft", str(data), "-o", str(tmp_path / "out"), "--lr", lr])
    assert r.exit_code == 2 and "--lr" in r.output and "> 0 and ≤ 1" in r.output, r.output
    assert not (tmp_path / "out").exists()


def test_the_weight_check_sees_the_last_chunk_of_a_big_tensor(monkeypatch):
    import torch

    from groundrl.train import finite

    monkeypatch.setattr(finite, "CHUNK", 7)  # a 100-element weight is checked in 15 pieces
    model = torch.nn.Linear(10, 10)
    assert finite.first_non_finite_weight(model) is None
    with torch.no_grad():
        model.weight[9, 9] = float("inf")
    assert finite.first_non_finite_weight(model) == "weight"
