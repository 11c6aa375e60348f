"""Run in .venv-cluster: the reward path verl 0.8's training uses for single-turn rows —
AgentLoopWorker.generate_sequences (single_turn_agent loop, a scripted LLM server held to
the real LLMServerClient.generate signature) hands each finished trajectory to a real
RewardLoopWorker Ray actor (RewardLoopManager's, as main_ppo builds it after
migrate_legacy_reward_impl), which awaits groundrl's compute_score_async, configured by
examples/verl/eqa_rm.sh; the scores land in rm_scores. Rows come from write_dataset
through verl's RLHFDataset. Prints one JSON line."""

import asyncio
import inspect
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import ray
import verl
from hydra import compose, initialize_config_dir
from omegaconf import open_dict
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2Config
from verl import DataProto
from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
from verl.experimental.reward_loop import migrate_legacy_reward_impl
from verl.experimental.reward_loop.reward_loop import RewardLoopManager
from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn
from verl.workers.rollout.llm_server import LLMServerClient
from verl.workers.rollout.replica import TokenOutput

import groundrl.integrations.verl as gverl

ROOT = Path(sys.argv[1])
P, R = 128, 64
ROWS = [  # (prompt, gold score, the scripted answer) -> eqa_rm total, worked by hand
    ("Rate answer A.", 7, "<critique>grounded</critique><score>7</score>"),  # exact + critique: 1 + 1
    ("Rate answer B.", 7, "<score>2</score>"),  # off by 5, no critique: (1 - 5·0.05) + 0 = 0.75
    ("Rate answer C.", 3, "no score at all"),  # unparseable: 0
]
WANT = [2.0, 0.75, 0.0]

tmp = Path(tempfile.mkdtemp())
tok = Tokenizer(models.BPE(unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
tok.train_from_iterator(
    [r[0] for r in ROWS] * 20 + [r[2] for r in ROWS] * 20,
    trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    ),
)
hf = PreTrainedTokenizerFast(
    tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token="<unk>"
)
hf.chat_template = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
hf.save_pretrained(tmp / "model")
Qwen2Config(
    architectures=["Qwen2ForCausalLM"],
    vocab_size=len(hf),
    hidden_size=16,
    intermediate_size=32,
    num_hidden_layers=1,
    num_attention_heads=2,
    num_key_value_heads=1,
    eos_token_id=hf.eos_token_id,
    pad_token_id=hf.pad_token_id,
).save_pretrained(tmp / "model")
gverl.write_dataset(
    [{"prompt": p, "gt_score": g} for p, g, _ in ROWS], str(tmp / "eqa.parquet"), recipe="eqa_rm"
)

env = {**os.environ, "GROUNDRL_DRY_RUN": "1", "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
ov = subprocess.run(
    [
        "bash",
        str(ROOT / "examples" / "verl" / "eqa_rm.sh"),
        f"actor_rollout_ref.model.path={tmp / 'model'}",
        f"data.train_files={tmp / 'eqa.parquet'}",
        f"data.max_prompt_length={P}",
        f"data.max_response_length={R}",
        "actor_rollout_ref.rollout.agent.num_workers=1",
        "reward.num_workers=1",
    ],
    capture_output=True,
    text=True,
    env=env,
    check=True,
).stdout.split("\n")[:-1]
with initialize_config_dir(
    config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None
):
    cfg = migrate_legacy_reward_impl(compose(config_name="ppo_trainer", overrides=ov))  # as main_ppo.main
with open_dict(cfg):
    cfg.data.cache_dir = str(tmp / "cache")

CLIENT_SIG = inspect.signature(LLMServerClient.generate)


def chat_ids(text):
    out = hf.apply_chat_template(
        [{"role": "user", "content": text}], add_generation_prompt=True, tokenize=True
    )
    return list(out["input_ids"] if hasattr(out, "keys") else out)


class ScriptedServer:
    """LLMServerClient.generate's place: the scripted answer of the row whose prompt the
    ids start with; every call bound to the real signature first."""

    def __init__(self):
        self.prompts = {tuple(chat_ids(p)): a for p, _, a in ROWS}
        self.checked = 0

    async def generate(self, request_id, **kwargs):
        CLIENT_SIG.bind(None, request_id, **kwargs)
        self.checked += 1
        ids = list(kwargs["prompt_ids"])
        answer = next(a for p, a in self.prompts.items() if ids == list(p))
        return TokenOutput(
            token_ids=hf(answer, add_special_tokens=False)["input_ids"] + [hf.eos_token_id],
            log_probs=None,
            num_preempted=0,
        )


dataset = RLHFDataset(str(tmp / "eqa.parquet"), hf, cfg.data)
batch = DataProto.from_single_dict(collate_fn([dataset[i] for i in range(len(dataset))]))
batch.meta_info = {"global_steps": 1, "validate": False}
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
try:
    manager = RewardLoopManager(cfg)
    server = ScriptedServer()
    worker = AgentLoopWorker(cfg, llm_client=server, reward_loop_worker_handles=manager.reward_loop_workers)
    out = asyncio.run(worker.generate_sequences(batch))
    rm = out.batch["rm_scores"]
    print(
        json.dumps(
            {
                "reward_fn": cfg.reward.custom_reward_function.name,
                "rm_scores_sum": [round(float(x), 6) for x in rm.sum(-1)],
                "nonzero_at_last_token": [
                    [j for j, v in enumerate(rm[i].tolist()) if v != 0.0]
                    == ([int(out.batch["response_mask"][i].sum()) - 1] if WANT[i] else [])
                    for i in range(len(ROWS))
                ],
                "want": WANT,
                "extra_keys": sorted(out.meta_info.get("reward_extra_keys", [])),
                "format": [float(x) for x in out.non_tensor_batch["format"]]
                if "format" in out.non_tensor_batch
                else None,
                "checked": server.checked,
            }
        )
    )
finally:
    ray.shutdown()
