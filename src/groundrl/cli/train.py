"""``groundrl train RECIPE --config FILE.yaml``: GRPO on TRL with a recipe's rubric."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from groundrl.cli.recipe_options import RecipeArgs, recipe_by_name, recipe_command
from groundrl.recipes import recipe_names


@recipe_command
def command(
    recipe: str = typer.Argument(..., help=f"Recipe: {', '.join(recipe_names())}."),
    config: Path = typer.Option(
        ...,
        "--config",
        exists=True,
        dir_okay=False,
        help="YAML: model, data, recipe_options, judge, output_dir, grpo, step_grpo (see configs/).",
    ),
    recipe_args: RecipeArgs = None,  # type: ignore[assignment]
) -> None:
    """Train a policy with GRPO (TRL) on a recipe's rubric; see configs/ for CPU-tiny and GPU examples.
    -O KEY=VALUE overrides the YAML's recipe_options, --judge-* flags its judge block."""
    from groundrl.train.grpo import build_trainer, check_recipe_options, load_config

    rec = recipe_by_name(recipe)
    try:
        cfg = load_config(config)
        overrides = recipe_args.options(rec)  # typed, validated; the judge comes separately
        judge = overrides.pop("judge", None)
        cfg["recipe_options"] = {**(cfg.get("recipe_options") or {}), **overrides}
        if judge is not None:
            cfg["judge"] = judge
        check_recipe_options(recipe, cfg)
        trainer = build_trainer(recipe, cfg)
    except (ValueError, FileNotFoundError) as e:
        raise typer.BadParameter(str(e)) from e
    trainer.train()
    for h in trainer.state.log_history:
        if "reward" in h:
            parts = ", ".join(
                f"{k.split('/')[1]} {_num(v)}"
                for k, v in h.items()
                if k.startswith("rewards/") and k.endswith("/mean")
            )
            typer.echo(f"step {h['step']}: reward {_num(h['reward'])} ({parts})")
    trainer.save_model(str(Path(trainer.args.output_dir) / "final"))
    typer.echo(f"saved to {trainer.args.output_dir}/final")


def _num(v: object) -> str:
    # a part that applied to no completion of a step is logged as None or NaN by TRL
    if isinstance(v, (int, float)) and math.isfinite(v):
        return f"{v:.3f}"
    return "n/a"
