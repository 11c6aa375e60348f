"""Scoring sample records (dicts with ``completion`` + recipe fields) in batches.

Shared by ``groundrl score`` and the reward server: it validates each record against
the recipe, turns bad records into error records instead of exceptions, and sends the
good ones through the rubric in batches (so judge-backed parts see whole batches).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypedDict

from groundrl.io import Line, parse_line
from groundrl.io import json_text as json_text  # moved to io; the server and adapters import it here
from groundrl.recipes.base import Recipe
from groundrl.results import verdict_row
from groundrl.rubric import Rubric
from groundrl.types import VerdictDict

BATCH_SIZE = 64
# (line number, the record or None, the error or ""): what score_records reads
Item = tuple[int, Mapping[str, Any] | None, str]


class ScoredRow(VerdictDict):
    """A scored record: its ``id`` (``None`` when it has none), line, and verdict."""

    id: object
    line: int


class ErrorRow(TypedDict):
    """A record that could not be scored, with why."""

    id: object
    line: int
    error: str


def iter_jsonl_lines(
    lines: Iterable[str], start: int = 1
) -> Iterator[tuple[int, dict[str, Any] | None, str]]:
    """``(line_number, record or None, error)`` for each non-blank line (numbers from
    ``start``, 1-based by default); the error is :attr:`groundrl.io.Line.message`."""
    for i, line in enumerate(lines, start=start):
        if line.strip():
            yield parse_jsonl_line(i, line)


def parse_jsonl_line(i: int, line: str) -> tuple[int, dict[str, Any] | None, str]:
    """``(i, record, "")`` or ``(i, None, error)`` for the non-blank line number ``i``."""
    value, problem = parse_line(line)
    return i, value, problem and Line(i, None, problem, line).message


def _error(line: int, record: Mapping[str, Any] | None, msg: str) -> ErrorRow:
    return {"id": record.get("id") if record else None, "line": line, "error": msg}


def _flush(rubric: Rubric, batch: list[tuple[int, Mapping[str, Any]]]) -> list[ScoredRow]:
    completions = [r["completion"] for _, r in batch]
    verdicts = rubric.score_batch(completions, [r for _, r in batch])
    return [
        {"id": r.get("id"), "line": line, **verdict_row(v)}
        for (line, r), v in zip(batch, verdicts, strict=True)
    ]


def score_records(
    recipe: Recipe,
    rubric: Rubric,
    items: Iterable[Item],
    progress: bool = False,
    batch_size: int = BATCH_SIZE,
    unit: str = "line",
    total: int | None = None,
) -> Iterator[ScoredRow | ErrorRow]:
    """Yield one result per item, in input order: ``{id, line, reward, parts, reasons}``
    or ``{id, line, error}``. ``items`` is consumed as it goes (one batch held at a time:
    memory does not grow with the input); ``total`` sizes the progress bar (default: the
    length of ``items`` when it has one)."""
    bar = None
    if progress:
        # lazy: tqdm loads only when a progress bar is drawn
        from tqdm import tqdm

        if total is None and isinstance(items, Sequence):
            total = len(items)
        bar = tqdm(total=total, desc=f"scoring {recipe.name}", unit="sample", leave=False)
    pending: list[tuple[int, Mapping[str, Any]]] = []
    order: list[Item] = []

    def drain() -> Iterator[ScoredRow | ErrorRow]:
        scored = iter(_flush(rubric, pending)) if pending else iter(())
        for line, rec, err in order:
            yield _error(line, rec, err) if err else next(scored)
        if bar is not None:
            bar.update(len(order))
        pending.clear()
        order.clear()

    for line, rec, err in items:
        if not err:
            missing = recipe.missing_fields(rec)  # type: ignore[arg-type]
            if missing:
                err = f"{unit} {line}: missing field {missing[0]!r} (recipe {recipe.name} needs {', '.join(('completion', *recipe.required))})"
        order.append((line, rec, err))
        if not err:
            pending.append((line, rec))  # type: ignore[arg-type]
        if len(pending) >= batch_size:
            yield from drain()
    yield from drain()
    if bar is not None:
        bar.close()


def score_samples(recipe: Recipe, rubric: Rubric, samples: Sequence[object]) -> list[ScoredRow | ErrorRow]:
    """In-memory variant: a list of sample dicts → a list of result dicts (an item that
    is not a dict is an error row)."""
    items = [
        (i, s if isinstance(s, dict) else None, "" if isinstance(s, dict) else f"sample {i} is not an object")
        for i, s in enumerate(samples, start=1)
    ]
    return list(score_records(recipe, rubric, items, batch_size=max(1, len(items)), unit="sample"))
