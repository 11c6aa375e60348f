"""``groundrl export verl DATA.jsonl -o train.parquet --recipe R``: a groundrl dataset in
verl's RLHF parquet layout (``data_source``, chat ``prompt``, ``images``, ``ability``,
``reward_model.ground_truth``, ``extra_info``), ready for
``groundrl.integrations.verl.compute_score``. Images are embedded (``{"bytes": …}``) with
one ``<image>`` placeholder each in the prompt, the form verl's ``RLHFDataset`` reads."""

from __future__ import annotations

from pathlib import Path

import typer

from groundrl.io import iter_lines
from groundrl.recipes import recipe_names

app = typer.Typer(help="Write groundrl datasets in a trainer's own layout.", no_args_is_help=True)


@app.command(
    "verl",
    help=(
        "INPUT: JSONL, one sample per line: `prompt` (text or chat messages), optional `images` (a "
        "path or a list: one image, an episode's frames) and `video` (a list of frame paths), the "
        "recipe's label field (e.g. `gold`) and any other fields (they go to extra_info). A line may "
        "name its own `recipe`. Writes verl's RLHF parquet layout to -o (a file): images embedded, "
        "one `<image>` placeholder per image in the prompt (put before the first user message when "
        "the prompt has none). Relative image paths are read from the input file's folder."
    ),
)
def verl_cmd(
    input: Path = typer.Argument(..., metavar="INPUT", exists=True, dir_okay=False, help="JSONL of samples."),
    output: Path = typer.Option(..., "-o", "--output", help="Parquet file to write (its folder is created)."),
    recipe: str | None = typer.Option(
        None, "--recipe", help=f"Recipe of lines that name none: {', '.join(recipe_names())}."
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Export only the first N samples."),
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.integrations.verl import write_dataset
    from groundrl.recipes import get_recipe

    rows, bad = [], []
    for line in iter_lines(input):
        k, row = line.number, line.value
        if line.problem:
            bad.append(line.message)
            continue
        name = row.get("recipe") or recipe
        try:
            get_recipe(name) if name else None
        except ValueError as e:
            bad.append(f"line {k}: {e}")
            continue
        if name is None:
            bad.append(f"line {k}: names no recipe (give --recipe)")
            continue
        rows.append(row)
        if limit is not None and len(rows) >= limit:
            break
    if bad:
        for msg in bad[:20]:
            typer.echo(msg, err=True)
        typer.echo(f"error: {len(bad)} line(s) cannot be exported; nothing written", err=True)
        raise typer.Exit(1)
    if not rows:
        typer.echo("error: no samples in the input", err=True)
        raise typer.Exit(1)
    output.parent.mkdir(parents=True, exist_ok=True)
    try:
        n = write_dataset(rows, str(output), recipe=recipe, image_root=input.parent)
    except ValueError as e:  # an image that cannot be read, placeholders that do not match
        typer.echo(f"error: {e}; nothing written", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"wrote {n} rows to {output}")
