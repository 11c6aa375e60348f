"""Shared plumbing: read items, report bad ones (never drop silently), write outputs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def read_items(
    path: str | Path, required: Sequence[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(good items, bad items with reasons)``."""
    good, bad = [], []
    for k, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as e:
            bad.append({"line": k, "error": f"not JSON: {e}"})
            continue
        if not isinstance(item, dict):
            bad.append({"line": k, "error": "not an object"})
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


def _unreadable_image(item: dict[str, Any], base: Path) -> str | None:
    """The first image reference (``image``, ``images``, ``frames``) that cannot be opened;
    relative paths are resolved against the data file's folder (and rewritten so)."""
    from groundrl.judges.images import to_pil

    for key in ("image", "images", "frames"):
        refs = item.get(key)
        if refs is None:
            continue
        many = isinstance(refs, list)
        fixed = []
        for ref in refs if many else [refs]:
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


def write_outputs(out: Path, results: list[dict[str, Any]], metrics: dict[str, Any], report: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with (out / "results.jsonl").open("w") as f:
        for r in results:
            f.write(json.dumps(r, default=str) + "\n")
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2, default=str) + "\n")
    (out / "report.md").write_text(report)


def plot_bars(path: Path, labels: Sequence[str], values: Sequence[float], title: str, ylabel: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(5, 0.9 * len(labels) + 2), 3.5))
    ax.bar(range(len(labels)), values, color="tab:blue")
    ax.set_xticks(range(len(labels)), labels, rotation=25, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
