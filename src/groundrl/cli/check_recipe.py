"""``groundrl check-recipe NAME``: :func:`~groundrl.integrations.check.check_recipe` on a
built-in or installed (plugin) recipe — fields, totality, the gold example, adapter
agreement and the reward-hacking probe battery, shown as a table."""

from __future__ import annotations

import json
from typing import Any

import typer

from groundrl.cli.recipe_options import RecipeArgs, recipe_by_name, recipe_command

STATUS_STYLE = {"pass": "green", "FAIL": "bold red", "skip": "dim"}


def _num(v: float | None) -> str:
    return "" if v is None else f"{v:.3g}"


def probe_table(check: Any) -> Any:
    """The probe results as a rich table that fits 80 columns (reasons wrap)."""
    # lazy: rich loads only when the table is shown
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=f"reward-hacking probes: {check.recipe}", width=80)
    t.add_column("probe", no_wrap=True)
    t.add_column("result", no_wrap=True)
    t.add_column("example", overflow="fold", max_width=12)
    t.add_column("honest", justify="right", no_wrap=True)
    t.add_column("probe", justify="right", no_wrap=True)
    t.add_column("reason", overflow="fold", ratio=1)
    for p in check.probes:
        t.add_row(
            p.name,
            f"[{STATUS_STYLE[p.status]}]{p.status}[/]",
            p.example or "",
            _num(p.honest),
            _num(p.probe),
            escape(p.reason),
        )
    return t


@recipe_command
def command(
    recipe: str = typer.Argument(..., metavar="NAME", help="A recipe name (`groundrl recipes` lists them)."),
    as_json: bool = typer.Option(False, "--json", help="Print the problems and probe results as JSON."),
    recipe_args: RecipeArgs = None,  # type: ignore[assignment]  # filled by @recipe_command
) -> None:
    """Run check_recipe on NAME (a built-in or a plugin recipe): declared fields, totality on
    hostile inputs, the gold example, adapter agreement, and the reward-hacking probes, each
    of which must score below the honest gold example. Exit 1 when any check fails."""
    # lazy: the adapters bring the integrations; loaded when the command runs
    from groundrl.integrations.check import check_recipe

    rec = recipe_by_name(recipe)
    options = recipe_args.options(rec)
    chk = check_recipe(rec, options, strict=False)
    if as_json:
        out = {
            "recipe": chk.recipe,
            "ok": chk.ok,
            "problems": chk.problems,
            "probes": [vars(p) for p in chk.probes],
        }
        typer.echo(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        # lazy: rich loads only when the table is shown
        from rich.console import Console
        from rich.markup import escape

        console = Console(width=80)
        console.print(probe_table(chk))
        for p in chk.problems:
            console.print(f"[red]problem:[/] {escape(p)}", highlight=False)
        console.print(
            f"{chk.recipe}: " + ("[green]ok[/]" if chk.ok else f"[red]{len(chk.problems)} problem(s)[/]")
        )
    if not chk.ok:
        raise typer.Exit(1)
