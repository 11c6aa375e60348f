"""``groundrl sim``: export household task sets and evaluate policies in the simulator
(EB-ALFRED's protocol: plan, run until a step fails, re-plan with the feedback)."""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer

from groundrl.cli.dataclass_options import flag, settings_command
from groundrl.io import SameFileError, atomic_output, check_output, json_line

if TYPE_CHECKING:
    from groundrl.sim.run import EvalConfig, EvalMetrics, ExportRecord

app = typer.Typer(
    help=(
        "Headless household simulator with EB-ALFRED semantics. `tasks` generates task sets "
        "(JSONL with scenes and gold plans in every action vocabulary); `eval` runs a policy on a "
        "task source and writes metrics.json, results.jsonl, report.md and success.png."
    ),
    no_args_is_help=True,
)


CPU_MAX_TOKENS = 256  # [ours: an EB-ALFRED JSON plan of ~10 steps fits; 1024 costs ~40 s a task on CPU]
GPU_MAX_TOKENS = 1024  # [ours: room for reasoning before the plan where decoding is cheap]


def _split(csv: str) -> list[str]:
    return [s.strip() for s in csv.split(",") if s.strip()]


@app.command(
    "tasks",
    help=(
        "Generate seeded tasks in the six EB-ALFRED subsets' styles, each checked solvable by the "
        "expert planner, and write them as JSONL: id, instruction, subset, task_type, goal, scene, "
        "gold_plan (EB-ALFRED strings), gold_plans (one per vocabulary) and action_map (the scene's "
        "enumerated EB-ALFRED actions, usable as --action-map). With --from, export an existing "
        "source (splits.json, traj_data directory) the same way instead."
    ),
)
def tasks_cmd(
    output: Path = typer.Option(
        ..., "-o", "--output", help="JSONL file to write (parent folders are created); - writes stdout."
    ),
    n: int = typer.Option(60, "--n", min=0, help="Number of tasks to generate (ignored with --from)."),
    seed: int = typer.Option(0, "--seed", help="Generator seed: the same seed gives the same tasks."),
    subsets: str = typer.Option(
        "",
        "--subsets",
        help="Comma-separated subsets to cycle through: base, common_sense, complex_instruction, spatial, "
        "visual_appearance, long_horizon (default: all six). With --from: keep only these subsets.",
    ),
    source: Path | None = typer.Option(
        None,
        "--from",
        exists=True,
        help="Export this task source (EB-ALFRED splits.json, ALFRED traj_data directory, or tasks JSONL) "
        "with expert gold plans instead of generating.",
    ),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="With --from: only the first N tasks (after --subsets)."
    ),
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from rich.console import Console
    from rich.progress import track

    from groundrl.sim.generate import SUBSETS, generate_tasks
    from groundrl.sim.run import export_record
    from groundrl.sim.tasks import load_tasks

    chosen = _split(subsets)
    bad = [s for s in chosen if s not in SUBSETS]
    if bad:
        raise typer.BadParameter(
            f"unknown subset(s) {bad}; choose from {', '.join(SUBSETS)}", param_hint="--subsets"
        )
    try:
        check_output(output, source)
    except SameFileError as e:
        raise typer.BadParameter(str(e), param_hint="-o/--output") from None
    try:
        if source is not None:
            tasks = load_tasks(source)
            if chosen:
                tasks = [t for t in tasks if t.subset in chosen]
            tasks = tasks[:limit] if limit else tasks
        else:
            tasks = generate_tasks(n, seed, chosen or None)
    except (ValueError, OSError) as e:
        raise typer.BadParameter(str(e)) from e
    to_stdout = str(output) == "-"
    unsolved = 0
    # a file appears whole when every task is written, or not at all
    with contextlib.nullcontext(sys.stdout) if to_stdout else atomic_output(output) as f:
        for t in track(tasks, description="gold plans", transient=True, console=Console(stderr=True)):
            rec = export_record(t)
            unsolved += rec["gold_plans"]["eb_alfred"] is None
            f.write(json_line(rec))
    typer.echo(
        f"wrote {len(tasks)} tasks to {'stdout' if to_stdout else output}"
        + (f" ({unsolved} without an expert plan)" if unsolved else ""),
        err=to_stdout,
    )


