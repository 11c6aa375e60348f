"""``groundrl examples TRAINER [NAME ...] -o DIR``: write the launch material that ships
with groundrl — the verl and OpenRLHF launch scripts with their ``common.sh``, the
accelerate configs — into a folder, so a user who installed the wheel runs them without a
checkout (issue 35 item 6). Nothing is overwritten unless ``--force``."""

from __future__ import annotations

from pathlib import Path

import typer

from groundrl.presets import launch_files, launch_scripts


def _listing() -> str:
    return "; ".join(f"{trainer}: {', '.join(names)}" for trainer, names in launch_scripts().items())


def command(
    trainer: str | None = typer.Argument(None, help=f"What to write ({_listing()}). Omitted: list them."),
    names: list[str] | None = typer.Argument(None, help="The scripts or configs to write (default: all)."),
    output: Path | None = typer.Option(None, "-o", "--output", help="The folder to write into (created)."),
    force: bool = typer.Option(False, "--force", help="Overwrite files that differ."),
) -> None:
    """Write the launch scripts (verl, OpenRLHF; each with the common.sh it sources) or the
    accelerate configs that ship with groundrl into a folder: `groundrl examples verl eqa_rm -o
    launch/`, then `bash launch/eqa_rm.sh` (settings in the header of launch/common.sh). Without
    TRAINER it lists what there is."""
    known = launch_scripts()
    if trainer is None:
        for name, items in known.items():
            typer.echo(f"{name}: {' '.join(items)}")
        return
    if output is None:
        raise typer.BadParameter("give the folder to write into", param_hint="-o/--output")
    try:
        files = _files(trainer, names or known.get(trainer, []))
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="TRAINER/NAMES") from None
    _write(files, output, force)


def _files(trainer: str, names: list[str]) -> list[Path]:
    """Every file the names need, each once (common.sh is shared)."""
    out: dict[str, Path] = {}
    for name in names or [""]:
        for path in launch_files(trainer, name):
            out.setdefault(path.name, path)
    return list(out.values())


def _write(files: list[Path], output: Path, force: bool) -> None:
    """Copy ``files`` into ``output`` (scripts executable); refuse to replace a file that
    differs unless ``force``, before anything is written."""
    clash = [
        f.name
        for f in files
        if (output / f.name).exists() and (output / f.name).read_bytes() != f.read_bytes()
    ]
    if clash and not force:
        typer.echo(
            f"Error: {output} already has different {', '.join(clash)}; add --force to replace", err=True
        )
        raise typer.Exit(2)
    output.mkdir(parents=True, exist_ok=True)
    for f in files:
        dest = output / f.name
        dest.write_bytes(f.read_bytes())
        if f.suffix == ".sh":
            dest.chmod(0o755)
        typer.echo(str(dest))
