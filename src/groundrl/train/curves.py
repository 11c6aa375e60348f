"""``curves.png`` of a training run: a few labelled panels read from ``log.jsonl``.

Panels, each drawn only when the run logged its metrics:

* **reward** — the mean reward per step (shaded ± its std over completions);
* **reward parts** — each ``rewards/<part>/mean``;
* **method mechanism** — what the method itself does: the online filter's kept share,
  step-GRPO's hints, C-GRPO's accuracies, the share of groups whose rewards were all
  equal (``frac_reward_zero_std``: such a group has zero advantage), SFT's token accuracy;
* **held-out evaluation** — the stage's ``eval:`` block: the rubric's mean reward on
  greedy answers to held-out prompts, shaded over its 95% CI
  (:mod:`groundrl.train.evaluation`);
* **loss**, **KL to the reference**, **gradient norm**, **entropy**.

Stages share one step axis, one after the other (a stage's steps restart at 1 in the
log, so they are shifted after the previous stage's last step), each with its own
colour in every panel and its span shaded and named. Steps are integers; values are
plain numbers (no offset notation). A line that never moves gets a note saying so,
and why that usually happens, so that a flat picture is not read as a working run.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

Rows = Sequence[Mapping[str, Any]]

# [ours: a stage keeps its colour in every panel and in every run; by kind of stage first]
STAGE_COLOURS = {"sft": "#1971c2", "grpo": "#e8590c", "rft": "#2f9e44", "rm": "#9c36b5"}
SPARE_COLOURS = ["#0b7285", "#c2255c", "#5c940d", "#495057", "#862e9c"]
PART_STYLES = ["-", "--", ":", "-."]  # two parts with equal values stay visible
PART_COLOURS = ["#1971c2", "#e8590c", "#2f9e44", "#c2255c", "#6741d9", "#0b7285", "#e67700", "#495057"]

MECHANISM_PREFIXES = ("online_filter/", "step_grpo/", "cgrpo/", "proxy/")
MECHANISM_KEYS = ("frac_reward_zero_std", "mean_token_accuracy", "completions/clipped_ratio")


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def stage_colours(stages: Sequence[str]) -> dict[str, str]:
    """A colour per stage: by the kind its name names (``sft``, ``grpo``, …), else the
    next spare colour, never two stages alike."""
    out: dict[str, str] = {}
    spare = iter(SPARE_COLOURS)
    for st in stages:
        kind = next((k for k in STAGE_COLOURS if k in st.lower()), None)
        colour = STAGE_COLOURS.get(kind or "")
        if colour is None or colour in out.values():
            colour = next(spare, "#868e96")
        out[st] = colour
    return out


def stage_offsets(rows: Rows) -> dict[str, int]:
    """The step at which each stage starts on the shared axis (stages in log order)."""
    offsets: dict[str, int] = {}
    start = 0
    for st in dict.fromkeys(str(r.get("stage")) for r in rows):
        offsets[st] = start
        start += int(max((_num(r.get("step")) or 0 for r in rows if str(r.get("stage")) == st), default=0))
    return offsets


def series(rows: Rows, name: str, offsets: Mapping[str, int]) -> dict[str, list[tuple[int, float]]]:
    """``{stage: [(shared step, value), …]}`` of one metric, rows without a number skipped."""
    out: dict[str, list[tuple[int, float]]] = {}
    for r in rows:
        y, x = _num(r.get(name)), _num(r.get("step"))
        if y is None or x is None:
            continue
        st = str(r.get("stage"))
        out.setdefault(st, []).append((int(x) + offsets.get(st, 0), y))
    return out


def flat_note(label: str, values: Sequence[float], name: str) -> str | None:
    """A sentence when ``values`` never change over two or more steps, else ``None``."""
    if len(values) < 2 or max(values) - min(values) > 1e-12:
        return None
    v = values[0]
    why = ""
    if name in ("loss", "grad_norm") and v == 0:
        why = ": no gradient flowed (every group filtered, or every reward in a group equal)"
    elif name == "frac_reward_zero_std" and v == 1:
        why = ": every group's rewards were equal, so GRPO's advantages were all 0"
    elif (name == "reward" or name.startswith("rewards/")) and v == 0:
        why = ": no completion earned it (a random model rarely does; see the config's header)"
    elif name == "kl" and v == 0:
        why = ": the policy never moved away from the reference"
    elif name == "reward" or name.startswith("rewards/"):
        why = ": nothing was learned on it"
    return f"{label} flat at {v:.4g} over {len(values)} steps{why}"


def _names(rows: Rows, keep: Callable[[str], bool]) -> list[str]:
    names: dict[str, None] = {}
    for r in rows:
        for k, v in r.items():
            if keep(k) and _num(v) is not None:
                names.setdefault(k, None)
    return list(names)


def _is_mechanism(k: str) -> bool:
    return k.startswith(MECHANISM_PREFIXES) or k in MECHANISM_KEYS


def panels(rows: Rows) -> list[tuple[str, str, list[str], bool]]:
    """``(title, y label, metric names, coloured by stage)`` for every panel with data."""
    wanted = [
        ("reward (mean over completions)", "reward", ["reward"], True),
        (
            "reward parts",
            "part's mean",
            _names(rows, lambda k: k.startswith("rewards/") and k.endswith("/mean")),
            False,
        ),
        ("method mechanism", "share / value", _names(rows, _is_mechanism), False),
        ("held-out eval (greedy; 95% CI)", "eval reward", ["eval/reward"], True),
        ("loss", "loss", ["loss"], True),
        ("KL to the reference", "KL", ["kl"], True),
        ("gradient norm", "grad norm", ["grad_norm"], True),
        ("entropy of the policy", "entropy (nats)", ["entropy"], True),
    ]
    have = set(_names(rows, lambda k: True))
    return [
        (t, y, [n for n in ns if n in have], by_stage)
        for t, y, ns, by_stage in wanted
        if any(n in have for n in ns)
    ]


def _short(name: str) -> str:
    return name.removeprefix("rewards/").removesuffix("/mean")


def _draw_panel(
    ax: Any, rows: Rows, offsets: Mapping[str, int], colours: Mapping[str, str], spec: tuple
) -> None:
    # lazy: matplotlib loads only when curves are drawn
    from matplotlib.ticker import MaxNLocator, ScalarFormatter

    title, ylabel, names, by_stage = spec
    notes = []
    for k, name in enumerate(names):
        part_colour = PART_COLOURS[k % len(PART_COLOURS)]
        lines = series(rows, name, offsets)
        for st, pts in lines.items():
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            colour = colours[st] if by_stage else part_colour
            label = st if by_stage else _short(name)
            style = "-" if by_stage else PART_STYLES[k % len(PART_STYLES)]
            ax.plot(
                xs, ys, style, marker="." if len(xs) < 40 else None, color=colour, linewidth=1.3, label=label
            )
            if name == "reward":
                std = series(rows, "reward_std", offsets).get(st, [])
                if len(std) == len(pts):
                    ax.fill_between(xs, [y - s for y, (_, s) in zip(ys, std, strict=True)],
                                    [y + s for y, (_, s) in zip(ys, std, strict=True)], color=colour, alpha=0.12)  # fmt: skip
            if name == "eval/reward":
                _shade_ci(ax, rows, offsets, st, xs, colour)
            note = flat_note(_short(name) + (f" ({st})" if len(offsets) > 1 else ""), ys, name)
            if note:
                notes.append(note)
    ax.set_title(title, fontsize=9)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.set_xlabel("training step", fontsize=8)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fmt = ScalarFormatter(useOffset=False)
    fmt.set_scientific(False)
    ax.yaxis.set_major_formatter(fmt)
    ax.tick_params(labelsize=7)
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles, strict=True))
    if len(uniq) > 1 or not by_stage:
        ax.legend(uniq.values(), uniq.keys(), fontsize=6.5, frameon=False, loc="best")
    if notes:
        shown = notes[:3] + ([f"(+{len(notes) - 3} more flat lines)"] if len(notes) > 3 else [])
        ax.text(0.01, -0.32, "\n".join(_wrap(n) for n in shown), transform=ax.transAxes, fontsize=6.5,
                color="#c92a2a", va="top", ha="left")  # fmt: skip


def _shade_ci(ax: Any, rows: Rows, offsets: Mapping[str, int], st: str, xs: list[int], colour: str) -> None:
    """The eval rows' 95% interval around their line (drawn when every point has one)."""
    lo = dict(series(rows, "eval/reward_ci_lo", offsets).get(st, []))
    hi = dict(series(rows, "eval/reward_ci_hi", offsets).get(st, []))
    if all(x in lo and x in hi for x in xs):
        ax.fill_between(xs, [lo[x] for x in xs], [hi[x] for x in xs], color=colour, alpha=0.15)


