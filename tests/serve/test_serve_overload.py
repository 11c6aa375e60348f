"""Overload: a slow judge and a burst give some 503 + Retry-After, every accepted sample
is scored exactly once and answered to its own request, and the queue stays bounded."""

import asyncio
import json

import httpx

from groundrl.serve.app import create_app


async def _burst(url, route, n, per_request):
    async with httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_connections=n)) as c:

        def body(i):
            ks = [i * per_request + j for j in range(per_request)]
            if route == "/score":
                return {"samples": [{"completion": "a", "gold": "a", "k": k} for k in ks]}
            return {"query": ["a"] * per_request, "labels": [json.dumps({"gold": "a", "k": k}) for k in ks]}

        return await asyncio.gather(*(c.post(url + route, json=body(i)) for i in range(n)))


def test_burst_on_a_slow_judge_gives_503s_without_losing_or_duplicating(tools):
    judge = tools.SlowJudge(0.05)  # 50 ms per judge call, whatever the batch size
    app = create_app(
        "toy", recipes={"toy": tools.toy_recipe(judge=judge)}, max_batch=8, max_wait_ms=1, max_queue=16
    )
    with tools.Running(app) as srv:
        scored = asyncio.run(_burst(srv.url, "/score", 40, 4))
        rewarded = asyncio.run(_burst(srv.url, "/get_reward", 40, 4))
        after = httpx.post(srv.url + "/score", json={"samples": [{"completion": "a", "gold": "a", "k": 1}]})
        metrics = httpx.get(srv.url + "/metrics").text
    n_ok = 0
    for rs, route in ((scored, "/score"), (rewarded, "/get_reward")):
        ok = [i for i, r in enumerate(rs) if r.status_code == 200]
        over = [r for r in rs if r.status_code == 503]
        assert len(ok) + len(over) == 40 and ok and over, route
        assert all(r.headers["retry-after"] == "1" and "overloaded" in r.json()["detail"] for r in over)
        for i in ok:  # each answer carries its own request's samples, in order
            want = [float(i * 4 + j) for j in range(4)]
            if route == "/score":
                assert [x["parts"]["judge"] for x in rs[i].json()["results"]] == want
            else:
                assert rs[i].json()["extra_logs"]["judge"] == want
        n_ok += len(ok)
    assert after.status_code == 200  # the server recovers once the burst is over
    # every accepted sample went through the judge exactly once (+1 for `after`), in batches ≤ 8
    assert sum(judge.calls) == 4 * n_ok + 1 and max(judge.calls) <= 8
    adm = app.state.admission
    assert adm.pending == 0 and 0 < adm.high_water <= 16  # memory bounded by max_queue samples
    for rs, route in ((scored, "/score"), (rewarded, "/get_reward")):
        n_over = sum(r.status_code == 503 for r in rs)
        assert f'groundrl_errors_total{{route="{route}",kind="overloaded"}} {n_over}' in metrics


def test_a_request_larger_than_the_queue_is_a_422_not_a_503_forever(tools):
    app = create_app("toy", recipes={"toy": tools.toy_recipe()}, max_queue=4)
    with tools.Running(app) as srv:
        r = httpx.post(srv.url + "/score", json={"samples": [{"completion": "a", "gold": "a"}] * 5})
    assert r.status_code == 422 and "at most 4" in r.json()["detail"]
