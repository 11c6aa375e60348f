"""A train config's relative input paths resolve against the config file's folder, not the
working directory (issue 35 item 6; issue 39 item 5 gave the missing-file error its rule):
`data`, `eval.data`, `monitor.probe.path` and the recipe's path options (`action_map`), at
the top level and in each stage. For one release a path found only from the working
directory is still read, with a FutureWarning."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import yaml

from groundrl.train.config import ConfigError, check_paths, load_train_config, resolve_paths

ROOT = Path(__file__).resolve().parents[2]
PACKAGED = ROOT / "src" / "groundrl" / "configs"
RECORD = {"prompt": "p", "gt_score": 5}


def _write(folder: Path, cfg: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _stage_config(tmp_path: Path, **stage) -> dict:
    return {
        "recipe": "eqa_rm",
        "model": "tiny",
        "output_dir": str(tmp_path / "o"),
        "stages": [{"name": "rft", "kind": "sft", **stage}],
    }


def test_data_and_eval_beside_the_config_are_found_from_another_directory(tmp_path, monkeypatch):
    conf = tmp_path / "conf"
    (conf / "d").mkdir(parents=True)
    for name in ("train.jsonl", "held_out.jsonl"):
        (conf / "d" / name).write_text(json.dumps(RECORD) + "\n")
    path = _write(
        conf, _stage_config(tmp_path, data="d/train.jsonl", eval={"data": "d/held_out.jsonl", "every": 1})
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecation: the files are where the config says
        cfg = load_train_config(path)
    check_paths(cfg)  # the working-directory rule raised "not found" here
    (stage,) = cfg.stages
    assert stage.data == str(conf / "d" / "train.jsonl")
    assert stage.blocks["eval"].data == str(conf / "d" / "held_out.jsonl")


def test_the_missing_file_error_states_the_rule(tmp_path, monkeypatch):
    conf = tmp_path / "conf"
    path = _write(conf, _stage_config(tmp_path, data="train.jsonl"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as e:
        check_paths(load_train_config(path))
    msg = str(e.value)
    assert f"data {conf / 'train.jsonl'} not found" in msg  # the full path it looked at
    assert f"read from the config file's folder ({conf})" in msg


def test_a_path_only_the_working_directory_has_still_reads_with_a_warning(tmp_path, monkeypatch):
    (tmp_path / "train.jsonl").write_text(json.dumps(RECORD) + "\n")
    path = _write(tmp_path / "conf", _stage_config(tmp_path, data="train.jsonl"))
    monkeypatch.chdir(tmp_path)
    with pytest.warns(FutureWarning, match="working-directory fallback goes in the next release"):
        cfg = load_train_config(path)
    check_paths(cfg)
    assert cfg.stages[0].data == str(tmp_path / "train.jsonl")


def test_the_action_map_option_probe_path_and_stage_keys_resolve_and_outputs_do_not(tmp_path):
    conf = tmp_path / "conf"
    raw = {
        "recipe": "reinforced_planning",
        "output_dir": "runs/x",
        "recipe_options": {"action_map": "maps/a.json", "lenient": True},
        "monitor": {"probe": {"path": "probe.jsonl", "every": 5}},
        "data": "/abs/train.jsonl",
        "stages": [
            {"name": "sft", "kind": "sft", "data": "sft.jsonl", "recipe_options": {"action_map": "b.json"}}
        ],
    }
    out = resolve_paths(raw, conf / "c.yaml")
    assert out["recipe_options"] == {"action_map": str(conf / "maps" / "a.json"), "lenient": True}
    assert out["monitor"]["probe"]["path"] == str(conf / "probe.jsonl")
    assert out["stages"][0]["data"] == str(conf / "sft.jsonl")
    assert out["stages"][0]["recipe_options"]["action_map"] == str(conf / "b.json")
    assert out["data"] == "/abs/train.jsonl"
    assert out["output_dir"] == "runs/x"  # the run folder follows the working directory
    assert raw["recipe_options"]["action_map"] == "maps/a.json"  # the parsed file is left as read


@pytest.mark.parametrize("preset", sorted(p.stem for p in (PACKAGED / "cpu-tiny").glob("*.yaml")))
def test_every_cpu_tiny_preset_finds_its_files_from_any_directory(preset, tmp_path, monkeypatch):
    """The Reinforced Reasoning preset failed outside the repository root (its action map
    and data were `configs/data/...` from the working directory)."""
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg = load_train_config(PACKAGED / "cpu-tiny" / f"{preset}.yaml")
    check_paths(cfg)
    for st in cfg.stages:
        assert st.data is None or Path(st.data).is_relative_to(PACKAGED / "data"), st.data


@pytest.mark.parametrize("where", ["papers", "gpu"])
def test_the_rr_presets_action_map_is_the_packaged_example_from_any_directory(where, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = load_train_config(PACKAGED / where / "reinforced_planning.yaml")
    assert cfg.raw["recipe_options"]["action_map"] == str(ROOT / "src/groundrl/data/examples/action_map.json")
