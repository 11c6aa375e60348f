"""What each trainer logged, in the two shapes scripts/rehearsal_check.py reads (used by
scripts/gpu_rehearsal.sh):

* step rows, appended to ``RUN_DIR/log.jsonl`` as ``{"stage", "step", "loss", "grad_norm",
  "reward"}`` (groundrl's own TRL stages write these themselves):
    verl-log LOG RUN_DIR --stage S       verl's console logger lines ``step:N - key:value - …``
                                         (actor/pg_loss, actor/grad_norm, critic/score/mean)
    openrlhf-log LOG RUN_DIR --stage S   OpenRLHF 0.11's ``✨ Global step N: {…}`` lines
                                         (policy_loss, actor_grad_norm, rollout/reward_mean;
                                         its reward_std is over the whole batch, not per group,
                                         so it is kept as ``reward_std_all`` and not checked)
* samples, one JSON line per logged completion ``{"step", "completion", "fields",
  "logged"}`` for the offline comparison:
    trl-samples STAGE_DIR DATA -o OUT    TRL's ``completions/*.parquet`` (``log_completions:
                                         true``): one column per reward function; the sample's
                                         fields come from the DATA row whose prompt the logged
                                         prompt contains (no such row: exit 1)
    verl-samples DUMP_DIR --field F -o OUT  verl's ``trainer.rollout_data_dir`` dumps: ``score``
                                         (the reward verl used) and the reward's extra keys;
                                         the ground truth fills field F
OpenRLHF's samples come from scripts/rehearsal_openrlhf_reward.py. Exit 1 with a message
when a file holds nothing of what is asked for.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path
from typing import Any

VERL_KEYS = {"loss": "actor/pg_loss", "grad_norm": "actor/grad_norm", "reward": "critic/score/mean"}
OPENRLHF_KEYS = {
    "loss": "policy_loss",
    "grad_norm": "actor_grad_norm",
    "reward": "rollout/reward_mean",
    "reward_std_all": "rollout/reward_std",
}
_VERL_LINE = re.compile(r"\bstep:(\d+) - (.*)$")
_OPENRLHF_LINE = re.compile(r"Global step (\d+): (\{.*\})\s*$")
_TRL_NOT_REWARDS = {"step", "prompt", "completion", "advantage", "image"}


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def verl_rows(text: str, stage: str) -> list[dict[str, Any]]:
    """verl's console metrics lines as step rows (the last line of a step wins)."""
    rows: dict[int, dict[str, Any]] = {}
    for line in text.splitlines():
        m = _VERL_LINE.search(line)
        if not m:
            continue
        metrics = dict(kv.split(":", 1) for kv in m.group(2).split(" - ") if ":" in kv)
        row: dict[str, Any] = {"stage": stage, "step": int(m.group(1))}
        for ours, theirs in VERL_KEYS.items():
            if theirs in metrics:
                row[ours] = _number(metrics[theirs].strip())
        rows[row["step"]] = row
    return [rows[k] for k in sorted(rows)]


def _literal(text: str) -> dict[str, Any] | None:
    """A printed dict whose floats may be nan / inf (ast.literal_eval reads neither)."""
    quoted = re.sub(r"(?<![\w.'\"])(-?)(nan|inf)\b", r'"\1\2"', text)
    try:
        value = ast.literal_eval(quoted)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, dict) else None


def openrlhf_rows(text: str, stage: str) -> list[dict[str, Any]]:
    """OpenRLHF's per-step status lines as step rows."""
    rows = []
    for line in text.splitlines():
        m = _OPENRLHF_LINE.search(line)
        status = _literal(m.group(2)) if m else None
        if m is None or status is None:
            continue
        row: dict[str, Any] = {"stage": stage, "step": int(m.group(1))}
        for ours, theirs in OPENRLHF_KEYS.items():
            if theirs in status:
                v = status[theirs]
                row[ours] = (
                    float(v) if isinstance(v, (int, float, str)) and _number(str(v)) is not None else None
                )
        rows.append(row)
    return rows


