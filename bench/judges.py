"""Judge throughput, measured against baselines in the same run.

1. transformers backend on the tiny random Qwen2.5-VL: batched generation (batch 16)
   vs one request at a time, same model, same settings → ratio.
2. OpenAI-compatible backend against the local test server answering after a fixed
   50 ms: requests/second at concurrency 1 vs 64 → ratio (ideal: 64).

Run: ``.venv/bin/python bench/judges.py`` (≈1 minute, one torch thread).
"""

from __future__ import annotations

import os
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def bench_transformers(n: int = 32, max_tokens: int = 16) -> None:
    import torch
    from PIL import Image

    from groundrl.judges import SamplingParams
    from groundrl.judges.transformers_backend import TransformersBackend
    from groundrl.models.tiny_vlm import build_tiny_vlm

    torch.set_num_threads(1)
    path = build_tiny_vlm(tempfile.mkdtemp(prefix="tiny_vlm_"), seed=0)
    img = Image.new("RGB", (64, 64), (120, 30, 200))
    reqs = [
        [
            {
                "role": "user",
                "content": [
                    {"type": "image", "image": img},
                    {"type": "text", "text": f"describe object {i} near the fridge"},
                ],
            }
        ]
        for i in range(n)
    ]
    params = SamplingParams(max_tokens=max_tokens)
    batched = TransformersBackend(str(path), batch_size=16)
    single = TransformersBackend(str(path), batch_size=1)
    batched.generate(reqs[:2], params)  # warm-up
    t = time.perf_counter()
    single.generate(reqs, params)
    t_single = time.perf_counter() - t
    t = time.perf_counter()
    batched.generate(reqs, params)
    t_batched = time.perf_counter() - t
    print(f"transformers backend, tiny VLM, {n} requests × {max_tokens} new tokens (greedy):")
    print(f"  one at a time : {n / t_single:8.1f} requests/s")
    print(f"  batch size 16 : {n / t_batched:8.1f} requests/s   ratio {t_single / t_batched:.2f}x")


def bench_http(n: int = 512, delay: float = 0.05) -> None:
    import subprocess
    import sys

    from groundrl.testing.judge_backend import make_backend

    req = [{"role": "user", "content": "score this trajectory"}]
    # the server runs in a second process, as a real judge server would
    proc = subprocess.Popen(
        [sys.executable, "-m", "groundrl.testing.chat_server", "--delay", str(delay)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip()
        rates = {}
        for conc in (1, 64):
            be = make_backend("openai", "judge", url, concurrency=conc)
            be.generate([req] * conc)  # open the connections first
            count = n if conc > 1 else 40
            t = time.perf_counter()
            out = be.generate([req] * count)
            rates[conc] = count / (time.perf_counter() - t)
            assert all(g.ok for g in out)
            be.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"openai backend vs local server (second process) with {delay * 1000:.0f} ms latency:")
    print(f"  concurrency 1  : {rates[1]:8.1f} requests/s")
    print(f"  concurrency 64 : {rates[64]:8.1f} requests/s   ratio {rates[64] / rates[1]:.1f}x (bound 64)")


if __name__ == "__main__":
    bench_transformers()
    bench_http()
