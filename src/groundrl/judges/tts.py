"""EQA-RM test-time scaling: sample K evaluations, aggregate, and measure how accuracy
and RMSE move with K — all K from one set of samples (no resampling per K).

Defaults from the paper's setting: temperature 0.8, top-p 0.9.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Literal, TypedDict

from groundrl.judges.base import SamplingParams

TTS_PARAMS = SamplingParams(temperature=0.8, top_p=0.9, max_tokens=512)
DEFAULT_KS = (1, 2, 4, 8, 16, 32)
Method = Literal["vote", "mean"]


class TTSRow(TypedDict):
    """One K of :func:`tts_curve` (``n_missing``: items with no valid sample among the first K)."""

    k: int
    accuracy: float
    rmse: float | None
    n: int
    n_missing: int
    enough_samples: bool


def aggregate_scores(scores: Sequence[float | None], method: Method = "vote") -> float | None:
    """Aggregate K sampled scores (``None`` = unparseable, ignored).

    ``mean``: the mean. ``vote``: the most frequent integer score (scores rounded half
    up); ties are broken toward the mean of the valid samples (the tied score closest
    to it; if two are equally close, the lower). ``None`` when no sample is valid.
    """
    valid = [float(s) for s in scores if s is not None and math.isfinite(s)]
    if not valid:
        return None
    mean = sum(valid) / len(valid)
    if method == "mean":
        return mean
    if method != "vote":
        raise ValueError(f"method must be 'vote' or 'mean', got {method!r}")
    counts = Counter(math.floor(v + 0.5) for v in valid)
    top = max(counts.values())
    tied = [s for s, c in counts.items() if c == top]
    return float(min(tied, key=lambda s: (abs(s - mean), s)))


def tts_curve(
    samples: Sequence[Sequence[float | None]],
    golds: Sequence[float],
    ks: Sequence[int] = DEFAULT_KS,
    method: Method = "vote",
    tol: float = 2.0,
) -> list[TTSRow]:
    """Accuracy (|Δ| ≤ tol) and RMSE for each K, using the first K samples of each item.

    An item with no valid sample among its first K has no prediction: it counts as wrong
    for accuracy and is left out of the RMSE (``n_missing`` reports how many).
    """
    if len(samples) != len(golds):
        raise ValueError(f"{len(samples)} sample lists but {len(golds)} gold scores")
    if not golds:
        raise ValueError("no items")
    rows: list[TTSRow] = []
    for k in ks:
        if k < 1:
            raise ValueError(f"K must be ≥ 1, got {k}")
        preds = [aggregate_scores(list(s)[:k], method) for s in samples]
        have = [(p, float(g)) for p, g in zip(preds, golds, strict=True) if p is not None]
        acc = sum(abs(p - g) <= tol for p, g in have) / len(golds)
        rmse = math.sqrt(sum((p - g) ** 2 for p, g in have) / len(have)) if have else None
        rows.append(
            {
                "k": k,
                "accuracy": acc,
                "rmse": rmse,
                "n": len(golds),
                "n_missing": len(golds) - len(have),
                "enough_samples": all(len(s) >= k for s in samples),
            }
        )
    return rows


def plot_tts(rows: Sequence[TTSRow], path: str, title: str = "EQA-RM test-time scaling") -> None:
    """Accuracy and RMSE against K (log2 axis) as a PNG."""
    # lazy: matplotlib loads only when a figure is drawn
    import matplotlib

    matplotlib.use("Agg")
    # lazy: matplotlib loads only when a figure is drawn
    import matplotlib.pyplot as plt

    ks = [r["k"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(ks, [r["accuracy"] for r in rows], marker="o", color="tab:blue", label="accuracy (|Δ|≤2)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("K (samples per item)")
    ax.set_ylabel("accuracy", color="tab:blue")
    ax2 = ax.twinx()
    ax2.plot(
        ks,
        [r["rmse"] if r["rmse"] is not None else float("nan") for r in rows],
        marker="s",
        color="tab:red",
        label="RMSE",
    )
    ax2.set_ylabel("RMSE", color="tab:red")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
