"""Issue 39 item 4: a hub model id passes the dry run with a download note; a local path
that does not exist is still refused; offline, the run gives transformers' error and a
hint. No test contacts the hub (the note reads the local cache; the run is offline)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.train.config import is_hub_id

ROOT = Path(__file__).resolve().parents[2]
RR_DATA = str(ROOT / "configs/data/reinforced_planning.jsonl")


def _file(tmp_path, model):
    f = tmp_path / "c.yaml"
    cfg = {
        "recipe": "reinforced_planning",
        "model": model,
        "data": RR_DATA,
        "output_dir": str(tmp_path / "o"),
    }
    f.write_text(yaml.safe_dump(cfg))
    return f


def test_hub_id_shapes(tmp_path):
    assert is_hub_id("Qwen/Qwen2.5-VL-7B-Instruct") and is_hub_id("gpt2")
    for path in ("/models/Qwen2.5-VL-7B-Instruct", "./ckpt", "runs/a/final", "../x", "~/m", "a/../b"):
        assert not is_hub_id(path), path
    (tmp_path / "gpt2").mkdir()
    assert not is_hub_id(str(tmp_path / "gpt2"))


def test_dry_run_accepts_a_hub_id_with_a_download_note(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # belt and braces: the note reads the local cache only
    r = CliRunner().invoke(
        app, ["train", "--config", str(_file(tmp_path, "nobody-here/no-such-vlm")), "--dry-run"]
    )
    assert r.exit_code == 0, r.output
    assert "model nobody-here/no-such-vlm: will be downloaded from the hub (not found locally)" in r.output


def test_a_missing_local_path_is_refused(tmp_path):
    r = CliRunner().invoke(app, ["train", "--config", str(_file(tmp_path, "/models/none-here")), "--dry-run"])
    assert r.exit_code == 2
    assert "neither a local folder nor a hub model id" in r.output


@pytest.mark.slow
def test_offline_run_gives_transformers_error_and_a_hint(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        "-m",
        "groundrl.cli.main",
        "train",
        "--config",
        str(_file(tmp_path, "nobody-here/no-such-vlm")),
    ]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 2, out
    assert "Traceback" not in out
    assert "Hint: the model is a hub id" in out and "HF_HUB_OFFLINE" in out
    assert "couldn't connect to 'https://huggingface.co'" in out or "offline" in out.lower(), out
