"""examples/openrlhf/*.sh without OpenRLHF (issue 39 item 7): the dry run prints one
command that bash runs as printed, the prompt file is GROUNDRL_PROMPTS (the docs' DATA
folder neither reaches it nor breaks it; a folder is refused), the multi-turn script
writes its prompts outside the repo, and each recipe's KL is its paper preset's β.
OpenRLHF's own parser reads these commands in test_real_cluster_packages_openrlhf_*."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "examples" / "openrlhf"
RECIPES = ["reinforced_planning", "embodied_brain", "eqa_rm", "proxy_grm", "argos"]
# `ray` as a shell function that prints its argv, one NUL-ended word each
ECHO_RAY = 'ray() { printf "%s\\0" "$@"; }; eval "$(cat)"'


def _script(name: str, tmp_path: Path, dry: bool = True, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in ("DATA", "GROUNDRL_PROMPTS", "KL_COEF")}
    env = {**base, "PYTHON": sys.executable, "TMPDIR": str(tmp_path), **env}
    if dry:
        env["GROUNDRL_DRY_RUN"] = "1"
    return subprocess.run(
        ["bash", str(SCRIPTS / f"{name}.sh")], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )


def _argv(printed: str) -> list[str]:
    """What bash runs when the printed command is pasted (``ray`` stubbed out)."""
    r = subprocess.run(["bash", "-c", ECHO_RAY], input=printed, capture_output=True, text=True, check=True)
    return r.stdout.split("\0")[:-1]


def _flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def _preset_beta(recipe: str) -> float:
    cfg = yaml.safe_load((ROOT / "configs" / "papers" / f"{recipe}.yaml").read_text())
    rl = [s for s in cfg["stages"] if "grpo" in s][-1]  # the RL stage (grpo / cgrpo / proxy_grpo)
    return float(rl["grpo"]["beta"])


@pytest.mark.parametrize("recipe", RECIPES)
def test_dry_run_is_one_pasteable_command_with_the_presets_kl(recipe, tmp_path):
    r = _script(recipe, tmp_path, JUDGE_URL="http://127.0.0.1:8000/v1", DATA=str(tmp_path))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.rstrip("\n").split("\n")
    argv = _argv(r.stdout)
    assert len(lines) < len(argv) / 1.5  # a flag and its value share a line (was one token each)
    assert all(line.endswith(" \\") for line in lines[:-1]) and not lines[-1].endswith("\\")
    assert argv[:2] == ["job", "submit"] and "openrlhf.cli.train_ppo_ray" in argv
    runtime = json.loads(argv[3].split("=", 1)[1])["env_vars"]  # survived the quoting intact
    assert runtime["GROUNDRL_RECIPE"] == recipe
    assert runtime["GROUNDRL_JUDGE_URL"] == "http://127.0.0.1:8000/v1"
    assert float(_flag(argv, "--algo.kl.init_coef")) == _preset_beta(recipe)
    assert _flag(argv, "--data.prompt_dataset") == "data/train.jsonl"  # the docs' DATA is not read


def test_prompts_variable_and_kl_override(tmp_path):
    prompts = tmp_path / "p.jsonl"
    r = _script("eqa_rm", tmp_path, GROUNDRL_PROMPTS=str(prompts), KL_COEF="0.2")
    argv = _argv(r.stdout)
    assert _flag(argv, "--data.prompt_dataset") == str(prompts)
    assert _flag(argv, "--algo.kl.init_coef") == "0.2"


@pytest.mark.parametrize("script", ["argos", "household_multiturn"])
def test_a_folder_as_the_prompt_file_is_refused(script, tmp_path):
    r = _script(script, tmp_path, GROUNDRL_PROMPTS=str(tmp_path))
    assert r.returncode == 2 and r.stdout == ""
    assert f"GROUNDRL_PROMPTS={tmp_path} is a folder: set it to the JSONL file of prompts" in r.stderr


def test_household_writes_its_prompts_outside_the_repo(tmp_path):
    """A real (not dry) run with a stub ``ray`` on PATH: the generated prompts go to
    TMPDIR and the job gets that file; the repo gains no data/ folder."""
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "ray").write_text('#!/usr/bin/env bash\nprintf "%s\\0" "$@" > "$RAY_ARGV"\n')
    (stub / "ray").chmod(0o755)
    had_data = (ROOT / "data").exists()
    env = {"PATH": f"{stub}:{os.environ['PATH']}", "RAY_ARGV": str(tmp_path / "argv"), "TASKS": "3"}
    r = _script("household_multiturn", tmp_path, dry=False, **env)
    assert r.returncode == 0, r.stderr
    want = tmp_path / "groundrl-household-3-0.jsonl"
    assert f"wrote 3 household prompts to {want}" in r.stdout
    assert len(want.read_text().splitlines()) == 3
    argv = (tmp_path / "argv").read_text().split("\0")[:-1]
    assert _flag(argv, "--data.prompt_dataset") == str(want)
    assert (ROOT / "data").exists() == had_data


@pytest.mark.parametrize("recipe", RECIPES)
def test_image_recipes_set_max_images_per_prompt(recipe, tmp_path):
    """OpenRLHF 0.11.2 serves images only when --data.max_images_per_prompt > 0 (vLLM's
    limit_mm_per_prompt); EQA-RM's 5 keyframes [EQA-RM §5.1], Argos' 32 frames [Argos §4.1],
    0 for the text recipes."""
    r = _script(recipe, tmp_path)
    assert r.returncode == 0, r.stderr
    want = {"eqa_rm": "5", "argos": "32"}.get(recipe, "0")
    assert _flag(_argv(r.stdout), "--data.max_images_per_prompt") == want
    assert (
        _flag(_argv(_script(recipe, tmp_path, MAX_IMAGES="3").stdout), "--data.max_images_per_prompt") == "3"
    )