@dataclasses.dataclass(frozen=True)
class EvalOptions:
    """``groundrl sim eval``'s options, each defined once (its flag is generated)."""

    tasks_opt: Path | None = flag(
        None,
        param=typer.Option(None, "--tasks", exists=True, help="The same as INPUT (kept for older scripts)."),
    )
    policy: str = flag(
        "expert",
        help="expert: the expert planner (oracle). gold: the task's own gold plan (ALFRED high_pddl; "
        "generated tasks' expert plan; splits.json has none). random: random actions from the scene's "
        "action list (--seed). file: plans from --plans. model: a VLM/LLM through --judge-backend.",
    )
    output: Path = flag(
        Path("runs/sim"),
        param=typer.Option(Path("runs/sim"), "-o", "--output", help="Output directory (created)."),
    )
    plans: Path | None = flag(
        None, help='file policy: JSONL with one {"id": task_id, "plan": text or list} per line.'
    )
    seed: int = flag(0, help="random policy seed (each task seeded from it and its id).")
    random_length: int = flag(5, help="random policy: actions per plan.", min=1)
    expert_vocab: str = flag(
        "eb_alfred",
        help="expert policy: vocabulary its plans are written in (eb_alfred, eb_alfred_json, reinforced, "
        "embodied_brain, high_pddl) — runs every plan through that vocabulary's parser.",
    )
    subsets: str = flag("", help="Comma-separated subsets (or task types) to keep.")
    per_subset: int | None = flag(
        None, help="Evaluate only the first N tasks of each subset (a quick look).", min=1
    )
    limit: int | None = flag(None, help="Evaluate only the first N tasks.", min=1)
    max_steps: int = flag(30, help="Environment steps per episode (EB-ALFRED: 30).", min=1)
    max_invalid: int = flag(10, help="Invalid actions per episode (EB-ALFRED: 10).", min=1)
    judge_backend: str | None = flag(
        None, help="model policy: openai (an OpenAI-compatible server) or transformers."
    )
    judge_model: str | None = flag(
        None, help="model policy: the served model name, or a local checkpoint path."
    )
    judge_url: str | None = flag(
        None, help="model policy: the server's base URL, e.g. http://127.0.0.1:8000/v1."
    )
    image: bool = flag(True, help="model policy: send the rendered top-down image with each request.")
    max_tokens: int | None = flag(
        None,
        param=typer.Option(
            None,
            "--max-tokens",
            min=1,
            show_default=False,
            help=f"model policy: tokens per answer (default {GPU_MAX_TOKENS} on a server or GPU, "
            f"{CPU_MAX_TOKENS} for --judge-backend transformers on CPU).",
        ),
    )
    batch_size: int = flag(
        32, help="model policy: episodes run in lockstep, one request batch per round.", min=1
    )
    restart: bool = flag(
        False,
        param=typer.Option(
            False,
            "--restart",
            help="Start over: forget the episodes already in -o DIR (a rerun with the same settings "
            "resumes; with other settings it is refused unless --restart).",
        ),
    )


@app.command(
    "eval",
    help=(
        "Run a policy on every task of INPUT with EB-ALFRED's loop (steps run until one fails, then "
        "the policy re-plans with the feedback; an episode ends on success, after --max-steps steps or "
        "--max-invalid invalid actions, or on an empty plan) and write metrics.json (n_tasks, "
        "success_rate with its Wilson 95% interval, progress_rate, env_steps overall, by_subset and "
        "by_task_type), results.jsonl (each episode with its feedback and the policy's raw answers), "
        "report.md and success.png into -o DIR."
    ),
)
@settings_command(EvalOptions, "o")
def eval_cmd(
    input_path: Path | None = typer.Argument(
        None,
        metavar="INPUT",
        show_default=False,
        help="Task source: an EB-ALFRED splits.json, a directory of ALFRED traj_data *.json files, "
        "or a JSONL written by `groundrl sim tasks` (- reads it from standard input).",
    ),
    o: EvalOptions = EvalOptions(),
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.sim.journal import JOURNAL, in_task_order, journal
    from groundrl.sim.policies import POLICIES

    if o.policy not in POLICIES:  # before INPUT is looked at, as every bad flag
        raise typer.BadParameter(
            f"unknown policy {o.policy!r}; choose one of {', '.join(POLICIES)}", param_hint="--policy"
        )
    tasks = _one_input(input_path, o.tasks_opt)
    from_stdin = input_path is not None and str(input_path) == "-"
    source_name = "stdin" if from_stdin else tasks.name
    max_tokens = default_max_tokens(o.judge_backend) if o.max_tokens is None else o.max_tokens
    o = dataclasses.replace(o, max_tokens=max_tokens)
    pol = _make_policy(o, max_tokens)
    task_list = _load_tasks(tasks, o)
    config = _eval_config(o, pol.name, "-" if from_stdin else str(tasks))
    todo, done = _resume(o.output, {**config, **_fingerprints(tasks, o.plans)}, task_list, o.restart)
    with journal(o.output / JOURNAL) as record:
        metrics, new = _run_with_progress(
            todo,
            pol,
            record,
            max_steps=o.max_steps,
            max_invalid=o.max_invalid,
            batch_size=o.batch_size,
            config=config,
        )
    results = in_task_order(task_list, done, new)
    _finish(o, metrics, results, f"{pol.name} on {source_name}")


def _make_policy(o: EvalOptions, max_tokens: int):
    """The policy ``--policy`` names, with its options; bad options are a usage error."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.sim.policies import PolicyOptions, make_policy

    opts = PolicyOptions(
        plans=o.plans,
        seed=o.seed,
        random_length=o.random_length,
        expert_vocab=o.expert_vocab,
        judge_backend=o.judge_backend,
        judge_model=o.judge_model,
        judge_url=o.judge_url,
        image=o.image,
        max_tokens=max_tokens,
    )
    try:
        return make_policy(o.policy, opts)
    except (ValueError, OSError) as e:
        raise typer.BadParameter(str(e), param_hint="--policy") from e


def _load_tasks(tasks: Path, o: EvalOptions) -> list:
    """The tasks of ``tasks`` that --subsets, --per-subset and --limit keep, checked against
    what the policy needs."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.sim.run import check_policy_tasks, select_tasks
    from groundrl.sim.tasks import load_tasks

    try:
        task_list = load_tasks(tasks)
    except (ValueError, OSError, KeyError) as e:
        raise typer.BadParameter(f"cannot load tasks from {tasks}: {e}", param_hint="INPUT") from e
    task_list = select_tasks(task_list, _split(o.subsets), o.per_subset, o.limit)
    try:
        check_policy_tasks(o.policy, task_list, str(tasks))
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="INPUT" if not task_list else "--policy") from e
    return task_list


