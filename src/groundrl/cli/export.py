"""``groundrl export verl DATA.jsonl -o train.parquet --recipe R`` (and ``export openrlhf
DATA.jsonl -o prompts.jsonl``, OpenRLHF's prompt dataset): a groundrl dataset in
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
# the options both export commands take, declared once
INPUT = typer.Argument(..., metavar="INPUT", exists=True, dir_okay=False, help="JSONL of samples.")
RECIPE = typer.Option(None, "--recipe", help=f"Recipe of lines that name none: {', '.join(recipe_names())}.")
LIMIT = typer.Option(None, "--limit", min=1, help="Export only the first N samples.")


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
    input: Path = INPUT,
    output: Path = typer.Option(..., "-o", "--output", help="Parquet file to write (its folder is created)."),
    recipe: str | None = RECIPE,
    limit: int | None = LIMIT,
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.integrations.verl import write_dataset

    _export(input, output, recipe, limit, write_dataset)


@app.command(
    "openrlhf",
    help=(
        "INPUT: the same JSONL as `export verl` (prompt, optional images / video, the recipe's "
        "label field, other fields; EQA-RM episode records become the evaluator prompt over 5 "
        "keyframes). Writes OpenRLHF 0.11's prompt dataset to -o (JSONL), the keys examples/openrlhf "
        "reads: `prompt` (chat messages, one `<image>` tag per image), `images` (absolute file paths, "
        "or data: URLs for embedded images) and the recipe's label field (e.g. `gt_score`) holding the "
        "sample's fields as JSON, which groundrl's OpenRLHF reward reads back."
    ),
)
def openrlhf_cmd(
    input: Path = INPUT,
    output: Path = typer.Option(..., "-o", "--output", help="JSONL file to write (its folder is created)."),
    recipe: str | None = RECIPE,
    limit: int | None = LIMIT,
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.integrations.openrlhf_export import write_prompts

    _export(input, output, recipe, limit, write_prompts)


def _export(input: Path, output: Path, recipe: str | None, limit: int | None, write: Any) -> None:
    """Check INPUT whole (nothing is written when a line is bad), then ``write`` it."""
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
        n = write(samples, str(output), recipe=recipe, image_root=input.parent)
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
            row, problem = _with_prompt(line.value, self.path.parent)
            if problem:
                yield None, f"line {line.number}: {problem}"
                continue
            yield row, ""
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


EPISODE_FIELDS = ("question", "reasoning", "answer", "frames")


def _with_prompt(row: dict[str, object], base: Path) -> tuple[dict[str, object], str]:
    """The row as exported, or a problem. A row with a prompt goes as it is. An EQA-RM
    episode record — groundrl's own format (``{question, reasoning, answer, gt_score,
    frames}``: what ``train`` and ``bench build-eqa`` read) — becomes the EQA-RM evaluator
    prompt over its 5 keyframes [EQA-RM §3: N = 5 keyframes sampled uniformly], the same
    prompt and frames the rft / cgrpo stages train on. Anything else without a prompt
    is refused (it used to be written with an empty prompt and no images)."""
    prompt = row.get("prompt")
    if prompt not in (None, "", []):
        return row, ""
    if not all(row.get(k) not in (None, "") for k in EPISODE_FIELDS):
        missing = [k for k in EPISODE_FIELDS if row.get(k) in (None, "")]
        return row, (
            "no `prompt`, and not an EQA-RM episode record either (missing "
            f"{', '.join(missing)}): give each sample a `prompt`"
        )
    # lazy: judges.prompts and train.rm_data load only for episode records
    from groundrl.judges.prompts import eqa_rm_request
    from groundrl.train.rm_data import frame_paths, keyframe_indices

    try:
        paths = frame_paths(row["frames"], base)
    except ValueError as e:
        return row, str(e)
    if not paths:
        return row, f"frames: no image files in {row['frames']!r}"
    frames = [str(paths[i].resolve()) for i in keyframe_indices(len(paths), 5)]
    msgs = eqa_rm_request(str(row["question"]), str(row["reasoning"]), str(row["answer"]), None)
    rest = {k: v for k, v in row.items() if k != "frames"}
    return {**rest, "prompt": msgs, "images": frames, "frames": row["frames"]}, ""
