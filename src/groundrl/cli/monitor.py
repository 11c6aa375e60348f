"""``groundrl monitor``: the reward-hacking monitor offline, on any run's logs.

Reads a samples file (one JSON object per sample: ``step``, ``completion`` and the reward
and ground-truth values, e.g. the dicts a verl / OpenRLHF ``compute_score`` returned) and
optionally the run's ``log.jsonl`` (for ``kl``), computes the same signals and alarms as
the in-training monitor, and writes ``monitor.jsonl`` (one row per step) and
``monitor.md`` (the report section) into the output folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import typer

from groundrl.io import load_yaml, write_jsonl


def _config(path: Path | None, overrides: Mapping[str, object]):
    # lazy: loads when the command runs; groundrl --help imports every command module
    import yaml

    from groundrl.monitor.config import MonitorConfig

    raw: dict[str, object] = {}  # the YAML block, then the flags given
    if path is not None:
        try:  # aliases bounded: a small file cannot expand (issue 42)
            data = load_yaml(path.read_text(encoding="utf-8")) or {}
        except (yaml.YAMLError, ValueError) as e:
            raise typer.BadParameter(f"{path}: {str(e).splitlines()[0]}", param_hint="--config") from None
        if not isinstance(data, dict):
            raise typer.BadParameter(f"{path} is not a YAML mapping", param_hint="--config")
        block = data.get("monitor", data)  # a train config, or the block on its own
        raw.update(block or {})
    raw.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return MonitorConfig.from_mapping(raw)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--config / options") from e


def command(
    samples: Path = typer.Argument(
        ...,
        metavar="SAMPLES",
        exists=True,
        dir_okay=False,
        help="Samples file (JSON lines) with step, completion, reward and truth values.",
    ),
    log: Path | None = typer.Option(
        None, "--log", exists=True, dir_okay=False, help="The run's log.jsonl (step metrics: kl)."
    ),
    config: Path | None = typer.Option(
        None,
        "--config",
        exists=True,
        dir_okay=False,
        help="YAML with a monitor: block (a train config works).",
    ),
    reward: str | None = typer.Option(
        None,
        "--reward",
        help="Field of the reward that trained the policy (default 'reward'; verl's 'score' is the fallback).",
    ),
    truth: str | None = typer.Option(
        None, "--truth", help="Field of the ground truth (a rule reward, simulator success)."
    ),
    format_key: str | None = typer.Option(None, "--format", help="Field of a format reward."),
    accuracy: str | None = typer.Option(
        None, "--accuracy", help="Field of an accuracy reward (default: the truth field)."
    ),
    reference: Path | None = typer.Option(
        None,
        "--reference",
        exists=True,
        dir_okay=False,
        help="JSON lines of reference texts (the data) for the shortcut-token signal.",
    ),
    reference_field: str = typer.Option(
        "completion", "--reference-field", help="Field of --reference holding the text."
    ),
    stage: str | None = typer.Option(None, "--stage", help="Only the log.jsonl rows of this stage."),
    output: Path = typer.Option(Path("monitor"), "-o", "--output", help="Output folder (created)."),
    fail_on_alarm: bool = typer.Option(
        False, "--fail-on-alarm", help="Exit with status 1 when an alarm fired."
    ),
) -> None:
    """Compute the reward-hacking monitor's signals and alarms offline from a samples file and log.jsonl."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.monitor.offline import read_jsonl, replay
    from groundrl.monitor.report import first_alarms, report_section

    cfg = _config(config, {"reward": reward, "truth": truth, "format": format_key, "accuracy": accuracy})
    refs = [r.get(reference_field) for r in read_jsonl(reference)] if reference else None
    rows = replay(read_jsonl(samples), cfg, read_jsonl(log) if log else (), refs, stage)
    output.mkdir(parents=True, exist_ok=True)
    write_jsonl(output / "monitor.jsonl", rows, ensure_ascii=True)
    (output / "monitor.md").write_text(report_section(rows) or "No samples with a step.\n", encoding="utf-8")
    alarms = first_alarms(rows)
    typer.echo(f"{len(rows)} steps monitored; {len(alarms)} alarm(s)")
    for a in alarms:
        typer.echo(
            f"  step {a['step']}: {a['name']} {a['value']:.3g} (threshold {a['threshold']:.3g}) {a['detail']}"
        )
    typer.echo(f"wrote {output / 'monitor.jsonl'} and {output / 'monitor.md'}")
    if alarms and fail_on_alarm:
        raise typer.Exit(1)


DEMOS = ("monitor",)


def named_demo(what: str, output: Path, quick: bool) -> None:
    """``groundrl demo monitor``: the hackable and honest GRPO runs with the monitor."""
    if what not in DEMOS:
        raise typer.BadParameter(f"unknown demo {what!r}; named demos: {', '.join(DEMOS)}", param_hint="WHAT")
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.demos.monitor_demo import run_monitor_demo

    out = Path("runs/demo_monitor") if output == Path("runs/demo") else output
    m = run_monitor_demo(out, quick=quick, log=typer.echo)
    for name, run in m["runs"].items():
        first, dom = run["first_alarm_step"], run["dominance_step"]
        first_txt = "none" if first is None else f"at step {first}"
        dom_txt = "never" if dom is None else f"at step {dom}"
        typer.echo(f"{name} judge: first alarm {first_txt}; claim in half the samples {dom_txt}")
    typer.echo(
        f"wrote {out / 'report.md'}, {out / 'monitor_demo.png'}, {out / 'metrics.json'} ({m['wall_seconds']} s)"
    )
