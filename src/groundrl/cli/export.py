"""``groundrl export verl DATA.jsonl -o train.parquet --recipe R``: a groundrl dataset in
verl's RLHF parquet layout (``data_source``, chat ``prompt``, ``images``, ``ability``,
``reward_model.ground_truth``, ``extra_info``), ready for
``groundrl.integrations.verl.compute_score``. Images are embedded (``{"bytes": …}``) with
one ``<image>`` placeholder each in the prompt, the form verl's ``RLHFDataset`` reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from groundrl.io import SameFileError, check_output, iter_lines
from groundrl.recipes import get_recipe, recipe_names

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

    try:
        check_output(output, input)  # before anything is written
    except SameFileError as e:
        raise typer.BadParameter(str(e), param_hint="-o/--output") from None
    samples = _Samples(input, recipe, limit)
    bad, n_bad = samples.problems()
    if n_bad:
        for msg in bad:
            typer.echo(msg, err=True)
        typer.echo(f"error: {n_bad} line(s) cannot be exported; nothing written", err=True)
        raise typer.Exit(1)
    if not any(True for _ in samples):
        typer.echo("error: no samples in the input", err=True)
        raise typer.Exit(1)
    try:
        n = write_dataset(samples, str(output), recipe=recipe, image_root=input.parent)
    except ValueError as e:  # an image that cannot be read, placeholders that do not match
        typer.echo(f"error: {e}; nothing written", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"wrote {n} rows to {output}")


class _Samples:
    """INPUT's samples, read again from the file each time it is iterated (up to
    ``limit``), so ``write_dataset`` streams a file of any size (issue 42: a 1.5 GB input
    was read whole)."""

    def __init__(self, path: Path, recipe: str | None, limit: int | None) -> None:
        self.path, self.recipe, self.limit = path, recipe, limit

    def _checked(self) -> Iterator[tuple[Any, str]]:
        """``(row, "")`` for a good line, ``(None, message)`` for a bad one, until ``limit`` rows."""
        n = 0
        for line in iter_lines(self.path):
            if line.problem:
                yield None, line.message
                continue
            name = line.value.get("recipe") or self.recipe
            try:
                get_recipe(name) if name else None
            except ValueError as e:
                yield None, f"line {line.number}: {e}"
                continue
            if name is None:
                yield None, f"line {line.number}: names no recipe (give --recipe)"
                continue
            yield line.value, ""
            n += 1
            if self.limit is not None and n >= self.limit:
                return

    def problems(self, show: int = 20) -> tuple[list[str], int]:
        """The first ``show`` bad lines' messages and how many there are (one pass)."""
        shown: list[str] = []
        n = 0
        for _, msg in self._checked():
            if msg:
                n += 1
                if len(shown) < show:
                    shown.append(msg)
        return shown, n

    def __iter__(self) -> Iterator[Any]:
        return (row for row, msg in self._checked() if not msg)
