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
from typing import Any

from groundrl.sim.evaluate import EpisodeResult, evaluate, summarise
from groundrl.sim.planner import expert_plan
from groundrl.sim.tasks import Task
from groundrl.sim.vocab import action_space, format_plan, get_vocab, render_plan, vocab_names


def export_record(task: Task) -> dict[str, Any]:
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
    if rec.get("gold_plan") is None and gold["eb_alfred"] is not None:
        rec.update(gold_plan=gold["eb_alfred"], gold_vocab="eb_alfred")
    rec["gold_plans"] = gold
    rec["action_map"] = {str(k): a for k, a in action_space(task.scene).items()}
    return rec


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
    config: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], list[EpisodeResult]]:
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
    metrics = summarise(results)
    metrics["wall_seconds"] = round(time.perf_counter() - t0, 3)
    metrics["config"] = dict(config or {})
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
) -> dict[str, Any]:
    """The ``config`` block of an evaluation's ``metrics.json``: the settings that
    matter for ``policy`` and the task selection, nothing else."""
    return {
        "tasks": tasks,
        "policy": policy_name,
        "max_steps": max_steps,
        "max_invalid": max_invalid,
        **({"seed": seed, "random_length": random_length} if policy == "random" else {}),
        **({"plans": plans} if policy == "file" else {}),
        **(
            {
                "judge_backend": judge_backend,
                "judge_model": judge_model,
                "image": image,
                **({"max_tokens": max_tokens} if max_tokens else {}),
            }
            if policy == "model"
            else {}
        ),
        **({"subsets": list(keep)} if keep else {}),
        **({"per_subset": per_subset} if per_subset else {}),
        **({"limit": limit} if limit else {}),
    }


def _ci_cell(ci) -> str:
    return "—" if not ci or ci[0] is None or ci[1] is None else f"[{ci[0]:.2f}, {ci[1]:.2f}]"


def summary_rows(metrics: dict[str, Any]) -> list[tuple[str, list[str]]]:
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
