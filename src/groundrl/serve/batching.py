"""Micro-batching: requests for the same rubric are merged into batches of at most
``max_batch`` samples, waiting at most ``max_wait`` for company, and scored off the event
loop (a worker thread), so judge-backed parts see whole batches and rule rewards never
block request handling. ``pending`` counts queued samples for back-pressure."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


class Overloaded(Exception):
    pass


class MicroBatcher:
    def __init__(
        self,
        score: Callable[[list[Any]], list[Any]],
        max_batch: int = 64,
        max_wait: float = 0.005,
        max_pending: int = 4096,
    ) -> None:
        if max_batch < 1 or max_pending < 1:
            raise ValueError("max_batch and max_queue must be ≥ 1")
        self.score, self.max_batch, self.max_wait, self.max_pending = score, max_batch, max_wait, max_pending
        self.pending = 0
        self._queue: asyncio.Queue[tuple[list[Any], asyncio.Future]] | None = None
        self._task: asyncio.Task | None = None

    def _ensure(self) -> asyncio.Queue:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._task = asyncio.get_running_loop().create_task(self._run())
        return self._queue

    async def submit(self, items: list[Any]) -> list[Any]:
        if self.pending + len(items) > self.max_pending:
            raise Overloaded()
        queue = self._ensure()
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self.pending += len(items)
        await queue.put((items, fut))
        return await fut

    async def _run(self) -> None:
        assert self._queue is not None
        loop = asyncio.get_running_loop()
        while True:
            first = await self._queue.get()
            jobs = [first]
            size = len(first[0])
            deadline = loop.time() + self.max_wait
            while size < self.max_batch:
                timeout = deadline - loop.time()
                if timeout <= 0:
                    break
                try:
                    job = await asyncio.wait_for(self._queue.get(), timeout)
                except TimeoutError:
                    break
                jobs.append(job)
                size += len(job[0])
            flat = [x for items, _ in jobs for x in items]
            try:
                results = await asyncio.to_thread(self.score, flat)
            except Exception as e:  # a scoring bug fails these requests, not the server
                for _, fut in jobs:
                    if not fut.done():
                        fut.set_exception(e)
                self.pending -= size
                continue
            pos = 0
            for items, fut in jobs:
                if not fut.done():
                    fut.set_result(results[pos : pos + len(items)])
                pos += len(items)
            self.pending -= size

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
