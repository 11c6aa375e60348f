"""``groundrl train [RECIPE] --config FILE.yaml|PRESET``: GRPO on TRL with a recipe's rubric,
or a staged pipeline; ``--print-config`` / ``--dry-run`` show what would run,
``--list-configs`` the presets that ship with groundrl (:mod:`groundrl.presets`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

import typer

from groundrl.cli.recipe_options import RecipeArgs, recipe_by_name, recipe_command
from groundrl.presets import TRAIN_GROUPS, configs_dir, find_config, not_found, preset_names, summary
from groundrl.recipes import recipe_names


def _fail(msg: str) -> NoReturn:
    typer.echo(f"Error: {msg}", err=True)
    raise typer.Exit(2)


def _overrides(
    raw: Any, recipe: str | None, recipe_args: RecipeArgs, output: Path | None, seed: int | None
) -> dict:
    """The top-level keys the flags replace (``-O`` merges into ``recipe_options``)."""
    over: dict[str, Any] = {}
    name = recipe or (raw.get("recipe") if isinstance(raw, dict) else None)
    if name and isinstance(name, str):
        options = recipe_args.options(recipe_by_name(name))  # typed; the judge comes separately
        judge = options.pop("judge", None)
        if options:
            base = raw.get("recipe_options") if isinstance(raw.get("recipe_options"), dict) else {}
            over["recipe_options"] = {**base, **options}
        if judge is not None:
            over["judge"] = judge
    if output is not None:
        over["output_dir"] = str(output)
    if seed is not None:
        over["seed"] = seed
    return over


CONFIG = typer.Option(
    None,
    "--config",
    "-c",
    help="A YAML file, or the name of a preset that ships with groundrl (papers/eqa_rm, cpu-tiny/argos; "
    "`--list-configs`); a file of that name wins. Keys: recipe, model, data, output_dir, recipe_options, judge, "
    "grpo/sft, step_grpo, online_filter, verifier, peft, freeze, image, monitor, eval, resume_from_checkpoint, "
    "stages (docs/training.md). Relative data paths in it are read from its folder.",
)
PRINT_CONFIG = typer.Option(
    False,
    "--print-config",
    help="Print what each stage would run (every TRL field after defaults and merges, the blocks) as YAML "
    "and exit; loads no model.",
)
NUM_PROCESSES = typer.Option(
    None,
    "--num-processes",
    min=1,
    help="With --dry-run: check the batch geometry for this many processes (default: the "
    "--launch-config's num_processes, else 1). A run reads it from its launch (WORLD_SIZE).",
)
LAUNCH_CONFIG = typer.Option(
    None,
    "--launch-config",
    help="With --dry-run: the accelerate config the run will be launched with, a file or a packaged one "
    "(accelerate/deepspeed_zero3); its process count and DeepSpeed need are checked.",
)
RESUME = typer.Option(
    False,
    "--resume",
    help="Resume the run in the output folder: finished stages (with final/) are skipped, the first "
    "unfinished one continues from its last checkpoint-N (optimizer, scheduler, RNG, generation buffer; "
    "needs save_strategy: steps), log.jsonl is appended to. Same as `resume_from_checkpoint: latest`.",
)


@recipe_command
def command(
    recipe: str | None = typer.Argument(
        None,
        help=f"Recipe: {', '.join(recipe_names())}. Optional when the config names it (`recipe:`); "
        "when both are given they must agree.",
    ),
    config: str | None = CONFIG,
    output: Path | None = typer.Option(
        None, "-o", "--output", help="Run folder (created); replaces the config's output_dir."
    ),
    seed: int | None = typer.Option(
        None,
        "--seed",
        help="Seed of the tiny model's weights and of TRL's `seed` (replaces the config's seed).",
    ),
    print_config: bool = PRINT_CONFIG,
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Check everything a run needs (config, TRL's own checks, data files, the model folder) and exit.",
    ),
    num_processes: int | None = NUM_PROCESSES,
    launch_config: str | None = LAUNCH_CONFIG,
    resume: bool = RESUME,
    verbose: bool = typer.Option(False, "--verbose", help="Also print TRL's raw log dicts."),
    list_configs: bool = typer.Option(
        False,
        "--list-configs",
        help="List the presets that ship with groundrl (names for --config) and exit.",
    ),
    recipe_args: RecipeArgs = None,  # type: ignore[assignment]
) -> None:
    """Train a policy with GRPO (TRL) on a recipe's rubric — or run a staged pipeline (SFT → GRPO,
    RFT → C-GRPO, verifier-filtered SFT → GRPO) from the config's `stages:`; the config is a file or a
    packaged preset (`--list-configs`; docs/training.md). The config is checked whole before any model
    loads; a bad key, type or range exits 2 naming it. -O KEY=VALUE overrides the YAML's recipe_options,
    --judge-* flags its judge block. CPU smoke defaults (2 steps, lr 1e-3) apply only to `model: tiny`.
    Writes OUTPUT_DIR/final (the model, saved first), log.jsonl, report.md, curves.png, config.yaml."""
    if list_configs:
        _list_configs()
        return
    path = _config_path(config)
    cfg = _load(path, recipe, recipe_args, output, seed)
    if print_config or dry_run:
        _show(cfg, path, dry_run, num_processes, _launch_path(launch_config))
        return
    _preflight(cfg, None, None)  # this launch's process count, before any stage runs
    _model_note(cfg)
    _run(cfg, verbose, resume)


def _list_configs() -> None:
    """One line per packaged preset: its name for --config and its first comment line."""
    names = preset_names((*TRAIN_GROUPS, "accelerate"))
    width = max(map(len, names), default=0)
    for name in names:
        typer.echo(f"{name:<{width}}  {summary(configs_dir() / f'{name}.yaml')}".rstrip())
    typer.echo(
        f"# in {configs_dir()}: `groundrl train --config NAME`; accelerate/* for --launch-config "
        "(`groundrl examples accelerate NAME -o DIR` writes one for `accelerate launch`)"
    )


def _config_path(config: str | None) -> Path:
    """The file --config names: an existing file, else the packaged preset of that name."""
    if not config:
        _fail("give --config FILE.yaml or a preset name (`groundrl train --list-configs` lists them)")
    path = find_config(config)
    if path is None:
        _fail(not_found(config))
    return path


def _launch_path(launch_config: str | None) -> Path | None:
    if launch_config is None:
        return None
    path = find_config(launch_config)
    if path is None:
        _fail(f"--launch-config: {not_found(launch_config, ('accelerate',))}")
    return path


def _load(
    path: Path, recipe: str | None, recipe_args: RecipeArgs, output: Path | None, seed: int | None
) -> Any:
    """The typed config: the file's input paths resolved against its folder, then the flags."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.train.config import ConfigError, build_train_config, read_config

    try:
        raw = read_config(path, recipe)
        over = _overrides(raw, recipe, recipe_args, output, seed)
        return build_train_config({**raw, **over} if isinstance(raw, dict) else raw, recipe, source=str(path))
    except ConfigError as e:
        _fail(f"{path}: {e}")


