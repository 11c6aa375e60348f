"""``groundrl recipes``: every registered recipe with its fields and options."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import typer


def _describe_all() -> list[dict[str, Any]]:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.recipes import get_recipe, recipe_names

    return [get_recipe(n).describe() for n in recipe_names()]


def _default(o: Mapping[str, Any]) -> str:
    return "—" if o["default"] is None else json.dumps(o["default"])


def markdown(recipes: Sequence[Mapping[str, Any]]) -> str:
    """The docs table (docs/recipes.md is this output)."""
    lines = [
        "| recipe | paper | required fields | optional fields | option | type | default | help |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in recipes:
        opts = r["options"] or [{"name": "—", "type": "", "default": None, "help": ""}]
        for i, o in enumerate(opts):
            head = (
                [f"`{r['name']}`", r["paper"], ", ".join(r["required"]), ", ".join(r["optional"]) or "—"]
                if i == 0
                else ["", "", "", ""]
            )
            name = f"`{o['name']}`" if o["name"] != "—" else "—"
            cells = [*head, name, o["type"], _default(o) if o["name"] != "—" else "", o["help"]]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def command(
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list (name, paper, fields, options)."),
    as_markdown: bool = typer.Option(
        False, "--markdown", help="Print the Markdown table of docs/recipes.md."
    ),
) -> None:
    """List the recipes (built-in, registered, installed through the `groundrl.recipes` entry
    point): paper, required and optional sample fields, options with types and defaults.
    Set options with -O KEY=VALUE on score/serve/train."""
    recipes = _describe_all()
    if as_json:
        typer.echo(json.dumps(recipes, indent=2, ensure_ascii=False))
        return
    if as_markdown:
        typer.echo(markdown(recipes), nl=False)
        return
    # lazy: loads when the command runs; groundrl --help imports every command module
    from rich.console import Console
    from rich.table import Table

    # two columns, the recipe's name and one cell with the rest: at 80 columns every line of
    # that cell wraps at spaces (four columns split words such as <response><plans>)
    table = Table(title="groundrl recipes", show_lines=True)
    table.add_column("recipe", no_wrap=True)
    table.add_column("paper, fields, options (-O KEY=VALUE)")
    for r in recipes:
        cell = [f"{r['paper']}: {r['summary']}", f"required fields: {', '.join(r['required'])}"]
        if r["optional"]:
            cell.append(f"optional fields: {', '.join(r['optional'])}")
        cell += [f"-O {o['name']} ({o['type']}, default {_default(o)}): {o['help']}" for o in r["options"]]
        table.add_row(r["name"], "\n".join(cell))
    Console().print(table)
