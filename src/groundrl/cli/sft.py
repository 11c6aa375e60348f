"""``groundrl sft DATA.jsonl``: supervised fine-tuning (cold start or RFT) on TRL's SFTTrainer."""

from __future__ import annotations

from pathlib import Path

import typer


def command(
    data: Path = typer.Argument(
        ..., exists=True, dir_okay=False, help='JSONL of {"prompt", "target", "images"?: [paths]}.'
    ),
    model: str = typer.Option(
        "tiny", "--model", help="A local checkpoint path, or `tiny` to build the tiny random Qwen2.5-VL."
    ),
    output: Path = typer.Option(
        Path("runs/sft"), "-o", "--output", help="Output directory (the model lands in OUTPUT/final)."
    ),
    max_steps: int = typer.Option(100, "--max-steps", help="Optimisation steps."),
    batch_size: int = typer.Option(2, "--batch-size", help="Per-device batch size."),
    learning_rate: float = typer.Option(1e-4, "--lr", help="Learning rate."),
    cpu: bool = typer.Option(True, "--cpu/--gpu", help="Train on the CPU (default) or on the GPU with bf16."),
) -> None:
    """Fine-tune on (prompt, images, target) records with the loss on the target only."""
    from groundrl.train.sft import build_sft_trainer, read_jsonl

    if model == "tiny":
        from groundrl.testing.tiny_vlm import build_tiny_vlm

        model = str(build_tiny_vlm(output / "tiny-model", seed=0))
    elif not Path(model).exists():
        raise typer.BadParameter(f"{model} is not a local path (no hub downloads)", param_hint="--model")
    try:
        rows = read_jsonl(data)
        trainer = build_sft_trainer(
            model,
            rows,
            str(output),
            base=data.parent,
            max_steps=max_steps,
            per_device_train_batch_size=batch_size,
            learning_rate=learning_rate,
            use_cpu=cpu,
            bf16=not cpu,
        )
    except (ValueError, KeyError, OSError) as e:
        raise typer.BadParameter(str(e)) from e
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    trainer.save_model(str(output / "final"))
    typer.echo(
        f"{len(losses)} logged steps, loss {losses[0]:.3f} -> {losses[-1]:.3f}; saved to {output}/final"
        if losses
        else f"saved to {output}/final"
    )
