"""The GPU rehearsal's verl and OpenRLHF launches (``scripts/gpu_rehearsal.sh --plan``, issue
35 item 5) pass the installed trainers' own start-up checks, so a renamed flag or a batch
geometry verl refuses fails here and not minutes into a GPU run: verl 0.8's composition and
the checks ``main_ppo`` / ``main_ppo_sync`` make (cluster/verl_examples.py's path for
documented calls), OpenRLHF 0.11's parser and the checks after it (openrlhf_household.flags)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from cluster_support import PY, ROOT, drive, needs_cluster_env

pytestmark = needs_cluster_env
REHEARSAL = ROOT / "scripts" / "gpu_rehearsal.sh"


def _planned(tmp_path: Path) -> dict[str, list[str]]:
    env = {**os.environ, "PY": sys.executable, "CPY": str(PY), "OPY": str(PY)}
    res = subprocess.run(
        ["bash", str(REHEARSAL), "--plan", str(tmp_path / "plan")],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    return {
        line.removeprefix("== PLANNED "): shlex.split(lines[i + 1])
        for i, line in enumerate(lines)
        if line.startswith("== PLANNED ")
    }


def _env_call(argv: list[str]) -> tuple[dict[str, str], str, list[str]]:
    """``env A=1 B=2 bash SCRIPT ARGS…`` as (environment, script, arguments)."""
    assert argv[0] == "env", argv
    k = next(i for i, a in enumerate(argv[1:], 1) if "=" not in a)
    assert argv[k] == "bash", argv
    return dict(a.split("=", 1) for a in argv[1:k]), argv[k + 1], argv[k + 2 :]


def test_the_rehearsals_verl_launches_pass_verls_start_up_checks(tmp_path):
    steps = _planned(tmp_path)
    calls = []
    for name, argv in steps.items():
        if name.startswith("verl ") and name.endswith("(2 steps)"):
            env, script, args = _env_call(argv)
            calls.append([str(Path(script).relative_to(ROOT)), env, args])
    names = [Path(c[0]).name for c in calls]
    assert names == ["household_multiturn.sh", "eqa_rm.sh", "reinforced_planning.sh", "eqa_rm.sh"]
    assert calls[2][1]["MODEL"].endswith("trl/sft/final")
    image = calls[3][1]
    assert "tiny-qwen2.5-vl" in image["MODEL"] and image["TRAIN"].endswith("eqa_rm_images.parquet")
    (tmp_path / "calls.json").write_text(json.dumps({"calls": calls, "keys": []}))
    out = drive("verl_examples.py", str(ROOT), str(tmp_path / "calls.json"), timeout=480)
    ok = {"main_ppo": "ok", "main_ppo_sync": "ok"}
    assert out["docs"] == {f"{k}:{c[0]}": ok for k, c in enumerate(calls)}


def test_the_rehearsals_openrlhf_launch_passes_openrlhfs_parser(tmp_path):
    steps = _planned(tmp_path)
    argv = next(v for n, v in steps.items() if n.startswith("OpenRLHF reinforced_planning GRPO"))
    env, script, args = _env_call(argv)
    run_env = {**os.environ, **env, "GROUNDRL_DRY_RUN": "1", "PYTHONPATH": str(ROOT / "src")}
    run_env["PATH"] = f"{PY.parent}:{os.environ['PATH']}"
    res = subprocess.run(["bash", script, *args], capture_output=True, text=True, env=run_env, timeout=120)
    assert res.returncode == 0, res.stderr
    cmd = shlex.split(res.stdout.replace("\\\n", " "))
    parsed = drive("openrlhf_household.py", "flags", *cmd[cmd.index("openrlhf.cli.train_ppo_ray") + 1 :])[
        "parsed"
    ]
    # the rehearsal's own flags come after the recipe script's and win
    assert parsed["reward.remote_url"] == [str(ROOT / "scripts" / "rehearsal_openrlhf_reward.py")]
    assert parsed["data.max_samples"] == 4 and parsed["rollout.batch_size"] == 2  # 2 steps of 2 prompts
    assert parsed["rollout.n_samples_per_prompt"] == 4 and parsed["algo.dynamic_filtering_range"] == [
        -1.0,
        2.0,
    ]
    assert parsed["actor.model_name_or_path"].endswith("trl/sft/final")
