"""``groundrl curate PIPELINE INPUT.jsonl -o OUT.jsonl``: streaming, resumable pipelines.

Each input record yields one output record (or, for ``decompose``, one per step),
appended and flushed as soon as it is made. Every output record carries ``line``, the
1-based number of the input line it came from, and that is what a rerun resumes by: ids
may repeat, be null, or collide (``1`` and ``"1"``, an explicit ``"line7"``) without a
record being skipped or duplicated, and the summary says when input ids repeat. An
output file from before ``line`` was written resumes by id, as it used to.

Reserved names: ``line``, ``rows`` (on each row of a record that gave several: how
many) and ``error`` are curate's bookkeeping; an input record carrying one of them is an
error record naming it, never silently overwritten.

Failures are records, not tracebacks: an input line that is not a JSON object, and a
record the pipeline could not process (an unreadable image, a missing field), become
``{id, line, error}`` output records — ``line`` is the 1-based input line number and
a bad line's id is ``line<N>``. A rerun retries those records (their old error lines are
removed first) unless ``retry_errors=False``. The summary counts outcomes.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from groundrl.io import iter_lines, json_line, parse_line

ERROR = "error"
ROWS = "rows"  # on each row of a record that gave several: how many it gave

#: An input record: a JSON object whose values only the pipeline's function looks into.
#: The function answers one output row or a list of rows (each a JSON object).
RecordFn = Callable[[dict[str, object]], Mapping[str, object] | Sequence[Mapping[str, object]]]


def _output_rows(out: Path) -> Iterator[tuple[str, Mapping[str, object] | None]]:
    """Each non-blank line of ``out`` with its parsed record (``None`` for an unreadable
    line), read as it goes (issue 26: 53 MB in took 532 MB)."""
    if out.exists():
        for line in iter_lines(out):
            yield line.text, line.value if line.value is not None and "id" in line.value else None


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
        ln = rec.get("line")
        if isinstance(ln, int) and not isinstance(ln, bool):
            lines.add(ln)
        else:
            legacy.add(str(rec["id"]))
    return lines, legacy


TAIL = 1 << 16  # bytes read at a time from the end of the output when repairing it


def _repair(out: Path) -> None:
    """Make the output end at a whole input record. One record's rows are written at
    once, so only the last record can be cut: inside a line (the partial line goes), or,
    for a record of several rows, at a row boundary, which its rows' ``rows`` count shows
    (issue 26: such a cut was never redone). The cut record's rows are dropped by
    truncating the file, one atomic step (the rewrite it replaces could itself be cut).
    Older outputs without ``rows``: a partial line takes the rows of its line with it."""
    if not out.exists():
        return
    size = out.stat().st_size
    with out.open("rb") as f:
        f.seek(max(0, size - 1))
        partial = bool(size) and f.read(1) != b"\n"
        end = _last_newline(f, size) + 1 if partial else size
        cut, have = end, 0
        last: object = None  # the last record's `line`
        want: object = None  # its `rows`
        while cut > 0:  # the whole rows of the last record, read backwards
            start = _last_newline(f, cut - 1) + 1
            f.seek(start)
            row = _parse_row(f.read(cut - 1 - start))
            if row is None or row.get("line") is None or (last is not None and row["line"] != last):
                break
            if last is None:
                last, want = row["line"], row.get(ROWS)
            have, cut = have + 1, start
        if (isinstance(want, int) and have < want) or (partial and want is None):
            end = cut
    if end != size:
        os.truncate(out, end)


def _last_newline(f: Any, before: int) -> int:
    """Offset of the last ``\\n`` in ``f[:before]``, or -1."""
    pos = before
    while pos > 0:
        lo = max(0, pos - TAIL)
        f.seek(lo)
        i = f.read(pos - lo).rfind(b"\n")
        if i >= 0:
            return lo + i
        pos = lo
    return -1


def _parse_row(raw: bytes) -> Mapping[str, object] | None:
    return parse_line(raw)[0]


def drop_errors(out: Path) -> int:
    """Remove the error records from ``out`` (so a rerun can redo them); returns how many.
    The file is rewritten, as it is read, to a temporary file renamed over it (atomic)."""
    if not out.exists():
        return 0
    tmp = out.with_name(out.name + ".tmp")
    dropped = 0
    with tmp.open("w", encoding="utf-8") as f:
        for line, rec in _output_rows(out):
            if rec is not None and ERROR in rec:
                dropped += 1
            else:
                f.write(line + "\n")
    if dropped:
        os.replace(tmp, out)
    else:
        tmp.unlink()
    return dropped


def write_selected(
    src: Path,
    dest: Path,
    keep: Callable[[dict[str, object]], bool],
    convert: Callable[[dict[str, object]], Mapping[str, object]],
) -> int:
    """Write ``convert(rec)`` for the records of a curate output ``src`` that ``keep``
    accepts (error records and unreadable lines left out) to ``dest``, its folder created;
    returns how many. Read as it goes: memory does not grow with the output (issue 26)."""
    n = 0
    dest.parent.mkdir(parents=True, exist_ok=True)
    with dest.open("w", encoding="utf-8") as f:
        for line in iter_lines(src):
            if line.value is not None and ERROR not in line.value and keep(line.value):
                f.write(json_line(convert(line.value)))
                n += 1
    return n


def iter_records(path: Path) -> Iterator[tuple[int, dict[str, object] | None, str]]:
    """``(line_number, record, "")`` per non-blank line (a record without an ``id`` gets
    ``line<N>``), or ``(line_number, None, message)`` for a line that is not a JSON object
    (:attr:`groundrl.io.Line.message`). The file is read as it goes."""
    for line in iter_lines(path):
        if line.problem:
            yield line.number, None, line.message
        else:
            line.value.setdefault("id", f"line{line.number}")
            yield line.number, line.value, ""


RESERVED = ("line", ROWS, ERROR)  # curate's bookkeeping fields in every output row


def _upstream(rec: dict[str, object]) -> dict[str, object]:
    """A record written by an earlier curate step (``proxy-records`` → ``proxy-distill``)
    carries that step's integer ``line`` / ``rows``: kept as ``upstream_line`` /
    ``upstream_rows`` so this step's bookkeeping never overwrites them. Any other value
    under a reserved name is a user field, and refused below."""
    moved = {
        k: rec[k] for k in ("line", ROWS) if isinstance(rec.get(k), int) and not isinstance(rec[k], bool)
    }
    if not moved or ERROR in rec:
        return rec
    rest = {k: v for k, v in rec.items() if k not in moved}
    return {**rest, **{f"upstream_{k}": v for k, v in moved.items()}}


def _apply(fn: RecordFn, rec: dict[str, object], line: int) -> list[Mapping[str, object]]:
    rec = _upstream(rec)
    taken = [k for k in RESERVED if k in rec]
    if taken:  # issue 26: a user's `line` was overwritten, then dropped from --kept records
        return [
            {
                "id": rec["id"],
                "line": line,
                ERROR: f"the input field {taken[0]!r} is a name curate reserves for its bookkeeping "
                f"({', '.join(RESERVED)}); rename it (curate's --kept files never carry them)",
            }
        ]
    try:
        res = fn(rec)
    except Exception as e:  # one bad record is an error record, not the end of the run
        return [{"id": rec["id"], "line": line, ERROR: f"{type(e).__name__}: {e}"}]
    out = [res] if isinstance(res, Mapping) else list(res)  # one row, or a list of rows
    return [{**r, "line": line} if ERROR in r and "line" not in r else r for r in out]


def run(
    inp: Path,
    out: Path,
    fn: RecordFn,
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
    # pass 1 (streaming): what is done, what is left, repeated ids; pass 2 does the rest
    n_todo, skipped = 0, 0
    ids: Counter[str] = Counter()
    for k, rec, _err in iter_records(inp):
        rid = str(rec["id"]) if rec is not None else f"line{k}"
        ids[rid] += 1
        if k in lines_done or rid in legacy_ids:
            skipped += 1
        else:
            n_todo += 1
    if limit is not None:
        n_todo = min(n_todo, limit)
    counts: Counter = Counter()
    bar = None
    if progress:
        # lazy: tqdm loads only when a progress bar is drawn
        from tqdm import tqdm

        bar = tqdm(total=n_todo, desc=f"curate ({len(seen)} done)", unit="record")
    done = 0
    with out.open("a", encoding="utf-8") as f:
        for k, rec, err in iter_records(inp):
            if done >= n_todo:
                break
            rid = str(rec["id"]) if rec is not None else f"line{k}"
            if k in lines_done or rid in legacy_ids:
                continue
            done += 1
            results = [{"id": f"line{k}", "line": k, ERROR: err}] if rec is None else _apply(fn, rec, k)
            rows = [r if r.get("line") == k else {**r, "line": k} for r in results]
            if len(rows) > 1:  # lets a resume see a record cut between its rows
                rows = [{**r, ROWS: len(rows)} for r in rows]
            f.write("".join(json_line(r, default=str) for r in rows))
            f.flush()  # one write per input record: only the last record can be cut
            for r in rows:
                if ERROR in r:
                    counts[ERROR] += 1
                else:
                    counts[str(r.get(outcome_key)) if outcome_key else "written"] += 1
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    counts["skipped_already_done"] = skipped
    counts["duplicate_ids"] = sum(n - 1 for n in ids.values() if n > 1)
    counts["retried_errors"] = retried
    counts["old_errors_kept"] = 0 if retry_errors else len(seen - done_ids(out, include_errors=False))
    return counts
