"""Prometheus text exposition (format 0.0.4) without a client library.

Series (``route`` is one of the server's routes or ``other``, so a scan of random paths
cannot grow the label set):

* ``groundrl_requests_total{route,status}`` — counter;
* ``groundrl_request_duration_seconds{route}`` — histogram (cumulative ``le`` buckets,
  ``_sum``, ``_count``), time from the request's first byte in to its response sent;
* ``groundrl_errors_total{route,kind}`` — counter; ``kind`` is ``client`` (4xx but 499),
  ``disconnect`` (499: the client hung up mid-request; no response was sent),
  ``overloaded`` (503) or ``server`` (other 5xx);
* ``groundrl_slow_bodies_total`` — request bodies dropped (408) for arriving too slowly;
* ``groundrl_sample_errors_total{recipe}`` — samples answered with an ``error`` entry;
* ``groundrl_judge_calls_total{recipe,result}`` — judge-backed part scores, one per
  judge part per sample, ``result`` ``ok`` or ``failed`` (the judge failed or answered
  garbage: :func:`groundrl.serve.judge_health.judge_failed`);
* ``groundrl_judge_batch_seconds{recipe}`` — histogram: time to score a batch of a
  judge-backed recipe (judge latency plus the rule parts);
* ``groundrl_queue_depth`` / ``groundrl_queue_limit`` / ``groundrl_queue_high_water`` —
  gauges: samples accepted and not yet answered, the bound, and the most ever held;
* ``groundrl_batches_total{batcher}`` and ``groundrl_batch_samples_total{batcher}`` —
  scoring calls and the samples they held (their ratio is the mean batch size).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# [ours] judge scores older than this leave /health's recent window (issue 42: after an
# outage the window held its failures until 200 good scores had come, so a quiet server
# stayed "degraded" long after its judge was back)
RECENT_S = 60.0


def error_kind(status: int) -> str | None:
    if status == 499:  # the client hung up before its answer: not the server's error
        return "disconnect"
    if status == 503:
        return "overloaded"
    if status >= 500:
        return "server"
    if status >= 400:
        return "client"
    return None


def _num(x: float) -> str:
    return repr(float(x)) if isinstance(x, float) else str(x)


class Metrics:
    """Request counters and latency histograms; safe to update from several threads."""

    def __init__(self, routes: Iterable[str], buckets: tuple[float, ...] = BUCKETS) -> None:
        self.routes = frozenset(routes)
        self.buckets = tuple(sorted(buckets))
        self._lock = threading.Lock()
        self.requests: dict[tuple[str, int], int] = defaultdict(int)
        self.errors: dict[tuple[str, str], int] = defaultdict(int)
        self.sample_errors: dict[str, int] = defaultdict(int)
        self.slow_bodies = 0
        self.judge: dict[tuple[str, str], int] = defaultdict(int)
        self._jhist: dict[str, list[int]] = {}
        self._jsum: dict[str, float] = defaultdict(float)
        self._recent: deque[tuple[float, int, int]] = deque()  # (when, judge scores, failures) per batch
        self._recent_n = [0, 0]
        # per route: a count per bucket (not cumulative; rendered cumulative) + overflow
        self._hist: dict[str, list[int]] = {}
        self._sum: dict[str, float] = defaultdict(float)

    def route(self, path: str) -> str:
        return path if path in self.routes else "other"

    def observe(self, path: str, status: int, seconds: float) -> None:
        route = self.route(path)
        with self._lock:
            self.requests[(route, status)] += 1
            kind = error_kind(status)
            if kind:
                self.errors[(route, kind)] += 1
            hist = self._hist.setdefault(route, [0] * (len(self.buckets) + 1))
            i = next((k for k, le in enumerate(self.buckets) if seconds <= le), len(self.buckets))
            hist[i] += 1
            self._sum[route] += seconds

    def add_judge(
        self, recipe: str, ok: int, failed: int, seconds: float, window: int = 200, now: float | None = None
    ) -> None:
        """One scored batch of a judge-backed recipe: its judge part scores and time."""
        with self._lock:
            self.judge[(recipe, "ok")] += ok
            self.judge[(recipe, "failed")] += failed
            hist = self._jhist.setdefault(recipe, [0] * (len(self.buckets) + 1))
            hist[next((k for k, le in enumerate(self.buckets) if seconds <= le), len(self.buckets))] += 1
            self._jsum[recipe] += seconds
            if ok + failed:
                self._recent.append((time.monotonic() if now is None else now, ok + failed, failed))
                self._recent_n[0] += ok + failed
                self._recent_n[1] += failed
            self._forget(window, now)

    def _forget(self, window: int = 200, now: float | None = None) -> None:
        """Drop batches past the count ``window`` or older than :data:`RECENT_S`."""
        cutoff = (time.monotonic() if now is None else now) - RECENT_S
        while self._recent and (
            self._recent[0][0] < cutoff
            or (len(self._recent) > 1 and self._recent_n[0] - self._recent[0][1] >= window)
        ):
            _t, n, f = self._recent.popleft()
            self._recent_n[0] -= n
            self._recent_n[1] -= f

    def judge_failure_rate(self, now: float | None = None) -> tuple[float, int] | None:
        """(failed share, judge part scores) over the recent window (the last 200 judge
        scores of the last :data:`RECENT_S` seconds); None when there are none."""
        with self._lock:
            self._forget(now=now)
            n, f = self._recent_n
        return (f / n, n) if n else None

    def add_slow_body(self) -> None:
        with self._lock:
            self.slow_bodies += 1

    def add_sample_errors(self, recipe: str, n: int) -> None:
        if n:
            with self._lock:
                self.sample_errors[recipe] += n

    def render(
        self,
        queue_depth: int = 0,
        queue_limit: int = 0,
        high_water: int = 0,
        batches: dict[str, tuple[int, int]] | None = None,
    ) -> str:
        """The exposition text; ``batches`` maps a batcher name to (calls, samples)."""
        with self._lock:
            out = self._render_locked()
        out += [
            *_gauge("groundrl_queue_depth", "Samples accepted and not yet answered.", queue_depth),
            *_gauge("groundrl_queue_limit", "Samples the queue holds before answering 503.", queue_limit),
            *_gauge("groundrl_queue_high_water", "The most samples held at once since start.", high_water),
        ]
        batches = batches or {}
        calls = {(name,): c for name, (c, _) in batches.items()}
        samples = {(name,): s for name, (_, s) in batches.items()}
        out += _counter("groundrl_batches_total", "Scoring calls (one per micro-batch).", ("batcher",), calls)
        out += _counter(
            "groundrl_batch_samples_total", "Samples scored in micro-batches.", ("batcher",), samples
        )
        return "\n".join(out) + "\n"

    def _render_locked(self) -> list[str]:
        """The series kept under the lock (requests, latency, errors, judge, bodies)."""
        b = self.buckets
        return [
            *_counter(
                "groundrl_requests_total",
                "HTTP requests by route and status.",
                ("route", "status"),
                self.requests,
            ),
            *_histogram(
                "groundrl_request_duration_seconds", "Request latency.", "route", b, self._hist, self._sum
            ),
            *_counter(
                "groundrl_errors_total",
                "Error responses by route and kind (client, overloaded, server).",
                ("route", "kind"),
                self.errors,
            ),
            *_counter(
                "groundrl_sample_errors_total",
                "Samples answered with an error entry.",
                ("recipe",),
                {(r,): n for r, n in self.sample_errors.items()},
            ),
            *_counter(
                "groundrl_judge_calls_total",
                "Judge-backed part scores by recipe and result (ok, failed).",
                ("recipe", "result"),
                self.judge,
            ),
            *_histogram(
                "groundrl_judge_batch_seconds",
                "Time to score a batch of a judge-backed recipe.",
                "recipe",
                b,
                self._jhist,
                self._jsum,
            ),
            *_gauge(
                "groundrl_slow_bodies_total",
                "Request bodies dropped for arriving too slowly.",
                self.slow_bodies,
                kind="counter",
            ),
        ]


def _labels(names: tuple[str, ...], values: tuple[object, ...]) -> str:
    return ",".join(f'{k}="{v}"' for k, v in zip(names, values, strict=True))


def _counter(name: str, doc: str, labels: tuple[str, ...], values: Mapping[tuple, int]) -> list[str]:
    """A counter family: HELP, TYPE and one line per label tuple, sorted."""
    out = [f"# HELP {name} {doc}", f"# TYPE {name} counter"]
    out += [f"{name}{{{_labels(labels, key)}}} {n}" for key, n in sorted(values.items())]
    return out


def _gauge(name: str, doc: str, value: int, kind: str = "gauge") -> list[str]:
    """A single unlabelled series (a gauge, or a counter with ``kind``)."""
    return [f"# HELP {name} {doc}", f"# TYPE {name} {kind}", f"{name} {value}"]


def _histogram(
    name: str,
    doc: str,
    label: str,
    buckets: tuple[float, ...],
    hists: Mapping[str, list[int]],
    sums: Mapping[str, float],
) -> list[str]:
    """A histogram family: cumulative ``le`` buckets, ``+Inf``, ``_sum`` and ``_count``
    per label value (``hists`` hold a count per bucket plus the overflow)."""
    out = [f"# HELP {name} {doc}", f"# TYPE {name} histogram"]
    for value, hist in sorted(hists.items()):
        cum = 0
        for le, n in zip(buckets, hist, strict=False):
            cum += n
            out.append(f'{name}_bucket{{{label}="{value}",le="{le}"}} {cum}')
        total = cum + hist[-1]
        out.append(f'{name}_bucket{{{label}="{value}",le="+Inf"}} {total}')
        out.append(f'{name}_sum{{{label}="{value}"}} {_num(sums[value])}')
        out.append(f'{name}_count{{{label}="{value}"}} {total}')
    return out