def _eval_config(o: EvalOptions, policy_name: str, tasks: str) -> EvalConfig:
    """The run's settings as metrics.json records them (and a resumed run must match)."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.sim.run import eval_config

    return eval_config(
        tasks=tasks,
        policy=o.policy,
        policy_name=policy_name,
        max_steps=o.max_steps,
        max_invalid=o.max_invalid,
        seed=o.seed,
        random_length=o.random_length,
        plans=str(o.plans),
        max_tokens=o.max_tokens,
        judge_backend=o.judge_backend,
        judge_model=o.judge_model,
        image=o.image,
        keep=_split(o.subsets),
        per_subset=o.per_subset,
        limit=o.limit,
    )


def _finish(o: EvalOptions, metrics: EvalMetrics, results: list, title: str) -> None:
    """Metrics over every episode of the folder (this run's and earlier ones), the report, the summary."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.sim.evaluate import summarise
    from groundrl.sim.report import write_report

    metrics.update(summarise(results))
    write_report(o.output, metrics, results, f"groundrl sim eval: {title}")
    _print_summary(metrics, title)
    missing = metrics.get("tasks_without_plan")
    if missing:
        typer.echo(f"note: {missing} task(s) had no plan in {o.plans} (scored as empty plans)")
    typer.echo(f"wrote {o.output}/metrics.json, results.jsonl, report.md, success.png")


def default_max_tokens(judge_backend: str | None) -> int:
    """The model policy's tokens per answer when ``--max-tokens`` is not given: small for
    a local model on CPU, where every token is slow; larger for a server or a GPU."""
    if judge_backend != "transformers":
        return GPU_MAX_TOKENS
    try:
        # lazy: loads when the command runs; groundrl --help imports every command module
        import torch

        return GPU_MAX_TOKENS if torch.cuda.is_available() else CPU_MAX_TOKENS
    except ImportError:
        return CPU_MAX_TOKENS


def _one_input(positional: Path | None, option: Path | None) -> Path:
    if positional is not None and str(positional) == "-":
        return _stdin_file()
    if positional is None and option is None:
        raise typer.BadParameter("give the task source as INPUT (or --tasks)", param_hint="INPUT")
    if positional is not None and option is not None and positional != option:
        raise typer.BadParameter(
            f"two task sources given ({positional} and --tasks {option}); keep one", param_hint="INPUT"
        )
    chosen = positional or option
    if not chosen.exists():  # type: ignore[union-attr]
        raise typer.BadParameter(f"{chosen} does not exist", param_hint="INPUT")
    return chosen  # type: ignore[return-value]


def _stdin_file() -> Path:
    """Tasks JSONL from standard input, saved to a temporary file (deleted at exit)."""
    with tempfile.NamedTemporaryFile("wb", prefix="groundrl-tasks-", suffix=".jsonl", delete=False) as f:
        shutil.copyfileobj(sys.stdin.buffer, f)
    atexit.register(Path(f.name).unlink, missing_ok=True)
    return Path(f.name)


def _fingerprints(tasks: Path, plans: Path | None) -> dict[str, str]:
    """SHA-256 of the task and plans files: a rerun over files that changed is not a resume."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    import hashlib

    out = {}
    for key, path in (("tasks_sha256", tasks), ("plans_sha256", plans)):
        if path is not None and Path(path).is_file():
            h = hashlib.sha256()
            with Path(path).open("rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            out[key] = h.hexdigest()
    return out


def _resume(output: Path, params: dict, task_list: list, restart: bool) -> tuple[list, dict]:
    """The tasks still to run in ``output`` and the episodes already there (see
    :mod:`groundrl.sim.journal`). A folder whose run finished (it has metrics.json and
    report.md, written last) is started over, as before; an unfinished one resumes with the same settings and input
    files, and is refused with others."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.run_params import ParamsChanged, guard
    from groundrl.sim.journal import JOURNAL, clear_report, read_episodes, tasks_left

    try:
        finished = (output / "metrics.json").is_file() and (output / "report.md").is_file()
        note = guard(output / JOURNAL, "sim eval", params, restart or finished)
    except ParamsChanged as e:
        raise typer.BadParameter(str(e), param_hint="-o/--output") from None
    if note:
        typer.echo(note, err=True)
    done = read_episodes(output / JOURNAL)
    todo = tasks_left(task_list, done)
    if len(todo) < len(task_list):
        typer.echo(
            f"resuming: {len(task_list) - len(todo)} episode(s) already in {output / JOURNAL}, {len(todo)} to run",
            err=True,
        )
    if todo or restart:
        clear_report(output)
    return todo, done


def _run_with_progress(task_list, pol, record=None, **kwargs):
    """:func:`groundrl.sim.run.run_evaluation` under a progress bar (on stderr) showing
    the running success rate; ``record`` gets each episode as it ends."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from groundrl.sim.run import run_evaluation

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("success {task.fields[rate]}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=False,
    ) as bar:
        job = bar.add_task(f"sim eval ({pol.name})", total=len(task_list), rate="-")
        wins = [0, 0]

        def tick(r) -> None:
            if record is not None:
                record(r)
            wins[0] += r.success
            wins[1] += 1
            bar.update(job, advance=1, rate=f"{wins[0] / wins[1]:.2f}")

        return run_evaluation(task_list, pol, on_result=tick, **kwargs)


def _print_summary(metrics: EvalMetrics, title: str) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from rich.console import Console
    from rich.table import Table

    from groundrl.sim.run import summary_rows

    table = Table(title=f"{title}: {metrics['n_tasks']} tasks in {metrics['wall_seconds']:.2f} s")
    just: Literal["left", "right"]
    for col, just in (("subset", "left"), ("n", "right"), ("success", "right"), ("95% CI", "right"), ("progress", "right"),
                      ("env steps", "right"), ("invalid", "right")):  # fmt: skip
        table.add_column(col, justify=just, overflow="fold")  # a long subset name wraps, never cut
    rows = summary_rows(metrics)
    for k, (name, cells) in enumerate(rows):
        table.add_row(
            f"[bold]{name}[/bold]" if k == len(rows) - 1 else name, *cells, end_section=k == len(rows) - 2
        )
    Console().print(table)


def export_record(task) -> ExportRecord:
    """Kept for callers of the CLI module: :func:`groundrl.sim.run.export_record`."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.sim.run import export_record as _export

    return _export(task)


@app.command(
    "compare",
    help=(
        "Compare two `sim eval` runs on the same tasks, paired per task: success of each with its "
        "Wilson 95% interval, and B - A with a paired bootstrap 95% interval (tasks resampled with "
        "both outcomes together), overall and per subset. Writes compare.json, compare.md and "
        "compare.png into -o DIR and prints the overall difference."
    ),
)
def compare_cmd(
    run_a: Path = typer.Argument(
        ..., metavar="RUN_A", exists=True, file_okay=False, help="A `sim eval -o` folder."
    ),
    run_b: Path = typer.Argument(
        ..., metavar="RUN_B", exists=True, file_okay=False, help="The other folder."
    ),
    output: Path = typer.Option(
        Path("runs/sim-compare"), "-o", "--output", help="Output directory (created when missing)."
    ),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed: the same seed gives the same interval."),
    resamples: int = typer.Option(2000, "--resamples", min=100, help="Bootstrap resamples."),
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.sim.compare import compare_runs, write_comparison

    try:
        c = compare_runs(run_a, run_b, seed=seed, n_boot=resamples)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="RUN_A/RUN_B") from e
    paths = write_comparison(c, output)
    lo, hi = c["b_minus_a_ci95"]
    ci = "[—]" if lo is None else f"[{lo:+.3f}, {hi:+.3f}]"
    typer.echo(
        f"A {c['name_a']}: {c['success_a']:.3f}   B {c['name_b']}: {c['success_b']:.3f}   "
        f"B - A: {c['b_minus_a']:+.3f} {ci} (paired bootstrap 95% CI, {c['n_tasks']} tasks; "
        f"only A solved {c['only_a']}, only B {c['only_b']})"
    )
    typer.echo(f"wrote {paths['json']}, {paths['report'].name}, {paths['chart'].name}")
