"""Reward server load test from a second process on loopback (bounded request counts).

1. rule-only ``/score`` (eqa_rm, 16 samples per request): throughput and p50/p99 latency
   at concurrency 1 / 16 / 64; target p99 < 50 ms at 500 req/s.
2. micro-batching gain for a judge-backed part: a fake batched judge costing a fixed
   20 ms per call whatever the batch size, ``max_batch=64`` vs ``max_batch=1``.

Run: ``.venv/bin/python bench/server.py`` (≈1 minute).
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import textwrap
import time

import httpx

SERVER = textwrap.dedent(
    """
    import sys, time, uvicorn
    from groundrl.rubric import Part, Rubric
    from groundrl.serve.app import create_app
    def judge(c, s):
        time.sleep(0.02)  # one judge call per batch, whatever its size
        return [0.5] * len(c)
    mode, port = sys.argv[1], int(sys.argv[2])
    over = {"proxy_grm": Rubric([Part("judge", judge, batched=True)])}
    app = create_app(max_batch=1 if mode == "single" else 64, max_wait_ms=5, rubric_overrides=over)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error")
    """
)


def start(mode: str) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, mode, str(port)], env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            httpx.get(url + "/health")
            return proc, url
        except httpx.TransportError:
            time.sleep(0.05)
    raise RuntimeError("server did not start")


async def load(
    url: str, recipe: str, samples: list[dict], concurrency: int, n: int
) -> tuple[float, list[float]]:
    import aiohttp  # the load generator: httpx's async client tops out near 100 req/s here

    lat: list[float] = []
    sem = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as c:

        async def one():
            async with sem:
                t = time.perf_counter()
                async with c.post(url + "/score", json={"recipe": recipe, "samples": samples}) as r:
                    await r.read()
                    assert r.status == 200
                lat.append(time.perf_counter() - t)

        await asyncio.gather(*(one() for _ in range(concurrency)))  # warm the connections
        lat.clear()
        t0 = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
        return n / (time.perf_counter() - t0), lat


def main() -> None:
    eqa = [
        {
            "completion": f"<critique>The reasoning cites the mug on the table.</critique><score>{i % 11}</score>",
            "gt_score": 7,
        }
        for i in range(16)
    ]
    proc, url = start("batched")
    try:
        print("rule-only /score (eqa_rm, 16 samples per request):")
        for conc in (1, 16, 64):
            rps, lat = asyncio.run(load(url, "eqa_rm", eqa, conc, 200 if conc == 1 else 600))
            lat.sort()
            print(
                f"  concurrency {conc:3d}: {rps:7.0f} req/s  p50 {statistics.median(lat) * 1000:6.1f} ms  p99 {lat[int(0.99 * len(lat)) - 1] * 1000:6.1f} ms"
            )
        judged = [{"completion": "<answer>1</answer>", "preferred": 1}]
        rps_b, _ = asyncio.run(load(url, "proxy_grm", judged, 64, 400))
    finally:
        proc.terminate()
        proc.wait()
    proc, url = start("single")
    try:
        rps_1, _ = asyncio.run(load(url, "proxy_grm", judged, 64, 100))
    finally:
        proc.terminate()
        proc.wait()
    print("judge-backed part (20 ms per judge call), 1 sample per request, concurrency 64:")
    print(f"  max_batch=1 : {rps_1:7.0f} req/s")
    print(f"  max_batch=64: {rps_b:7.0f} req/s   micro-batching gain {rps_b / rps_1:.1f}x")


if __name__ == "__main__":
    main()
