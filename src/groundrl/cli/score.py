"""``groundrl score RECIPE INPUT.jsonl``: score completions with a recipe's rubric."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from groundrl.cli.main import app
from groundrl.recipes import RECIPE_NAMES
from groundrl.scoring import iter_jsonl_lines, score_records
from groundrl.summary import print_summary


@app.command(
    "score",
    help=(
        "Score every line of INPUT (JSONL, one sample per line with a `completion` field and the recipe's "
        "fields) and write one JSON line per input line: `id`, `reward`, `parts`, `reasons` (or `error` for "
        f"a bad line). Recipes: {', '.join(RECIPE_NAMES)}. Exit status 1 when any line was bad."
    ),
)
def score_cmd(
    recipe: str = typer.Argument(..., help=f"One of: {', '.join(RECIPE_NAMES)}."),
    input: Path = typer.Argument(
        ..., exists=True, dir_okay=False, readable=True, help="JSONL file of samples."
    ),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="Where to write results (default: stdout)."
    ),
    action_map: Path | None = typer.Option(
        None,
        "--action-map",
        exists=True,
        dir_okay=False,
        help="reinforced_planning: {id: name} JSON action map.",
    ),
    lenient: bool = typer.Option(
        False, "--lenient", help="reinforced_planning: also accept fenced JSON / prose."
    ),
    tau: float | None = typer.Option(None, "--tau", help="argos: accuracy gate threshold (default 0.5)."),
    judge_backend: str | None = typer.Option(
        None, "--judge-backend", help="openai | transformers: run model-based parts."
    ),
    judge_model: str | None = typer.Option(
        None, "--judge-model", help="Judge model name (openai) or local path (transformers)."
    ),
    judge_url: str | None = typer.Option(
        None, "--judge-url", help="Base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1."
    ),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar or summary table."),
) -> None:
    from groundrl.recipes import get_recipe

    try:
        rec = get_recipe(recipe)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="RECIPE") from e
    options: dict[str, Any] = {}
    if action_map is not None:
        if "action_map" not in rec.options:
            raise typer.BadParameter(f"--action-map does not apply to {recipe}", param_hint="--action-map")
        options["action_map"] = str(action_map)
    if lenient:
        if "lenient" not in rec.options:
            raise typer.BadParameter(f"--lenient does not apply to {recipe}", param_hint="--lenient")
        options["lenient"] = True
    if tau is not None:
        if "tau" not in rec.options:
            raise typer.BadParameter(f"--tau does not apply to {recipe}", param_hint="--tau")
        options["tau"] = tau
    if judge_backend is not None:
        from groundrl.cli.judge_options import make_recipe_judge

        judge = make_recipe_judge(recipe, judge_backend, judge_model, judge_url)
        if judge is not None:
            options["judge"] = judge
    elif judge_model or judge_url:
        raise typer.BadParameter(
            "--judge-model/--judge-url need --judge-backend", param_hint="--judge-backend"
        )
    try:
        rubric = rec.rubric(**options)
    except (ValueError, OSError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from e

    lines = input.read_text(encoding="utf-8", errors="replace").splitlines()
    out = output.open("w", encoding="utf-8") if output else sys.stdout
    n_bad = 0
    results = []
    try:
        for rec_out in score_records(
            rec, rubric, iter_jsonl_lines(lines), progress=not quiet and len(lines) > 1
        ):
            if "error" in rec_out:
                n_bad += 1
            results.append(rec_out)
            out.write(json.dumps(rec_out, ensure_ascii=False) + "\n")
    finally:
        if output:
            out.close()
    if not quiet:
        print_summary(recipe, rubric.names, results, err=output is None)
    judge = options.get("judge")
    if judge is not None:
        typer.echo(
            f"judge: {judge.calls} calls, {judge.failures} failed (failed parts got their fallback value)",
            err=True,
        )
    if n_bad:
        typer.echo(f"{n_bad} of {len(results)} lines could not be scored (see their `error`).", err=True)
        raise typer.Exit(1)