def _wrap(text: str, width: int = 70) -> str:
    return "\n".join(textwrap.wrap(text, width))


def _last_step(rows: Rows, offsets: Mapping[str, int]) -> int:
    last = list(offsets)[-1]
    return offsets[last] + max(
        (int(_num(r.get("step")) or 0) for r in rows if str(r.get("stage")) == last), default=0
    )


def _shade_stages(ax: Any, offsets: Mapping[str, int], rows: Rows, colours: Mapping[str, str]) -> None:
    if len(offsets) < 2:
        return
    ends = [*list(offsets.values())[1:], _last_step(rows, offsets)]
    for (st, start), end in zip(offsets.items(), ends, strict=True):
        ax.axvspan(start + 0.5, end + 0.5, color=colours[st], alpha=0.06, linewidth=0)


def draw_curves(rows: Rows, path: Path, title: str = "training curves") -> Path | None:
    """Write ``curves.png`` from log rows; ``None`` when nothing numeric was logged."""
    specs = panels(rows)
    if not specs:
        return None
    # lazy: matplotlib loads only when curves are drawn
    import matplotlib

    matplotlib.use("Agg")
    # lazy: matplotlib loads only when curves are drawn
    import matplotlib.pyplot as plt

    offsets = stage_offsets(rows)
    colours = stage_colours(list(offsets))
    cols = min(3, len(specs))
    nrows = (len(specs) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(4.6 * cols, 3.5 * nrows + 0.6), squeeze=False)
    for ax, spec in zip(axes.flat, specs, strict=False):
        _shade_stages(ax, offsets, rows, colours)
        _draw_panel(ax, rows, offsets, colours, spec)
    for ax in list(axes.flat)[len(specs) :]:
        ax.axis("off")
    ends = [*list(offsets.values())[1:], _last_step(rows, offsets)]
    stages = ", ".join(
        f"{st} (steps {o + 1}–{e})" if len(offsets) > 1 else st
        for (st, o), e in zip(offsets.items(), ends, strict=True)
    )
    fig.suptitle(f"{title}: {stages}", fontsize=10, x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.96), h_pad=2.5)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


__all__ = ["draw_curves", "flat_note", "panels", "series", "stage_colours", "stage_offsets"]
