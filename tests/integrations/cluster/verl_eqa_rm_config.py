"""Shared by the verl image-row drivers (verl_image_rows.py, verl_rollout_step.py): verl's
trainer config composed from the overrides examples/verl/eqa_rm.sh prints in a dry run,
with the two data settings these CPU drivers need changed."""

import os
import subprocess
import sys
from pathlib import Path

import verl
from hydra import compose, initialize_config_dir
from omegaconf import DictConfig, open_dict


def eqa_rm_config(root: Path, parquet: str, *overrides: str, cache_dir: Path) -> DictConfig:
    """``ppo_trainer`` composed with eqa_rm.sh's overrides for ``parquet`` (and
    ``overrides`` after them). ``data.filter_overlong_prompts`` is off: its length count
    calls qwen_vl_utils, which needs torchvision (no CPU wheel for this torch); the
    drivers count the same tokens with the processor. ``data.cache_dir`` is ``cache_dir``."""
    env = {
        **os.environ,
        "GROUNDRL_DRY_RUN": "1",
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    r = subprocess.run(
        ["bash", str(root / "examples" / "verl" / "eqa_rm.sh"), f"data.train_files={parquet}", *overrides],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    with initialize_config_dir(
        config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None
    ):
        cfg = compose(config_name="ppo_trainer", overrides=r.stdout.split("\n")[:-1])
    with open_dict(cfg.data):
        cfg.data.filter_overlong_prompts = False
        cfg.data.cache_dir = str(cache_dir)
    return cfg
