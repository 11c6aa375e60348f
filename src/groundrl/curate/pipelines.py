"""``groundrl curate PIPELINE IN.jsonl -o OUT.jsonl``: streaming, resumable pipelines.

Each input record yields one output record, appended and flushed as soon as it is made;
a rerun skips the ids already in the output, so an interrupted run resumes without
duplicates and ends with the same file. The summary counts outcomes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def done_ids(out: Path) -> set[str]:
    ids: set[str] = set()
    if out.exists():
        for line in out.read_text(encoding="utf-8").splitlines():
            try:
                ids.add(str(json.loads(line)["id"]))
            except (ValueError, KeyError, TypeError):
                continue  # a line cut by an interruption is redone
    return ids


def _repair(out: Path) -> None:
    """Drop a trailing partial line left by a kill mid-write."""
    if out.exists():
        text = out.read_text(encoding="utf-8")
        if text and not text.endswith("\n"):
            out.write_text(text[: text.rfind("\n") + 1], encoding="utf-8")


def iter_records(path: Path) -> Iterator[dict[str, Any]]:
    for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        rec = json.loads(line)
        if not isinstance(rec, dict):
            raise ValueError(f"{path}:{k}: not a JSON object")
        rec.setdefault("id", f"line{k}")
        yield rec


def run(
    inp: Path,
    out: Path,
    fn: Callable[[dict[str, Any]], list[dict[str, Any]] | dict[str, Any]],
    outcome_key: str | None,
    progress: bool = True,
) -> Counter:
    """Apply ``fn`` to every record not yet in ``out``; count ``outcome_key`` values."""
    _repair(out)
    seen = done_ids(out)
    records = [r for r in iter_records(inp) if str(r["id"]) not in seen]
    counts: Counter = Counter()
    it: Any = records
    if progress:
        from tqdm import tqdm

        it = tqdm(records, desc=f"curate ({len(seen)} done)", unit="record")
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as f:
        for rec in it:
            res = fn(rec)
            for r in res if isinstance(res, list) else [res]:
                f.write(json.dumps(r, default=str) + "\n")
                f.flush()
                counts[str(r.get(outcome_key)) if outcome_key else "written"] += 1
    counts["skipped_already_done"] = len(seen)
    return counts
