"""Records that several benchmark modules share, as TypedDicts: the result rows that
:mod:`groundrl.benchmarks.stats` reads, the bad-row reports of the loaders, and the
metric cells written into metrics.json.

At runtime each is a plain dict, so results.jsonl and metrics.json are exactly what the
dict literals build; the types let mypy check every key a driver, a metric or a report
reads. A record that one module makes and reads is declared in that module; a helper
that reads a caller-given column takes ``Mapping[str, ...]`` instead.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

CI = list[float | None]
"""A 95% interval ``[lo, hi]`` as metrics.json holds it (``[None, None]`` with no data)."""


class ValueCI(TypedDict):
    """A metric and its percentile-bootstrap 95% interval."""

    value: float | None
    ci95: CI


class RateCell(TypedDict):
    """``hits`` of ``n`` and their rate with a Wilson 95% interval."""

    n: int
    hits: int
    accuracy: float
    accuracy_ci95: CI


class JudgeCalls(TypedDict):
    """How many requests a judge got and how many of them failed."""

    calls: int
    failures: int


class Prediction(TypedDict):
    """A predicted 0–10 score (``None``: none could be read) against the gold score."""

    pred: float | None
    gt_score: float


class ScoredRow(Prediction):
    """A score judge's row: the K parsed samples (the first is ``pred``, or their
    aggregate in score-rm) and the call's error."""

    id: object
    samples: list[float | None]
    error: str | None


class SwapRow(TypedDict):
    """judge-reliability's row of one pair shown in both orders: the slot chosen in each
    order (first sample), all K verdicts per order, and whether each order was right."""

    id: object
    preferred: int
    slot_original: int | None
    slot_swapped: int | None
    samples_original: list[int | None]
    samples_swapped: list[int | None]
    agree: bool | None
    right_original: bool
    right_swapped: bool
    error: str | None


class ShownPair(TypedDict):
    """A pair as a pairwise judge is shown it: the responses in the presented order
    (values as the items carry them; the judges turn them into text)."""

    query: object
    response_1: object
    response_2: object
    image: object


class BadRow(TypedDict):
    """A row a loader could not use (``row``: 1-based), with why."""

    row: int
    id: NotRequired[object]
    error: str


class BadLine(TypedDict):
    """A JSONL line :func:`~groundrl.benchmarks.runner.read_items` could not use."""

    line: int
    id: NotRequired[object]
    error: str
