"""``groundrl demo rm``'s report: ``report.md`` (the result first, then every setting) and
``sensitivity.png`` (accuracy and the two sensitivities per grader, with 95 % intervals)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groundrl.demos.rm_demo_world import QUESTION_KINDS

if TYPE_CHECKING:
    from groundrl.demos.rm_demo_types import CurvePoint, GraderKey, PairedDiff, RMDemoMetrics

GRADERS: tuple[tuple[GraderKey, str], ...] = (
    ("teacher", "auxiliary evaluator, mistakes off (ceiling)"),
    ("sft", "RFT → SFT"),
    ("cgrpo_mu0", "RFT → SFT → C-GRPO with μ = 0 (control)"),
    ("cgrpo", "RFT → SFT → C-GRPO"),
)
PLOT_LABELS = {
    "teacher": "reads every\nframe (ceiling)",
    "sft": "RFT → SFT",
    "cgrpo_mu0": "C-GRPO\nμ = 0",
    "cgrpo": "RFT → SFT\n→ C-GRPO",
}
COLOURS = {"teacher": "#999999", "sft": "#4c72b0", "cgrpo_mu0": "#8172b3", "cgrpo": "#dd8452"}


def _ci(v: object, ci: object, signed: bool = False) -> str:
    """``v`` with its interval ``ci``: a metrics value is a number, an interval or ``None``."""
    if not isinstance(v, int | float):
        return "–"
    f = "{:+.2f}" if signed else "{:.2f}"
    if not isinstance(ci, list | tuple) or not ci or ci[0] is None:
        return f.format(v)
    return f"{f.format(v)} [{f.format(ci[0])}, {f.format(ci[1])}]"


def _verdict(gain: PairedDiff) -> str:
    lo, hi = gain["ci95"]
    if lo is None or hi is None:
        return "no episodes to compare"
    if lo > 0:
        return "C-GRPO more sensitive (interval above 0)"
    if hi < 0:
        return "C-GRPO less sensitive (interval below 0)"
    return "no difference shown (interval contains 0)"


SMOKE = (
    "this is a smoke run (--quick): every stage ran, on too few episodes and steps to learn or "
    "to test anything; run `groundrl demo rm` without --quick for the result."
)


def headline(m: RMDemoMetrics) -> list[str]:
    """The first screen: the table, the paired differences and whether the target is met.
    Sensitivity is shown on right answers (see :func:`groundrl.demos.rm_demo.subsets`) and
    on all episodes."""
    lines = [
        "| grader | format rate | accuracy (|Δ| ≤ 2) | drop on shuffled frames: right answers / all "
        "| drop on masked patches: right answers / all | tracking: shuffled / masked |",
        "|---|---|---|---|---|---|",
    ]
    for key, label in GRADERS:
        g = m.get(key)
        if g is None:
            continue
        cells = [
            f"{_ci(g[f'sensitivity_{k}_right'], g[f'sensitivity_{k}_right_ci95'], True)} / "
            f"{_ci(g[f'sensitivity_{k}'], g[f'sensitivity_{k}_ci95'], True)}"
            for k in ("temporal", "spatial")
        ]
        track = " / ".join(
            _ci(g.get(f"tracking_{k}"), g.get(f"tracking_{k}_ci95"), True)
            + f" (n {g.get(f'tracking_{k}_n', 0)})"
            for k in ("temporal", "spatial")
        )
        lines.append(
            f"| {label} | {_ci(g['format_rate'], g['format_ci95'])} | {_ci(g['accuracy'], g['accuracy_ci95'])} "
            f"| {cells[0]} | {cells[1]} | {track} |"
        )
    lines.append("")
    lines += _control_lines(m.get("cgrpo_minus_mu0"))
    gains = m.get("cgrpo_minus_sft")
    if gains:
        for kind, name in (("temporal", "shuffled frames"), ("spatial", "masked patches")):
            for suffix, group in (("_right", "right answers"), ("", "all episodes")):
                d = gains[kind + suffix]
                lines.append(
                    f"- C-GRPO − SFT score drop on {name}, {group}: {_ci(d['mean'], d['ci95'], True)} "
                    f"(paired bootstrap, {d['n']} episodes): {_verdict(d)}."
                )
        met = [k for k in ("temporal", "spatial") if (gains[k + "_right"]["ci95"][0] or 0) > 0]
        target = "met" if met else "NOT met"
        if m["config"].get("smoke"):  # --quick: too few episodes and steps to judge anything
            lines.append(f"- Target: not judged: {SMOKE}")
            return lines
        lines.append(
            "- Target (C-GRPO's sensitivity above SFT-only, paired CI above 0; judged on right answers): "
            f"**{target}**" + (f" for {', '.join(met)}." if met else ".")
        )
    return lines


def _control_lines(c: Mapping[str, PairedDiff] | None) -> list[str]:
    """C-GRPO − its μ = 0 control (EQA-RM Table 3): what the contrastive boost itself did."""
    if not c:
        return []
    out = [
        f"- C-GRPO − μ = 0 (the boost's own effect), {name}: {_ci(c[key]['mean'], c[key]['ci95'], True)} "
        f"(paired bootstrap, {c[key]['n']} episodes): {_interval_word(c[key])}."
        for key, name in (
            ("accuracy", "accuracy"),
            ("tracking_temporal", "tracking on shuffled frames"),
            ("tracking_spatial", "tracking on masked patches"),
            ("temporal_right", "score drop on shuffled frames, right answers"),
            ("spatial_right", "score drop on masked patches, right answers"),
        )
    ]
    return out + [""]


def _interval_word(g: PairedDiff) -> str:
    lo, hi = g["ci95"]
    if lo is None or hi is None:
        return "no episodes to compare"
    return "above 0" if lo > 0 else "below 0" if hi < 0 else "interval contains 0"


def write_report(out: Path, m: RMDemoMetrics) -> None:
    cfg, rft = m["config"], m["rft"]
    n = cfg["n_eval"]
    types = cfg["cgrpo_types"]
    cgrpo_types = types if isinstance(types, list | tuple) else ()
    lines = [
        "# groundrl demo rm: a tiny EQA-RM grader, RFT → SFT → C-GRPO",
        "",
        f"Held-out: {n} episodes (seed {cfg['seed']}), each graded on its original frames, on the frames "
        "shuffled and on the frames with 15 % of 16×16 patches zeroed (EQA-RM §4.3). Sensitivity = mean score "
        "on the original minus on the perturbed input (higher: the grader uses frame order / what is "
        "visible); on a right answer a grader that reads the frames must drop, on a wrong one a "
        "perturbation can also make the answer look right, so the all-episodes mean mixes both. "
        "Tracking = (score on the perturbed input − on the original) ÷ (the same for a grader reading every "
        "frame right), on the episodes whose true score the perturbation changes (of "
        f"{cfg.get('eval_draws', 1)} draws per episode the first that changes it is used): 1 follows the "
        "truth, 0 ignores the input. 95 % intervals: Wilson for rates, bootstrap for means.",
        "",
        *headline(m),
        "",
        "![accuracy and sensitivity per grader](sensitivity.png)",
        "",
        "## What happened",
        f"- RFT: the auxiliary evaluator (blind guesses {cfg['teacher_blind']:.0%}, per-frame misreads "
        f"{cfg['teacher_misread']:.0%}) wrote {rft['sampled']} evaluations of {rft['episodes']} training "
        f"episodes; Eq. 1 (τ = {cfg['rft_tau']:g}) kept {rft['kept']} ({rft['kept_rate']:.0%}): instances "
        f"{_reasons(rft['reasons'])}. Blind guesses are {rft['blind_share_of_kept']:.0%} of the kept rows "
        "(kept only where the gold is high: the filter cannot tell a lucky guess from a reading); readings "
        f"of right answers {rft.get('kept_reads_right_answer', '–')}, of wrong answers "
        f"{rft.get('kept_reads_wrong_answer', '–')}: a grader that reads learns 'wrong' as the usual verdict.",
        f"- SFT: {cfg['sft_epochs']} epochs, final loss {m['sft_final_loss']:.3f}.",
    ]
    if cfg.get("smoke"):
        lines[2:2] = [f"**Smoke run.** {SMOKE[0].upper()}{SMOKE[1:]}", ""]
    if m.get("cgrpo_curve"):
        c = m["cgrpo_curve"]
        first, last = c[0], c[-1]
        lines.append(
            f"- C-GRPO: {cfg['cgrpo_steps']} steps; reward {first.get('reward', 0):.3f} → {last.get('reward', 0):.3f}; "
            f"original-input accuracy reward {first.get('cgrpo/accuracy/original', 0):.3f} → "
            f"{last.get('cgrpo/accuracy/original', 0):.3f}; "
            + ", ".join(f"{t} boost rate {last.get(f'cgrpo/boost_rate/{t}', 0):.2f}" for t in cgrpo_types)
            + f"; groups with all G rewards equal (no advantage): {_zero_std(c)}. The boost is "
            "batch-level (Eq. 4): every original of a group gets the same μ, so under GRPO's "
            "group-relative advantage it adds nothing beyond its min-accuracy gate "
            "(docs/reward-models.md)."
        )
    lines += ["", "## By question kind (mean score drop: shuffled / masked)", ""]
    lines += _by_kind(m)
    lines += ["", "## Settings", "", "| setting | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in cfg.items()]
    lines += [
        "",
        f"Wall time {m['wall_seconds']} s: " + ", ".join(f"{k} {v} s" for k, v in m["seconds"].items()),
    ]
    (out / "report.md").write_text("\n".join(lines) + "\n")


def _zero_std(curve: Sequence[CurvePoint]) -> str:
    vals = [v for c in curve if (v := c.get("frac_reward_zero_std")) is not None]
    if not vals:
        return "not logged"
    return f"{vals[0]:.0%} at the first step, {sum(vals) / len(vals):.0%} on average"


def _reasons(r: dict[str, int]) -> str:
    names = {
        "kept": "kept",
        "too_easy": "too easy (all right)",
        "none_correct": "none right",
        "error": "errors",
    }
    return ", ".join(f"{names.get(k, k)} {v}" for k, v in sorted(r.items()))


def _by_kind(m: RMDemoMetrics) -> list[str]:
    lines = ["| grader | " + " | ".join(f"{q}: shuffled / masked" for q in QUESTION_KINDS) + " |"]
    lines.append("|---|" + "---|" * len(QUESTION_KINDS))
    for key, label in GRADERS:
        g = m.get(key)
        if g is None:
            continue
        cells = []
        for q in QUESTION_KINDS:
            t, s = g.get(f"sensitivity_temporal_{q}"), g.get(f"sensitivity_spatial_{q}")
            cells.append(" / ".join("–" if v is None else f"{v:+.2f}" for v in (t, s)))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def plot_results(m: RMDemoMetrics, path: Path) -> None:
    """Three panels (accuracy, sensitivity to shuffled frames, to masked patches), one bar per
    grader with its 95 % interval."""
    # lazy: matplotlib loads only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: after the backend is chosen

    panels = (
        ("accuracy", "accuracy (|Δ| ≤ 2)", "share of held-out episodes"),
        (
            "sensitivity_temporal_right",
            "drop, shuffled frames, right answers",
            "score(original) − score(shuffled)",
        ),
        (
            "sensitivity_spatial_right",
            "drop, masked patches, right answers",
            "score(original) − score(masked)",
        ),
        ("tracking_temporal", "tracking, shuffled frames", "share of the true score change followed"),
        ("tracking_spatial", "tracking, masked patches", "share of the true score change followed"),
    )
    graders = [(k, label) for k, label in GRADERS if k in m]
    fig, grid = plt.subplots(2, 3, figsize=(15, 8.4))
    axes = list(grid.flat)
    _plot_control(axes[5], m.get("cgrpo_minus_mu0"))
    for ax, (key, title, ylabel) in zip(axes, panels, strict=False):
        for i, (g, _label) in enumerate(graders):
            v, ci = m[g].get(key), m[g].get(key + "_ci95")
            if not isinstance(v, int | float):
                continue
            lo, hi = ci if isinstance(ci, list) else (None, None)
            # a percentile interval of a few items can miss the mean by a rounding step: clip at 0
            err = None if lo is None or hi is None else [[max(0.0, v - lo)], [max(0.0, hi - v)]]
            ax.bar(i, v, color=COLOURS[g], yerr=err, capsize=5)
            ax.annotate(
                f"{v:+.2f}" if key != "accuracy" else f"{v:.2f}",
                (i, v),
                ha="center",
                va="bottom",
                xytext=(12, 2),
                textcoords="offset points",
                fontsize=8,
            )
        ax.set_xticks(range(len(graders)), [PLOT_LABELS[g] for g, _ in graders], fontsize=8)
        ns: list[int] = []
        for g, _ in graders:
            n = m[g].get(key + "_n")
            if isinstance(n, int):
                ns.append(n)
        ax.set_title(title + (f" (n = {max(ns)})" if ns else ""))
        ax.set_ylabel(ylabel)
        ax.axhline(0, color="black", linewidth=0.6)
    title = f"tiny EQA-RM grader on {m['config']['n_eval']} held-out episodes (95% intervals)"
    if m["config"].get("smoke"):
        title = "SMOKE RUN (--quick): nothing is learned at this size, not a result\n" + title
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plot_control(ax: Any, c: Mapping[str, PairedDiff] | None) -> None:
    """The sixth panel: C-GRPO − its μ = 0 control, paired, with 95 % intervals."""
    ax.set_title("C-GRPO − C-GRPO μ = 0 (paired)")
    if not c:
        ax.text(0.5, 0.5, "no μ = 0 control in this run", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    keys = (
        ("accuracy", "accuracy"),
        ("tracking_temporal", "tracking\nshuffled"),
        ("tracking_spatial", "tracking\nmasked"),
    )
    for i, (k, _label) in enumerate(keys):
        g = c[k]
        mean = g["mean"]
        if mean is None:
            continue
        lo, hi = g["ci95"]
        err = None if lo is None or hi is None else [[max(0.0, mean - lo)], [max(0.0, hi - mean)]]
        ax.errorbar(i, mean, yerr=err, fmt="o", color="#dd8452", capsize=5)
        ax.annotate(
            f"{mean:+.2f} (n {g['n']})",
            (i, mean),
            xytext=(8, 4),
            textcoords="offset points",
            fontsize=8,
        )
    ax.set_xticks(range(len(keys)), [label for _, label in keys], fontsize=8)
    ax.set_xlim(-0.5, len(keys) - 0.5)
    ax.set_ylabel("difference (C-GRPO minus control)")
    ax.axhline(0, color="black", linewidth=0.6)
