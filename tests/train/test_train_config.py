"""Typed train configs (issue 23 item 2, issue 24 item 1, issue 26 item 7): a bad file exits 2
with one message naming the key before any model loads; CPU smoke defaults reach only
`model: tiny`; `--print-config` shows the effective TRL arguments without loading a model."""

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.train.config import ConfigError, build_train_config, effective_config, trainer_args

ROOT = Path(__file__).resolve().parents[2]
RR_DATA = str(ROOT / "configs/data/reinforced_planning.jsonl")


def _write(tmp_path, cfg, name="c.yaml"):
    f = tmp_path / name
    f.write_text(cfg if isinstance(cfg, str) else yaml.safe_dump(cfg))
    return f


def _base(tmp_path, **over):
    cfg = {
        "recipe": "reinforced_planning",
        "model": "tiny",
        "data": RR_DATA,
        "output_dir": str(tmp_path / "out"),
    }
    cfg.update(over)
    return cfg


def _train(*args):
    return CliRunner().invoke(app, ["train", *args])


# each: (what the issue tried, config or YAML text, words the one message must contain)
BAD = [
    ("invalid YAML", "model: tiny\ngrpo: {max_steps: 2\n", ["not valid YAML", "line"]),
    ("a max_step typo", {"grpo": {"max_step": 3}}, ["grpo", "'max_step'", "did you mean 'max_steps'"]),
    ("max_steps: many", {"grpo": {"max_steps": "many"}}, ["grpo.max_steps", "expected int", "'many'"]),
    ("num_generations: 0", {"grpo": {"num_generations": 0}}, ["grpo.num_generations", "≥ 2"]),
    ("max_steps: -5", {"grpo": {"max_steps": -5}}, ["grpo.max_steps", "-1", "≥ 1"]),
    ("a bad learning rate", {"grpo": {"learning_rate": -1.0}}, ["grpo.learning_rate", "> 0"]),
    ("a list where a block is expected", {"grpo": [1, 2]}, ["grpo must be a mapping"]),
    ("an unknown top-level key", {"curate": {}}, ["unknown key 'curate'", "Allowed:"]),
    ("an unknown stage kind", {"stages": [{"kind": "grpoo"}]}, ["stage 1", "kind must be one of", "grpo"]),
    (
        "another kind's block",
        {"stages": [{"kind": "grpo", "cgrpo": {}}]},
        ["'cgrpo' belongs to stages of kind cgrpo"],
    ),
    (
        "sft: on a grpo stage",
        {"stages": [{"kind": "grpo", "sft": {}}]},
        ["a grpo stage trains with grpo, not `sft:`"],
    ),
    (
        "a judge setting typo",
        {"judge": {"backend": "openai", "model": "m", "colour": 1}},
        ["judge: unknown key 'colour'"],
    ),
    ("a hint probability of 2", {"step_grpo": {"p": 2}}, ["step_grpo.p", "[0, 1]"]),
    ("a peft typo", {"peft": {"rank": 8}}, ["peft", "unknown key"]),
    (
        "a recipe that disagrees",
        {"recipe": "argos"},
        ["the file trains recipe 'argos'", "'reinforced_planning'"],
    ),
    ("a seed that is text", {"seed": "one"}, ["seed must be an integer"]),
    ("two stages with one name", {"stages": [{"kind": "grpo"}, {"kind": "grpo"}]}, ["used twice"]),
]


@pytest.mark.parametrize("what,cfg,words", BAD, ids=[b[0] for b in BAD])
def test_bad_config_exits_2_naming_the_key_before_any_model(tmp_path, what, cfg, words):
    f = _write(tmp_path, cfg if isinstance(cfg, str) else _base(tmp_path, **cfg))
    r = _train("reinforced_planning", "--config", str(f))
    assert r.exit_code == 2, (what, r.output)
    assert "Traceback" not in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    for w in words:
        assert w in r.output, (what, w, r.output)
    assert not (tmp_path / "out").exists()  # nothing built, nothing loaded


@pytest.mark.parametrize(
    "what,over,words",
    [
        ("data pointing at a folder", {"data": str(ROOT / "configs/data")}, ["is a folder", "JSONL file"]),
        ("a missing data file", {"data": "nope/missing.jsonl"}, ["/nope/missing.jsonl not found"]),
        # (`nope/ckpt` would be a hub id now, issue 39 item 4: tests/train/test_hub_models.py)
        ("a missing model path", {"model": "./nope/ckpt"}, ["model './nope/ckpt' is neither a local folder"]),
        ("no data at all", {"data": None}, ["needs `data:`"]),
    ],
)
def test_paths_are_checked_before_any_model(tmp_path, what, over, words):
    cfg = {k: v for k, v in _base(tmp_path, **over).items() if v is not None}
    r = _train("--config", str(_write(tmp_path, cfg)))
    assert r.exit_code == 2, (what, r.output)
    for w in words:
        assert w in r.output, (what, r.output)
    assert not (tmp_path / "out").exists()


def test_output_dir_that_is_a_file(tmp_path):
    (tmp_path / "taken").write_text("x")
    r = _train("--config", str(_write(tmp_path, _base(tmp_path, output_dir=str(tmp_path / "taken")))))
    assert r.exit_code == 2 and "is a file; give a folder" in r.output


