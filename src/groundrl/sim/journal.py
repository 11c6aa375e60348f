"""The episodes of a ``groundrl sim eval`` run, written as they end (issue 42 item 5).

``OUT/episodes.jsonl`` gets one line per finished episode (:meth:`EpisodeResult.to_dict`),
flushed at once, so a killed run keeps every episode it finished. A rerun into a folder
whose run did not finish (no ``metrics.json`` and ``report.md``) with the same settings and the same task
and plans files (SHA-256) reads them back and runs only the tasks left; with other
settings or files it is refused, naming what changed (:func:`groundrl.run_params.guard`
keeps them in ``episodes.jsonl.params.json``; ``--restart`` starts over), so a folder
never mixes two evaluations. A folder whose run finished is started over, as before.
The report files (``results.jsonl`` in task order, ``metrics.json``, ``report.md``,
``success.png``) are removed when a run starts and written from all the episodes when
it ends.

Episodes are matched to tasks by id; a task list that names one id k times is matched
to the first k episodes of that id, in order [ours: the simulator and the seeded
policies play a task the same way each time]. A last line cut by a kill is dropped.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from groundrl.io import iter_lines, json_line
from groundrl.sim.evaluate import EpisodeResult
from groundrl.sim.tasks import Task

JOURNAL = "episodes.jsonl"
REPORT_FILES = ("metrics.json", "results.jsonl", "report.md", "success.png")


def _drop_cut_line(path: Path) -> None:
    """Cut the file after its last newline: a line a kill left half-written would
    otherwise be glued to the next episode's line."""
    with path.open("rb+") as f:
        size = f.seek(0, 2)
        pos = size
        while pos > 0:
            step = min(pos, 1 << 16)
            f.seek(pos - step)
            chunk = f.read(step)
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                pos = pos - step + nl + 1
                break
            pos -= step
        if pos != size:
            f.truncate(pos)


def read_episodes(path: Path) -> dict[str, deque[EpisodeResult]]:
    """The episodes already in ``path``, by task id, in the order they were written
    (a line that is not an episode is skipped)."""
    done: dict[str, deque[EpisodeResult]] = defaultdict(deque)
    if not path.is_file():
        return done
    _drop_cut_line(path)
    for line in iter_lines(path):
        try:
            r = EpisodeResult.from_dict(line.value)
        except (AttributeError, KeyError, TypeError, ValueError):
            continue
        done[str(r.id)].append(r)
    return done


def tasks_left(tasks: Sequence[Task], done: dict[str, deque[EpisodeResult]]) -> list[Task]:
    """``tasks`` less the first ``len(done[id])`` occurrences of each id."""
    seen: dict[str, int] = defaultdict(int)
    left = []
    for t in tasks:
        seen[str(t.id)] += 1
        if seen[str(t.id)] > len(done.get(str(t.id), ())):
            left.append(t)
    return left


def in_task_order(
    tasks: Sequence[Task], done: dict[str, deque[EpisodeResult]], new: Sequence[EpisodeResult]
) -> list[EpisodeResult]:
    """One episode per task, in task order: the earlier ones first for each id, then this run's."""
    pool: dict[str, deque[EpisodeResult]] = defaultdict(deque)
    for key, rs in done.items():
        pool[key].extend(rs)
    for r in new:
        pool[str(r.id)].append(r)
    return [pool[str(t.id)].popleft() for t in tasks if pool[str(t.id)]]


def clear_report(out: Path) -> None:
    """Remove the report files of an earlier run: until this run ends the folder holds its
    episodes only, never a report that describes other ones."""
    for name in REPORT_FILES:
        (out / name).unlink(missing_ok=True)


@contextmanager
def journal(path: Path) -> Iterator[Any]:
    """A function that appends one episode to ``path`` and flushes it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    f: IO[str]
    with path.open("a", encoding="utf-8") as f:

        def write(r: EpisodeResult) -> None:
            f.write(json_line(r.to_dict()))
            f.flush()

        yield write


__all__ = ["JOURNAL", "clear_report", "in_task_order", "journal", "read_episodes", "tasks_left"]
