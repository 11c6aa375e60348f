"""The wheel runs a packaged preset from outside the checkout (issue 35 item 6): the wheel
is built from a copy of the source (so the checkout gets no build/ or egg-info), installed
with no dependencies into a fresh venv that reuses the main venv's packages through one
.pth line (the checkout's editable groundrl is not on that path), and run from an empty
temporary folder. Offline: `uv` builds with the main venv's setuptools and never asks an
index."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
UV = ROOT / ".venv" / "bin" / "uv"
CHECKOUT_PATHS = (f"{ROOT}/src", f"{ROOT}/configs", f"{ROOT}/examples")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not UV.is_file(), reason="uv is not in .venv (make setup installs it)"),
]


def _run(cmd: list[str], cwd: Path, env: dict[str, str], ok: bool = True) -> subprocess.CompletedProcess:
    res = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    if ok:
        assert res.returncode == 0, f"{cmd}: {res.stdout}\n{res.stderr}"
    return res


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, dict[str, str], Path]:
    """(the fresh venv, the environment to run it in, an empty working folder)."""
    tmp = tmp_path_factory.mktemp("wheel")
    copy = tmp / "source"
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(ROOT / "src", copy / "src", symlinks=True, ignore=skip)  # src/groundrl/launch: a link
    shutil.copytree(ROOT / "examples", copy / "examples", ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, copy / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(UV_OFFLINE="1", UV_CACHE_DIR=str(tmp / "uv-cache"), UV_NO_CONFIG="1", OMP_NUM_THREADS="1")
    py = sys.executable
    _run(
        [
            str(UV),
            "build",
            "--wheel",
            "--no-build-isolation",
            "--python",
            py,
            "-o",
            str(tmp / "dist"),
            str(copy),
        ],
        tmp,
        env,
    )
    (wheel,) = (tmp / "dist").glob("groundrl-*.whl")
    venv = tmp / "venv"
    _run([str(UV), "venv", "--python", py, str(venv)], tmp, env)
    site = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])
    (site / "_groundrl_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run(
        [str(UV), "pip", "install", "--python", str(venv / "bin" / "python"), "--no-deps", str(wheel)],
        tmp,
        env,
    )
    work = tmp / "work"
    work.mkdir()
    env["PATH"] = f"{venv / 'bin'}:{env.get('PATH', '')}"
    return venv, env, work


def _outside(text: str) -> bool:
    return not any(p in text for p in CHECKOUT_PATHS)


def test_the_wheel_is_what_runs(installed):
    venv, env, work = installed
    code = "import groundrl, groundrl.presets as p; print(groundrl.__file__); print(p.configs_dir())"
    out = _run([str(venv / "bin" / "python"), "-c", code], work, env).stdout.split()
    assert all(Path(line).is_relative_to(venv) for line in out), out
    listing = _run([str(venv / "bin" / "groundrl"), "train", "--list-configs"], work, env).stdout
    assert (
        "papers/eqa_rm" in listing and "cpu-tiny/argos" in listing and "accelerate/deepspeed_zero3" in listing
    )
    assert str(venv) in listing and _outside(listing)


def test_a_paper_preset_prints_and_dry_runs_from_the_package(installed):
    venv, env, work = installed
    groundrl = str(venv / "bin" / "groundrl")
    shown = _run([groundrl, "train", "--config", "papers/eqa_rm", "--print-config"], work, env)
    assert "recipe: eqa_rm" in shown.stdout and "data: /data/eqa_rm/train.jsonl" in shown.stdout
    assert _outside(shown.stdout + shown.stderr)
    dry = _run([groundrl, "train", "--config", "papers/eqa_rm", "--dry-run"], work, env, ok=False)
    # the paper's data and GPU packages are not here: exit 2 naming them, read from the wheel's preset
    assert dry.returncode == 2, dry.stdout + dry.stderr
    assert "data /data/eqa_rm/train.jsonl not found" in dry.stderr and "flash-attn" in dry.stderr
    assert "groundrl/configs/papers" in dry.stderr and str(venv) in dry.stderr
    assert _outside(dry.stdout + dry.stderr)


def test_a_cpu_tiny_preset_dry_runs_with_its_packaged_data(installed):
    venv, env, work = installed
    cmd = [str(venv / "bin" / "groundrl"), "train", "--config", "cpu-tiny/reinforced_planning", "--dry-run"]
    dry = _run([*cmd, "-o", "runs/rr"], work, env)
    data = [ln.split("data: ", 1)[1] for ln in dry.stdout.splitlines() if ln.strip().startswith("data: ")]
    assert data and all(Path(d).is_relative_to(venv) and Path(d).is_file() for d in data), data
    assert "2 stage(s) would run; nothing was trained" in dry.stderr
    assert _outside(dry.stdout + dry.stderr)


def test_the_launch_scripts_come_from_the_wheel(installed):
    venv, env, work = installed
    _run([str(venv / "bin" / "groundrl"), "examples", "verl", "eqa_rm", "-o", "launch"], work, env)
    for name in ("eqa_rm.sh", "common.sh"):
        assert (work / "launch" / name).read_bytes() == (ROOT / "examples" / "verl" / name).read_bytes()