def test_cpu_smoke_defaults_only_for_tiny(tmp_path):
    tiny = build_train_config(_base(tmp_path))
    assert tiny.stages[0].args["max_steps"] == 2 and tiny.stages[0].args["learning_rate"] == 1e-3
    real = build_train_config(_base(tmp_path, model="/models/Qwen2.5-VL-7B-Instruct"))
    args = real.stages[0].args
    assert "max_steps" not in args and "learning_rate" not in args and "use_cpu" not in args
    assert args == {"report_to": [], "logging_steps": 1, "disable_tqdm": True}
    # the SFT house defaults never set a step count either
    sft = trainer_args("sft", {"num_train_epochs": 3}, tiny=False)
    assert "max_steps" not in sft and sft["num_train_epochs"] == 3


def test_effective_args_are_idempotent_and_the_file_wins():
    once = trainer_args("grpo", {"learning_rate": 5e-6}, tiny=True, seed=3)
    assert once["learning_rate"] == 5e-6 and once["max_steps"] == 2 and once["seed"] == 3
    assert trainer_args("grpo", once, tiny=False) == once


def test_yaml_exponent_without_dot_is_a_float(tmp_path):
    cfg = build_train_config(
        yaml.safe_load("model: tiny\ndata: x.jsonl\ngrpo: {learning_rate: 1e-6}\n"), "argos"
    )
    assert cfg.stages[0].args["learning_rate"] == 1e-6


def test_recipe_named_in_the_file_and_checked(tmp_path):
    with pytest.raises(ConfigError, match="name the recipe"):
        build_train_config({"model": "tiny", "data": "x.jsonl"})
    assert build_train_config(_base(tmp_path)).recipe == "reinforced_planning"


def test_print_config_loads_no_model_and_shows_every_trl_field(tmp_path):
    cfg = _base(
        tmp_path, model="/models/Qwen2.5-VL-7B-Instruct", grpo={"loss_type": "grpo", "num_generations": 8}
    )
    r = _train("--config", str(_write(tmp_path, cfg)), "--print-config")
    assert r.exit_code == 0, r.output
    eff = yaml.safe_load(r.stdout)
    (stage,) = eff["stages"]
    assert stage["trainer_config"] == "GRPOConfig" and eff["cpu_smoke_defaults"] is False
    args = stage["args"]
    assert args["loss_type"] == "grpo" and args["num_generations"] == 8
    assert args["max_steps"] == -1 and args["learning_rate"] == 1e-6  # TRL's defaults, not the smoke ones
    assert {
        "lr_scheduler_type",
        "warmup_steps",
        "weight_decay",
        "max_grad_norm",
        "max_completion_length",
    } <= set(args)
    assert len(args) > 150  # every field of the real GRPOConfig
    assert not (tmp_path / "out").exists()


def test_print_config_staged_names_each_stage_input(tmp_path):
    cfg = build_train_config(yaml.safe_load((ROOT / "configs/cpu-tiny/argos.yaml").read_text()), "argos")
    eff = effective_config(cfg, full=False)
    names = [s["name"] for s in eff["stages"]]
    assert [s["kind"] for s in eff["stages"]] == ["verifier_filter", "sft", "grpo"]
    assert eff["stages"][1]["model"] == "tiny" or eff["stages"][1]["model"].endswith(f"/{names[0]}/final")
    assert eff["stages"][1]["data"] == f"<data written by stage {names[0]}>"
    assert eff["stages"][1]["trainer_config"] == "SFTConfig" and eff["stages"][0]["trainer_config"] is None


def test_dry_run_checks_paths_and_trains_nothing(tmp_path):
    ok = _train("--config", str(_write(tmp_path, _base(tmp_path))), "--dry-run")
    assert ok.exit_code == 0, ok.output
    assert "dry run: 1 stage(s) would run" in ok.output and not (tmp_path / "out").exists()
    bad = _train("--config", str(_write(tmp_path, _base(tmp_path, data="missing.jsonl"))), "--dry-run")
    assert bad.exit_code == 2 and "not found" in bad.output


def test_output_and_seed_flags_replace_the_file(tmp_path):
    f = _write(tmp_path, _base(tmp_path))
    r = _train("--config", str(f), "-o", str(tmp_path / "elsewhere"), "--seed", "7", "--print-config")
    eff = yaml.safe_load(r.stdout)
    assert eff["output_dir"] == str(tmp_path / "elsewhere") and eff["seed"] == 7
    assert eff["stages"][0]["args"]["seed"] == 7


@pytest.mark.slow
def test_monitor_block_runs_inside_groundrl_train(tmp_path):
    """`monitor:` in the train YAML: parsed at load, its callback logs monitor/* rows per step,
    report.md gets the monitor's section (issue 28: the monitor runs inside groundrl train)."""
    import json

    bad = _train("--config", str(_write(tmp_path, _base(tmp_path, monitor={"windw": 3}))))
    assert bad.exit_code == 2 and "monitor" in bad.output and "windw" in bad.output
    cfg = _base(tmp_path, monitor={}, grpo={"max_steps": 2, "max_completion_length": 8})
    r = _train("--config", str(_write(tmp_path, cfg)))
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in (tmp_path / "out" / "log.jsonl").read_text().splitlines()]
    assert any(k.startswith("monitor/") for row in rows for k in row)
    assert "## Reward-hacking monitor" in (tmp_path / "out" / "report.md").read_text()
