"""The reward server's limits and batching: one :class:`Limits` field per setting.

Each field is defined once here, with its default and its help: :func:`~groundrl.serve.app.create_app`
takes them as keywords, :mod:`groundrl.serve.factory`'s configuration keys and the
``groundrl serve`` flags (:mod:`groundrl.cli.dataclass_options`) are generated from the
fields. A field with ``help`` metadata is a flag; ``flag``/``scale``/``cli_default``/
``zero_is_none``/``min`` say how the command line spells it. No FastAPI here, so the CLI
can read it at ``groundrl --help``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_SAMPLES = 4096
MAX_BODY_ELEMENTS = 500_000  # [ours: ~50 MB of Python objects per body at ~100 B each]
MiB = 1024 * 1024
# [ours: like the header timeout] a body may be idle this long, and must average
# MIN_BODY_RATE bytes/s once this grace has passed (16 MiB then takes at most ~4.5 min)
BODY_TIMEOUT_S = 10.0
MIN_BODY_RATE = 64 * 1024
PART_TIMEOUT_CLI_S = 600.0  # [ours] the CLI's deadline for a hung judge; Python callers opt in


def _check_int(name: str, value: Any, low: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an int ≥ {low}, got {value!r}")
    return value


def _check_number(name: str, value: Any, low: float, what: str, *, open_low: bool = False) -> None:
    ok = (
        isinstance(value, (int, float))
        and (value > low if open_low else value >= low)
        and value < float("inf")
    )
    if not ok:
        raise ValueError(f"{name} must be {what}, got {value!r}")


def _flag(default: Any, help: str, **cli: Any) -> Any:  # noqa: A002
    return field(default=default, metadata={"help": help, **cli})


@dataclass(frozen=True)
class Limits:
    """The server's limits and batching, checked when made (``ValueError`` naming the
    setting). :func:`create_app` takes each as a keyword.

    ``max_batch`` samples per scoring call; ``max_wait_ms`` the longest a judge-backed
    batch waits to fill (rule-only rubrics never wait). ``max_queue``: samples accepted and
    not yet answered, across all recipes, before 503. ``max_body_bytes``: request body
    limit (413). ``max_samples``: samples (or queries) per request (422 above), capped at
    ``max_queue`` so every valid request can be admitted. ``batch_concurrency``: batches
    scored at once per recipe and route (raise it for a judge server that batches
    requests itself). ``retry_after_s``: the ``Retry-After`` of a 503.
    ``max_buffered_bytes``: request bodies held in memory at once before new ones get a
    503 without being read (default 4 × ``max_body_bytes``); large bodies may hold 7/8 of
    it, so bodies of at most 1/64 of it are served while large ones stall.
    ``body_timeout_s``: a body idle this long is dropped with a 408 and its bytes released;
    ``min_body_rate``: bytes/s a body must average once ``body_timeout_s`` has passed
    (0: no rate floor). ``max_body_elements``: JSON values (containers and scalars) a
    body may hold (413 above), so memory is bounded by parsed size, not only by bytes;
    nesting is bounded by Python's recursion limit (400). ``part_timeout_s``: seconds a
    reward part's call may take (``Rubric.part_timeout`` of every rubric the server uses
    that has none); past it the part scores its fallback with reason ``timeout`` (counted
    as a judge failure for a judge-backed part) and the batch is answered.
    """

    max_batch: int = _flag(64, "Samples per scoring call (micro-batch).", min=1)
    max_wait_ms: float = _flag(
        5.0, "Longest a judge-backed batch waits to fill (rule-only: no wait).", min=0.0
    )
    max_queue: int = _flag(4096, "Samples held (queued or scoring) before 503 + Retry-After.", min=1)
    max_body_bytes: int = _flag(
        16 * MiB, "Request body limit in MiB (413 above).", flag="--max-body-mb", scale=MiB, min=0.001
    )
    max_samples: int = _flag(MAX_SAMPLES, "Samples (queries) per request (422 above).", min=1)
    batch_concurrency: int = _flag(1, "Batches scored at once per recipe (raise for a judge server).", min=1)
    retry_after_s: int = 1
    max_buffered_bytes: int | None = None
    body_timeout_s: float = _flag(
        BODY_TIMEOUT_S,
        "Seconds a request body may go without a byte before it is dropped (408).",
        flag="--body-timeout",
        min=0.1,
    )
    min_body_rate: float = _flag(
        MIN_BODY_RATE,
        "KiB/s a request body must average after --body-timeout seconds (0: no floor).",
        flag="--min-body-rate-kb",
        scale=1024,
        min=0.0,
    )
    max_body_elements: int = MAX_BODY_ELEMENTS
    part_timeout_s: float | None = _flag(
        None,
        "Seconds a reward part's call may take (a hung judge or third-party part); past it the part "
        "scores its fallback with reason `timeout` and the batch is answered. 0: no deadline.",
        flag="--part-timeout",
        cli_default=PART_TIMEOUT_CLI_S,
        zero_is_none=True,
        min=0.0,
    )

    def __post_init__(self) -> None:
        for name in ("max_batch", "max_queue", "max_body_bytes", "max_samples", "batch_concurrency"):
            _check_int(name, getattr(self, name))
        _check_int("retry_after_s", self.retry_after_s, low=0)
        _check_number("max_wait_ms", self.max_wait_ms, 0, "a finite number ≥ 0")
        mb, mbb = self.max_body_bytes, self.max_buffered_bytes
        if mbb is not None and (not isinstance(mbb, int) or mbb < mb):
            raise ValueError(f"max_buffered_bytes must be an int ≥ max_body_bytes ({mb}), got {mbb!r}")
        _check_number(
            "body_timeout_s", self.body_timeout_s, 0, "a finite number of seconds > 0", open_low=True
        )
        _check_int("max_body_elements", self.max_body_elements)
        if self.part_timeout_s is not None:
            what = "a number of seconds > 0 or None"
            _check_number("part_timeout_s", self.part_timeout_s, 0, what, open_low=True)
        _check_number("min_body_rate", self.min_body_rate, 0, "a finite number of bytes/s ≥ 0")
        # every valid request must be admissible
        object.__setattr__(self, "max_samples", min(self.max_samples, self.max_queue))


LIMIT_KEYS = tuple(Limits.__dataclass_fields__)  # the configuration keys the limits take
