"""The transformers judge path on a CUDA GPU: builds the tiny Qwen2.5-VL, loads it the way a
real checkpoint is loaded (``make_backend("transformers", path)``), moves it to the GPU
(fp32 and bf16), and checks batched generation with images and padding-invariant
log-probabilities there; prints timings. Run: ``python bench/cuda_judges.py`` on a GPU box."""

from __future__ import annotations

import tempfile
import time


def main() -> None:
    import torch
    from PIL import Image

    from groundrl.judges import SamplingParams
    from groundrl.models.tiny_vlm import build_tiny_vlm
    from groundrl.testing.judge_backend import make_backend

    assert torch.cuda.is_available(), "no CUDA device"
    path = build_tiny_vlm(tempfile.mkdtemp(), seed=0)
    img = Image.new("RGB", (64, 64), (200, 30, 30))
    reqs = [
        [
            {
                "role": "user",
                "content": [
                    {"type": "image", "image": img},
                    {"type": "text", "text": f"what is object {i} near the fridge"},
                ],
            }
        ]
        for i in range(16)
    ]
    for dtype in (torch.float32, torch.bfloat16):
        be = make_backend("transformers", str(path), batch_size=16, device="cuda")
        be.net.to(dtype)
        t = time.perf_counter()
        gens = be.generate(reqs, SamplingParams(max_tokens=16, n=2, temperature=1.0, seed=0))
        torch.cuda.synchronize()
        dt = time.perf_counter() - t
        assert all(g.ok and len(g.texts) == 2 for g in gens), [g.error for g in gens]
        lp_b = be.logprob(reqs[:4], [" red", " the fridge is open", " yes", " no"])
        lp_1 = [
            be.logprob([r], [c])[0]
            for r, c in zip(reqs[:4], [" red", " the fridge is open", " yes", " no"], strict=True)
        ]
        diff = max(
            abs(a - b)
            for x, y in zip(lp_b, lp_1, strict=True)
            for a, b in zip(x.token_logprobs, y.token_logprobs, strict=True)
        )
        print(
            f"{torch.cuda.get_device_name()} {str(dtype)}: 16 requests x 2 samples x 16 tokens in {dt:.2f}s; batched-vs-single log-prob max |diff| {diff:.2e}; device {be.net.device}"
        )


if __name__ == "__main__":
    main()
