"""Files of a simulator evaluation: ``metrics.json``, ``results.jsonl`` (one episode per
line, with its step-by-step feedback), ``report.md`` and ``success.png`` (success and
progress rates per subset and per task type)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from groundrl.io import atomic_output
from groundrl.sim.evaluate import EpisodeResult, GroupMetrics, SimMetrics
from groundrl.sim.run import EvalMetrics
from groundrl.sim.task_types import get_task_type, task_type_names

METRIC_NOTES = [
    "success rate: share of episodes whose goal conditions are all met; the bracket is its "
    "Wilson score 95% interval (with ~50 episodes per subset a rate is known to about ±0.13, "
    "so two runs differ only where their intervals are far apart — `groundrl sim compare` "
    "gives the paired interval of a difference);",
    "progress rate: mean share of goal conditions met (ALFRED goal-condition success);",
    "env steps: mean environment steps per episode; invalid: mean invalid actions "
    "(failed or unreadable steps, and answers no plan could be read from);",
    "planner calls: mean number of times the policy was asked for a plan (1 + re-plans).",
]


CHART_NOTE = (
    "success.png: bars are the success rate (green, with its 95% Wilson interval as a whisker) "
    "and progress rate (blue) per group; the dashed lines are the overall rates over all tasks, "
    "for reading each group against the whole."
)


def _ci(m: GroupMetrics) -> str:
    lo, hi = m.get("success_ci95") or (None, None)
    return "—" if lo is None or hi is None else f"[{lo:.3f}, {hi:.3f}]"


def same_grouping(metrics: SimMetrics) -> bool:
    """True when the by-subset and by-task-type groups are the same (ALFRED trajectory
    folders use the task type as subset): then one table and one panel are enough."""
    return list(metrics.get("by_subset", {})) == list(metrics.get("by_task_type", {}))


def _table(title: str, groups: dict[str, GroupMetrics], overall: GroupMetrics | None) -> list[str]:
    lines = [
        f"| {title} | n | success | 95% CI | progress | env steps | invalid | planner calls |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rows = list(groups.items()) + ([("**overall**", overall)] if overall is not None else [])
    for k, m in rows:
        lines.append(
            f"| {k} | {m['n_tasks']} | {m['success_rate']:.3f} | {_ci(m)} | {m['progress_rate']:.3f} | "
            f"{m['env_steps']:.1f} | {m['invalid_steps']:.2f} | {m['planner_calls']:.2f} |"
        )
    return lines


def _group_tables(metrics: SimMetrics) -> list[str]:
    if same_grouping(metrics):
        return [
            "## By subset (= task type)",
            "",
            *_table("subset", metrics["by_subset"], metrics),
            "",
        ]
    return [
        "## By subset",
        "",
        *_table("subset", metrics["by_subset"], metrics),
        "",
        "## By task type",
        "",
        *_table("task type", metrics["by_task_type"], None),
        "",
    ]


def markdown(metrics: EvalMetrics, results: Sequence[EpisodeResult], title: str, n_failures: int = 5) -> str:
    """The ``report.md`` text: settings, overall / per-subset / per-task-type tables,
    how episodes ended, and the last feedback of the first failed episodes."""
    cfg = metrics.get("config", {})
    lines = [f"# {title}", ""]
    if cfg:
        lines += ["| setting | value |", "|---|---|", *[f"| {k} | `{v}` |" for k, v in cfg.items()], ""]
    lines += [
        f"**{metrics['n_tasks']} tasks**: success rate **{metrics['success_rate']:.3f}** "
        f"(95% CI {_ci(metrics)}), "
        f"progress rate **{metrics['progress_rate']:.3f}**, {metrics['env_steps']:.1f} env steps per task"
        + (f", {metrics['wall_seconds']:.2f} s wall." if "wall_seconds" in metrics else "."),
        "",
        *_group_tables(metrics),
        "## How episodes ended",
        "",
        ", ".join(f"{k}: {v}" for k, v in metrics.get("episode_ends", {}).items()) or "(none)",
        "",
    ]
    failed = [r for r in results if not r.success][:n_failures]
    if failed:
        lines += ["## First failures", ""]
        for r in failed:
            last = r.history[-1].feedback if r.history else "(no step)"
            lines.append(
                f"- `{r.id}` ({r.task_type}, {r.end}, progress {r.progress:.2f}): {r.instruction!r} — "
                f"last feedback: {last}"
            )
        lines.append("")
    lines += ["## Definitions", "", *[f"- {n}" for n in METRIC_NOTES], f"- {CHART_NOTE}", ""]
    return "\n".join(lines)


def _short(name: str) -> str:
    """A task type's chart label (its ``label``), or the name itself for anything else."""
    return get_task_type(name).label if name in task_type_names() else name


