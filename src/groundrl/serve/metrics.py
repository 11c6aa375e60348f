"""Prometheus text metrics without a client library: request counters, a latency
histogram, error count and queue depth."""

from __future__ import annotations

import threading
from collections import defaultdict

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: dict[tuple[str, int], int] = defaultdict(int)
        self.buckets: dict[str, list[int]] = defaultdict(lambda: [0] * (len(BUCKETS) + 1))
        self.sums: dict[str, float] = defaultdict(float)
        self.errors = 0
        self.queue_depth = 0
        self.samples = 0

    def observe(self, route: str, status: int, seconds: float) -> None:
        with self._lock:
            self.requests[(route, status)] += 1
            b = self.buckets[route]
            for i, le in enumerate(BUCKETS):
                if seconds <= le:
                    b[i] += 1
            b[-1] += 1
            self.sums[route] += seconds
            if status >= 500:
                self.errors += 1

    def render(self) -> str:
        with self._lock:
            lines = [
                "# HELP groundrl_requests_total Requests by route and status.",
                "# TYPE groundrl_requests_total counter",
            ]
            for (route, status), n in sorted(self.requests.items()):
                lines.append(f'groundrl_requests_total{{route="{route}",status="{status}"}} {n}')
            lines += [
                "# HELP groundrl_request_seconds Request latency.",
                "# TYPE groundrl_request_seconds histogram",
            ]
            for route, b in sorted(self.buckets.items()):
                for le, n in zip(BUCKETS, b, strict=False):
                    lines.append(f'groundrl_request_seconds_bucket{{route="{route}",le="{le}"}} {n}')
                lines.append(f'groundrl_request_seconds_bucket{{route="{route}",le="+Inf"}} {b[-1]}')
                lines.append(f'groundrl_request_seconds_sum{{route="{route}"}} {self.sums[route]:.6f}')
                lines.append(f'groundrl_request_seconds_count{{route="{route}"}} {b[-1]}')
            lines += [
                "# TYPE groundrl_errors_total counter",
                f"groundrl_errors_total {self.errors}",
                "# TYPE groundrl_queue_depth gauge",
                f"groundrl_queue_depth {self.queue_depth}",
                "# TYPE groundrl_samples_scored_total counter",
                f"groundrl_samples_scored_total {self.samples}",
            ]
        return "\n".join(lines) + "\n"
