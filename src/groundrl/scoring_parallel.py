"""``groundrl score --workers N``: the same scoring path in N processes, output in input
order.

Each worker process builds the recipe's rubric once (from the recipe name and its
options, so nothing unpicklable crosses a process boundary), then scores whole chunks of
lines through :func:`groundrl.scoring.score_records`. Chunks are handed out in order and
their results come back in order (``imap``), so the output file is the one a single
process writes. Parsing JSON happens in the workers too: the parent only reads lines.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from groundrl.scoring import iter_jsonl_lines, json_text, score_records

CHUNK_LINES = 512
_worker: dict[str, Any] = {}


def _init(recipe: str, options: Mapping[str, Any], rows: bool) -> None:
    from groundrl.recipes import get_recipe

    rec = get_recipe(recipe)
    _worker["recipe"], _worker["rubric"], _worker["rows"] = rec, rec.rubric(**options), rows


def _score_chunk(chunk: tuple[int, Sequence[str]]) -> tuple[str, list[dict[str, Any]], int]:
    """The chunk's output text (what one process would write, line for line), the slim
    rows a summary needs (only when asked: pickling them costs), and its error count."""
    first, lines = chunk
    results = list(score_records(_worker["recipe"], _worker["rubric"], iter_jsonl_lines(lines, start=first)))
    text = "".join(json_text(r) + "\n" for r in results)
    errors = sum(1 for r in results if "error" in r)
    rows = (
        [{"error": True} if "error" in r else {"reward": r["reward"], "parts": r["parts"]} for r in results]
        if _worker["rows"]
        else []
    )
    return text, rows, errors


def _chunks(lines: Sequence[str], size: int) -> Iterator[tuple[int, Sequence[str]]]:
    for start in range(0, len(lines), size):
        yield start + 1, lines[start : start + size]


def score_lines_parallel(
    recipe: str,
    options: Mapping[str, Any],
    lines: Sequence[str],
    workers: int,
    chunk_lines: int = CHUNK_LINES,
    rows: bool = True,
) -> Iterator[tuple[str, list[dict[str, Any]], int]]:
    """``(text, rows, errors)`` per chunk of ``lines``, in input order, scored by
    ``workers`` processes: ``text`` is the JSONL one process writes for those lines
    (1-based line numbers, blank lines skipped), ``rows`` the ``reward``/``parts`` (or
    ``error``) of each result when ``rows``. ``options`` must be picklable (CLI options are)."""
    if workers < 1:
        raise ValueError(f"workers must be ≥ 1, got {workers}")
    # fork: the parent holds no threads here (no judge) and children start in ~ms
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    with ctx.Pool(workers, initializer=_init, initargs=(recipe, dict(options), rows)) as pool:
        yield from pool.imap(_score_chunk, _chunks(lines, chunk_lines))
