"""Run in .venv-cluster: every examples/verl/*.sh (dry run) gives Hydra overrides that
compose with verl 0.8's own ppo_trainer config and pass the checks verl's entry points
run before training; verl's get_custom_reward_fn loads groundrl's compute_score from the
recipe scripts' config and scores a sample of the recipe.

The checks, as verl 0.8 runs them (the entry modules themselves need CUDA-only imports):
* ``verl.trainer.main_ppo``: ``main`` applies ``auto_set_device`` and
  ``migrate_legacy_reward_impl``; ``TaskRunner.run`` resolves the config
  (``OmegaConf.resolve``) and calls ``validate_config`` with ``need_reference_policy`` /
  ``need_critic``;
* ``verl.trainer.main_ppo_sync``: ``main`` applies ``auto_set_device``, sets
  ``transfer_queue.enable`` and calls ``validate_config``; then ``TaskRunner.run``
  resolves the config.
Each script runs at its default geometry (1 node x 8 GPUs), argos also at the two others
common.sh's header documents; a control with the actor micro-batch unset must fail verl's check."""

import asyncio
import copy
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import verl
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from verl.experimental.reward_loop import migrate_legacy_reward_impl
from verl.trainer.ppo.reward import get_custom_reward_fn
from verl.trainer.ppo.utils import need_critic, need_reference_policy
from verl.utils.config import validate_config
from verl.utils.device import auto_set_device

ROOT = Path(sys.argv[1])
CONF = Path(verl.__file__).parent / "trainer" / "config"
SCRIPTS = ["eqa_rm", "argos", "reinforced_planning", "embodied_brain", "proxy_grm", "household_multiturn"]
GEOMETRIES = {  # the header of examples/verl/common.sh
    "1x8": {},
    "1x1": {"GPUS": "1", "BATCH": "8", "MINI_BATCH": "4", "MICRO": "2"},
    "2x8": {"NODES": "2"},
}
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
env["ACTION_MAP"] = str(ROOT / "src" / "groundrl" / "data" / "examples" / "action_map.json")


def overrides(script: str, extra_env: dict) -> list[str]:
    r = subprocess.run(
        ["bash", str(ROOT / "examples" / "verl" / f"{script}.sh")],
        capture_output=True,
        text=True,
        env={**env, **extra_env},
    )
    assert r.returncode == 0, r.stderr
    return r.stdout.split("\n")[:-1]


def start_checks(cfg) -> dict:
    """verl's pre-training steps of each entry point; "ok" or the error it raises."""
    out = {}
    for entry in ("main_ppo", "main_ppo_sync"):
        c = copy.deepcopy(cfg)
        try:
            auto_set_device(c)
            if entry == "main_ppo":
                c = migrate_legacy_reward_impl(c)
                OmegaConf.resolve(c)
                validate_config(c, use_reference_policy=need_reference_policy(c), use_critic=need_critic(c))
            else:
                c.transfer_queue.enable = True
                validate_config(c, use_reference_policy=need_reference_policy(c), use_critic=need_critic(c))
                OmegaConf.resolve(c)
            out[entry] = "ok"
        except Exception as e:
            out[entry] = f"{type(e).__name__}: {str(e)[:300]}"
    return out


out = {"scripts": {}, "control": None}
with initialize_config_dir(config_dir=str(CONF), version_base=None):
    for script in SCRIPTS:
        res = {"checks": {}}
        # the geometry code is shared (common.sh): the other machines once, on argos
        for geo, genv in GEOMETRIES.items() if script == "argos" else [("1x8", {})]:
            ov = overrides(script, genv)
            cfg = compose(config_name="ppo_trainer", overrides=ov)
            res["checks"][geo] = start_checks(cfg)
            if geo == "1x8":
                res["n_overrides"] = len(ov)
                res["real_batch"] = cfg.data.train_batch_size * cfg.actor_rollout_ref.rollout.n
                res["n_gpus"] = cfg.trainer.n_gpus_per_node * cfg.trainer.nnodes
                default_cfg = cfg
        if script in SAMPLES:
            sol, gt, extra, want = SAMPLES[script]
            fn = get_custom_reward_fn(default_cfg)
            got = fn(f"groundrl/{script}", sol, gt, extra) if script != "proxy_grm" else None
            if inspect.isawaitable(got):  # compute_score_async, as verl's reward loop awaits it
                got = asyncio.run(got)
            res["async"] = inspect.iscoroutinefunction(fn)
            rcfg = default_cfg.reward.custom_reward_function
            res.update(
                path=rcfg.path,
                kwargs=json.loads(json.dumps(OmegaConf.to_container(rcfg.reward_kwargs), default=str)),
                score=None if got is None else got["score"],
                want=want,
            )
        out["scripts"][script] = res
    # the docs' own commands (argv[2]: [[script path, env, args], …]) and override keys
    docs = json.loads(Path(sys.argv[2]).read_text()) if len(sys.argv) > 2 else {"calls": [], "keys": []}
    out["docs"] = {}
    for k, (script, denv, args) in enumerate(docs["calls"]):
        name = Path(script).stem
        ov = overrides(name, denv) + args
        out["docs"][f"{k}:{script}"] = start_checks(compose(config_name="ppo_trainer", overrides=ov))
    base = compose(config_name="ppo_trainer", overrides=overrides("household_multiturn", {}))
    out["doc_keys_missing"] = [
        key for key in docs["keys"] if OmegaConf.select(base, key, default="<missing>") == "<missing>"
    ]
    bad = overrides("argos", {}) + ["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=null"]
    out["control"] = start_checks(compose(config_name="ppo_trainer", overrides=bad))
print(json.dumps(out))
