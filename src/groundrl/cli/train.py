"""``groundrl train RECIPE --config FILE.yaml``: GRPO on TRL with a recipe's rubric."""

from __future__ import annotations

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
        help="YAML: model, data, output_dir, recipe_options, judge, grpo/sft, step_grpo, online_filter, verifier, "
        "peft, freeze, image, stages (see docs/training.md and configs/).",
    ),
    recipe_args: RecipeArgs = None,  # type: ignore[assignment]
) -> None:
    """Train a policy with GRPO (TRL) on a recipe's rubric — or run a staged pipeline (SFT → GRPO,
    verifier-filtered SFT → SFT → GRPO) from the config's `stages:`; see configs/ and docs/training.md.
    -O KEY=VALUE overrides the YAML's recipe_options, --judge-* flags its judge block.
    Writes OUTPUT_DIR/final (the model, saved first), log.jsonl, report.md, curves.png, config.yaml."""
    from groundrl.train.grpo import check_recipe_options, load_config
    from groundrl.train.runlog import LOG_FILE, fmt, read_log
    from groundrl.train.stages import run_config

    rec = recipe_by_name(recipe)
    try:
        cfg = load_config(config)
        overrides = recipe_args.options(rec)  # typed, validated; the judge comes separately
        judge = overrides.pop("judge", None)
        cfg["recipe_options"] = {**(cfg.get("recipe_options") or {}), **overrides}
        if judge is not None:
            cfg["judge"] = judge
        check_recipe_options(recipe, cfg)
    except (ValueError, FileNotFoundError) as e:
        raise typer.BadParameter(str(e)) from e
    try:
        result = run_config(recipe, cfg, echo=typer.echo)
    except (ValueError, FileNotFoundError) as e:
        raise typer.BadParameter(str(e)) from e
    out = Path(result["output_dir"])
    for h in read_log(out / LOG_FILE):
        if "reward" in h:
            parts = ", ".join(
                f"{k.split('/')[1]} {fmt(v)}"
                for k, v in h.items()
                if k.startswith("rewards/") and k.endswith("/mean")
            )
            typer.echo(f"[{h.get('stage')}] step {h.get('step')}: reward {fmt(h['reward'])} ({parts})")
    if result["final"] is not None:
        typer.echo(f"saved to {result['final']}")
    typer.echo(f"log {out / LOG_FILE}, report {out / 'report.md'}")
