"""``groundrl curate PIPELINE INPUT.jsonl -o OUT.jsonl``: streaming, resumable pipelines.

Each input record yields one output record (or, for ``decompose``, one per step),
appended and flushed as soon as it is made. Every output record carries ``line``, the
1-based number of the input line it came from, and that is what a rerun resumes by: ids
may repeat, be null, or collide (``1`` and ``"1"``, an explicit ``"line7"``) without a
record being skipped or duplicated, and the summary says when input ids repeat. An
output file from before ``line`` was written resumes by id, as it used to.

Failures are records, not tracebacks: an input line that is not a JSON object, and a
record the pipeline could not process (an unreadable image, a missing field), become
``{id, line, error}`` output records — ``line`` is the 1-based input line number and
a bad line's id is ``line<N>``. A rerun retries those records (their old error lines are
removed first) unless ``retry_errors=False``. The summary counts outcomes.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ERROR = "error"


def _output_rows(out: Path) -> list[tuple[str, dict[str, Any] | None]]:
    """Each line of ``out`` with its parsed record (``None`` for an unreadable line)."""
    rows: list[tuple[str, dict[str, Any] | None]] = []
    if out.exists():
        for line in out.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                rec = None
            rows.append((line, rec if isinstance(rec, dict) and "id" in rec else None))
    return rows


def done_ids(out: Path, include_errors: bool = True) -> set[str]:
    """Ids of the records already in ``out`` (a line cut by an interruption is redone);
    with ``include_errors=False`` records with an ``error`` are left out (to be retried)."""
    return {
        str(rec["id"])
        for _, rec in _output_rows(out)
        if rec is not None and (include_errors or ERROR not in rec)
    }


def done_lines(out: Path) -> tuple[set[int], set[str]]:
    """Input line numbers already in ``out``, plus the ids of older rows without ``line``."""
    lines, legacy = set(), set()
    for _, rec in _output_rows(out):
        if rec is None:
            continue
        if isinstance(rec.get("line"), int) and not isinstance(rec.get("line"), bool):
            lines.add(rec["line"])
        else:
            legacy.add(str(rec["id"]))
    return lines, legacy


def _repair(out: Path) -> None:
    """Drop a trailing partial line left by a kill mid-write, with the complete rows of the
    last input record before it: one record's rows are written at once, so a cut can only
    fall inside the last record's write (a decompose record cut between its steps is redone
    whole; redoing a complete one is harmless)."""
    if out.exists():
        text = out.read_text(encoding="utf-8")
        if text and not text.endswith("\n"):
            rows = text[: text.rfind("\n") + 1].splitlines(keepends=True)
            last = _row_line(rows[-1]) if rows else None
            while rows and last is not None and _row_line(rows[-1]) == last:
                rows.pop()
            out.write_text("".join(rows), encoding="utf-8")


def _row_line(row: str) -> int | None:
    try:
        rec = json.loads(row)
    except ValueError:
        return None
    return rec.get("line") if isinstance(rec, dict) else None


def drop_errors(out: Path) -> int:
    """Remove the error records from ``out`` (so a rerun can redo them); returns how many.
    The file is rewritten through a temporary file and an atomic rename."""
    rows = _output_rows(out)
    keep = [line for line, rec in rows if rec is None or ERROR not in rec]
    dropped = len(rows) - len(keep)
    if dropped:
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text("".join(line + "\n" for line in keep), encoding="utf-8")
        os.replace(tmp, out)
    return dropped


def iter_records(path: Path) -> Iterator[tuple[int, dict[str, Any] | None, str]]:
    """``(line_number, record, "")`` per non-blank line (a record without an ``id`` gets
    ``line<N>``), or ``(line_number, None, message)`` for a line that is not a JSON object."""
    text = path.read_text(encoding="utf-8", errors="replace")
    for k, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as e:
            yield k, None, f"line {k} is not JSON: {e}"
            continue
        if not isinstance(rec, dict):
            yield k, None, f"line {k} is a JSON {type(rec).__name__}, expected an object"
            continue
        rec.setdefault("id", f"line{k}")
        yield k, rec, ""


def _apply(fn: Callable[[dict[str, Any]], Any], rec: dict[str, Any], line: int) -> list[dict[str, Any]]:
    try:
        res = fn(rec)
    except Exception as e:  # one bad record is an error record, not the end of the run
        return [{"id": rec["id"], "line": line, ERROR: f"{type(e).__name__}: {e}"}]
    out = res if isinstance(res, list) else [res]
    return [{**r, "line": line} if ERROR in r and "line" not in r else r for r in out]


def run(
    inp: Path,
    out: Path,
    fn: Callable[[dict[str, Any]], list[dict[str, Any]] | dict[str, Any]],
    outcome_key: str | None,
    progress: bool = True,
    retry_errors: bool = True,
    limit: int | None = None,
) -> Counter:
    """Apply ``fn`` to every record of ``inp`` not yet in ``out`` and append the results.

    Returns counts of the results' ``outcome_key`` values (``"written"`` without one;
    error records count as ``"error"``) plus ``skipped_already_done`` (input records
    whose id was already in ``out``), ``retried_errors`` (error records removed to be
    redone) and ``old_errors_kept`` (with ``retry_errors=False``: earlier error records left).
    ``limit`` caps how many new input records are processed this run.
    """
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be ≥ 0, got {limit}")
    out.parent.mkdir(parents=True, exist_ok=True)
    _repair(out)
    retried = drop_errors(out) if retry_errors else 0
    seen = done_ids(out)
    lines_done, legacy_ids = done_lines(out)
    todo, skipped, ids = [], 0, Counter()
    for k, rec, err in iter_records(inp):
        rid = str(rec["id"]) if rec is not None else f"line{k}"
        ids[rid] += 1
        if k in lines_done or rid in legacy_ids:
            skipped += 1
        else:
            todo.append((k, rec, err))
    if limit is not None:
        todo = todo[:limit]
    counts: Counter = Counter()
    it: Any = todo
    if progress:
        from tqdm import tqdm

        it = tqdm(todo, desc=f"curate ({len(seen)} done)", unit="record")
    with out.open("a", encoding="utf-8") as f:
        for k, rec, err in it:
            results = [{"id": f"line{k}", "line": k, ERROR: err}] if rec is None else _apply(fn, rec, k)
            rows = [r if r.get("line") == k else {**r, "line": k} for r in results]
            f.write("".join(json.dumps(r, default=str, ensure_ascii=False) + "\n" for r in rows))
            f.flush()  # one write per input record: only a cut last line can be partial
            for r in rows:
                if ERROR in r:
                    counts[ERROR] += 1
                else:
                    counts[str(r.get(outcome_key)) if outcome_key else "written"] += 1
    counts["skipped_already_done"] = skipped
    counts["duplicate_ids"] = sum(n - 1 for n in ids.values() if n > 1)
    counts["retried_errors"] = retried
    counts["old_errors_kept"] = 0 if retry_errors else len(seen - done_ids(out, include_errors=False))
    return counts