SUCCESS_COLOR, PROGRESS_COLOR = "#2b8a3e", "#1971c2"


def _ci_whiskers(groups: dict[str, GroupMetrics], keys: list[str]) -> list[list[float]] | None:
    """Matplotlib ``yerr`` (below, above) from each group's Wilson interval."""
    lows, highs = [], []
    for k in keys:
        lo, hi = groups[k].get("success_ci95") or (None, None)
        if lo is None or hi is None:
            return None
        v = groups[k]["success_rate"]
        lows.append(max(0.0, v - lo))
        highs.append(max(0.0, hi - v))
    return [lows, highs]


def _draw_groups(ax: Any, metrics: SimMetrics, groups: dict[str, GroupMetrics], name: str) -> None:
    keys = list(groups)
    xs = list(range(len(keys)))
    rates: tuple[tuple[float, Literal["success_rate", "progress_rate"], str, str], ...] = (
        (-0.2, "success_rate", "success (bar: 95% Wilson CI)", SUCCESS_COLOR),
        (0.2, "progress_rate", "progress (goal conditions met)", PROGRESS_COLOR),
    )
    for off, key, label, color in rates:
        vals = [groups[k][key] for k in keys]
        yerr = _ci_whiskers(groups, keys) if key == "success_rate" else None
        bars = ax.bar(
            [x + off for x in xs], vals, width=0.4, label=label, color=color,
            yerr=yerr, capsize=3 if yerr else 0, error_kw={"elinewidth": 0.9, "ecolor": "#333333"},
        )  # fmt: skip
        ax.bar_label(bars, labels=[f"{v:.2f}" for v in vals], fontsize=7, padding=1, label_type="center",
                     color="white")  # fmt: skip
        ax.axhline(
            metrics[key], color=color, linestyle="--", linewidth=0.8,
            label=f"overall {label.split()[0]} ({metrics[key]:.2f}, all {metrics['n_tasks']} tasks)",
        )  # fmt: skip
    ax.set_xticks(
        xs,
        [f"{_short(k)}\n(n={groups[k]['n_tasks']})" for k in keys],
        rotation=30,
        ha="right",
        fontsize=8,
    )
    pad = max(0, 3 - len(keys)) / 2  # few groups keep a bar's width
    ax.set_xlim(-0.6 - pad, len(keys) - 0.4 + pad)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("rate (share of episodes)", fontsize=8)
    ax.set_title(f"by {name}", fontsize=10)


def bar_chart(metrics: SimMetrics, path: Path, title: str) -> None:
    """Success rate (with its Wilson 95% interval) and progress rate per subset (left)
    and per task type (right) — one panel when both groupings are the same — and the
    overall rates as dashed lines, named in the legend. Matplotlib's Agg backend."""
    # lazy: matplotlib loads only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    # lazy: matplotlib loads only when a figure is drawn
    import matplotlib.pyplot as plt

    panels = [("subset", metrics["by_subset"]), ("task type", metrics["by_task_type"])]
    if same_grouping(metrics):
        panels = [("subset (= task type)", metrics["by_subset"])]
    widths = [max(2, len(g)) for _, g in panels]
    fig, axes = plt.subplots(
        1, len(panels), figsize=(max(7.0, 0.9 * sum(widths) + 2.5), 4.2), squeeze=False,
        gridspec_kw={"width_ratios": widths},
    )  # fmt: skip
    for ax, (name, groups) in zip(axes[0], panels, strict=True):
        _draw_groups(ax, metrics, groups, name)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.95), ncol=2, fontsize=7.5,
               frameon=False)  # fmt: skip
    fig.suptitle(title, fontsize=11, x=0.02, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.89))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(
    out: str | Path, metrics: EvalMetrics, results: Sequence[EpisodeResult], title: str
) -> dict[str, Path]:
    """Write the four files into ``out`` (created if needed); returns their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "metrics": out / "metrics.json",
        "results": out / "results.jsonl",
        "report": out / "report.md",
        "chart": out / "success.png",
    }
    # each file whole or absent (a full disk leaves no cut file); report.md last: `sim eval`
    # reads metrics.json + report.md as "this run finished"
    with atomic_output(paths["metrics"]) as f:
        f.write(json.dumps(metrics, indent=2) + "\n")
    with atomic_output(paths["results"]) as f:
        for r in results:
            f.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
    with atomic_output(paths["report"]) as f:
        f.write(markdown(metrics, results, title))
    bar_chart(metrics, paths["chart"], title)
    return paths


__all__ = ["bar_chart", "markdown", "write_report"]
