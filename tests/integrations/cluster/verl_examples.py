"""Run in .venv-cluster: every examples/verl/<recipe>.sh (dry run) gives Hydra overrides
that compose with verl 0.8's own ppo_trainer config, and verl's get_custom_reward_fn loads
groundrl's compute_score from that config and scores a sample of the recipe."""

import json
import os
import subprocess
import sys
from pathlib import Path

import verl
from hydra import compose, initialize_config_dir
from verl.trainer.ppo.reward import get_custom_reward_fn

ROOT = Path(sys.argv[1])
CONF = Path(verl.__file__).parent / "trainer" / "config"
SAMPLES = {  # (solution_str, ground_truth, extra_info) and the total that recipe gives
    "eqa_rm": ("<critique>c</critique><score>7</score>", 7, {}, 2.0),
    "argos": ("<answer>B</answer>", "B", {}, 1.0),
    # all four keys 0.125 + valid steps 0.125 + id/name in the map 0.25 (the map named
    # "alfred" in extra_info, configured by the script) + full prefix accuracy 1.0
    "reinforced_planning": (
        json.dumps(
            {
                "reasoning_and_reflection": "r",
                "visual_state_description": "v",
                "language_plan": "l",
                "executable_plan": [{"action_id": 0, "action_name": "find a Apple"}],
            }
        ),
        ["find a Apple"],
        {"action_map": "alfred"},
        1.5,
    ),
    "embodied_brain": ("<response>r</response>", None, {}, 0.2),  # the response term alone
    "proxy_grm": ("<rubric>r</rubric><eval>e</eval><answer>1</answer>", 1, {}, None),
}
env = {**os.environ, "GROUNDRL_DRY_RUN": "1", "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
amap = ROOT / "src" / "groundrl" / "data" / "examples" / "action_map.json"
env["ACTION_MAP"] = str(amap)
out = {}
for recipe, (sol, gt, extra, want) in SAMPLES.items():
    r = subprocess.run(
        ["bash", str(ROOT / "examples" / "verl" / f"{recipe}.sh")], capture_output=True, text=True, env=env
    )
    assert r.returncode == 0, r.stderr
    overrides = r.stdout.split("\n")[:-1]
    with initialize_config_dir(config_dir=str(CONF), version_base=None):
        cfg = compose(config_name="ppo_trainer", overrides=overrides)
    fn = get_custom_reward_fn(cfg)
    got = fn(f"groundrl/{recipe}", sol, gt, extra) if recipe != "proxy_grm" else None
    out[recipe] = {
        "n_overrides": len(overrides),
        "path": cfg.reward.custom_reward_function.path,
        "kwargs": json.loads(json.dumps(dict(cfg.reward.custom_reward_function.reward_kwargs), default=str)),
        "score": None if got is None else got["score"],
        "want": want,
    }
print(json.dumps(out))
