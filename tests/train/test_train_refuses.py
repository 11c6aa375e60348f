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
