"""``groundrl sim``: generate household tasks and evaluate policies in the simulator."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer

app = typer.Typer(
    help="Headless household simulator with EB-ALFRED semantics: `tasks` exports task sets, `eval` runs a policy.",
    no_args_is_help=True,
)


@app.command("tasks", help="Generate seeded, solvable tasks (with gold plans in every vocabulary) as JSONL.")
def tasks_cmd(
    output: Path = typer.Option(..., "-o", "--output", help="JSONL file to write."),
    n: int = typer.Option(60, "--n", help="Number of tasks."),
    seed: int = typer.Option(0, "--seed", help="Random seed (same seed → same tasks)."),
    subsets: str = typer.Option(
        "", "--subsets", help="Comma-separated EB-ALFRED subsets (default: all six)."
    ),
) -> None:
    from groundrl.sim.generate import SUBSETS, generate_tasks
    from groundrl.sim.planner import expert_plan
    from groundrl.sim.vocab import VOCABS, action_space, format_plan, render_plan

    chosen = [s.strip() for s in subsets.split(",") if s.strip()] or list(SUBSETS)
    try:
        tasks = generate_tasks(n, seed, chosen)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from e
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("w") as f:
        for t in tasks:
            rec = t.to_json()
            gold = {}
            for v in VOCABS:
                skills = expert_plan(t, macros=v == "reinforced")
                gold[v] = format_plan(render_plan(skills, v, t.scene), v) if skills is not None else None
            rec["gold_plans"] = gold
            rec["action_map"] = {str(k): v for k, v in action_space(t.scene).items()}
            f.write(json.dumps(rec) + "\n")
    typer.echo(f"wrote {len(tasks)} tasks to {output}")


@app.command(
    "eval",
    help="Run a policy on tasks (EB-ALFRED loop: re-plan after a failed step) and write metrics.json, report.md, success.png.",
)
def eval_cmd(
    tasks: Path = typer.Option(
        ..., "--tasks", exists=True, help="EB-ALFRED splits.json, a traj_data directory, or a tasks JSONL."
    ),
    policy: str = typer.Option("expert", "--policy", help="expert | gold | random | file | model."),
    output: Path = typer.Option(Path("runs/sim"), "-o", "--output", help="Output directory."),
    plans: str | None = typer.Option(None, "--plans", help="file policy: JSONL of {id, plan}."),
    seed: int = typer.Option(0, "--seed", help="random policy seed."),
    limit: int | None = typer.Option(None, "--limit", help="Evaluate only the first N tasks."),
    max_steps: int = typer.Option(30, "--max-steps", help="Step budget per episode (EB-ALFRED: 30)."),
    max_invalid: int = typer.Option(10, "--max-invalid", help="Invalid-action budget (EB-ALFRED: 10)."),
    by: str = typer.Option(
        "auto",
        "--by",
        help="Group metrics by subset or task_type (auto: subset when the source has several).",
    ),
    judge_backend: str | None = typer.Option(
        None, "--judge-backend", help="model policy: openai | transformers."
    ),
    judge_model: str | None = typer.Option(
        None, "--judge-model", help="model policy: model name or local path."
    ),
    judge_url: str | None = typer.Option(
        None, "--judge-url", help="model policy: OpenAI-compatible base URL."
    ),
) -> None:
    from rich.console import Console
    from rich.table import Table

    from groundrl.sim.evaluate import evaluate, summarise
    from groundrl.sim.policies import make_policy
    from groundrl.sim.report import write_report
    from groundrl.sim.tasks import load_tasks

    backend = None
    if policy == "model" and judge_backend:
        from groundrl.judges import make_backend

        backend = make_backend(judge_backend, judge_model, judge_url)
    try:
        pol = make_policy(policy, plans=plans, seed=seed, backend=backend)
        task_list = load_tasks(tasks, limit=limit)
    except (ValueError, FileNotFoundError) as e:
        raise typer.BadParameter(str(e)) from e
    t0 = time.perf_counter()
    results = evaluate(task_list, pol, max_steps, max_invalid, progress_bar=True)
    wall = time.perf_counter() - t0
    group = by if by != "auto" else ("subset" if len({t.subset for t in task_list}) > 1 else "task_type")
    metrics = summarise(results, by=group)
    metrics.update(policy=policy, tasks=str(tasks), wall_seconds=round(wall, 3))
    write_report(output, metrics, results, f"groundrl sim eval: {policy} on {tasks.name}")
    table = Table(title=f"{policy}: {metrics['n_tasks']} tasks in {wall:.2f}s")
    for col in (group, "n", "success", "progress", "env steps"):
        table.add_column(col)
    for k, m in [*metrics["by_subset"].items(), ("overall", metrics)]:
        table.add_row(
            k,
            str(m["n_tasks"]),
            f"{m['success_rate']:.3f}",
            f"{m['progress_rate']:.3f}",
            f"{m['env_steps']:.1f}",
        )
    Console().print(table)
    typer.echo(f"wrote {output}/metrics.json, report.md, success.png")
