"""The run folder of ``groundrl train`` (shared with reward-model training).

``OUTPUT_DIR/``

* ``config.yaml`` — the config as run (after ``-O``/``--judge-*`` overrides), written
  before training;
* ``log.jsonl`` — one JSON object per logged step, appended as training goes (a crash
  keeps what was logged; a new run into the folder first renames it ``log.<n>.jsonl``; a resumed run appends,
  after dropping the resumed stage's rows past its checkpoint — :func:`trim_log`): ``{"stage": name, "step": global step, "epoch": …, <metric>:
  value, …}`` with TRL's metric names (``reward``, ``rewards/<part>/mean``, ``loss``, …)
  and ours (``online_filter/…``, ``step_grpo/…``); a value that is not a finite number
  (``None``, NaN: a part that applied to no completion) is written as ``null``;
* ``final/`` — the trained model (+ processor) of a one-stage run; a staged run writes
  ``<stage>/final/`` per stage and the last one again as ``final/``. Saved **before**
  any report is written, as ``.final.partial/`` renamed when complete (a save cut short
  leaves no ``final/``), and never when the loss or a weight is not finite
  (:mod:`groundrl.train.finite`);
* ``report.md`` — per stage: steps, the first, last and mean value of each logged
  metric (``n/a`` when it never had a number), where the model is;
* ``curves.png`` — a few labelled panels (reward, its parts, the method's mechanism,
  loss / KL / grad norm / entropy), one colour per stage, a note on every flat line
  (:mod:`groundrl.train.curves`); skipped with a warning when matplotlib is missing.

Reports never raise: a failing plot or an odd value is logged and skipped, because the
model is already saved.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from groundrl.io import iter_lines
from groundrl.monitor.report import report_section
from groundrl.train.curves import draw_curves

log = logging.getLogger("groundrl.train")

LOG_FILE, REPORT_FILE, CURVES_FILE, CONFIG_FILE = "log.jsonl", "report.md", "curves.png", "config.yaml"


def clean_value(v: Any) -> Any:
    """A JSON-safe metric value: finite numbers as they are, else ``None``; strings kept."""
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return v if math.isfinite(v) else None
    if isinstance(v, str):
        return v
    try:  # numpy / torch scalars
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def log_callback(path: Path, stage: str) -> Any:
    """A ``TrainerCallback`` appending every ``on_log`` to ``path`` (JSON lines)."""
    # lazy: transformers loads only when a model or trainer is built
    from transformers import TrainerCallback

    class JsonlLogger(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001
            if not state.is_world_process_zero or not logs:
                return
            row = {"stage": stage, "step": state.global_step}
            row.update({k: clean_value(v) for k, v in logs.items()})
            with path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(row) + "\n")

    return JsonlLogger()


def partial_dir(final: Path, clean: bool = True) -> Path:
    """Where a model bound for ``final`` is written first: ``.<name>.partial`` beside it
    (same file system, so :func:`publish_dir` is a rename). With ``clean`` (on the process
    that writes files) a leftover of a save that was cut short is removed."""
    tmp = final.with_name(f".{final.name}.partial")
    if clean and tmp.exists():
        shutil.rmtree(tmp)
    return tmp


def publish_dir(tmp: Path, final: Path) -> None:
    """Move a completely written ``tmp`` to ``final``. An earlier ``final`` is renamed
    aside first and removed after, so at every instant ``final`` is absent or whole."""
    old = final.with_name(f".{final.name}.old")
    if old.exists():
        shutil.rmtree(old)
    if final.exists():
        final.rename(old)
    tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def keep_old_log(out: Path) -> Path | None:
    """A new run into ``out`` starts a fresh ``log.jsonl``; the one already there (an
    earlier or interrupted run's) is kept as ``log.<n>.jsonl``, n the first free number."""
    log_path = out / LOG_FILE
    if not log_path.is_file():
        return None
    n = 1
    while (out / f"log.{n}.jsonl").exists():
        n += 1
    kept = out / f"log.{n}.jsonl"
    log_path.rename(kept)
    return kept


def trim_log(out: Path, stage: str, after_step: int) -> int:
    """A resumed stage appends to ``log.jsonl``; first the rows it will log again are
    dropped: ``stage``'s rows past ``after_step`` (the checkpoint it resumes from; a run
    killed after a checkpoint logged steps the checkpoint does not hold). Rewritten
    through a temporary file; returns the number of rows dropped."""
    path = out / LOG_FILE
    if not path.is_file():
        return 0
    kept, dropped = [], 0
    for line in iter_lines(path):
        row = line.value if not line.problem else None
        step = row.get("step") if isinstance(row, dict) else None
        if (
            isinstance(row, dict)
            and row.get("stage") == stage
            and isinstance(step, int)
            and step > after_step
        ):
            dropped += 1
        elif row is not None:
            kept.append(json.dumps(row))
        else:  # a cut last line of the killed run
            dropped += 1
    if dropped:
        tmp = path.with_name(f".{LOG_FILE}.partial")
        tmp.write_text("".join(r + "\n" for r in kept), encoding="utf-8")
        tmp.replace(path)
    return dropped


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [line.value for line in iter_lines(path) if not line.problem]  # a cut last line is skipped


def _num(v: Any) -> float | None:
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def fmt(v: Any) -> str:
    """``0.123`` for a finite number, ``n/a`` for anything else (never raises)."""
    n = _num(v)
    return "n/a" if n is None else f"{n:.4g}"


_SKIP = {
    "alarms",  # the monitor's list of alarm names per row: report.md has its own section
    "stage",
    "step",
    "epoch",
    "train_runtime",
    "train_samples_per_second",
    "train_steps_per_second",
    "total_flos",
}


def metric_names(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for r in rows:
        for k, v in r.items():
            if k not in _SKIP and not isinstance(v, str):
                names.setdefault(k, None)
    return list(names)


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Per metric: ``first``, ``last``, ``mean`` over the rows with a number."""
    out: dict[str, dict[str, float | None]] = {}
    for name in metric_names(rows):
        vals = [n for r in rows if (n := _num(r.get(name))) is not None]
        out[name] = {
            "first": vals[0] if vals else None,
            "last": vals[-1] if vals else None,
            "mean": sum(vals) / len(vals) if vals else None,
        }
    return out


def write_report(
    out_dir: Path, stages: Sequence[Mapping[str, Any]], title: str = "groundrl train"
) -> Path | None:
    """``report.md`` from ``log.jsonl``; ``stages`` lists ``{"name", "kind", "model"}``."""
    try:
        rows = read_log(out_dir / LOG_FILE)
        lines = [f"# {title}", "", *alarm_lines(stages)]
        for st in stages:
            srows = [r for r in rows if r.get("stage") == st["name"]]
            steps = max((r.get("step") or 0 for r in srows), default=0)
            lines += [f"## stage `{st['name']}` ({st.get('kind', '')})", ""]
            lines += [f"- steps: {steps}", f"- model: `{st.get('model', '')}`"]
            for k, v in (st.get("notes") or {}).items():
                lines.append(f"- {k}: {v}")
            lines += ["", "| metric | first | last | mean |", "|---|---|---|---|"]
            for name, s in summarize(srows).items():
                lines.append(f"| `{name}` | {fmt(s['first'])} | {fmt(s['last'])} | {fmt(s['mean'])} |")
            lines.append("")
        section = _monitor_section(rows)
        if section:
            lines += [section, ""]
        if (out_dir / CURVES_FILE).is_file():
            lines += [f"![curves]({CURVES_FILE})", ""]
        path = out_dir / REPORT_FILE
        path.write_text("\n".join(lines), encoding="utf-8")
        return path
    except Exception as e:  # the model is saved; a report must not fail the run
        log.warning("report.md not written: %s", e)
        return None


def _monitor_section(rows: list[dict[str, Any]]) -> str:
    """The reward-hacking monitor's section (``groundrl.monitor.report_section``): ``""``
    when the run had no ``monitor:`` block."""
    return str(report_section(rows))


def alarm_lines(stages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The report's first lines: every stage in which nothing was learned, with the likely
    cause (:mod:`groundrl.train.progress` puts it in the stage's notes)."""
    lines = []
    for st in stages:
        msg = (st.get("notes") or {}).get("no learning signal")
        if msg:
            lines.append(f"> **No learning signal** in stage `{st['name']}`: {msg}")
    return [*lines, ""] if lines else []


def _curve_names(rows: Sequence[Mapping[str, Any]], limit: int = 12) -> list[str]:
    names = [n for n in metric_names(rows) if any(_num(r.get(n)) is not None for r in rows)]
    preferred = [
        n
        for n in names
        if n == "reward"
        or n == "loss"
        or n.endswith("/mean")
        or n.startswith(("online_filter/", "step_grpo/"))
    ]
    rest = [n for n in names if n not in preferred and not n.endswith("/std")]
    return (preferred + rest)[:limit]


def plot_curves(out_dir: Path) -> Path | None:
    """``curves.png``: labelled panels (reward, its parts, the method's mechanism, loss,
    KL, grad norm, entropy) with a colour per stage — :mod:`groundrl.train.curves`."""
    try:
        rows = read_log(out_dir / LOG_FILE)
        if not _curve_names(rows):
            return None
        return draw_curves(rows, out_dir / CURVES_FILE)
    except Exception as e:
        log.warning("curves.png not written: %s", e)
        return None


def write_config(out_dir: Path, cfg: Mapping[str, Any]) -> None:
    """``config.yaml``: the config as run (judge blocks as mappings)."""
    # lazy: PyYAML loads only when a file is read or written
    import yaml

    def plain(v: Any) -> Any:
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return {k: plain(x) for k, x in dataclasses.asdict(v).items() if x is not None}
        if isinstance(v, Mapping):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, (str, int, float, bool)) or v is None:
            return v
        return str(v)

    try:
        (out_dir / CONFIG_FILE).write_text(yaml.safe_dump(plain(cfg), sort_keys=False), encoding="utf-8")
    except Exception as e:
        log.warning("config.yaml not written: %s", e)