def _text(value: Any) -> str:
    """A logged prompt or completion (a string, or chat messages) as plain text."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return _text(value.get("content", value.get("text", "")))
    if isinstance(value, (list, tuple)):
        return "\n".join(_text(v) for v in value)
    return "" if value is None else str(value)


def _find_row(prompt: str, data: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The data row whose prompt text the logged prompt contains (the longest such)."""
    hits = [r for r in data if _text(r.get("prompt")) and _text(r.get("prompt")) in prompt]
    return max(hits, key=lambda r: len(_text(r.get("prompt"))), default=None)


def trl_samples(stage_dir: Path, data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """TRL's completions tables as samples; ValueError when a logged prompt has no row."""
    # lazy: pandas reads TRL's parquet tables; the other subcommands need the stdlib only
    import pandas as pd  # type: ignore[import-untyped]

    out = []
    for table in sorted((stage_dir / "completions").glob("completions_*.parquet")):
        for rec in pd.read_parquet(table).to_dict("records"):
            row = _find_row(_text(rec.get("prompt")), data)
            if row is None:
                raise ValueError(
                    f"{table.name}: no data row's prompt is in {_text(rec.get('prompt'))[:200]!r}"
                )
            logged = {
                k: float(v)
                for k, v in rec.items()
                if k not in _TRL_NOT_REWARDS and not k.endswith("_reason") and isinstance(v, (int, float))
            }
            fields = {k: v for k, v in row.items() if k not in ("prompt", "completion")}
            out.append(
                {
                    "step": rec.get("step"),
                    "completion": _text(rec.get("completion")),
                    "fields": fields,
                    "logged": logged,
                }
            )
    return out


def _ground_truth(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"json"}:  # groundrl's JSON-encoded label
        return json.loads(value["json"])
    return value


def verl_samples(dump_dir: Path, field: str) -> list[dict[str, Any]]:
    """verl's rollout dumps as samples: ``score`` is the reward, the extra keys its parts."""
    out = []
    for dump in sorted(dump_dir.glob("*.jsonl"), key=lambda p: (len(p.stem), p.stem)):
        for line in dump.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            logged = {"reward": rec.get("score")}
            logged.update(
                {k: v for k, v in rec.items() if k not in ("input", "output", "gts", "score", "step")}
            )
            logged = {
                k: v for k, v in logged.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
            }
            fields = {field: _ground_truth(rec.get("gts"))}
            out.append(
                {
                    "step": rec.get("step"),
                    "completion": rec.get("output", ""),
                    "fields": fields,
                    "logged": logged,
                }
            )
    return out


def _write(path: Path, rows: list[dict[str, Any]], append: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a" if append else "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


def _args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("verl-log", "openrlhf-log"):
        p = sub.add_parser(name)
        p.add_argument("log", type=Path)
        p.add_argument("run_dir", type=Path)
        p.add_argument("--stage", required=True)
    p = sub.add_parser("trl-samples")
    p.add_argument("stage_dir", type=Path)
    p.add_argument("data", type=Path)
    p.add_argument("-o", "--out", type=Path, required=True)
    p = sub.add_parser("verl-samples")
    p.add_argument("dump_dir", type=Path)
    p.add_argument("--field", required=True, help="the recipe field verl's ground truth fills")
    p.add_argument("-o", "--out", type=Path, required=True)
    return ap.parse_args(argv)


def _run(a: argparse.Namespace) -> tuple[list[dict[str, Any]], Path, bool]:
    if a.cmd in ("verl-log", "openrlhf-log"):
        text = a.log.read_text(encoding="utf-8", errors="replace")
        rows = (verl_rows if a.cmd == "verl-log" else openrlhf_rows)(text, a.stage)
        return rows, a.run_dir / "log.jsonl", True
    if a.cmd == "trl-samples":
        data = [json.loads(line) for line in a.data.read_text(encoding="utf-8").splitlines() if line.strip()]
        return trl_samples(a.stage_dir, data), a.out, False
    return verl_samples(a.dump_dir, a.field), a.out, False


def main(argv: list[str] | None = None) -> int:
    a = _args(argv)
    try:
        rows, path, append = _run(a)
    except (OSError, ValueError) as e:
        print(f"rehearsal_logs {a.cmd}: {e}", file=sys.stderr)
        return 1
    if not rows:
        print(f"rehearsal_logs {a.cmd}: nothing of what it reads was found", file=sys.stderr)
        return 1
    _write(path, rows, append)
    print(f"{len(rows)} row(s) -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
