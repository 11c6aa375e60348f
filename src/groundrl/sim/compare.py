"""``groundrl sim compare RUN_A RUN_B``: two ``sim eval`` runs on the same tasks, paired
per task.

Two success rates measured on the same ~50 tasks per subset have wide, overlapping
Wilson intervals even when one policy is clearly better, because both runs share the
tasks' difficulty. Pairing removes that shared part: the difference ``B − A`` is the
mean over common tasks of ``success_B − success_A``, and its 95% interval is a
percentile bootstrap that resamples *tasks* (both runs' outcomes of a task together).
The discordant counts (tasks only A solved, only B solved) are what the difference is
made of. Tasks present in one run only are counted and left out of the pairing.

Files written into the output folder: ``compare.json`` (raw values), ``compare.md``
(rounded) and ``compare.png`` (success per subset for both runs with Wilson intervals,
and the paired difference with its interval).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, TypedDict

from groundrl.intervals import bootstrap_ci, wilson_ci
from groundrl.io import JsonlError, iter_lines

RESULTS, METRICS = "results.jsonl", "metrics.json"


def load_run(run: Path) -> tuple[dict[str, tuple[str, float]], str]:
    """``{task id: (subset, success 0/1)}`` from a ``sim eval`` folder, and the run's
    name (its policy, from ``metrics.json``, else the folder name). ``ValueError`` with
    the path when the folder holds no readable ``results.jsonl``."""
    path = run / RESULTS
    if not path.is_file():
        raise ValueError(f"{run} has no {RESULTS}: pass a folder written by `groundrl sim eval -o`")
    out: dict[str, tuple[str, float]] = {}
    fix = "pass a folder written by `groundrl sim eval -o`"
    for line in iter_lines(path):
        row = line.value or {}
        if line.problem or "id" not in row or "success" not in row:
            problem = line.problem or "not a sim eval result (no `id` / `success`)"
            raise JsonlError(path, line.number, problem, fix)
        out[str(row["id"])] = (str(row.get("subset", "")), 1.0 if row["success"] else 0.0)
    if not out:
        raise ValueError(f"{path} is empty: the run evaluated no task")
    name = run.name
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        name = json.loads((run / METRICS).read_text(encoding="utf-8"))["config"]["policy"] + f" ({run.name})"
    return out, name


def _mean_diff(pairs: Sequence[tuple[float, float]]) -> float | None:
    return sum(b - a for a, b in pairs) / len(pairs) if pairs else None


class PairedGroup(TypedDict):
    """The paired comparison of one group of common tasks (a subset, or all of them)."""

    n_tasks: int
    success_a: float
    success_b: float
    success_a_ci95: list[float | None]
    success_b_ci95: list[float | None]
    b_minus_a: float
    b_minus_a_ci95: list[float | None]
    only_a: int
    only_b: int


class Comparison(PairedGroup):
    """:func:`compare_runs` (``compare.json``): the two runs, the bootstrap's settings,
    the tasks left out, the overall paired group and one per subset."""

    run_a: str
    run_b: str
    name_a: str
    name_b: str
    seed: int
    bootstrap_resamples: int
    only_in_a: int
    only_in_b: int
    by_subset: dict[str, PairedGroup]


def _group(pairs: list[tuple[float, float]], seed: int, n_boot: int) -> PairedGroup:
    n = len(pairs)
    wins_a, wins_b = int(sum(a for a, _ in pairs)), int(sum(b for _, b in pairs))
    lo, hi = bootstrap_ci(pairs, _mean_diff, n=n_boot, seed=seed)
    return {
        "n_tasks": n,
        "success_a": wins_a / n,
        "success_b": wins_b / n,
        "success_a_ci95": list(wilson_ci(wins_a, n)),
        "success_b_ci95": list(wilson_ci(wins_b, n)),
        "b_minus_a": sum(b - a for a, b in pairs) / n,  # _mean_diff of a non-empty group
        "b_minus_a_ci95": [lo, hi],
        "only_a": sum(1 for a, b in pairs if a > b),
        "only_b": sum(1 for a, b in pairs if b > a),
    }


def compare_runs(run_a: Path, run_b: Path, seed: int = 0, n_boot: int = 2000) -> Comparison:
    """The paired comparison of two ``sim eval`` folders (see the module docstring)."""
    a, name_a = load_run(run_a)
    b, name_b = load_run(run_b)
    common = [i for i in a if i in b]
    if not common:
        raise ValueError(f"{run_a} and {run_b} share no task id: were they run on the same tasks?")
    by_subset: dict[str, list[tuple[float, float]]] = {}
    for i in common:
        by_subset.setdefault(a[i][0], []).append((a[i][1], b[i][1]))
    pairs = [(a[i][1], b[i][1]) for i in common]
    return {
        "run_a": str(run_a),
        "run_b": str(run_b),
        "name_a": name_a,
        "name_b": name_b,
        "seed": seed,
        "bootstrap_resamples": n_boot,
        "only_in_a": len(a) - len(common),
        "only_in_b": len(b) - len(common),
        **_group(pairs, seed, n_boot),
        "by_subset": {k: _group(v, seed, n_boot) for k, v in sorted(by_subset.items())},
    }


def _ci(x: Sequence[float | None], signed: bool = False) -> str:
    if x[0] is None or x[1] is None:
        return "—"
    f = "{:+.3f}" if signed else "{:.3f}"
    return f"[{f.format(x[0])}, {f.format(x[1])}]"


def markdown(c: Comparison) -> str:
    head = (
        "| subset | n | A success | A 95% CI | B success | B 95% CI | B − A | paired 95% CI "
        "| only A | only B |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    rows = [*c["by_subset"].items(), ("**overall**", c)]
    body = [
        f"| {k} | {g['n_tasks']} | {g['success_a']:.3f} | {_ci(g['success_a_ci95'])} | "
        f"{g['success_b']:.3f} | {_ci(g['success_b_ci95'])} | {g['b_minus_a']:+.3f} | "
        f"{_ci(g['b_minus_a_ci95'], True)} | {g['only_a']} | {g['only_b']} |"
        for k, g in rows
    ]
    lo, hi = c["b_minus_a_ci95"]
    verdict = (
        "the interval excludes 0: B and A differ on these tasks"
        if lo is not None and hi is not None and (lo > 0 or hi < 0)
        else "the interval includes 0: these tasks do not tell A and B apart"
    )
    lines = [
        "# groundrl sim compare",
        "",
        f"- A: {c['name_a']} — `{c['run_a']}`",
        f"- B: {c['name_b']} — `{c['run_b']}`",
        f"- paired on {c['n_tasks']} common tasks"
        + (
            f" ({c['only_in_a']} only in A, {c['only_in_b']} only in B, left out)"
            if c["only_in_a"] or c["only_in_b"]
            else ""
        ),
        "",
        f"**B − A success: {c['b_minus_a']:+.3f}, paired bootstrap 95% CI {_ci(c['b_minus_a_ci95'], True)}** "
        f"({verdict}).",
        "",
        head,
        *body,
        "",
        "## Definitions",
        "",
        "- success: share of the common tasks solved; the A/B intervals are Wilson score 95% intervals;",
        "- B − A: mean over common tasks of success_B − success_A; its interval is a percentile "
        f"bootstrap over tasks ({c['bootstrap_resamples']} resamples, seed {c['seed']}), which keeps "
        "each task's two outcomes together and so removes the difficulty both runs share;",
        "- only A / only B: tasks one run solved and the other did not (the difference is "
        "(only B − only A) / n);",
        "- compare.png: left, success per subset for A and B with their Wilson intervals; right, "
        "B − A per subset and overall with the paired interval; the dotted line is no difference.",
        "",
    ]
    return "\n".join(lines)


_Rate = Literal["success_a", "success_b"]
_RateCI = Literal["success_a_ci95", "success_b_ci95"]


def figure(c: Comparison, path: Path) -> None:
    """Left: success per subset for A and B with Wilson whiskers. Right: the paired
    difference B − A per subset and overall, with its bootstrap interval, against 0."""
    # lazy: matplotlib loads only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    # lazy: matplotlib loads only when a figure is drawn
    import matplotlib.pyplot as plt

    groups = list(c["by_subset"].items()) + [("overall", c)]
    names = [f"{k}\n(n={g['n_tasks']})" for k, g in groups]
    fig, (left, right) = plt.subplots(1, 2, figsize=(max(9.0, 1.5 * len(groups) + 4), 4.4))
    xs = list(range(len(groups)))
    sides: tuple[tuple[float, _Rate, _RateCI, str, str], ...] = (
        (-0.2, "success_a", "success_a_ci95", "#868e96", f"A: {c['name_a']}"),
        (0.2, "success_b", "success_b_ci95", "#2b8a3e", f"B: {c['name_b']}"),
    )
    for off, rate, rate_ci, color, label in sides:
        vals = [g[rate] for _, g in groups]
        cis = [g[rate_ci] for _, g in groups]
        err = [
            [max(0.0, v - (ci[0] if ci[0] is not None else v)) for v, ci in zip(vals, cis, strict=True)],
            [max(0.0, (ci[1] if ci[1] is not None else v) - v) for v, ci in zip(vals, cis, strict=True)],
        ]  # Wilson's upper end of k = n can sit a rounding error below the rate
        left.bar([x + off for x in xs], vals, width=0.4, color=color, label=label, yerr=err, capsize=3)
    left.set_xticks(xs, names, rotation=30, ha="right", fontsize=8)
    left.set_ylim(0, 1.2)
    left.set_ylabel("success rate (95% Wilson CI)", fontsize=9)
    left.set_title("success per subset", fontsize=10)
    left.legend(fontsize=7, loc="upper center", ncol=2, frameon=False)
    diffs = [g["b_minus_a"] for _, g in groups]
    los = [
        max(0.0, d - (g["b_minus_a_ci95"][0] if g["b_minus_a_ci95"][0] is not None else d))
        for d, (_, g) in zip(diffs, groups, strict=True)
    ]
    his = [
        max(0.0, (g["b_minus_a_ci95"][1] if g["b_minus_a_ci95"][1] is not None else d) - d)
        for d, (_, g) in zip(diffs, groups, strict=True)
    ]
    colors = ["#1971c2" if k != "overall" else "#000000" for k, _ in groups]
    for x, d, lo, hi, col in zip(xs, diffs, los, his, colors, strict=True):
        right.errorbar([x], [d], yerr=[[lo], [hi]], fmt="o", color=col, capsize=4, linewidth=1.2)
        right.annotate(
            f"{d:+.3f}", (x, d), textcoords="offset points", xytext=(6, 0), fontsize=7, va="center"
        )
    right.axhline(0, color="#495057", linestyle=":", linewidth=1, label="no difference")
    right.set_xticks(xs, names, rotation=30, ha="right", fontsize=8)
    right.set_xlim(-0.6, len(groups) - 0.4)
    right.set_ylabel("B − A success (paired bootstrap 95% CI)", fontsize=9)
    right.set_title("paired difference B − A", fontsize=10)
    ends = (
        [0.0]
        + [d - lo for d, lo in zip(diffs, los, strict=True)]
        + [d + hi for d, hi in zip(diffs, his, strict=True)]
    )
    pad = 0.12 * max(0.2, max(ends) - min(ends))  # room for the labels and the legend
    right.set_ylim(min(ends) - pad, max(ends) + 2 * pad)
    right.legend(fontsize=7, loc="lower right" if max(ends) > 0.5 else "upper left", frameon=False)
    fig.suptitle(
        f"B − A = {c['b_minus_a']:+.3f} {_ci(c['b_minus_a_ci95'], True)} on {c['n_tasks']} paired tasks",
        fontsize=11, x=0.02, ha="left",
    )  # fmt: skip
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_comparison(c: Comparison, out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "compare.json", "report": out / "compare.md", "chart": out / "compare.png"}
    paths["json"].write_text(json.dumps(c, indent=2) + "\n", encoding="utf-8")
    paths["report"].write_text(markdown(c), encoding="utf-8")
    figure(c, paths["chart"])
    return paths


__all__ = ["compare_runs", "figure", "load_run", "markdown", "write_comparison"]
