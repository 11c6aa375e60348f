"""``groundrl train RECIPE --config FILE.yaml``: a TRL ``GRPOTrainer`` for any recipe.

dataset (JSONL: ``prompt`` text, optional ``images`` paths, the recipe's fields) → chat
prompts with image parts → the recipe's rubric through :mod:`groundrl.integrations.trl`
(one reward function per part, ``reward_weights``, per-part logging) → ``GRPOConfig``
from the YAML's ``grpo:`` section on top of CPU-safe defaults.

YAML keys: ``model`` (a local path, or ``tiny`` to build the tiny random Qwen2.5-VL),
``data`` (JSONL path), ``recipe_options`` (e.g. ``action_map``), ``output_dir``,
``grpo`` (any ``GRPOConfig`` field). The same file with a real checkpoint path and GPU
settings runs unchanged on a GPU (see ``configs/``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from groundrl.integrations.trl import reward_funcs
from groundrl.recipes import get_recipe

CPU_DEFAULTS: dict[str, Any] = {
    "use_cpu": True,
    "bf16": False,
    "gradient_checkpointing": False,
    "num_generations": 4,
    "per_device_train_batch_size": 4,
    "max_completion_length": 24,
    "report_to": [],
    "save_strategy": "no",
    "logging_steps": 1,
    "max_steps": 2,
    "learning_rate": 1e-3,
    "beta": 0.0,
    "disable_tqdm": True,
}


def load_config(path: str | Path) -> dict[str, Any]:
    import yaml

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"config not found: {p}")
    cfg = yaml.safe_load(p.read_text()) or {}
    if not isinstance(cfg, dict):
        raise ValueError(f"{p}: the config must be a YAML mapping")
    unknown = set(cfg) - {"model", "data", "recipe_options", "output_dir", "grpo", "recipe"}
    if unknown:
        raise ValueError(
            f"{p}: unknown key(s) {sorted(unknown)}; allowed: model, data, recipe_options, output_dir, grpo"
        )
    return cfg


def load_dataset_records(path: str | Path) -> list[dict[str, Any]]:
    from PIL import Image

    rows = []
    base = Path(path).parent
    for k, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        rec = json.loads(line)
        if "prompt" not in rec:
            raise ValueError(f"{path}:{k}: every record needs a `prompt`")
        images = [
            Image.open(p if Path(p).is_absolute() else base / p).convert("RGB") for p in rec.pop("images", [])
        ]
        content: list[dict[str, Any]] = [{"type": "image"} for _ in images]
        content.append({"type": "text", "text": rec.pop("prompt")})
        row = {
            "prompt": [{"role": "user", "content": content}],
            **{k2: _arrow_safe(v) for k2, v in rec.items()},
        }
        if images:
            row["images"] = images
        rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no records")
    return rows


def _arrow_safe(v: Any) -> Any:
    # Arrow needs one type per column: nested lists/dicts of mixed shapes go as JSON text;
    # the rewards parse literal strings (gold plans) anyway.
    if isinstance(v, (dict, list)) and not (isinstance(v, list) and all(isinstance(x, str) for x in v)):
        return json.dumps(v)
    return v


def build_trainer(
    recipe: str,
    cfg: dict[str, Any],
    extra_reward_funcs: Sequence[Callable[..., Any]] = (),
    extra_weights: Sequence[float] = (),
) -> Any:
    """A ready ``GRPOTrainer`` (call ``.train()``)."""
    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from groundrl.testing.tiny_vlm import build_tiny_vlm, ensure_processor_registered, load_tiny_vlm

    torch.set_num_threads(1)
    rec = get_recipe(recipe)
    out = Path(cfg.get("output_dir", f"runs/train-{recipe}"))
    out.mkdir(parents=True, exist_ok=True)
    model_path = cfg.get("model", "tiny")
    if model_path == "tiny":
        model_path = str(build_tiny_vlm(out / "tiny-model", seed=0))
    ensure_processor_registered()
    model, processor = load_tiny_vlm(model_path)
    if "data" not in cfg:
        raise ValueError("the config needs `data:` (a JSONL of prompts and the recipe's fields)")
    rows = load_dataset_records(cfg["data"])
    missing = [f for f in rec.required if f not in rows[0]]
    if missing:
        raise ValueError(f"{cfg['data']}: recipe {recipe} needs field(s) {missing}")
    funcs, weights = reward_funcs(recipe, **(cfg.get("recipe_options") or {}))
    funcs = [*funcs, *extra_reward_funcs]
    weights = [*weights, *extra_weights]
    args = GRPOConfig(
        output_dir=str(out), reward_weights=weights, **{**CPU_DEFAULTS, **(cfg.get("grpo") or {})}
    )
    return GRPOTrainer(
        model=model,
        processing_class=processor,
        reward_funcs=funcs,
        args=args,
        train_dataset=Dataset.from_list(rows),
    )
