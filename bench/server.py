"""Reward-server load test: the server runs in a second process on 127.0.0.1, this
process drives it with aiohttp; every phase sends a bounded number of requests.

1. Rule-only ``/score`` (``eqa_rm`` and ``reinforced_planning``, 16 samples per request):
   closed loop at concurrency 1 / 16 / 64 (throughput, p50/p99 latency), then open loop at
   a fixed 500 req/s (requests sent on schedule whatever the answers; latency measured from
   the scheduled send time, so a lagging server or client cannot hide its queueing).
   Target (issue 8): p99 < 50 ms at 500 req/s with 16 samples per request.
2. Micro-batching gain for a judge-backed recipe: ``proxy_grm`` whose rubric is one fake
   batched judge Part that sleeps a fixed 20 ms per call whatever the batch size (a stand-in
   for one padded forward pass / one burst of judge requests), 1 sample per request at
   concurrency 64: ``max_batch=64`` vs ``max_batch=1``, same judge, same load; ratio of
   throughputs. The server's mean batch size comes from its /metrics.

Run: ``.venv/bin/python bench/server.py [--json out.json]`` (about 45 s on 2 cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
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

    def judge(completions, samples):
        time.sleep(0.020)  # one fake judge call: 20 ms whatever the batch size
        return [0.5] * len(completions)

    max_batch, port = int(sys.argv[1]), int(sys.argv[2])
    judged = {"proxy_grm": Rubric([Part("judge", judge, batched=True)])}
    app = create_app(max_batch=max_batch, max_wait_ms=5, rubric_overrides=judged)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", access_log=False)
    """
)

EQA = [
    {
        "id": i,
        "completion": f"<critique>The reasoning cites the mug on the table.</critique><score>{i % 11}</score>",
        "gt_score": 7,
    }
    for i in range(16)
]
GOLD = ["find a Apple", "pick up the Apple", "find a Table", "put down the Apple"]
PLANNING = [
    {
        "id": i,
        "completion": json.dumps(
            {
                "reasoning_and_reflection": "The apple is on the counter; I need it on the table.",
                "visual_state_description": "A kitchen with a counter and a table.",
                "language_plan": "Find the apple, pick it up, find the table, put it down.",
                "executable_plan": [
                    {"action_id": k, "action_name": name} for k, name in enumerate(GOLD[: 1 + i % 4])
                ],
            }
        ),
        "gold": GOLD,
    }
    for i in range(16)
]


