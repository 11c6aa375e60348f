"""Simulator jobs behind ``groundrl sim``: export task records, pick the tasks to
evaluate, run a policy on them and collect the metrics — everything the CLI does
except reading flags and printing.

>>> from groundrl.sim.generate import generate_tasks
>>> tasks = generate_tasks(12, seed=0)
>>> [t.subset for t in select_tasks(tasks, per_subset=1)]
['base', 'common_sense', 'complex_instruction', 'spatial', 'visual_appearance', 'long_horizon']
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TypedDict

from groundrl.sim.evaluate import EpisodeResult, SimMetrics, evaluate, summarise
from groundrl.sim.planner import expert_plan
from groundrl.sim.tasks import Task, TaskJSON
from groundrl.sim.vocab import action_space, format_plan, get_vocab, render_plan, vocab_names


class ExportRecord(TaskJSON):
    """:func:`export_record`: a line of ``groundrl sim tasks``' JSONL."""

    gold_plans: dict[str, object]
    action_map: dict[str, str]


class EvalConfig(TypedDict, total=False):
    """:func:`eval_config`: the settings of one evaluation (the first four always,
    the others only where they matter for the policy or were given)."""

    tasks: str
    policy: str
    max_steps: int
    max_invalid: int
    seed: int
    random_length: int
    plans: str | None
    judge_backend: str | None
    judge_model: str | None
    image: bool
    max_tokens: int
    subsets: list[str]
    per_subset: int
    limit: int


class EvalMetrics(SimMetrics, total=False):
    """:func:`run_evaluation`'s metrics (``metrics.json``): :func:`summarise` plus the
    run's wall time, its settings and, for a plans file with gaps, the tasks it missed."""

    wall_seconds: float
    config: EvalConfig
    tasks_without_plan: int


def export_record(task: Task) -> ExportRecord:
    """A task's JSONL record: ``Task.to_json()`` plus ``gold_plans`` (the expert's plan in
    every vocabulary; ``None`` where it finds none or the vocabulary cannot express it)
    and ``action_map`` (id → EB-ALFRED action name for the scene)."""
    rec = task.to_json()
    plans: dict[bool, Any] = {False: expert_plan(task), True: None}
    gold: dict[str, object] = {}
    for v in vocab_names():
        macros = get_vocab(v).auto_open  # no open/close: plan with clean/heat/cool macros
        if macros and plans[True] is None:
            plans[True] = expert_plan(task, macros=True)
        skills = plans[macros]
        try:
            gold[v] = format_plan(render_plan(skills, v, task.scene), v) if skills is not None else None
        except ValueError:
            gold[v] = None
    eb = gold["eb_alfred"]
    if rec.get("gold_plan") is None and isinstance(eb, list):  # an eb_alfred plan is a list of steps
        rec["gold_plan"], rec["gold_vocab"] = eb, "eb_alfred"
    return {**rec, "gold_plans": gold, "action_map": {str(k): a for k, a in action_space(task.scene).items()}}


def select_tasks(
    tasks: Sequence[Task],
    keep: Sequence[str] = (),
    per_subset: int | None = None,
    limit: int | None = None,
) -> list[Task]:
    """The tasks to evaluate, in order: those whose subset or task type is in ``keep``
    (all when empty), then at most ``per_subset`` of each subset, then the first
    ``limit``."""
    out = [t for t in tasks if t.subset in keep or t.task_type in keep] if keep else list(tasks)
    if per_subset:
        seen: dict[str, int] = {}
        kept = []
        for t in out:
            seen[t.subset] = seen.get(t.subset, 0) + 1
            if seen[t.subset] <= per_subset:
                kept.append(t)
        out = kept
    return out[:limit] if limit else out


def check_policy_tasks(policy: str, tasks: Sequence[Task], source: str) -> None:
    """``ValueError`` when ``policy`` cannot run on ``tasks`` (none to run; ``gold`` on
    tasks that carry no gold plan)."""
    if not tasks:
        raise ValueError(f"no tasks to evaluate in {source} (after --subsets/--per-subset/--limit)")
    if policy == "gold" and not any(t.gold_plan for t in tasks):
        raise ValueError(
            f"the tasks in {source} carry no gold plan (EB-ALFRED splits.json has none); "
            "use --policy expert, or export them with `groundrl sim tasks --from` first"
        )


def run_evaluation(
    tasks: Sequence[Task],
    policy: Any,
    *,
    max_steps: int = 30,
    max_invalid: int = 10,
    batch_size: int = 32,
    on_result: Callable[[EpisodeResult], None] | None = None,
    config: EvalConfig | None = None,
) -> tuple[EvalMetrics, list[EpisodeResult]]:
    """Run ``policy`` on ``tasks`` (closing its backend afterwards, when it has one) and
    return ``(metrics, results)``: :func:`~groundrl.sim.evaluate.summarise` plus
    ``wall_seconds``, ``config`` and, for a plans-file policy with gaps,
    ``tasks_without_plan``."""
    t0 = time.perf_counter()
    try:
        results = evaluate(tasks, policy, max_steps, max_invalid, batch_size=batch_size, on_result=on_result)
    finally:
        close = getattr(policy, "close", None)
        if callable(close):
            close()
    metrics: EvalMetrics = {
        **summarise(results),
        "wall_seconds": round(time.perf_counter() - t0, 3),
        "config": config.copy() if config else {},
    }
    missing = getattr(policy, "missing", [])
    if missing:
        metrics["tasks_without_plan"] = len(missing)
    return metrics, results


def eval_config(
    *,
    tasks: str,
    policy: str,
    policy_name: str,
    max_steps: int,
    max_invalid: int,
    seed: int,
    random_length: int,
    plans: str | None,
    judge_backend: str | None,
    max_tokens: int | None = None,
    judge_model: str | None,
    image: bool,
    keep: Sequence[str],
    per_subset: int | None,
    limit: int | None,
) -> EvalConfig:
    """The ``config`` block of an evaluation's ``metrics.json``: the settings that
    matter for ``policy`` and the task selection, nothing else."""
    c: EvalConfig = {
        "tasks": tasks,
        "policy": policy_name,
        "max_steps": max_steps,
        "max_invalid": max_invalid,
    }
    if policy == "random":
        c["seed"], c["random_length"] = seed, random_length
    if policy == "file":
        c["plans"] = plans
    if policy == "model":
        c["judge_backend"], c["judge_model"], c["image"] = judge_backend, judge_model, image
        if max_tokens:
            c["max_tokens"] = max_tokens
    if keep:
        c["subsets"] = list(keep)
    if per_subset:
        c["per_subset"] = per_subset
    if limit:
        c["limit"] = limit
    return c


def _ci_cell(ci) -> str:
    return "—" if not ci or ci[0] is None or ci[1] is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def summary_rows(metrics: SimMetrics) -> list[tuple[str, list[str]]]:
    """``(name, cells)`` per subset, then ``overall``: n, success, its 95% CI, progress,
    env steps, invalid — the CLI's summary table."""
    rows = [*metrics["by_subset"].items(), ("overall", metrics)]
    return [
        (
            name,
            [
                str(m["n_tasks"]),
                f"{m['success_rate']:.3f}",
                _ci_cell(m.get("success_ci95")),
                f"{m['progress_rate']:.3f}",
                f"{m['env_steps']:.1f}",
                f"{m['invalid_steps']:.2f}",
            ],
        )
        for name, m in rows
    ]


__all__ = [
    "check_policy_tasks",
    "eval_config",
    "export_record",
    "run_evaluation",
    "select_tasks",
    "summary_rows",
]
