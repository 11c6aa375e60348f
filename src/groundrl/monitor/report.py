"""The monitor's section of ``report.md``: the first step each alarm fired, with example
samples, and the monitored signals at their baseline and at the end."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from groundrl.monitor.monitor import PREFIX
from groundrl.monitor.signals import num

_SHOWN = (
    "reward_mean",
    "truth_mean",
    "truth_spearman",
    "hack_share",
    "length_mean",
    "repetition",
    "format_mean",
    "zero_std_groups",
    "shortcut_token_gap",
    "kl",
    "probe/drop",
    "probe/failure_rate",
    "probe/agreement",
    "probe/swap_consistency",
)


def first_alarms(log_rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every alarm of the log, the first firing of each name (per stage), in step order."""
    seen: dict[tuple[Any, str], dict[str, Any]] = {}
    for r in log_rows:
        alarms = r.get("alarms")
        if not isinstance(alarms, list):
            continue
        for a in alarms:
            if isinstance(a, Mapping) and isinstance(a.get("name"), str):
                key = (r.get("stage"), a["name"])
                if key not in seen:
                    seen[key] = {"stage": r.get("stage"), **a, "step": a.get("step", r.get("step"))}
    return sorted(seen.values(), key=lambda a: (str(a.get("stage")), num(a.get("step")) or 0))


def _fmt(v: Any) -> str:
    n = num(v)
    return "n/a" if n is None else f"{n:.3g}"


def _quote(text: Any) -> str:
    return str(text or "").replace("`", "'").replace("\n", " ")


def report_section(log_rows: list[dict]) -> str:
    """Markdown for ``report.md``; ``""`` when the log has no monitor rows. Never raises on
    odd rows (they are skipped)."""
    rows = [r for r in log_rows if isinstance(r, Mapping) and any(str(k).startswith(PREFIX) for k in r)]
    if not rows:
        return ""
    lines = ["## Reward-hacking monitor", ""]
    alarms = first_alarms(log_rows)
    steps = sorted({s for r in rows if (s := num(r.get("step"))) is not None})
    if not alarms:
        lines += [f"No alarm in {len(steps)} monitored steps.", ""]
    else:
        lines += ["| alarm | stage | first step | value | threshold | detail |", "|---|---|---|---|---|---|"]
        for a in alarms:
            lines.append(
                f"| `{a['name']}` | {a.get('stage')} | {a.get('step')} | {_fmt(a.get('value'))} | "
                f"{_fmt(a.get('threshold'))} | {_quote(a.get('detail'))} |"
            )
        lines.append("")
        for a in alarms:
            ex = a.get("examples") or []
            if not isinstance(ex, list) or not ex:
                continue
            lines.append(f"Examples for `{a['name']}` (step {a.get('step')}):")
            lines.append("")
            for e in ex[:3]:
                if isinstance(e, Mapping):
                    vals = ", ".join(
                        f"{k} {_fmt(e.get(k))}"
                        for k in ("reward", "truth", "score", "perturbed_score")
                        if k in e
                    )
                    lines.append(f"- {vals}: `{_quote(e.get('completion'))}`")
            lines.append("")
    shown = [k for k in _SHOWN if any(num(r.get(PREFIX + k)) is not None for r in rows)]
    if shown:
        lines += ["| signal | first | last |", "|---|---|---|"]
        for k in shown:
            found = [v for v in (num(r.get(PREFIX + k)) for r in rows) if v is not None]
            lines.append(f"| `{PREFIX}{k}` | {_fmt(found[0])} | {_fmt(found[-1])} |")
        lines.append("")
    return "\n".join(lines)