class Server:
    def __init__(self, max_batch: int) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        self.proc = subprocess.Popen([sys.executable, "-c", SERVER, str(max_batch), str(port)], env=env)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + "/health").status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("the server did not start")

    def metrics(self) -> str:
        return httpx.get(self.url + "/metrics").text

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100])."""
    s = sorted(values)
    return s[max(0, min(len(s) - 1, round(q / 100 * len(s) + 0.5) - 1))]


async def closed_loop(url: str, body: bytes, concurrency: int, n: int) -> dict:
    """``concurrency`` clients, each sending its next request when the last is answered."""
    import aiohttp  # httpx's async client tops out near 100 req/s on this machine

    lat: list[float] = []
    bad = 0
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as c:

        async def client(k: int) -> None:
            nonlocal bad
            for _ in range(k):
                t = time.perf_counter()
                async with c.post(url + "/score", data=body, headers=headers) as r:
                    await r.read()
                    bad += r.status != 200
                lat.append(time.perf_counter() - t)

        await asyncio.gather(*(client(2) for _ in range(concurrency)))  # open the connections
        lat.clear()
        t0 = time.perf_counter()
        per = [n // concurrency + (i < n % concurrency) for i in range(concurrency)]
        await asyncio.gather(*(client(k) for k in per))
        wall = time.perf_counter() - t0
    return {"rps": n / wall, "p50_ms": pct(lat, 50) * 1e3, "p99_ms": pct(lat, 99) * 1e3, "errors": bad}


async def open_loop(url: str, body: bytes, rate: float, n: int) -> dict:
    """Request i is sent at t0 + i/rate whatever happened before; latency from that time."""
    import aiohttp

    lat: list[float] = []
    bad = 0
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=256)) as c:
        for _ in range(32):  # warm-up
            async with c.post(url + "/score", data=body, headers=headers) as r:
                await r.read()

        async def one(at: float) -> None:
            nonlocal bad
            await asyncio.sleep(max(0.0, at - time.perf_counter()))
            async with c.post(url + "/score", data=body, headers=headers) as r:
                await r.read()
                bad += r.status != 200
            lat.append(time.perf_counter() - at)

        t0 = time.perf_counter() + 0.05
        await asyncio.gather(*(one(t0 + i / rate) for i in range(n)))
        wall = time.perf_counter() - t0
    return {"rps": n / wall, "p50_ms": pct(lat, 50) * 1e3, "p99_ms": pct(lat, 99) * 1e3, "errors": bad}


def mean_batch(metrics: str, batcher: str) -> float:
    def value(name: str) -> float:
        m = re.search(rf'^{name}{{batcher="{re.escape(batcher)}"}} (\S+)$', metrics, re.M)
        return float(m.group(1)) if m else 0.0

    calls = value("groundrl_batches_total")
    return value("groundrl_batch_samples_total") / calls if calls else 0.0


def row(label: str, r: dict) -> str:
    err = f"  ({r['errors']} non-200)" if r["errors"] else ""
    return f"  {label:<24} {r['rps']:7.0f} req/s   p50 {r['p50_ms']:6.1f} ms   p99 {r['p99_ms']:6.1f} ms{err}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=float, default=500.0, help="open-loop request rate (req/s)")
    ap.add_argument("--seconds", type=float, default=8.0, help="open-loop duration per recipe")
    ap.add_argument("--json", help="also write the numbers to this file")
    args = ap.parse_args()
    out: dict = {"cpus": os.cpu_count(), "rule_only": {}, "judge": {}}
    t_start = time.perf_counter()
    with Server(max_batch=64) as srv:
        for recipe, samples in (("eqa_rm", EQA), ("reinforced_planning", PLANNING)):
            body = json.dumps({"recipe": recipe, "samples": samples}).encode()
            print(f"rule-only /score, {recipe}, {len(samples)} samples per request ({len(body)} bytes):")
            res = out["rule_only"][recipe] = {}
            for conc, n in ((1, 300), (16, 1500), (64, 1500)):
                r = res[f"closed_c{conc}"] = asyncio.run(closed_loop(srv.url, body, conc, n))
                print(row(f"closed, concurrency {conc}", r))
            n = int(args.rate * args.seconds)
            r = res["open"] = asyncio.run(open_loop(srv.url, body, args.rate, n))
            r["target_met"] = r["p99_ms"] < 50 and r["errors"] == 0 and r["rps"] >= 0.95 * args.rate
            verdict = "met" if r["target_met"] else "NOT met"
            print(row(f"open, {args.rate:.0f} req/s x {n}", r) + f"   target p99 < 50 ms: {verdict}")
        judged = json.dumps(
            {"recipe": "proxy_grm", "samples": [{"completion": "x", "preferred": 1}]}
        ).encode()
        batched = asyncio.run(closed_loop(srv.url, judged, 64, 1500))
        batched["mean_batch"] = mean_batch(srv.metrics(), "score:proxy_grm")
    with Server(max_batch=1) as srv:
        single = asyncio.run(closed_loop(srv.url, judged, 64, 150))
        single["mean_batch"] = mean_batch(srv.metrics(), "score:proxy_grm")
    gain = batched["rps"] / single["rps"]
    out["judge"] = {"judge_ms_per_call": 20, "max_batch_64": batched, "max_batch_1": single, "gain": gain}
    print("judge-backed proxy_grm: fake batched judge, 20 ms per call whatever the batch size;")
    print("1 sample per request, closed loop at concurrency 64:")
    print(row("max_batch=1", single) + f"   mean batch {single['mean_batch']:.1f}")
    print(row("max_batch=64", batched) + f"   mean batch {batched['mean_batch']:.1f}")
    print(f"  micro-batching gain: {gain:.1f}x throughput")
    out["seconds"] = time.perf_counter() - t_start
    print(f"({out['seconds']:.0f} s, {out['cpus']} CPUs, server and load generator on the same machine)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
