"""Reinforced Reasoning's online accuracy filtering (the pure logic; the trainer hook is
elsewhere).

Each prompt is sampled G times. A prompt group is kept only when its *group accuracy*
lies in ``[lo, hi]`` = [0.1, 0.9] — both ends inclusive (our reading; with G = 10 a
group with 1 or 9 fully correct completions is kept) — because all-right and all-wrong
groups give GRPO zero advantage. Two definitions of the group accuracy (``criterion``):

* ``"paper"`` (default; Eq. 14 of the paper): the fraction of its completions with *full
  accuracy*, i.e. an accuracy reward ≥ ``full`` (1.0);
* ``"released"`` (the authors' released code): the mean accuracy reward of the group
  (non-numbers count as 0).

Kept groups fill a buffer of a configurable number of groups before an optimisation
step.

Comparisons allow 1e-9 for float rounding (2/20 counts as 0.1). An accuracy that is not a
finite number (``None``, NaN, text) counts as not fully accurate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

_EPS = 1e-9


CRITERIA = ("paper", "released")


def _check_bounds(lo: Any, hi: Any, full: Any, criterion: Any = "paper") -> None:
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {', '.join(CRITERIA)}, got {criterion!r}")
    for name, v in (("lo", lo), ("hi", hi)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
            raise ValueError(f"{name} must be a fraction in [0, 1], got {v!r}")
    if lo > hi:
        raise ValueError(f"lo must be ≤ hi, got lo={lo}, hi={hi}")
    if isinstance(full, bool) or not isinstance(full, (int, float)) or not math.isfinite(full):
        raise ValueError(
            f"full (the accuracy that counts as fully correct) must be a finite number, got {full!r}"
        )


def _is_full(acc: Any, full: float) -> bool:
    if isinstance(acc, bool) or not isinstance(acc, (int, float)) or not math.isfinite(acc):
        return False
    return acc >= full - _EPS


def _as_number(acc: Any) -> float:
    if isinstance(acc, bool) or not isinstance(acc, (int, float)) or not math.isfinite(acc):
        return 0.0
    return float(acc)


def group_accuracy(accuracies: Sequence[Any], full: float = 1.0, criterion: str = "paper") -> float:
    """The group accuracy the filter compares with ``[lo, hi]``: the fraction of fully
    accurate completions (``paper``) or the mean accuracy (``released``); 0.0 for an
    empty group.

    >>> group_accuracy([1.0, 0.5, 0.5, 0.0]), group_accuracy([1.0, 0.5, 0.5, 0.0], criterion="released")
    (0.25, 0.5)
    """
    _check_bounds(0.0, 1.0, full, criterion)
    if not accuracies:
        return 0.0
    if criterion == "released":
        return sum(_as_number(a) for a in accuracies) / len(accuracies)
    return sum(_is_full(a, full) for a in accuracies) / len(accuracies)


def group_accepted(
    accuracies: Sequence[Any], lo: float = 0.1, hi: float = 0.9, full: float = 1.0, criterion: str = "paper"
) -> bool:
    """Whether one prompt group (its completions' accuracies) passes the filter.
    An empty group is not kept."""
    _check_bounds(lo, hi, full, criterion)
    if not accuracies:
        return False
    frac = group_accuracy(accuracies, full, criterion)
    return lo - _EPS <= frac <= hi + _EPS


def group_keep_mask(
    accuracies: Sequence[Any],
    group_size: int,
    lo: float = 0.1,
    hi: float = 0.9,
    full: float = 1.0,
    criterion: str = "paper",
) -> list[bool]:
    """Per completion: whether its group is kept. ``accuracies`` lists the completions of
    each prompt consecutively (TRL's GRPO order: prompt 0's G completions, then prompt
    1's, …); its length must be a multiple of ``group_size``.

    Example (G = 4, bounds 0.1/0.9): ``[1, 0, 0, 0,  1, 1, 1, 1]`` → the first group has
    1/4 fully correct (kept), the second 4/4 (dropped):
    ``[True] * 4 + [False] * 4``.
    """
    if isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 1:
        raise ValueError(f"group_size (completions per prompt) must be an int ≥ 1, got {group_size!r}")
    _check_bounds(lo, hi, full, criterion)
    accs = list(accuracies)
    if len(accs) % group_size:
        raise ValueError(
            f"{len(accs)} accuracies do not split into groups of {group_size}: "
            "pass every completion of every prompt, grouped by prompt"
        )
    mask: list[bool] = []
    for start in range(0, len(accs), group_size):
        mask += [group_accepted(accs[start : start + group_size], lo, hi, full, criterion)] * group_size
    return mask


class OnlineFilterBuffer:
    """Collects accepted prompt groups until a step's worth (``capacity`` groups) is ready.

    >>> buf = OnlineFilterBuffer(capacity=2)
    >>> buf.offer("g1", [1, 0, 0, 0]), buf.offer("g2", [1, 1, 1, 1]), buf.ready
    (True, False, False)
    >>> buf.offer("g3", [0, 1, 0, 1]), buf.ready, buf.take(), (buf.seen, buf.kept)
    (True, True, ['g1', 'g3'], (3, 2))

    ``seen``/``kept`` count offered and accepted groups since construction;
    ``kept_fraction`` is ``kept / seen`` (0.0 before anything was offered).
    """

    def __init__(
        self, capacity: int, lo: float = 0.1, hi: float = 0.9, full: float = 1.0, criterion: str = "paper"
    ) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(
                f"capacity (prompt groups per optimisation step) must be an int ≥ 1, got {capacity!r}"
            )
        _check_bounds(lo, hi, full, criterion)
        self.capacity, self.lo, self.hi, self.full, self.criterion = capacity, lo, hi, full, criterion
        self.seen = 0
        self.kept = 0
        self._groups: list[Any] = []

    def offer(self, group: Any, accuracies: Sequence[Any]) -> bool:
        """Count the group as seen and store it when it passes the filter; returns
        whether it was kept. ``group`` is stored as given (any payload)."""
        self.seen += 1
        ok = group_accepted(accuracies, self.lo, self.hi, self.full, self.criterion)
        if ok:
            self.kept += 1
            self._groups.append(group)
        return ok

    def __len__(self) -> int:
        return len(self._groups)

    @property
    def ready(self) -> bool:
        """True when at least ``capacity`` kept groups are waiting."""
        return len(self._groups) >= self.capacity

    def take(self) -> list[Any]:
        """The oldest ``capacity`` kept groups, removed from the buffer (any extra stay for
        the next step). Raises ``RuntimeError`` when not :attr:`ready`."""
        if not self.ready:
            raise RuntimeError(
                f"only {len(self._groups)} of {self.capacity} groups buffered: offer more before take()"
            )
        batch, self._groups = self._groups[: self.capacity], self._groups[self.capacity :]
        return batch

    @property
    def kept_fraction(self) -> float:
        return self.kept / self.seen if self.seen else 0.0

    def stats(self) -> dict[str, float]:
        """``{"seen", "kept", "kept_fraction", "buffered"}`` for logging."""
        return {
            "seen": self.seen,
            "kept": self.kept,
            "kept_fraction": self.kept_fraction,
            "buffered": len(self),
        }
