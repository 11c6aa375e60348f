"""Judge-backed rewards inside verl 0.8's reward loop: one judge request per sample
(``compute_score``, run in verl's thread pool) vs the async, batched entry point
(``compute_score_async``: verl awaits it, groundrl gathers a batch's concurrent calls
into one ``Rubric.score_batch`` and the judge sends them with its own concurrency).

A local OpenAI-compatible judge on 127.0.0.1 answers every request in 0.5 s
(``groundrl.testing.chat_server``, counting requests in flight); embodied_brain with its
planning GRM; verl's real ``RewardLoopManager.compute_rm_score`` (naive reward manager,
one reward worker, ``ray.init(num_cpus=2)``) on 32 and 256 responses. Wall time is that
call's; "in flight" is the most requests the judge held at once. Run in the cluster
environment (verl pins numpy<2)::

    PYTHONPATH=src .venv-cluster/bin/python bench/verl_judge.py [--sizes 32 256]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

DELAY = 0.5  # the judge's answer time, seconds


def tokenizer_dir(texts: list[str]) -> str:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=400,
            special_tokens=["<unk>", "<|endoftext|>", "<|im_end|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    hf = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    path = tempfile.mkdtemp()
    hf.save_pretrained(path)
    return path


def batch(texts: list[str], tok_path: str):
    """A DataProto of responses as verl's rollout hands it to the reward loop."""
    import numpy as np
    import torch
    from transformers import AutoTokenizer
    from verl import DataProto

    hf = AutoTokenizer.from_pretrained(tok_path)
    P, R = 4, 64
    n = len(texts)
    responses = torch.full((n, R), hf.pad_token_id)
    mask = torch.zeros((n, P + R), dtype=torch.long)
    mask[:, :P] = 1
    for i, t in enumerate(texts):
        ids = (hf(t)["input_ids"] + [hf.eos_token_id])[:R]
        responses[i, : len(ids)] = torch.tensor(ids)
        mask[i, P : P + len(ids)] = 1
    prompts = torch.full((n, P), hf.pad_token_id)
    return DataProto.from_dict(
        tensors={
            "prompts": prompts,
            "responses": responses,
            "attention_mask": mask,
            "input_ids": torch.cat([prompts, responses], 1),
        },
        non_tensors={
            "data_source": np.array(["groundrl/embodied_brain"] * n, dtype=object),
            "reward_model": np.array([{"ground_truth": None}] * n, dtype=object),
            "extra_info": np.array([{"question": f"task {i}"} for i in range(n)], dtype=object),
        },
    )


def run(fn_name: str, judge: dict, data, tok_path: str, server) -> dict:
    import verl
    from omegaconf import OmegaConf
    from verl.experimental.reward_loop.reward_loop import RewardLoopManager

    import groundrl.integrations.verl as gverl

    cfg = OmegaConf.load(
        os.path.join(os.path.dirname(verl.__file__), "trainer/config/_generated_ppo_trainer.yaml")
    )
    cfg.actor_rollout_ref.model.path = tok_path
    cfg.actor_rollout_ref.model.tokenizer_path = tok_path
    cfg.reward.num_workers = 1
    cfg.reward.reward_manager.name = "naive"
    cfg.reward.custom_reward_function.path = gverl.__file__
    cfg.reward.custom_reward_function.name = fn_name
    OmegaConf.set_struct(cfg, False)
    cfg.reward.custom_reward_function.reward_kwargs = {"recipe": "embodied_brain", "judge": judge}
    manager = RewardLoopManager(cfg)
    manager.compute_rm_score(data[:2])  # warm-up: the worker builds the rubric and judge
    server.max_in_flight, n0 = 0, len(server.requests)
    t0 = time.perf_counter()
    out = manager.compute_rm_score(data)
    wall = time.perf_counter() - t0
    grm = [float(x) for x in out.non_tensor_batch["grm"]]
    for w in manager.reward_loop_workers:
        import ray

        ray.kill(w)
    return {
        "wall_s": round(wall, 2),
        "in_flight": server.max_in_flight,
        "requests": len(server.requests) - n0,
        "grm_all_0.5": all(g == 0.5 for g in grm),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[32, 256])
    args = ap.parse_args()
    import ray

    from groundrl.testing.chat_server import ChatServer

    server = ChatServer(lambda msgs, body: "<think>fine</think><score>0.5</score>", delay=DELAY).start()
    base = {"backend": "openai", "model": "grm", "url": server.base_url}
    paths = [
        ("before: compute_score, one request per sample", "compute_score", base),
        ("after: compute_score_async (judge concurrency 16)", "compute_score_async", base),
        (
            "after: compute_score_async (judge concurrency 64)",
            "compute_score_async",
            {**base, "concurrency": 64},
        ),
    ]
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    rows = []
    try:
        for n in args.sizes:
            texts = [f"<response>plan number {i}</response>" for i in range(n)]
            tok = tokenizer_dir(texts[:64] * 4)
            data = batch(texts, tok)
            for label, fn, judge in paths:
                r = run(fn, judge, data, tok, server)
                rows.append({"n": n, "path": label, **r})
                print(json.dumps(rows[-1]), flush=True)
    finally:
        ray.shutdown()
        server.stop()
    print(f"\njudge answers in {DELAY} s; verl RewardLoopManager, naive manager, 1 reward worker, 2 CPUs")
    print(f"{'n':>4}  {'path':52} {'wall s':>7} {'in flight':>9} {'requests':>8} {'speed-up':>8}")
    for r in rows:
        before = next(x for x in rows if x["n"] == r["n"] and x["path"].startswith("before"))
        print(
            f"{r['n']:>4}  {r['path']:52} {r['wall_s']:>7.2f} {r['in_flight']:>9} {r['requests']:>8} "
            f"{before['wall_s'] / r['wall_s']:>7.1f}x"
        )


if __name__ == "__main__":
    main()
