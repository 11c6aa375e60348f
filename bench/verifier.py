"""Agentic verifier throughput: judge calls batched across samples vs one sample at a time.

Free-form answers that miss exact match go to the semantic judge; the judge is the local
OpenAI-compatible test server answering after a fixed 50 ms. Batched: ``verify`` over all
samples at once (one burst of concurrent judge requests); single: ``verify`` per sample.
Run: ``.venv/bin/python bench/verifier.py``.
"""

from __future__ import annotations

import time

from groundrl.testing.chat_server import ChatServer
from groundrl.testing.judge_backend import make_backend
from groundrl.verify import AgenticVerifier


def main(n: int = 64) -> None:
    samples = [{"question": "Where is the mug?", "answer": "kitchen"} for _ in range(n)]
    texts = [f"I saw it near the stove {i}. <answer>the cooking room</answer>" for i in range(n)]
    with ChatServer(responder=lambda m, b: "yes", delay=0.05) as srv:
        backend = make_backend("openai", "judge", srv.base_url, concurrency=64)
        v = AgenticVerifier(backend)
        v.verify(texts[:2], samples[:2])  # warm-up
        t = time.perf_counter()
        batched = v.verify(texts, samples)
        tb = time.perf_counter() - t
        t = time.perf_counter()
        single = [v.verify([x], [s])[0] for x, s in zip(texts, samples, strict=True)]
        ts = time.perf_counter() - t
        backend.close()
    assert [r.total for r in batched] == [r.total for r in single]
    print(f"agentic verifier, {n} samples, semantic judge at 50 ms per call:")
    print(f"  one sample at a time: {n / ts:7.1f} samples/s")
    print(f"  batched             : {n / tb:7.1f} samples/s   ratio {ts / tb:.1f}x")


if __name__ == "__main__":
    main()
