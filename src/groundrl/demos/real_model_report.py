"""The real-model demo's picture and report (:mod:`groundrl.demos.real_model`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from groundrl.demos.real_model import RealModelMetrics

STAGES: tuple[tuple[Literal["zero_shot", "sft", "grpo"], str, str], ...] = (
    ("zero_shot", "zero-shot", "#b0b0b0"),
    ("sft", "SFT (teacher plans)", "#4c8bd6"),
    ("grpo", "SFT → GRPO (simulator reward)", "#e8852a"),
)
DIFFS: tuple[tuple[Literal["sft_minus_zero_shot", "grpo_minus_sft"], str], ...] = (
    ("sft_minus_zero_shot", "SFT − zero-shot"),
    ("grpo_minus_sft", "GRPO − SFT"),
)


def plot_success(m: RealModelMetrics, path: Path) -> None:
    """Held-out episode success per stage with 95 % CIs (left) and the paired differences
    with their CIs against the +0.10 target (right)."""
    # lazy: matplotlib loads only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: after the backend is chosen

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.4), gridspec_kw={"width_ratios": [1.6, 1]})
    for i, (key, _, color) in enumerate(STAGES):
        v, (lo, hi) = m[key]["success_rate"], m[key]["success_ci95"]
        ax.bar(i, v, 0.7, color=color)
        ax.errorbar(i, v, yerr=[[v - lo], [hi - v]], color="black", capsize=4, lw=1)
        ax.text(i, hi + 0.02, f"{v:.2f}\n(n={m[key]['n_eval_tasks']})", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(STAGES)), [s[1] for s in STAGES], fontsize=8.5)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("episode success on held-out tasks (greedy)")
    ax.set_title(f"{Path(str(m['config']['model'])).name}: held-out success, 95% bootstrap CI")
    ax.grid(axis="y", alpha=0.3)
    for i, (diff, _) in enumerate(DIFFS):
        d, (lo, hi) = m[diff]["diff"], m[diff]["ci95"]
        if d is None:
            continue
        bx.errorbar(
            i, d, yerr=[[d - lo], [hi - d]], fmt="o", color="#e8852a" if i else "#4c8bd6", capsize=5, lw=2
        )
        bx.text(i + 0.08, d, f"{d:+.3f}\n[{lo:+.3f}, {hi:+.3f}]", va="center", fontsize=8)
    bx.axhline(0, color="black", lw=1)
    bx.axhline(0.10, color="gray", ls="--", lw=1, label="target GRPO − SFT: +0.10")
    bx.set_xticks(range(len(DIFFS)), [d[1] for d in DIFFS])
    bx.set_xlim(-0.5, len(DIFFS) - 0.2)
    bx.set_ylabel("paired difference in success (same tasks)")
    bx.set_title("Paired differences, 95% CI")
    bx.grid(axis="y", alpha=0.3)
    bx.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def headline(m: RealModelMetrics) -> list[str]:
    """The result in a few lines (the CLI prints them; the report opens with them)."""
    lines = []
    for key, label, _ in STAGES:
        s = m[key]
        lo, hi = s["success_ci95"]
        lines.append(
            f"{label}: success {s['success_rate']:.3f} [{lo:.3f}, {hi:.3f}] on {s['n_eval_tasks']} held-out tasks, "
            f"readable plans {s['readable']:.2f}"
        )
    for diff, label in DIFFS:
        d = m[diff]
        if d["diff"] is not None:
            won, lost = d["won_lost"]
            lines.append(
                f"{label}: {d['diff']:+.3f} [{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}] "
                f"(paired bootstrap 95% CI; tasks won {won}, lost {lost})"
            )
    verdict = "met" if m["target_met"] else "NOT met"
    lines.append(
        f"target GRPO − SFT ≥ +0.10 with the CI above 0: {verdict}; wall {m['wall_seconds']} s, "
        f"CPU {m['cpu_seconds']} s, load (1 min) {m['load_average_1min'][0]} → {m['load_average_1min'][1]}"
    )
    return lines


def write_report(out: Path, m: RealModelMetrics) -> None:
    """``report.md``: the headline, the per-stage table, the settings and the timing."""
    cfg = m["config"]
    rows = [
        f"| {label} | {m[k]['success_rate']:.3f} [{m[k]['success_ci95'][0]:.3f}, {m[k]['success_ci95'][1]:.3f}] "
        f"| {m[k]['progress']:.3f} | {m[k]['readable']:.2f} | {m[k]['mean_tokens']:.0f} | {m[k]['n_eval_tasks']} |"
        for k, label, _ in STAGES
    ]
    examples = "\n\n".join(f"{label}:\n\n```\n{m[k]['example']}\n```" for k, label, _ in STAGES)
    text = f"""# groundrl demo real-model: {cfg["model"]}

{chr(10).join("- " + ln for ln in headline(m))}

| stage | episode success [95% CI] | progress | readable plans | tokens | tasks |
|---|---|---|---|---|---|
{chr(10).join(rows)}

![success](success.png)

![training](reward_curve.png)

## What ran

- **Tasks**: {m["n_train_tasks"]} training tasks; {m["n_eval_tasks"]} held-out tasks, none sharing a prompt
  with training ({m["n_eval_dropped_duplicates"]} repeats dropped); seed {cfg["seed"]}.
- **Model**: `{cfg["model"]}` ({m["n_parameters"] / 1e6:.1f} M parameters), its own tokenizer and chat template;
  plans are numbered EB-ALFRED action lines, one plan per episode, at most {cfg["max_new_tokens"]} tokens.
- **Zero-shot**: greedy, the first {cfg["n_eval_zero_shot"]} held-out tasks.
- **SFT**: {cfg["n_sft"]} plans of the imperfect teacher (mistake rates {cfg["teacher_rates"]}; the plans'
  own success in the simulator {m["teacher_sft_data_success"]:.2f}), {cfg["sft_epochs"]} epoch(s), batch
  {cfg["sft_batch"]}, peak lr {cfg["sft_lr"]} (parameter change L2 {m["sft_param_change_l2"]:.3f}).
- **GRPO**: {cfg["grpo_steps"]} steps of {cfg["grpo_batch"]} completions (G = {cfg["num_generations"]}), lr
  {cfg["grpo_lr"]}, temperature {cfg["grpo_temperature"]}, β = 0, embeddings frozen: {cfg["grpo_freeze_embeddings"]};
  reward = the simulator's plan reward (progress + 1 on success) of each completion.
- **Time**: {m["wall_seconds"]} s wall, {m["cpu_seconds"]} s CPU, torch threads {cfg["threads"]}; 1-minute load
  average {m["load_average_1min"][0]} at the start, {m["load_average_1min"][1]} at the end. Per stage (wall s):
  {m["stage_seconds"]}.

## First held-out plan per stage

{examples}
"""
    (out / "report.md").write_text(text, encoding="utf-8")
