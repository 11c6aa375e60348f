"""MicroBatcher and Admission: batch cutting, waiting, back-pressure, failures, draining."""

import asyncio
import threading
import time

import pytest

from groundrl.serve.batching import Admission, MicroBatcher, Overloaded


class Recorder:
    """score(items) -> [10·x]; records each batch (and sleeps ``delay`` per call)."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.batches: list[list[int]] = []
        self.threads: set[str] = set()

    def __call__(self, items):
        self.threads.add(threading.current_thread().name)
        if self.delay:
            time.sleep(self.delay)
        self.batches.append(list(items))
        return [10 * x for x in items]


def test_requests_are_cut_into_batches_of_max_batch_in_order():
    rec = Recorder()

    async def main():
        b = MicroBatcher(rec, max_batch=4, max_wait=0.05)
        # three requests queued before the worker runs: 3 + 2 + 5 samples
        out = await asyncio.gather(b.submit([1, 2, 3]), b.submit([4, 5]), b.submit([6, 7, 8, 9, 10]))
        await b.close()
        return out, b

    out, b = asyncio.run(main())
    assert rec.batches == [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10]]  # a request may span batches
    assert out == [[10, 20, 30], [40, 50], [60, 70, 80, 90, 100]]
    assert (b.batches, b.scored, b.admission.pending) == (3, 10, 0)
    assert all(name.startswith("groundrl-") for name in rec.threads)  # off the event loop


def test_max_wait_waits_for_company_and_zero_means_no_wait():
    # a second request 0.05 s after the first: within a 0.2 s max_wait it shares the batch;
    # with max_wait=0 the first is scored alone. Both timers live on the one event loop, so
    # the order (0.05 s before 0.2 s) holds however loaded the machine is.
    async def two(wait):
        rec = Recorder()
        b = MicroBatcher(rec, max_batch=64, max_wait=wait)
        first = asyncio.ensure_future(b.submit([1]))
        await asyncio.sleep(0.05)
        second = await asyncio.wait_for(b.submit([2]), 30)
        out = [await asyncio.wait_for(first, 30), second]
        await b.close()
        return out, rec.batches

    assert asyncio.run(two(0.2)) == ([[10], [20]], [[1, 2]])
    assert asyncio.run(two(0.0)) == ([[10], [20]], [[1], [2]])


def test_max_wait_bounds_the_wait_of_a_lone_request():
    async def one():
        b = MicroBatcher(Recorder(), max_batch=64, max_wait=0.2)
        out = await asyncio.wait_for(b.submit([1]), 30)  # returns once max_wait has passed
        await b.close()
        return out

    assert asyncio.run(one()) == [10]


def test_a_full_batch_does_not_wait_for_max_wait():
    async def main():
        b = MicroBatcher(Recorder(), max_batch=2, max_wait=3600.0)
        # waiting for max_wait would take an hour; wait_for's 60 s only guards against a hang
        out = await asyncio.wait_for(asyncio.gather(b.submit([1]), b.submit([2])), 60)
        await b.close()
        return out

    assert asyncio.run(main()) == [[10], [20]]


def test_admission_refuses_past_the_limit_and_records_the_high_water_mark():
    async def main():
        adm = Admission(5)
        b = MicroBatcher(Recorder(delay=0.1), max_batch=8, max_wait=0.0, admission=adm)
        first = asyncio.ensure_future(b.submit([1, 2, 3]))
        await asyncio.sleep(0.02)  # the first batch is being scored: 3 held
        with pytest.raises(Overloaded):
            await b.submit([4, 5, 6])  # 3 + 3 > 5
        second = await b.submit([4, 5])  # 3 + 2 = 5 fits
        out = [await first, second]
        await b.close()
        return out, adm

    out, adm = asyncio.run(main())
    assert out == [[10, 20, 30], [40, 50]]
    assert (adm.pending, adm.high_water, adm.refused) == (0, 5, 1)


def test_a_failing_score_fails_its_requests_only():
    calls = []

    def score(items):
        calls.append(list(items))
        if 0 in items:
            raise ZeroDivisionError("boom")
        return items

    async def main():
        b = MicroBatcher(score, max_batch=8, max_wait=0.0)
        with pytest.raises(ZeroDivisionError, match="boom"):
            await b.submit([1, 0])
        ok = await b.submit([3])
        await b.close()
        return ok, b.admission.pending

    assert asyncio.run(main()) == ([3], 0)
    assert calls == [[1, 0], [3]]


def test_a_score_returning_the_wrong_count_is_an_error():
    async def main():
        b = MicroBatcher(lambda items: [1], max_batch=8, max_wait=0.0)
        with pytest.raises(RuntimeError, match="1 results for 2 items"):
            await b.submit(["a", "b"])
        await b.close()

    asyncio.run(main())


def test_close_finishes_accepted_work_then_refuses_new_work():
    rec = Recorder(delay=0.05)

    async def main():
        b = MicroBatcher(rec, max_batch=2, max_wait=0.0)
        pending = [asyncio.ensure_future(b.submit([i, i + 1])) for i in (1, 3, 5)]
        await asyncio.sleep(0)  # all three queued
        await b.close()
        assert all(f.done() for f in pending)
        with pytest.raises(Overloaded, match="shutting down"):
            await b.submit([7])
        return [f.result() for f in pending]

    assert asyncio.run(main()) == [[10, 20], [30, 40], [50, 60]]
    assert rec.batches == [[1, 2], [3, 4], [5, 6]]


class Overlap:
    """score(items) -> [10·x]; counts how many calls are inside at once. With ``meet`` the
    calls wait at a barrier for ``meet`` partners, which only side-by-side calls can pass."""

    def __init__(self, meet: int = 0) -> None:
        self.lock = threading.Lock()
        self.inside = self.most = 0
        self.barrier = threading.Barrier(meet, timeout=30) if meet else None

    def __call__(self, items):
        with self.lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
        if self.barrier is not None:
            self.barrier.wait()
        else:
            time.sleep(0.05)  # room for a second call to come in, were it allowed to
        with self.lock:
            self.inside -= 1
        return [10 * x for x in items]


def test_concurrency_scores_batches_side_by_side():
    async def run(score, concurrency):
        b = MicroBatcher(score, max_batch=1, max_wait=0.0, concurrency=concurrency)
        out = await asyncio.gather(b.submit([1]), b.submit([2]))
        await b.close()
        return out

    one = Overlap()
    assert asyncio.run(run(one, 1)) == [[10], [20]] and one.most == 1  # one after the other
    two = Overlap(meet=2)
    assert asyncio.run(run(two, 2)) == [[10], [20]] and two.most == 2  # side by side


def test_cancelled_request_releases_its_queued_items():
    rec = Recorder(delay=0.1)

    async def main():
        adm = Admission(10)
        b = MicroBatcher(rec, max_batch=2, max_wait=0.0, admission=adm)
        first = asyncio.ensure_future(b.submit([1, 2]))
        await asyncio.sleep(0.02)  # batch [1, 2] is running
        doomed = asyncio.ensure_future(b.submit([3, 4, 5, 6]))
        await asyncio.sleep(0)
        doomed.cancel()
        assert await first == [10, 20]
        await b.close()
        return adm.pending

    assert asyncio.run(main()) == 0
    assert rec.batches == [[1, 2]]  # the cancelled request's samples were never scored


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"max_batch": 0}, "max_batch"),
        ({"max_wait": -1}, "max_wait"),
        ({"max_wait": float("nan")}, "max_wait"),
        ({"concurrency": 0}, "concurrency"),
    ],
)
def test_bad_settings_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MicroBatcher(lambda x: x, **kwargs)
    with pytest.raises(ValueError, match="max_queue"):
        Admission(0)
