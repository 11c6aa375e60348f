"""A missing data file's error says how a train config's relative paths resolve
(issue 39 item 5): from the working directory, not the config file's folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from groundrl.train.config import ConfigError, check_paths, load_train_config


@pytest.mark.parametrize("key", ["data", "eval"])
def test_the_missing_file_error_states_the_rule(tmp_path, monkeypatch, key):
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "train.jsonl").write_text('{"prompt": "p", "gt_score": 5}\n')  # beside the config only
    stage = {"name": "rft", "kind": "sft", "data": "train.jsonl"}
    if key == "eval":
        stage = {**stage, "data": str(conf / "train.jsonl"), "eval": {"data": "held_out.jsonl", "every": 1}}
    path = conf / "c.yaml"
    path.write_text(
        yaml.safe_dump(
            {"recipe": "eqa_rm", "model": "tiny", "output_dir": str(tmp_path / "o"), "stages": [stage]}
        )
    )
    monkeypatch.chdir(tmp_path)  # not the config's folder
    with pytest.raises(ConfigError) as e:
        check_paths(load_train_config(path))
    msg = str(e.value)
    assert "not found" in msg and f"read from the working directory ({Path(os.getcwd())})" in msg
    assert "not from the config file's folder" in msg
