"""``groundrl sft INPUT.jsonl -o RUN_DIR``: supervised fine-tuning (cold start or RFT) on TRL's SFTTrainer."""

from __future__ import annotations

from pathlib import Path

import typer

from groundrl.models.tiny_vlm import build_tiny_vlm


def command(
    input: Path = typer.Argument(
        ...,
        metavar="INPUT",
        exists=True,
        dir_okay=False,
        readable=True,
        help='JSONL of {"prompt", "target", "images"?: [paths relative to the file]}; text-only and '
        "image records may be mixed.",
    ),
    model: str = typer.Option(
        "tiny",
        "--model",
        help="A local checkpoint path, a model fixture (`groundrl models list`, e.g. "
        "smollm2-135m-instruct), or `tiny` to build the tiny random Qwen2.5-VL.",
    ),
    output: Path = typer.Option(
        Path("runs/sft"),
        "-o",
        "--output",
        help="Run folder (created): the model lands in OUTPUT/final, a `tiny` model in OUTPUT/tiny-model.",
    ),
    max_steps: int = typer.Option(100, "--max-steps", min=1, help="Optimisation steps."),
    batch_size: int = typer.Option(2, "--batch-size", min=1, help="Per-device batch size."),
    learning_rate: float = typer.Option(1e-4, "--lr", help="Learning rate."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Train on the first N records only."),
    seed: int = typer.Option(0, "--seed", help="Seed of the data order and of the `tiny` model's weights."),
    cpu: bool = typer.Option(True, "--cpu/--gpu", help="Train on the CPU (default) or on the GPU with bf16."),
) -> None:
    """Fine-tune a VLM on (prompt, images, target) records with the loss on the target only.

    Records may mix text-only and image ones. Writes OUTPUT/final (model + processor).
    """
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.train.sft import build_sft_trainer

    if not 0 < learning_rate <= 1:  # also NaN: a NaN or infinite rate trains a NaN model (issue 42)
        raise typer.BadParameter(f"must be a number > 0 and ≤ 1, got {learning_rate}", param_hint="--lr")
    rows = _read_rows(input, limit)
    tiny = model == "tiny"
    model = _model_path(model, output, seed)
    try:
        trainer = build_sft_trainer(
            model,
            rows,
            str(output),
            base=input.parent,
            max_steps=max_steps,
            per_device_train_batch_size=batch_size,
            learning_rate=learning_rate,
            seed=seed,
            use_cpu=cpu,
            bf16=not cpu,
        )
    except (ValueError, KeyError, OSError) as e:
        raise typer.BadParameter(str(e), param_hint="INPUT") from e
    _train_and_save(trainer, output, len(rows), tiny)


def _read_rows(input: Path, limit: int | None) -> list:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.io import read_jsonl

    try:
        rows = read_jsonl(input, limit=limit)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="INPUT") from e
    if not rows:
        raise typer.BadParameter(f"{input} has no records", param_hint="INPUT")
    return rows


def _model_path(model: str, output: Path, seed: int) -> str:
    """``tiny`` built under OUTPUT, a fixture name resolved to its folder, else a local path."""
    if model == "tiny":
        return str(build_tiny_vlm(output / "tiny-model", seed=seed))
    # a fixture name → its converted folder (groundrl models get)
    # lazy: the fixture module loads only when a model is named
    from groundrl.models.fixtures import resolve_model

    model = resolve_model(model)
    if not Path(model).exists():
        raise typer.BadParameter(f"{model} is not a local path (no hub downloads)", param_hint="--model")
    return model


def _train_and_save(trainer, output: Path, n_rows: int, tiny: bool) -> None:
    """Train with progress and the finite guard; publish OUTPUT/final whole; say the losses."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.train.finite import NonFiniteTraining, finite_guard_callback
    from groundrl.train.progress import attach_progress
    from groundrl.train.runlog import partial_dir, publish_dir

    watch = attach_progress(trainer, "sft", typer.echo, tiny=tiny)
    trainer.add_callback(finite_guard_callback("sft"))  # a NaN loss or weight stops the run unsaved
    try:
        trainer.train()
    except NonFiniteTraining as e:
        typer.echo(f"Error: {e}", err=True)
        raise typer.Exit(1) from None
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    tmp = partial_dir(output / "final")  # written whole, then renamed: a cut save leaves no final/
    trainer.save_model(str(tmp))
    publish_dir(tmp, output / "final")
    typer.echo(
        f"{n_rows} records, {len(losses)} logged steps, loss {losses[0]:.3f} -> {losses[-1]:.3f}"
        if losses
        else f"{n_rows} records"
    )
    typer.echo(f"wrote {output / 'final'}")
    if watch.summary().get("no learning signal"):
        typer.echo("warning: nothing was learned (see the NO LEARNING SIGNAL line above)", err=True)
