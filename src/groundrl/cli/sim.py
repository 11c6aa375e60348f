"""``groundrl sim``: export household task sets and evaluate policies in the simulator
(EB-ALFRED's protocol: plan, run until a step fails, re-plan with the feedback)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer

app = typer.Typer(
    help=(
        "Headless household simulator with EB-ALFRED semantics. `tasks` generates task sets "
        "(JSONL with scenes and gold plans in every action vocabulary); `eval` runs a policy on a "
        "task source and writes metrics.json, results.jsonl, report.md and success.png."
    ),
    no_args_is_help=True,
)


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
        ..., "-o", "--output", help="JSONL file to write (parent folders are created)."
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
    from rich.progress import track

    from groundrl.sim.generate import SUBSETS, generate_tasks
    from groundrl.sim.tasks import load_tasks

    chosen = _split(subsets)
    bad = [s for s in chosen if s not in SUBSETS]
    if bad:
        raise typer.BadParameter(
            f"unknown subset(s) {bad}; choose from {', '.join(SUBSETS)}", param_hint="--subsets"
        )
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
    output.parent.mkdir(parents=True, exist_ok=True)
    unsolved = 0
    with output.open("w", encoding="utf-8") as f:
        for t in track(tasks, description="gold plans", transient=True):
            rec = export_record(t)
            unsolved += rec["gold_plans"]["eb_alfred"] is None
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    typer.echo(
        f"wrote {len(tasks)} tasks to {output}"
        + (f" ({unsolved} without an expert plan)" if unsolved else "")
    )


def export_record(task) -> dict:
    """A task's JSONL record: ``Task.to_json()`` plus ``gold_plans`` (the expert's plan in
    every vocabulary; ``None`` where it finds none or the vocabulary cannot express it)
    and ``action_map`` (id → EB-ALFRED action name for the scene)."""
    from groundrl.sim.planner import expert_plan
    from groundrl.sim.vocab import VOCABS, action_space, format_plan, render_plan

    rec = task.to_json()
    plans = {False: expert_plan(task), True: None}
    gold: dict[str, object] = {}
    for v in VOCABS:
        macros = v == "reinforced"  # that vocabulary has clean/heat/cool and no open/close
        if macros and plans[True] is None:
            plans[True] = expert_plan(task, macros=True)
        skills = plans[macros]
        try:
            gold[v] = format_plan(render_plan(skills, v, task.scene), v) if skills is not None else None
        except ValueError:
            gold[v] = None
    if rec.get("gold_plan") is None and gold["eb_alfred"] is not None:
        rec.update(gold_plan=gold["eb_alfred"], gold_vocab="eb_alfred")
    rec["gold_plans"] = gold
    rec["action_map"] = {str(k): a for k, a in action_space(task.scene).items()}
    return rec


@app.command(
    "eval",
    help=(
        "Run a policy on every task of --tasks with EB-ALFRED's loop (steps run until one fails, then "
        "the policy re-plans with the feedback; an episode ends on success, after --max-steps steps or "
        "--max-invalid invalid actions, or on an empty plan) and write metrics.json (n_tasks, "
        "success_rate, progress_rate, env_steps overall, by_subset and by_task_type), results.jsonl, "
        "report.md and success.png into -o DIR."
    ),
)
def eval_cmd(
    tasks: Path = typer.Option(
        ...,
        "--tasks",
        exists=True,
        help="Task source: an EB-ALFRED splits.json, a directory of ALFRED traj_data *.json files, "
        "or a JSONL written by `groundrl sim tasks`.",
    ),
    policy: str = typer.Option(
        "expert",
        "--policy",
        help="expert: the expert planner (oracle). gold: the task's own gold plan (ALFRED high_pddl; "
        "generated tasks' expert plan; splits.json has none). random: random actions from the scene's "
        "action list (--seed). file: plans from --plans. model: a VLM/LLM through --judge-backend.",
    ),
    output: Path = typer.Option(Path("runs/sim"), "-o", "--output", help="Output directory (created)."),
    plans: Path | None = typer.Option(
        None, "--plans", help='file policy: JSONL with one {"id": task_id, "plan": text or list} per line.'
    ),
    seed: int = typer.Option(0, "--seed", help="random policy seed (each task seeded from it and its id)."),
    random_length: int = typer.Option(5, "--random-length", min=1, help="random policy: actions per plan."),
    expert_vocab: str = typer.Option(
        "eb_alfred",
        "--expert-vocab",
        help="expert policy: vocabulary its plans are written in (eb_alfred, eb_alfred_json, reinforced, "
        "embodied_brain, high_pddl) — runs every plan through that vocabulary's parser.",
    ),
    subsets: str = typer.Option("", "--subsets", help="Comma-separated subsets (or task types) to keep."),
    per_subset: int | None = typer.Option(
        None, "--per-subset", min=1, help="Evaluate only the first N tasks of each subset (a quick look)."
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Evaluate only the first N tasks."),
    max_steps: int = typer.Option(
        30, "--max-steps", min=1, help="Environment steps per episode (EB-ALFRED: 30)."
    ),
    max_invalid: int = typer.Option(
        10, "--max-invalid", min=1, help="Invalid actions per episode (EB-ALFRED: 10)."
    ),
    judge_backend: str | None = typer.Option(
        None, "--judge-backend", help="model policy: openai (an OpenAI-compatible server) or transformers."
    ),
    judge_model: str | None = typer.Option(
        None, "--judge-model", help="model policy: the served model name, or a local checkpoint path."
    ),
    judge_url: str | None = typer.Option(
        None, "--judge-url", help="model policy: the server's base URL, e.g. http://127.0.0.1:8000/v1."
    ),
    image: bool = typer.Option(
        True, "--image/--no-image", help="model policy: send the rendered top-down image with each request."
    ),
    max_tokens: int = typer.Option(1024, "--max-tokens", min=1, help="model policy: tokens per answer."),
    batch_size: int = typer.Option(
        32, "--batch-size", min=1, help="model policy: episodes run in lockstep, one request batch per round."
    ),
) -> None:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from groundrl.sim.evaluate import evaluate, summarise
    from groundrl.sim.policies import POLICIES, PolicyOptions, make_policy
    from groundrl.sim.report import write_report
    from groundrl.sim.tasks import load_tasks

    if policy not in POLICIES:
        raise typer.BadParameter(
            f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}", param_hint="--policy"
        )
    try:
        pol = make_policy(
            policy,
            PolicyOptions(
                plans=plans,
                seed=seed,
                random_length=random_length,
                expert_vocab=expert_vocab,
                judge_backend=judge_backend,
                judge_model=judge_model,
                judge_url=judge_url,
                image=image,
                max_tokens=max_tokens,
            ),
        )
    except (ValueError, OSError) as e:
        raise typer.BadParameter(str(e), param_hint="--policy") from e
    try:
        task_list = load_tasks(tasks)
    except (ValueError, OSError, KeyError) as e:
        raise typer.BadParameter(f"cannot load tasks from {tasks}: {e}", param_hint="--tasks") from e
    keep = _split(subsets)
    if keep:
        task_list = [t for t in task_list if t.subset in keep or t.task_type in keep]
    if per_subset:
        seen: dict[str, int] = {}
        kept = []
        for t in task_list:
            seen[t.subset] = seen.get(t.subset, 0) + 1
            if seen[t.subset] <= per_subset:
                kept.append(t)
        task_list = kept
    task_list = task_list[:limit] if limit else task_list
    if not task_list:
        raise typer.BadParameter(
            f"no tasks to evaluate in {tasks} (after --subsets/--per-subset/--limit)", param_hint="--tasks"
        )
    if policy == "gold" and not any(t.gold_plan for t in task_list):
        raise typer.BadParameter(
            f"the tasks in {tasks} carry no gold plan (EB-ALFRED splits.json has none); "
            "use --policy expert, or export them with `groundrl sim tasks --from` first",
            param_hint="--policy",
        )

    console = Console(stderr=True)
    t0 = time.perf_counter()
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("success {task.fields[rate]}"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as bar:
        job = bar.add_task(f"sim eval ({pol.name})", total=len(task_list), rate="-")
        wins = [0, 0]

        def tick(r) -> None:
            wins[0] += r.success
            wins[1] += 1
            bar.update(job, advance=1, rate=f"{wins[0] / wins[1]:.2f}")

        try:
            results = evaluate(task_list, pol, max_steps, max_invalid, batch_size=batch_size, on_result=tick)
        finally:
            close = getattr(pol, "close", None)
            if callable(close):
                close()
    wall = time.perf_counter() - t0
    metrics = summarise(results)
    metrics["wall_seconds"] = round(wall, 3)
    metrics["config"] = {
        "tasks": str(tasks),
        "policy": pol.name,
        "max_steps": max_steps,
        "max_invalid": max_invalid,
        **({"seed": seed, "random_length": random_length} if policy == "random" else {}),
        **({"plans": str(plans)} if policy == "file" else {}),
        **(
            {"judge_backend": judge_backend, "judge_model": judge_model, "image": image}
            if policy == "model"
            else {}
        ),
        **({"subsets": keep} if keep else {}),
        **({"per_subset": per_subset} if per_subset else {}),
        **({"limit": limit} if limit else {}),
    }
    missing = getattr(pol, "missing", [])
    if missing:
        metrics["tasks_without_plan"] = len(missing)
    write_report(output, metrics, results, f"groundrl sim eval: {pol.name} on {tasks.name}")

    table = Table(title=f"{pol.name} on {tasks.name}: {metrics['n_tasks']} tasks in {wall:.2f} s")
    for col, just in (("subset", "left"), ("n", "right"), ("success", "right"), ("progress", "right"),
                      ("env steps", "right"), ("invalid", "right")):  # fmt: skip
        table.add_column(col, justify=just)
    rows = [*metrics["by_subset"].items(), ("overall", metrics)]
    for k, (name, m) in enumerate(rows):
        table.add_row(
            f"[bold]{name}[/bold]" if k == len(rows) - 1 else name,
            str(m["n_tasks"]),
            f"{m['success_rate']:.3f}",
            f"{m['progress_rate']:.3f}",
            f"{m['env_steps']:.1f}",
            f"{m['invalid_steps']:.2f}",
            end_section=k == len(rows) - 2,
        )
    Console().print(table)
    if missing:
        typer.echo(f"note: {len(missing)} task(s) had no plan in {plans} (scored as empty plans)")
    typer.echo(f"wrote {output}/metrics.json, results.jsonl, report.md, success.png")