def _show(cfg: Any, path: Path, dry_run: bool, num_processes: int | None, launch_config: Path | None) -> None:
    """--print-config / --dry-run: the checks (dry run), then the effective config as YAML."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.train.config import ConfigError, dump_yaml, effective_config

    try:
        if dry_run:
            _dry_run_checks(cfg, num_processes, launch_config)
            _model_note(cfg)
        effective = effective_config(cfg)
    except ConfigError as e:
        _fail(f"{path}: {e}")
    typer.echo(dump_yaml(effective), nl=False)
    _print_provenance(path, effective)
    if dry_run:
        typer.echo(f"# dry run: {len(cfg.stages)} stage(s) would run; nothing was trained", err=True)


def _print_provenance(config: Path, effective: Mapping[str, Any]) -> None:
    """The objective and judge-sampling settings with the file's provenance comments."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.train.provenance import provenance_lines

    try:
        text = Path(config).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    typer.echo("\n".join(provenance_lines(text, effective)))


def _problems(cfg: Any, num_processes: int | None, launch_config: Path | None) -> tuple[list[str], int]:
    """What the run will import and its batch geometry, stage by stage, and the process
    count checked; without a launch file or a count it is this launch's WORLD_SIZE."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    import os

    from groundrl.train.preflight import Launch, preflight

    if num_processes is None and launch_config is None:
        num_processes = int(os.environ.get("WORLD_SIZE") or 1)
    try:
        launch = Launch.read(launch_config, num_processes)
    except (OSError, ValueError) as e:
        _fail(f"--launch-config: {e}")
    return [str(f) for f in preflight(cfg, launch)], launch.num_processes


def _report(found: list[str], processes: int) -> None:
    if found:
        lines = "\n".join(f"  {f}" for f in found)
        _fail(f"{len(found)} problem(s) before anything runs (on {processes} process(es)):\n{lines}")


def _preflight(cfg: Any, num_processes: int | None, launch_config: Path | None) -> None:
    _report(*_problems(cfg, num_processes, launch_config))


def _dry_run_checks(cfg: Any, num_processes: int | None, launch_config: Path | None) -> None:
    """Every problem the dry run finds, together: the paths, then the preflight's."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.train.config import ConfigError, check_paths

    found, processes = _problems(cfg, num_processes, launch_config)
    try:
        check_paths(cfg)
    except ConfigError as e:
        found.insert(0, str(e))
    _report(found, processes)


def _model_note(cfg: Any) -> None:
    """Where the model comes from, when it is a hub id (looked up in the cache only)."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.train.config import model_note

    note = model_note(cfg.model)
    if note:
        typer.echo(f"# {note}", err=True)


def _run(cfg: Any, verbose: bool, resume: bool = False) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.train.config import OFFLINE_HINT, ConfigError, is_hub_id
    from groundrl.train.runlog import LOG_FILE
    from groundrl.train.stages import run_config

    if not verbose:  # transformers' shard/weight bars would break the progress lines
        # lazy: loads when the command runs; groundrl --help imports every command module
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    try:
        result = run_config(None, cfg, echo=typer.echo, verbose=verbose, resume=resume)
    except (ConfigError, ValueError, FileNotFoundError) as e:
        _fail(str(e))
    except OSError as e:  # transformers' own message for a hub id it cannot fetch, then ours
        if not is_hub_id(cfg.model) or "huggingface" not in str(e).lower() and cfg.model not in str(e):
            raise
        _fail(f"{e}\nHint: {OFFLINE_HINT}")
    out = Path(result["output_dir"])
    if result["final"] is not None:
        typer.echo(f"saved to {result['final']}")
    typer.echo(f"log {out / LOG_FILE}, report {out / 'report.md'}")
