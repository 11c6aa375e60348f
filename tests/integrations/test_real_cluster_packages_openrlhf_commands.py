"""Every OpenRLHF command groundrl ships or documents passes the installed OpenRLHF
0.11 parser and the checks after it (train_ppo_ray.py's main block, in .venv-cluster):
examples/openrlhf/<recipe>.sh with the reward-function file and with the reward server,
the multi-turn script, each `… -m openrlhf.cli.train_ppo_ray …` command in README.md and
docs/, and each OpenRLHF flag those docs name in passing — so a renamed flag fails here."""

from __future__ import annotations

import json
import os
import shlex
import sys

from cluster_support import ROOT, drive, needs_cluster_env
from doc_commands import groundrl_flags, openrlhf_commands, openrlhf_flags

pytestmark = needs_cluster_env

LABELS = {
    "reinforced_planning": "gold",
    "embodied_brain": "gold",
    "eqa_rm": "gt_score",
    "proxy_grm": "preferred",
    "argos": "answer",
}


def _dry_run(script: str, **env: str) -> list[str]:
    import subprocess

    r = subprocess.run(
        ["bash", str(ROOT / "examples" / "openrlhf" / f"{script}.sh")],
        capture_output=True,
        text=True,
        env={**os.environ, "GROUNDRL_DRY_RUN": "1", "PYTHON": sys.executable, **env},
        check=True,
    )
    return shlex.split(r.stdout.replace("\\\n", " "))  # the printed command, `\`-continued


def test_scripts_and_documented_commands_pass_openrlhfs_parser(tmp_path):
    commands, submits = {}, {}
    for recipe in LABELS:
        for reward in ("file", "server"):
            cmd = _dry_run(recipe, REWARD=reward, JUDGE_URL="http://127.0.0.1:8000/v1")
            submits[f"{recipe}/{reward}"] = cmd
            commands[f"{recipe}/{reward}"] = cmd[cmd.index("openrlhf.cli.train_ppo_ray") + 1 :]
    cmd = _dry_run("household_multiturn")
    commands["household_multiturn"] = cmd[cmd.index("openrlhf.cli.train_ppo_ray") + 1 :]
    documented = openrlhf_commands()
    commands.update(documented)
    flags = sorted(set(openrlhf_flags()) - groundrl_flags())
    assert len(documented) >= 1 and len(flags) >= 10  # the docs were read
    # a live control: 0.10's --remote_rm_url / --label_key, which 0.11 refuses
    spec = {
        "commands": {**commands, "control": ["--remote_rm_url", "r.py"]},
        "flags": [*flags, "--remote_rm_url", "--label_key"],
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    out = drive("openrlhf_commands.py", str(tmp_path / "spec.json"))
    assert "unrecognized arguments: --remote_rm_url" in out["commands"].pop("control")
    assert out["commands"] == {name: "ok" for name in commands}
    assert out["unknown_flags"] == ["--label_key", "--remote_rm_url"]
    for recipe, label in LABELS.items():
        f, s = out["parsed"][f"{recipe}/file"], out["parsed"][f"{recipe}/server"]
        # (OpenRLHF's checks split the URL list on commas)
        (path,) = f["reward.remote_url"]
        assert path.endswith("groundrl/integrations/openrlhf.py")
        assert s["reward.remote_url"] == ["http://127.0.0.1:5000/get_reward"]
        assert f["data.label_key"] == s["data.label_key"] == label
        runtime = json.loads(submits[f"{recipe}/file"][4].split("=", 1)[1])["env_vars"]
        assert (
            runtime["GROUNDRL_RECIPE"] == recipe
            and runtime["GROUNDRL_JUDGE_URL"] == "http://127.0.0.1:8000/v1"
        )
    assert "tau" in json.loads(
        json.loads(submits["argos/file"][4].split("=", 1)[1])["env_vars"]["GROUNDRL_OPTIONS"]
    )
