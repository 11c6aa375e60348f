"""Micro-batching with back-pressure for the reward server.

A :class:`MicroBatcher` turns many small requests into few scoring calls: requests for
the same rubric are queued sample by sample, cut into batches of at most ``max_batch``
samples (a large request spans several batches; several small ones share one) and each
batch is scored by one call of ``score(items) -> results`` in a worker thread, off the
event loop. Judge-backed parts thus see whole batches (one padded forward pass, one burst
of HTTP requests), and CPU-bound rule rewards never block request handling.

When to cut a batch: as soon as ``max_batch`` samples are queued, or when the oldest
queued sample has waited ``max_wait`` seconds, whichever is first. With ``max_wait=0``
(our choice for rule-only rubrics) nothing waits for company, but samples that arrive
while a batch is being scored still go out together in the next one. At most
``concurrency`` batches are scored at once (one thread each).

Back-pressure: an :class:`Admission` counts the samples accepted but not yet answered
(queued or being scored) across every batcher of a server; a request that would take it
past ``limit`` is refused at once with :class:`Overloaded` (the server's 503 +
``Retry-After``), so memory is bounded by ``limit`` samples plus one request being read.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


def _in_daemon_thread(fn: Callable[[Any], Any], arg: Any, name: str) -> asyncio.Future:
    """``fn(arg)`` in a new daemon thread, as a future of the running loop. Daemon, not a
    ``ThreadPoolExecutor`` worker: the interpreter joins those at exit, so one part that
    never returns would keep a stopped server alive forever (issue 26)."""
    loop = asyncio.get_running_loop()
    fut = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not fut.done():
            (fut.set_result if ok else fut.set_exception)(value)

    def target() -> None:
        try:
            out = fn(arg)
        except BaseException as e:  # noqa: BLE001 - handed to the awaiting task
            ok, out = False, e
        else:
            ok = True
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits any more
            loop.call_soon_threadsafe(settle, ok, out)

    threading.Thread(target=target, name=name, daemon=True).start()
    return fut


class Overloaded(Exception):
    """The queue is full (or the batcher is shutting down): retry later."""


class Admission:
    """Bound on samples accepted and not yet answered. Used from one event loop only."""

    def __init__(self, limit: int) -> None:
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ValueError(f"max_queue must be an int ≥ 1, got {limit!r}")
        self.limit = limit
        self.pending = 0
        self.high_water = 0  # the most samples ever held at once (≤ limit)
        self.refused = 0  # requests turned away

    def acquire(self, n: int) -> bool:
        if self.pending + n > self.limit:
            self.refused += 1
            return False
        self.pending += n
        self.high_water = max(self.high_water, self.pending)
        return True

    def release(self, n: int) -> None:
        self.pending -= n


@dataclass(eq=False)
class _Job:
    items: Sequence[Any]
    future: asyncio.Future
    enqueued: float
    results: list[Any] = field(default_factory=list)
    taken: int = 0  # items handed to batches so far
    done: int = 0  # items whose results are in

    def __post_init__(self) -> None:
        self.results = [None] * len(self.items)


class MicroBatcher:
    """Queue requests' items, score them in batches in a worker thread; see the module doc."""

    def __init__(
        self,
        score: Callable[[list[Any]], Sequence[Any]],
        max_batch: int = 64,
        max_wait: float = 0.005,
        admission: Admission | None = None,
        concurrency: int = 1,
        name: str = "batcher",
    ) -> None:
        if not isinstance(max_batch, int) or isinstance(max_batch, bool) or max_batch < 1:
            raise ValueError(f"max_batch must be an int ≥ 1, got {max_batch!r}")
        if not (isinstance(max_wait, (int, float)) and 0 <= max_wait < float("inf")):
            raise ValueError(f"max_wait must be a finite number of seconds ≥ 0, got {max_wait!r}")
        if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
            raise ValueError(f"concurrency must be an int ≥ 1, got {concurrency!r}")
        self.score = score
        self.max_batch = max_batch
        self.max_wait = float(max_wait)
        self.admission = admission if admission is not None else Admission(1 << 30)
        self.concurrency = concurrency
        self.name = name
        self.batches = 0  # scoring calls made
        self.scored = 0  # items scored
        self._jobs: collections.deque[_Job] = collections.deque()
        self._queued = 0  # items waiting, not yet in a batch
        self._closing = False
        self._wake: asyncio.Event | None = None
        self._worker: asyncio.Task | None = None
        self._running: set[asyncio.Task] = set()
        self._in_flight: set[tuple] = set()  # (job, start, end) of batches being scored

    @property
    def queued(self) -> int:
        return self._queued

    @property
    def running(self) -> int:
        """Batches being scored now."""
        return len(self._running)

    async def submit(self, items: Sequence[Any]) -> list[Any]:
        """Score ``items``; the results come back in order, one per item. Raises
        :class:`Overloaded` when the queue cannot take them."""
        if self._closing:
            raise Overloaded("shutting down")
        if not items:
            return []
        if not self.admission.acquire(len(items)):
            raise Overloaded("queue full")
        loop = asyncio.get_running_loop()
        if self._worker is None:
            self._wake = asyncio.Event()
            self._worker = loop.create_task(self._run())
        job = _Job(items, loop.create_future(), loop.time())
        self._jobs.append(job)
        self._queued += len(items)
        self._wake.set()  # type: ignore[union-attr]
        return await job.future

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        wake = self._wake
        assert wake is not None
        slots = asyncio.Semaphore(self.concurrency)
        while True:
            while not self._jobs:
                if self._closing:
                    return
                wake.clear()
                await wake.wait()
            if self.max_wait > 0:
                deadline = self._jobs[0].enqueued + self.max_wait
                while self._jobs and self._queued < self.max_batch and not self._closing:
                    timeout = deadline - loop.time()
                    if timeout <= 0:
                        break
                    wake.clear()
                    try:
                        await asyncio.wait_for(wake.wait(), timeout)
                    except TimeoutError:
                        break
            await slots.acquire()  # while a batch runs, the next one keeps filling up
            batch = self._take()
            if not batch:
                slots.release()
                continue
            task = loop.create_task(self._score(batch, slots))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    def _take(self) -> list[tuple[_Job, int, int]]:
        """Up to ``max_batch`` items from the head of the queue, as (job, start, end)."""
        batch: list[tuple[_Job, int, int]] = []
        size = 0
        while self._jobs and size < self.max_batch:
            job = self._jobs[0]
            if job.future.done():  # its request is gone (failed or cancelled): drop the rest
                rest = len(job.items) - job.taken
                self._queued -= rest
                self.admission.release(rest)
                self._jobs.popleft()
                continue
            k = min(len(job.items) - job.taken, self.max_batch - size)
            batch.append((job, job.taken, job.taken + k))
            job.taken += k
            size += k
            self._queued -= k
            if job.taken == len(job.items):
                self._jobs.popleft()
        return batch

    async def _score(self, batch: list[tuple[_Job, int, int]], slots: asyncio.Semaphore) -> None:
        flat = [x for job, a, b in batch for x in job.items[a:b]]
        self._in_flight.update(batch)
        try:
            results = list(await _in_daemon_thread(self.score, flat, f"groundrl-{self.name}"))
            if len(results) != len(flat):
                raise RuntimeError(f"scoring returned {len(results)} results for {len(flat)} items")
        except asyncio.CancelledError:
            self._fail(batch, Overloaded("shutting down"))
            raise
        except Exception as e:  # a scoring bug fails these requests, not the server
            self._fail(batch, e)
        else:
            pos = 0
            for job, a, b in batch:
                job.results[a:b] = results[pos : pos + b - a]
                pos += b - a
                job.done += b - a
                if job.done == len(job.items) and not job.future.done():
                    job.future.set_result(job.results)
        finally:
            self._in_flight.difference_update(batch)
            self.batches += 1
            self.scored += len(flat)
            self.admission.release(len(flat))
            slots.release()

    @staticmethod
    def _fail(batch: list[tuple[_Job, int, int]], error: BaseException) -> None:
        for job, _, _ in batch:
            if not job.future.done():
                job.future.set_exception(error)

    async def close(self) -> None:
        """Refuse new work, finish what was accepted, stop the worker."""
        self._closing = True
        if self._worker is None:
            return
        self._wake.set()  # type: ignore[union-attr]
        await self._worker
        if self._running:
            await asyncio.gather(*self._running, return_exceptions=True)

    def abort(self) -> int:
        """Shutdown past its deadline: answer every queued and running request with
        :class:`Overloaded` ("shutting down"), stop waiting for the batches being scored
        (their daemon threads finish or are dropped at exit). Returns the requests failed."""
        self._closing = True
        jobs = {id(j): j for j in self._jobs}
        jobs.update({id(j): j for j, _, _ in self._in_flight})
        failed = 0
        for job in jobs.values():
            if not job.future.done():
                job.future.set_exception(Overloaded("shutting down"))
                failed += 1
        self.admission.release(self._queued)
        self._queued = 0
        self._jobs.clear()
        for task in [*self._running, *([self._worker] if self._worker else [])]:
            task.cancel()
        return failed
