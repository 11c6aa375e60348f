"""``metrics.json``, ``report.md`` and a PNG bar chart for a simulator evaluation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_report(out: Path, metrics: dict[str, Any], results: list[dict[str, Any]], title: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    with (out / "results.jsonl").open("w") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    lines = [
        f"# {title}",
        "",
        f"{metrics['n_tasks']} tasks: success {metrics['success_rate']:.3f}, progress {metrics['progress_rate']:.3f}, env steps {metrics['env_steps']:.1f}",
        "",
        f"| {metrics.get('grouped_by', 'subset')} | n | success | progress | env steps |",
        "|---|---|---|---|---|",
    ]
    for k, m in metrics["by_subset"].items():
        lines.append(
            f"| {k} | {m['n_tasks']} | {m['success_rate']:.3f} | {m['progress_rate']:.3f} | {m['env_steps']:.1f} |"
        )
    (out / "report.md").write_text("\n".join(lines) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(metrics["by_subset"])
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(names)), 3.5))
    xs = range(len(names))
    ax.bar(
        [x - 0.2 for x in xs],
        [metrics["by_subset"][n]["success_rate"] for n in names],
        width=0.4,
        label="success",
    )
    ax.bar(
        [x + 0.2 for x in xs],
        [metrics["by_subset"][n]["progress_rate"] for n in names],
        width=0.4,
        label="progress",
    )
    ax.set_xticks(list(xs), names, rotation=20, ha="right")
    ax.set_ylim(0, 1.05)
    ax.legend()
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(out / "success.png", dpi=100)
    plt.close(fig)
