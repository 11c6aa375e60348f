"""``groundrl`` command line: one sub-command per job.

Heavy modules (torch, transformers, the simulator) are imported inside commands, so
``groundrl --help`` and ``groundrl score`` stay fast on the light core install.
"""

from __future__ import annotations

import importlib
import sys
import warnings

import typer

from groundrl import __version__
from groundrl.io import disk_full_message

app = typer.Typer(
    name="groundrl",
    help="Verifiable rewards, generative reward models and RL post-training for embodied VLM agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # plain click help: it wraps descriptions and never cuts a flag name at 80 columns
    # (rich's option tables did: `--batch-concurren…`), and prints no markup
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"groundrl {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """groundrl: score completions with the papers' rewards, run the simulator, train, benchmark."""


# Sub-command modules register themselves on `app` (score, demo), expose a Typer
# sub-app `app` (a command group such as `sim eval`), or a single `command` function
# (such as `serve`). A module that is not there yet is simply not mounted.
from groundrl.cli import demo as _demo  # noqa: E402,F401
from groundrl.cli import score as _score  # noqa: E402,F401

for _name in ("recipes", "sim", "train", "sft", "curate", "bench", "serve", "export", "monitor", "models"):
    try:
        _mod = importlib.import_module(f"groundrl.cli.{_name}")
    except ModuleNotFoundError as e:
        if e.name != f"groundrl.cli.{_name}":
            raise
        continue
    if hasattr(_mod, "app"):
        app.add_typer(_mod.app, name=_name)
    elif hasattr(_mod, "command"):
        app.command(_name, help=_mod.command.__doc__)(_mod.command)


from groundrl.cli import check_recipe as _check_recipe  # noqa: E402
from groundrl.cli import examples as _examples  # noqa: E402

app.command("check-recipe", help=_check_recipe.command.__doc__)(_check_recipe.command)
app.command("examples", help=_examples.command.__doc__)(_examples.command)


def _quiet_library_warnings() -> None:
    """Warnings from libraries that the user cannot act on (transformers' renames of
    gradient checkpointing arguments, Pillow deprecations inside TRL) are hidden in the CLI;
    ``PYTHONWARNINGS`` or ``-W`` still bring them back."""
    if sys.warnoptions:  # the user asked for specific warnings
        return
    for module in ("transformers", "trl", "accelerate", "datasets", "torch", "PIL"):
        warnings.filterwarnings("ignore", category=FutureWarning, module=module)
        warnings.filterwarnings("ignore", category=DeprecationWarning, module=module)


def main() -> None:
    _quiet_library_warnings()
    try:
        app()
    except OSError as e:  # a full disk is the user's to fix: one line, not a traceback (issue 42)
        msg = disk_full_message(e)
        if msg is None:
            raise
        print(f"Error: {msg}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
