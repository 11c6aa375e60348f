"""``groundrl score RECIPE INPUT.jsonl``: score completions with a recipe's rubric."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import typer

from groundrl.cli.fields import field_option, parse_fields, rename_items, renamed_copy
from groundrl.cli.main import app
from groundrl.cli.recipe_options import RecipeArgs, recipe_by_name, recipe_command
from groundrl.floats import DIGITS, tidy
from groundrl.io import SameFileError, atomic_output, check_output
from groundrl.recipes import recipe_names
from groundrl.rubric import ENV_PART_TIMEOUT
from groundrl.scoring import iter_jsonl_lines, json_text, score_records
from groundrl.summary import RunningMeans, print_summary


@app.command(
    "score",
    help=(
        "Score every line of INPUT (JSONL, one sample per line with a `completion` field and the recipe's "
        "fields; --field completion=output reads another name) and write one JSON line per input line: "
        "`id`, `reward`, `parts`, `reasons` (or `error` for a bad line). `groundrl recipes` lists the "
        "recipes, their fields and options. "
        "Exit status 1 when any line was bad, 2 on bad options."
    ),
)
@recipe_command
def score_cmd(
    recipe: str = typer.Argument(
        ...,
        metavar="RECIPE",
        help=f"Recipe: {', '.join(recipe_names())} (`groundrl recipes` shows their fields and options).",
    ),
    input: Path = typer.Argument(..., metavar="INPUT", help="JSONL file of samples; - reads standard input."),
    output: Path | None = typer.Option(
        None,
        "-o",
        "--output",
        help="File to write results to (default or -: stdout); its folder is created.",
    ),
    action_map: Path | None = typer.Option(
        None, "--action-map", exists=True, dir_okay=False, help="Alias of -O action_map=PATH."
    ),
    lenient: bool | None = typer.Option(
        None, "--lenient/--no-lenient", help="Alias of -O lenient=true|false."
    ),
    tau: float | None = typer.Option(None, "--tau", help="Alias of -O tau=X (argos)."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress bar or summary table."),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="Score only the first N lines (a quick look)."
    ),
    ray: bool = typer.Option(
        False, "--ray/--no-ray", help="Score on Ray Data (needs `ray[data]`); output order is kept."
    ),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="Ray cluster to join (auto, ray://host:10001); default: a local Ray."
    ),
    workers: int = typer.Option(
        1, "--workers", min=1, help="Processes for rule recipes on big files (output order is kept)."
    ),
    raw_floats: bool = typer.Option(
        False, "--raw-floats", help="Write floats at full precision (default: rounded to 6 decimals)."
    ),
    part_timeout: float = typer.Option(
        0.0,
        "--part-timeout",
        min=0.0,
        help="Seconds a reward part's call may take (a hung judge or third-party part); past it the part "
        "scores its fallback with reason `timeout` and scoring goes on. 0 (default): no deadline.",
    ),
    field: list[str] = field_option(),
    recipe_args: RecipeArgs = None,  # type: ignore[assignment]
) -> None:
    rec = recipe_by_name(recipe)
    fields = parse_fields(field)
    output = None if output is not None and str(output) == "-" else output
    input = _check_input(input, workers > 1 or ray)
    try:
        check_output(output, input)  # before anything is written: opening it would empty the input
    except SameFileError as e:
        raise typer.BadParameter(str(e), param_hint="-o/--output") from None
    digits = None if raw_floats else DIGITS
    aliases = {"action_map": str(action_map) if action_map else None, "lenient": lenient, "tau": tau}
    _check_scale_out(ray, workers, recipe_args.judge is not None)
    options = recipe_args.options(rec, aliases)
    rubric = recipe_args.rubric(rec, aliases)  # built here too: option errors before any work
    if part_timeout:
        rubric.part_timeout = part_timeout
    with _part_timeout_env(part_timeout):
        if fields and (ray or workers > 1):  # their processes read the file: hand them a renamed copy
            input = renamed_copy(input, fields)
        try:
            if ray:
                _score_on_ray(rec.name, options, input, output, limit, ray_address)
            else:
                _score_file(rec, rubric, input, output, quiet, (workers, options, digits), limit, fields)
        finally:
            rubric.close()


def _check_scale_out(ray: bool, workers: int, has_judge: bool) -> None:
    if ray and workers > 1:
        raise typer.BadParameter(
            "--ray and --workers are two ways to scale out: pick one", param_hint="--ray"
        )
    if workers > 1 and has_judge:
        raise typer.BadParameter(
            "judge calls are already batched and concurrent: drop --workers (or raise --judge-concurrency)",
            param_hint="--workers",
        )


@contextlib.contextmanager
def _part_timeout_env(seconds: float) -> Iterator[None]:
    """``--part-timeout`` in the environment while the command runs (``--workers``
    processes build their own rubric from it), then as it was: the setting is this
    command's, not the process's (tests run in-process)."""
    before = os.environ.get(ENV_PART_TIMEOUT)
    if seconds:
        os.environ[ENV_PART_TIMEOUT] = str(seconds)
    try:
        yield
    finally:
        if seconds:
            if before is None:
                os.environ.pop(ENV_PART_TIMEOUT, None)
            else:
                os.environ[ENV_PART_TIMEOUT] = before


def _check_input(path: Path, needs_file: bool) -> Path:
    """INPUT as a readable file, or ``-`` (standard input) for the one-process path."""
    if str(path) == "-":
        if needs_file:
            raise typer.BadParameter(
                "--workers and --ray read a file: save standard input to a file first", param_hint="INPUT"
            )
        return path
    if not path.is_file():
        what = "is a folder" if path.is_dir() else "does not exist"
        raise typer.BadParameter(
            f"{path} {what}: give a JSONL file (or - for standard input)", param_hint="INPUT"
        )
    return path


def _score_on_ray(
    recipe: str, options: dict, input: Path, output: Path | None, limit: int | None, address: str | None
) -> None:
    try:
        # lazy: loads when the command runs; groundrl --help imports every command module
        from groundrl.integrations.ray_data import score_lines
    except ImportError as e:  # pragma: no cover - the module itself imports no ray
        raise typer.BadParameter(str(e), param_hint="--ray") from e
    try:
        # lazy: loads when the command runs; groundrl --help imports every command module
        import ray  # noqa: F401
    except ModuleNotFoundError as e:
        raise typer.BadParameter("--ray needs Ray Data: pip install 'ray[data]'", param_hint="--ray") from e
    lines = input.read_bytes().decode("utf-8", errors="replace").split("\n")[:limit]
    with contextlib.ExitStack() as stack:  # a file output appears whole when done, or not at all
        out = stack.enter_context(atomic_output(output)) if output else sys.stdout
        n, n_bad = score_lines(recipe, options, lines, out, address=address)
    typer.echo(f"scored {n} lines on Ray", err=True)
    if n_bad:
        typer.echo(f"{n_bad} of {n} lines could not be scored (see their `error`).", err=True)
        raise typer.Exit(1)


@contextlib.contextmanager
def _sigterm_exits() -> Iterator[None]:
    """SIGTERM raises SystemExit (143) here, so ``with`` blocks unwind: the pool stops and
    the temporary part files go (issue 26: they stayed after SIGTERM)."""

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    try:
        old = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@contextlib.contextmanager
def _lines(input: Path, limit: int | None) -> Iterator[tuple[Iterator[str], int | None]]:
    """The input's lines as they are read (memory does not grow with the file: issue 26)
    and, for a file, how many samples the bar will count: the non-blank lines among the
    first ``limit`` (one streaming pass; it counted newlines + 1, one too many for a file
    ending in a newline). JSONL lines end at "\\n" only (a U+2028 inside a JSON string
    is not a line end)."""
    total = None
    if str(input) != "-":
        with input.open("rb") as counting:
            head = itertools.islice(counting, limit) if limit is not None else counting
            total = sum(1 for b in head if b.strip() and b.decode("utf-8", errors="replace").strip())
    f: IO[bytes] = sys.stdin.buffer if str(input) == "-" else input.open("rb")
    try:
        raw = (line.decode("utf-8", errors="replace").removesuffix("\n") for line in f)
        yield (itertools.islice(raw, limit) if limit is not None else raw), total
    finally:
        if f is not sys.stdin.buffer:
            f.close()


def _score_file(
    rec: Any,
    rubric: Any,
    input: Path,
    output: Path | None,
    quiet: bool,
    parallel: tuple[int, Mapping[str, Any], int | None],
    limit: int | None = None,
    fields: dict[str, str] | None = None,
) -> None:
    """Score INPUT into ``output`` (standard output when ``None``). ``parallel`` is
    ``(workers, recipe options, digits)``: more than one worker scores on a process pool.
    ``fields``: ``--field`` renames (the pool reads a renamed copy instead)."""
    workers, options, digits = parallel
    n_bad, n = 0, 0
    results: list[dict[str, Any]] | RunningMeans = []
    with contextlib.ExitStack() as stack:  # a file output appears whole when done, or not at all
        out = stack.enter_context(atomic_output(output)) if output else sys.stdout
        if workers > 1:
            # lazy: loads when the command runs; groundrl --help imports every command module
            from groundrl.scoring_parallel import score_file_parallel

            with _sigterm_exits():  # so the worker pool and its part files are cleaned up
                results, n_bad, n = score_file_parallel(
                    rec.name, options, input, workers, out, not quiet, limit, digits=digits
                )
        else:
            means = results = RunningMeans(rubric.names)  # the summary, without holding the results
            with _lines(input, limit) as (lines, total):
                progress = not quiet and (total is None or total > 1)
                items = rename_items(iter_jsonl_lines(lines), fields or {})
                for row in score_records(rec, rubric, items, progress=progress, total=total):
                    n_bad += "error" in row
                    n += 1
                    means.add(row)
                    out.write(json_text(tidy(row, digits)) + "\n")
    if n == 0:
        typer.echo(
            f"error: {'standard input' if str(input) == '-' else input} holds no sample "
            "(no non-blank line): nothing was scored.",
            err=True,
        )
        raise typer.Exit(1)
    if not quiet:
        print_summary(rec.name, rubric.names, results, err=output is None)
    calls, failures = rubric.judge_stats()
    if rubric.judges:
        typer.echo(
            f"judge: {calls} calls, {failures} failed (failed parts got their fallback value)", err=True
        )
    if n_bad:
        typer.echo(f"{n_bad} of {n} lines could not be scored (see their `error`).", err=True)
        raise typer.Exit(1)
