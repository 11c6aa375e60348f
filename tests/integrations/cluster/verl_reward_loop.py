"""Run in .venv-cluster: verl 0.8's RewardLoopManager.compute_rm_score on a mixed-recipe
DataProto built offline, a tokenizer trained from scratch, groundrl's verl.py loaded by
path (as a user configures it), on ray.init(num_cpus=2). Prints one JSON line."""

import json
import os
import sys
import tempfile

import numpy as np
import ray
import torch
import verl
from omegaconf import OmegaConf
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast
from verl import DataProto
from verl.experimental.reward_loop.reward_loop import RewardLoopManager

import groundrl.integrations.verl as gverl

manager_name = sys.argv[1]  # naive | remote
fn_name = sys.argv[2] if len(sys.argv) > 2 else "compute_score"  # | compute_score_async
RP = json.dumps(
    {
        "reasoning_and_reflection": "r",
        "visual_state_description": "v",
        "language_plan": "l",
        "executable_plan": [{"action_id": 1, "action_name": "find a Apple"}],
    }
)
PG = "<rubric>count</rubric><eval>1 is right</eval><answer>1</answer>"
rows = [  # (data_source, response text, ground truth as pandas would read it, extra_info)
    (
        "groundrl/reinforced_planning",
        RP,
        np.array(["find a Apple"], dtype=object),
        {"action_map": {"1": "find a Apple"}},
    ),
    ("groundrl/proxy_grm", PG, 1, {}),
    ("groundrl/proxy_grm", "<answer>2</answer>", 1, {}),
    (
        "groundrl/reinforced_planning",
        "not json",
        np.array(["find a Apple"], dtype=object),
        {"action_map": {"1": "find a Apple"}},
    ),
]
tmp = tempfile.mkdtemp()
tok = Tokenizer(models.BPE(unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.train_from_iterator(
    [r[1] for r in rows] * 20,
    trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<unk>", "<|endoftext|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    ),
)
from tokenizers import decoders  # noqa: E402

tok.decoder = decoders.ByteLevel()
hf = PreTrainedTokenizerFast(
    tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token="<unk>"
)
hf.save_pretrained(tmp)

P, R = 4, 96
prompts = torch.full((len(rows), P), hf.pad_token_id)
responses = torch.full((len(rows), R), hf.pad_token_id)
mask = torch.zeros((len(rows), P + R), dtype=torch.long)
mask[:, :P] = 1
for i, (_, text, _, _) in enumerate(rows):
    ids = hf(text)["input_ids"] + [hf.eos_token_id]
    assert len(ids) <= R, len(ids)
    responses[i, : len(ids)] = torch.tensor(ids)
    mask[i, P : P + len(ids)] = 1
data = DataProto.from_dict(
    tensors={
        "prompts": prompts,
        "responses": responses,
        "attention_mask": mask,
        "input_ids": torch.cat([prompts, responses], 1),
    },
    non_tensors={
        "data_source": np.array([r[0] for r in rows], dtype=object),
        "reward_model": np.array([{"ground_truth": r[2]} for r in rows], dtype=object),
        "extra_info": np.array([r[3] for r in rows], dtype=object),
    },
)
cfg = OmegaConf.load(
    os.path.join(os.path.dirname(verl.__file__), "trainer/config/_generated_ppo_trainer.yaml")
)
cfg.actor_rollout_ref.model.path = tmp
cfg.actor_rollout_ref.model.tokenizer_path = tmp
cfg.reward.num_workers = 1
cfg.reward.reward_manager.name = manager_name
cfg.reward.custom_reward_function.path = gverl.__file__
cfg.reward.custom_reward_function.name = fn_name
OmegaConf.set_struct(cfg, False)
cfg.reward.custom_reward_function.reward_kwargs = {"recipes": ["reinforced_planning", "proxy_grm"]}
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
try:
    out = RewardLoopManager(cfg).compute_rm_score(data)
    rm = out.batch["rm_scores"]
    print(
        json.dumps(
            {
                "keys": out.meta_info["reward_extra_keys"],
                "score": [float(x) for x in out.non_tensor_batch["score"]],
                "rm_scores_sum": [float(x) for x in rm.sum(-1)],
                "columns": {
                    k: [float(x) for x in out.non_tensor_batch[k]] for k in out.meta_info["reward_extra_keys"]
                },
            }
        )
    )
finally:
    ray.shutdown()
