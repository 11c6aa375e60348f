"""``groundrl train RECIPE --config FILE.yaml``: GRPO on TRL with a recipe's rubric."""

from __future__ import annotations

from pathlib import Path

import typer

from groundrl.recipes import RECIPE_NAMES


def command(
    recipe: str = typer.Argument(..., help=f"One of: {', '.join(RECIPE_NAMES)}."),
    config: Path = typer.Option(
        ...,
        "--config",
        exists=True,
        dir_okay=False,
        help="YAML: model, data, recipe_options, output_dir, grpo.",
    ),
) -> None:
    """Train a policy with GRPO (TRL) on a recipe's rubric; see configs/ for CPU-tiny and GPU examples."""
    from groundrl.train.grpo import build_trainer, load_config

    try:
        cfg = load_config(config)
        trainer = build_trainer(recipe, cfg)
    except (ValueError, FileNotFoundError) as e:
        raise typer.BadParameter(str(e)) from e
    trainer.train()
    for h in trainer.state.log_history:
        if "reward" in h:
            parts = ", ".join(
                f"{k.split('/')[1]} {v:.3f}"
                for k, v in h.items()
                if k.startswith("rewards/") and k.endswith("/mean")
            )
            typer.echo(f"step {h['step']}: reward {h['reward']:.3f} ({parts})")
    trainer.save_model(str(Path(trainer.args.output_dir) / "final"))
    typer.echo(f"saved to {trainer.args.output_dir}/final")
