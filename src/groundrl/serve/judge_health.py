"""Which judge-backed part scores are judge failures, for the reward server's health.

A judge-backed part (``Part(batched=True)``) that could not get a usable answer scores
its fallback with a reason; the judges word those reasons consistently ("judge call
failed: HTTP 500", "proxy call failed: Timeout", "log-prob scoring failed", "no <score>
in judge output", "judge score nan is not finite", a part that raised: "error: …").
:func:`judge_failed` reads them, so the server can count failures per request, per
recipe (``/metrics``) and over a recent window (``/health`` says ``degraded``).
"""

from __future__ import annotations

# [ours] words that only a failed or unusable judge answer puts in a reason
FAILURE_MARKERS = (
    "failed",
    "timeout",
    "timed out",
    "error",
    "unparseable",
    "not finite",
    "non-finite",
    "out of range",
    "no <score>",
    "no number in the judge",
)
DEGRADED_RATE = 0.1  # [ours: the default --max-judge-failures] recent rate above it
WINDOW = 200  # judge-backed part scores in the recent window [ours]


def judge_failed(reason: str | None) -> bool:
    """True when a judge-backed part's reason says the judge failed or answered garbage.

    >>> judge_failed("judge call failed: HTTP 500"), judge_failed(""), judge_failed("no frame-level mentions")
    (True, False, False)
    """
    if not reason:
        return False
    low = reason.lower()
    return any(m in low for m in FAILURE_MARKERS)


def count_failures(reasons: dict[str, str] | None, judged: tuple[str, ...]) -> int:
    """Judge failures among the ``judged`` parts of one result's reasons."""
    if not reasons or not judged:
        return 0
    return sum(judge_failed(reasons.get(name)) for name in judged)
