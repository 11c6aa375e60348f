"""Shared plumbing: read items, report bad ones (never drop silently), write outputs."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from groundrl.benchmarks.records import BadLine
from groundrl.intervals import wilson_ci
from groundrl.io import iter_lines, write_jsonl


def read_items(path: str | Path, required: Sequence[str]) -> tuple[list[dict[str, object]], list[BadLine]]:
    """``(good items, bad items with reasons)``. An item is a JSON object of the caller's
    layout (``required`` fields present), values unchecked; image paths in it are made
    absolute."""
    good: list[dict[str, object]] = []
    bad: list[BadLine] = []
    for line in iter_lines(path):
        k, item = line.number, line.value
        if line.problem:
            bad.append({"line": k, "error": line.problem})
            continue
        missing = [f for f in required if item.get(f) is None]
        if missing:
            bad.append({"line": k, "id": item.get("id"), "error": f"missing field {missing[0]!r}"})
            continue
        unreadable = _unreadable_image(item, Path(path).parent)
        if unreadable:
            bad.append({"line": k, "id": item.get("id"), "error": f"unreadable image {unreadable[:80]!r}"})
            continue
        item.setdefault("id", f"line{k}")
        good.append(item)
    return good, bad


def _unreadable_image(item: dict[str, object], base: Path) -> str | None:
    """The first image reference (``image``, ``images``, ``frames``) that cannot be opened;
    relative paths are resolved against the data file's folder (and rewritten so)."""
    # lazy: groundrl.judges (about 170 modules) loads only when an image is checked
    from groundrl.judges.images import to_pil

    for key in ("image", "images", "frames"):
        refs = item.get(key)
        if refs is None:
            continue
        many = isinstance(refs, list)
        fixed = []
        for ref in refs if isinstance(refs, list) else [refs]:
            if (
                isinstance(ref, str)
                and not ref.startswith(("http://", "https://", "data:"))
                and not Path(ref).is_absolute()
                and (base / ref).is_file()
            ):
                ref = str(base / ref)
            try:
                if not (isinstance(ref, str) and ref.startswith(("http://", "https://"))):
                    to_pil(ref)
            except Exception:
                return str(ref)
            fixed.append(ref)
        item[key] = fixed if many else fixed[0]
    return None


def write_outputs(
    out: Path,
    results: Sequence[Mapping[str, object]],
    metrics: dict[str, object],
    report: str,
    plots: Mapping[str, Callable[[Path], None]] | None = None,
) -> list[Path]:
    """The one writer of a benchmark run: draws each of ``plots`` (``{file name: draw}``,
    ``draw(path)`` writes the PNG) into ``out`` (created), then writes results.jsonl,
    metrics.json (raw values) and report.md; returns every file of the run and lists
    their names in ``metrics["files"]`` and at the end of the report."""
    out.mkdir(parents=True, exist_ok=True)
    pngs = list(plots or {})
    for name, draw in (plots or {}).items():
        draw(out / name)
    names = ["results.jsonl", "metrics.json", "report.md", *pngs]
    metrics["files"] = names
    write_jsonl(out / "results.jsonl", results, default=str)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2, default=str) + "\n", encoding="utf-8")
    report = report.rstrip("\n") + "\n\n## files\n\n" + "".join(f"- `{n}`\n" for n in names)
    (out / "report.md").write_text(report, encoding="utf-8")
    return [out / n for n in names]


def plot_rates(
    path: Path,
    labels: Sequence[str],
    hits: Sequence[int],
    ns: Sequence[int],
    title: str,
    ylabel: str,
    chance: Sequence[float] | float | None = None,
    chance_label: str = "chance",
    bar_label: str = "accuracy",
) -> None:
    """Bars of rates ``hits / n`` with Wilson 95% CIs, each labelled with its value and n.

    A zero rate is drawn as a visible stub at 0 and labelled, so it cannot be mistaken
    for a missing bar. ``chance`` (one level, or one per bar) is drawn as a dashed line
    (segments per bar); the legend sits below the axes, off the data.
    """
    # lazy: matplotlib loads only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    # lazy: matplotlib loads only when a figure is drawn
    import matplotlib.pyplot as plt

    rates = [h / n if n else 0.0 for h, n in zip(hits, ns, strict=True)]
    cis = [wilson_ci(h, n) for h, n in zip(hits, ns, strict=True)]
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(labels) + 2.5), 4.4))
    _rate_bars(ax, rates, cis, bar_label)
    levels = _chance_lines(ax, chance, len(rates), chance_label)
    for i, (r, n, c) in enumerate(zip(rates, ns, cis, strict=True)):
        top = c[1] if c[1] is not None else r
        if levels is not None and top - 0.01 <= levels[i] <= top + 0.17:
            top = max(top, levels[i])  # keep the label off the chance line
        ax.text(i, top + 0.02, f"{r:.3f}\nn={n}", ha="center", va="bottom", fontsize=8)
    _rate_axes(fig, ax, labels, title, ylabel)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _rate_bars(ax: Any, rates: list[float], cis: list[tuple[float | None, float | None]], label: str) -> None:
    x = list(range(len(rates)))
    ax.bar(x, rates, color="tab:blue", width=0.6, label=label, zorder=2)
    ax.bar(  # a thin stub at 0 so a zero rate is still a visible bar
        [i for i, r in zip(x, rates, strict=True) if r == 0],
        [0.012] * sum(r == 0 for r in rates),
        color="tab:blue",
        width=0.6,
        zorder=2,
    )
    # max(0, …): a Wilson bound can sit a rounding error inside a rate of 0 or 1
    lo = [max(0.0, r - c[0]) if c[0] is not None else 0 for r, c in zip(rates, cis, strict=True)]
    hi = [max(0.0, c[1] - r) if c[1] is not None else 0 for r, c in zip(rates, cis, strict=True)]
    ax.errorbar(
        x,
        rates,
        yerr=[lo, hi],
        fmt="none",
        ecolor="black",
        capsize=4,
        lw=1,
        label="95% CI (Wilson)",
        zorder=3,
    )


def _chance_lines(ax: Any, chance: Sequence[float] | float | None, n: int, label: str) -> list[float] | None:
    """Dashed chance segments, one per bar; returns their levels."""
    if chance is None:
        return None
    levels = [float(chance)] * n if isinstance(chance, (int, float)) else [float(c) for c in chance]
    for i, c in enumerate(levels):
        ax.hlines(
            c,
            i - 0.42,
            i + 0.42,
            colors="tab:red",
            linestyles="--",
            lw=1.5,
            zorder=4,
            label=label if i == 0 else None,
        )
    return levels


def _rate_axes(fig: Any, ax: Any, labels: Sequence[str], title: str, ylabel: str) -> None:
    """Wrapped tick labels and title, the 0–1 scale with head room, the legend below."""
    ticks = ["\n".join(textwrap.wrap(str(lab), 14)) or str(lab) for lab in labels]
    ax.set_xticks(list(range(len(labels))), ticks)
    tick_lines = max((t.count("\n") + 1 for t in ticks), default=1)
    ax.set_ylim(0, 1.22)
    ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_ylabel(ylabel)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    width_chars = int(fig.get_figwidth() * 10)  # about 10 title characters per inch at this size
    ax.set_title("\n".join(textwrap.wrap(title, width_chars)) or title)
    ax.grid(axis="y", alpha=0.3, zorder=0)
    ax.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.06 - 0.055 * tick_lines),  # below the tick labels
        ncol=3,
        fontsize=8,
        frameon=False,
    )
