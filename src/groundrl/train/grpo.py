"""``groundrl train RECIPE --config FILE.yaml``: a TRL ``GRPOTrainer`` for any recipe.

dataset (JSONL: ``prompt`` text, optional ``images`` paths, the recipe's fields) → chat
prompts with image parts → the recipe's rubric through :mod:`groundrl.integrations.trl`
(one reward function per part, ``reward_weights``, per-part logging) → ``GRPOConfig``
from the YAML's ``grpo:`` section on top of CPU-safe defaults.

YAML keys: ``model`` (a local path, or ``tiny`` to build the tiny random Qwen2.5-VL),
``data`` (JSONL path), ``recipe_options`` (the recipe's declared options, e.g.
``action_map``; ``groundrl recipes`` lists them), ``judge`` (a
:class:`~groundrl.judges.config.JudgeConfig` block for the recipe's model-based parts,
e.g. ``{backend: openai, model: judge, url: "http://127.0.0.1:8000/v1"}``), ``output_dir``,
``grpo`` (any ``GRPOConfig`` field), ``step_grpo`` (``{p: 0.5, seed: 0}``: EmbodiedBrain's
Step-GRPO guided precursors, see :func:`apply_step_hints`). The same file with a real checkpoint path and GPU
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


CONFIG_KEYS = ("model", "data", "recipe", "recipe_options", "judge", "output_dir", "grpo", "step_grpo")


def load_config(path: str | Path) -> dict[str, Any]:
    import yaml

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"config not found: {p}")
    cfg = yaml.safe_load(p.read_text()) or {}
    if not isinstance(cfg, dict):
        raise ValueError(f"{p}: the config must be a YAML mapping")
    unknown = set(cfg) - set(CONFIG_KEYS)
    if unknown:
        raise ValueError(f"{p}: unknown key(s) {sorted(unknown)}; allowed: {', '.join(CONFIG_KEYS)}")
    if cfg.get("recipe_options") is not None and not isinstance(cfg["recipe_options"], dict):
        raise ValueError(f"{p}: recipe_options must be a mapping {{option: value}}")
    if cfg.get("judge") is not None:
        from groundrl.judges.config import JudgeConfig

        try:
            cfg["judge"] = JudgeConfig.from_mapping(cfg["judge"])
        except ValueError as e:
            raise ValueError(f"{p}: judge: {e}") from None
    return cfg


def check_recipe_options(recipe: str, cfg: dict[str, Any]) -> None:
    """Unknown or badly typed ``recipe_options`` (and a judge for a recipe without
    model-based parts) fail here, before any model is loaded."""
    rec = get_recipe(recipe)
    rec.resolve_options(cfg.get("recipe_options") or {})
    if cfg.get("judge") is not None and rec.judge_factory is None:
        raise ValueError(f"recipe {recipe!r} has no model-based parts; drop the judge block")


def apply_step_hints(records: list[dict[str, Any]], p: float = 0.5, seed: int = 0) -> list[dict[str, Any]]:
    """Step-GRPO (EmbodiedBrain): with probability ``p`` a record's prompt gets a random
    prefix (0 … T−1 steps, uniform) of its gold plan as guided precursors and its ``gold``
    becomes the remaining steps, so the reward scores the completion of what is left.
    ``gold`` may be a list of steps (reinforced planning) or a completion with
    ``<actions>`` (EmbodiedBrain); records without a usable gold are left as they are."""
    import random

    from groundrl.curate.step_hints import hinted_prompt, step_hint
    from groundrl.parse.plans import extract_actions
    from groundrl.parse.structured import parse_literal_list

    rng = random.Random(seed)
    out = []
    for rec in records:
        gold = rec.get("gold")
        steps, wrap = None, None
        if isinstance(gold, list):
            steps = gold
        elif isinstance(gold, str) and "<actions>" in gold:
            acts = extract_actions(gold)
            steps, wrap = (acts.value, "actions") if acts.ok else (None, None)
        elif isinstance(gold, str):
            lit = parse_literal_list(gold)
            steps = lit.value if lit.ok else None
        if not steps:
            out.append(rec)
            continue
        prefix, rest, hinted = step_hint(steps, rng, p)
        if not hinted:
            out.append(rec)
            continue
        new = dict(rec)
        new["prompt"] = hinted_prompt(rec["prompt"], [s if isinstance(s, str) else repr(s) for s in prefix])
        new["gold"] = f"<actions>{rest!r}</actions>" if wrap else rest
        out.append(new)
    return out


def load_dataset_records(path: str | Path, step_grpo: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    from PIL import Image

    rows = []
    base = Path(path).parent
    raw = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    if step_grpo:
        raw = apply_step_hints(raw, float(step_grpo.get("p", 0.5)), int(step_grpo.get("seed", 0)))
    for k, rec in enumerate(raw, start=1):
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
    check_recipe_options(recipe, cfg)
    out = Path(cfg.get("output_dir", f"runs/train-{recipe}"))
    out.mkdir(parents=True, exist_ok=True)
    model_path = cfg.get("model", "tiny")
    if model_path == "tiny":
        model_path = str(build_tiny_vlm(out / "tiny-model", seed=0))
    ensure_processor_registered()
    model, processor = load_tiny_vlm(model_path)
    if "data" not in cfg:
        raise ValueError("the config needs `data:` (a JSONL of prompts and the recipe's fields)")
    rows = load_dataset_records(cfg["data"], cfg.get("step_grpo"))
    missing = [f for f in rec.required if f not in rows[0]]
    if missing:
        raise ValueError(f"{cfg['data']}: recipe {recipe} needs field(s) {missing}")
    funcs, weights = reward_funcs(recipe, recipe_options=cfg.get("recipe_options"), judge=cfg.get("judge"))
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
