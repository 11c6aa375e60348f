"""Presets ship with the package and are found by name (issue 35 item 6): `groundrl train
--config papers/eqa_rm` (with or without `.yaml`, with or without `configs/`) reads the
packaged file, a file path still works and wins, `--list-configs` shows them, and
`groundrl examples` writes the launch scripts from package data."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.presets import find_config, launch_files, not_found

ROOT = Path(__file__).resolve().parents[2]
PACKAGED = ROOT / "src" / "groundrl" / "configs"
EXAMPLES = ROOT / "examples"


@pytest.mark.parametrize(
    "name",
    ["papers/eqa_rm", "papers/eqa_rm.yaml", "configs/papers/eqa_rm.yaml", "configs/papers/eqa_rm"],
)
def test_a_preset_name_finds_the_packaged_file_from_any_directory(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert find_config(name) == PACKAGED / "papers" / "eqa_rm.yaml"


def test_a_file_of_that_name_wins(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "papers").mkdir()
    (tmp_path / "papers" / "eqa_rm.yaml").write_text("recipe: eqa_rm\n")
    assert find_config("papers/eqa_rm.yaml") == Path("papers/eqa_rm.yaml")
    assert find_config("papers/eqa_rm") == PACKAGED / "papers" / "eqa_rm.yaml"  # no such file: the preset


@pytest.mark.parametrize("name", ["../pyproject", "/papers/eqa_rm", "papers", "configs", "papers/nope", ""])
def test_names_outside_the_presets_find_nothing(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert find_config(name) is None


def test_not_found_names_the_nearest_preset():
    msg = not_found("paper/eqa_rm")
    assert "not a file and not a packaged preset" in msg and "did you mean papers/eqa_rm" in msg


def test_list_configs_shows_every_packaged_yaml():
    res = CliRunner().invoke(app, ["train", "--list-configs"])
    assert res.exit_code == 0, res.output
    listed = [line.split()[0] for line in res.stdout.splitlines() if not line.startswith("#")]
    on_disk = sorted(
        f"{p.parent.name}/{p.stem}"
        for g in ("accelerate", "cpu-tiny", "gpu", "papers")
        for p in (PACKAGED / g).glob("*.yaml")
    )
    assert sorted(listed) == on_disk and len(on_disk) >= 22
    assert "papers/eqa_rm  " in res.stdout and "EQA-RM" in res.stdout  # name and what it runs


def test_print_config_by_name_equals_by_path(tmp_path, monkeypatch):
    by_path = CliRunner().invoke(
        app, ["train", "--config", str(PACKAGED / "cpu-tiny" / "reinforced_planning.yaml"), "--print-config"]
    )
    monkeypatch.chdir(tmp_path)  # outside the checkout: the RR preset's data and action map still resolve
    by_name = CliRunner().invoke(app, ["train", "--config", "cpu-tiny/reinforced_planning", "--print-config"])
    assert by_name.exit_code == 0, by_name.output
    assert by_name.stdout == by_path.stdout
    assert f"action_map: {PACKAGED / 'data'}" in by_name.stdout


def test_unknown_config_and_no_config_exit_2_with_the_way_out():
    res = CliRunner().invoke(app, ["train", "--config", "papers/eqa_rn"])
    assert res.exit_code == 2 and "did you mean papers/eqa_rm" in res.output
    res = CliRunner().invoke(app, ["train"])
    assert res.exit_code == 2 and "--list-configs" in res.output


def test_launch_config_takes_a_packaged_accelerate_name():
    args = ["train", "--config", "gpu/eqa_rm", "--dry-run", "--launch-config"]
    by_name = CliRunner().invoke(app, [*args, "accelerate/deepspeed_zero3"])
    by_path = CliRunner().invoke(app, [*args, str(PACKAGED / "accelerate" / "deepspeed_zero3.yaml")])
    assert by_name.exit_code == by_path.exit_code == 2  # /models, /data and the GPU packages are not here
    assert "on 8 process(es)" in by_name.output and by_name.output == by_path.output
    bad = CliRunner().invoke(app, [*args, "accelerate/zero9"])
    assert bad.exit_code == 2 and "--launch-config: config not found" in bad.output


# -- groundrl examples -------------------------------------------------------------------


def test_examples_help_lists_the_scripts():
    res = CliRunner().invoke(app, ["examples", "--help"])
    assert res.exit_code == 0
    for trainer in ("verl", "openrlhf"):
        for script in (EXAMPLES / trainer).glob("*.sh"):
            if script.stem != "common":
                assert script.stem in res.stdout, script
    assert "deepspeed_zero3" in res.stdout


def test_examples_writes_the_script_and_what_it_sources(tmp_path):
    out = tmp_path / "launch"
    res = CliRunner().invoke(app, ["examples", "verl", "eqa_rm", "household_multiturn", "-o", str(out)])
    assert res.exit_code == 0, res.output
    written = sorted(p.name for p in out.iterdir())
    assert written == ["common.sh", "eqa_rm.sh", "household_multiturn.sh", "household_multiturn.yaml"]
    for name in written:
        assert (out / name).read_bytes() == (EXAMPLES / "verl" / name).read_bytes()
    assert os.access(out / "eqa_rm.sh", os.X_OK)


def test_a_written_verl_script_runs_from_its_new_folder(tmp_path):
    """The copy is self-contained: its dry run (no verl needed) prints the overrides."""
    CliRunner().invoke(app, ["examples", "verl", "eqa_rm", "-o", str(tmp_path)])
    env = {
        **os.environ,
        "GROUNDRL_DRY_RUN": "1",
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    res = subprocess.run(
        ["bash", str(tmp_path / "eqa_rm.sh")], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr
    assert "+reward.custom_reward_function.reward_kwargs.recipe=eqa_rm" in res.stdout.splitlines()


def test_examples_refuses_to_replace_a_changed_file_without_force(tmp_path):
    (tmp_path / "common.sh").write_text("# mine\n")
    res = CliRunner().invoke(app, ["examples", "openrlhf", "argos", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "--force" in res.output
    assert (tmp_path / "common.sh").read_text() == "# mine\n" and not (tmp_path / "argos.sh").exists()
    res = CliRunner().invoke(app, ["examples", "openrlhf", "argos", "-o", str(tmp_path), "--force"])
    assert (
        res.exit_code == 0
        and (tmp_path / "common.sh").read_bytes() == (EXAMPLES / "openrlhf/common.sh").read_bytes()
    )


def test_examples_accelerate_and_unknown_names(tmp_path):
    res = CliRunner().invoke(app, ["examples", "accelerate", "ddp", "-o", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "ddp.yaml").read_bytes() == (PACKAGED / "accelerate" / "ddp.yaml").read_bytes()
    res = CliRunner().invoke(app, ["examples", "verl", "eqa", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "no verl 'eqa'" in res.output
    with pytest.raises(ValueError, match="there are: "):
        launch_files("trl", "eqa_rm")


def test_every_command_a_preset_shows_names_a_packaged_file(tmp_path, monkeypatch):
    """The headers' `--config NAME` and `--config_file configs/accelerate/…` lines work
    without a checkout (the accelerate ones through `groundrl examples accelerate`)."""
    monkeypatch.chdir(tmp_path)
    shown = {
        m.group(1)
        for p in PACKAGED.rglob("*.yaml")
        for m in re.finditer(r"--config(?:_file)? (\S+)", p.read_text(encoding="utf-8"))
    } - {"FILE.yaml"}
    assert len(shown) >= 20
    assert [name for name in sorted(shown) if find_config(name) is None] == []
