"""``groundrl demo``: the main job on built-in defaults.

Until the training demo lands, it scores the bundled example files with every recipe
and prints a summary table per recipe (and writes the scored JSONL under ``-o``).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from groundrl.cli.main import app


@app.command(
    "demo", help="Run the main job on built-in defaults: score the bundled examples with every recipe."
)
def demo_cmd(
    output: Path = typer.Option(
        Path("runs/demo"), "-o", "--output", help="Directory for the demo's outputs."
    ),
    quick: bool = typer.Option(False, "--quick", help="Smaller, faster run (used by tests)."),
) -> None:
    from groundrl.examples import example_action_map, example_file
    from groundrl.recipes import RECIPE_NAMES, get_recipe
    from groundrl.scoring import iter_jsonl_lines, score_records
    from groundrl.summary import part_means, print_summary

    output.mkdir(parents=True, exist_ok=True)
    summary = {}
    for name in RECIPE_NAMES:
        recipe = get_recipe(name)
        options = {"action_map": str(example_action_map())} if name == "reinforced_planning" else {}
        rubric = recipe.rubric(**options)
        lines = example_file(name).read_text(encoding="utf-8").splitlines()
        results = list(score_records(recipe, rubric, iter_jsonl_lines(lines)))
        with (output / f"{name}.scores.jsonl").open("w", encoding="utf-8") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")
        print_summary(name, rubric.names, results, err=False)
        summary[name] = {k: v[0] for k, v in part_means(rubric.names, results).items()}
    (output / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    typer.echo(f"wrote {output}/<recipe>.scores.jsonl and {output}/summary.json")
