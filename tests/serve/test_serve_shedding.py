"""Issue 16 S3: load is shed before a body is read — when the sample queue is full, or
when the bodies held in memory would pass max_buffered_bytes — so a burst of large
requests cannot grow memory past that bound; the held requests are still answered."""

import asyncio
import threading

import httpx
import pytest

from groundrl.serve.app import create_app


class GateJudge:
    """A batched judge part that holds its batch until the test opens the gate, so the
    first request is certainly in the server while the second arrives."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.gate = threading.Event()

    def __call__(self, completions, samples):
        self.entered.set()
        self.gate.wait(60)
        return [1.0 for _ in completions]


async def _second_while_first_held(url, judge, first, second):
    async with httpx.AsyncClient(timeout=60) as c:
        t1 = asyncio.create_task(c.post(url + "/score", json=first))
        assert await asyncio.to_thread(judge.entered.wait, 60)  # the first is being scored
        try:
            r2 = await c.post(url + "/score", json=second)
        finally:
            judge.gate.set()
        return await t1, r2


def _samples(n, pad=0):
    return {"samples": [{"completion": "a", "gold": "a", "pad": "x" * pad} for _ in range(n)]}


def test_full_queue_sheds_before_reading(tools):
    judge = GateJudge()
    app = create_app("toy", recipes={"toy": tools.toy_recipe(judge=judge)}, max_queue=2)
    with tools.Running(app) as srv:
        r1, r2 = asyncio.run(_second_while_first_held(srv.url, judge, _samples(2), _samples(1)))
    assert r1.status_code == 200 and len(r1.json()["results"]) == 2
    assert r2.status_code == 503 and r2.headers["retry-after"] == "1"
    assert "sample queue full" in r2.json()["detail"]


def test_bodies_held_in_memory_are_bounded(tools):
    judge = GateJudge()
    app = create_app(
        "toy", recipes={"toy": tools.toy_recipe(judge=judge)}, max_body_bytes=4000, max_buffered_bytes=6000
    )
    big = _samples(1, pad=3000)  # ~3.1 kB: a second one fits only once the first has left
    with tools.Running(app) as srv:
        r1, r2 = asyncio.run(_second_while_first_held(srv.url, judge, big, _samples(1, pad=3500)))
        r3 = httpx.post(srv.url + "/score", json=big, timeout=60)
    assert r1.status_code == 200
    assert r2.status_code == 503 and "request bodies in memory" in r2.json()["detail"]
    assert r3.status_code == 200


def test_buffer_bound_below_body_limit_is_a_configuration_error():
    with pytest.raises(ValueError, match="max_buffered_bytes"):
        create_app("eqa_rm", max_body_bytes=1000, max_buffered_bytes=999)


def test_refusals_are_held_before_the_503(tools, monkeypatch):
    """Issue 16 S6: a refused request waits min(0.25 s, Retry-After) before its 503, so
    clients that ignore Retry-After cannot spin the event loop on refusals (no timing is
    asserted: the delay the server asks for is recorded)."""
    import groundrl.serve.app as app_mod

    assert app_mod.shed_delay(1) == 0.25 and app_mod.shed_delay(0) == 0.0
    asked = []
    real_sleep = asyncio.sleep

    async def recording_sleep(seconds, *a, **k):
        asked.append(seconds)
        return await real_sleep(0)

    judge = GateJudge()
    app = create_app("toy", recipes={"toy": tools.toy_recipe(judge=judge)}, max_queue=2)
    with tools.Running(app) as srv:
        monkeypatch.setattr(app_mod.asyncio, "sleep", recording_sleep)
        r1, r2 = asyncio.run(_second_while_first_held(srv.url, judge, _samples(2), _samples(1)))
    assert r2.status_code == 503 and 0.25 in asked
