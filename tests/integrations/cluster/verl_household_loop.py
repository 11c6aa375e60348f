"""Run in .venv-cluster: groundrl's household agent loop inside verl 0.8's own
AgentLoopWorker — the rows written by household_rows to Parquet and read back by verl's
RLHFDataset + collate_fn, the loop found through the agent-loop YAML and built with
hydra.utils.instantiate by verl, a scripted policy in place of the LLM server (a fake
server manager returning token ids of a tokenizer trained from scratch), and verl's
_agent_loop_postprocess / _postprocess turning the outputs into the DataProto verl
trains on. The config is composed from examples/verl/household_multiturn.sh (dry run)
over verl's ppo_trainer config. Prints one JSON line; the test checks hand-worked values."""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import verl
import yaml
from hydra import compose, initialize_config_dir
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2Config
from verl import DataProto
from verl.workers.rollout.replica import TokenOutput

import groundrl.integrations.verl_agent_loop as gloop
from groundrl.sim.generate import generate_tasks

ROOT = Path(sys.argv[1])
R, P = 192, 256  # data.max_response_length, data.max_prompt_length
TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
FB_INVALID = "\nFeedback: Last action is invalid. No action could be read in any vocabulary.\nPlan:"
FB_PUT = "\nFeedback: put down the object in hand: Last action executed successfully.\nPlan:"

tasks = generate_tasks(24, seed=0)
task_a = next(t for t in tasks if t.task_type == "pick_and_place_simple")
task_b = next(t for t in tasks if t.task_type == "pick_two_obj_and_place" and not t.goal.sliced)
task_c = [t for t in tasks if t.task_type == "pick_and_place_simple"][1]
plan_a = "\n".join(task_a.gold_plan)
k = task_b.gold_plan.index("put down the object in hand")
half_b = "\n".join(task_b.gold_plan[: k + 1])  # the first of the two objects placed: progress 1/2
rows = gloop.household_rows([task_a, task_b, task_c])

tmp = Path(tempfile.mkdtemp())
tok = Tokenizer(models.BPE(unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
corpus = [r["prompt"][-1]["content"] for r in rows] + [plan_a, half_b, FB_INVALID, FB_PUT, " nonsense"]
tok.train_from_iterator(
    corpus * 20,
    trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=["<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    ),
)
hf = PreTrainedTokenizerFast(
    tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token="<unk>"
)
hf.chat_template = TEMPLATE
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
EOS = hf.eos_token_id


def ids(text):
    return hf(text, add_special_tokens=False)["input_ids"]


gloop.write_rows(rows, str(tmp / "household.parquet"))
loop_yaml = tmp / "agent_loops.yaml"
# the hand-worked rows below count raw feedback tokens; the chat run (end) takes the default
loop_yaml.write_text(
    yaml.safe_dump(
        [
            {
                "name": "groundrl_household",
                "_target_": gloop.TARGET,
                "max_turns": 3,
                "turn_penalty": 0.25,
                "feedback_role": "raw",
            }
        ]
    )
)
chat_yaml = tmp / "chat_agent_loops.yaml"
chat_yaml.write_text(
    yaml.safe_dump(
        [{"name": "groundrl_household", "_target_": gloop.TARGET, "max_turns": 3, "turn_penalty": 0.25}]
    )
)
bad_yaml = tmp / "bad_agent_loops.yaml"
bad_yaml.write_text(yaml.safe_dump([{"name": "groundrl_household", "_target_": gloop.TARGET, "max_turn": 3}]))

# -- the config: examples/verl/household_multiturn.sh's overrides over verl's ppo_trainer
env = {**os.environ, "GROUNDRL_DRY_RUN": "1"}
script = ROOT / "examples" / "verl" / "household_multiturn.sh"
plain = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, check=True)
test_overrides = [
    f"actor_rollout_ref.model.path={tmp / 'model'}",
    f"data.train_files={tmp / 'household.parquet'}",
    f"data.val_files={tmp / 'household.parquet'}",
    f"data.max_prompt_length={P}",
    f"data.max_response_length={R}",
    f"data.cache_dir={tmp / 'cache'}",
    f"actor_rollout_ref.rollout.agent.agent_loop_config_path={loop_yaml}",
    "actor_rollout_ref.rollout.agent.num_workers=1",
]
test_overrides[5] = "+" + test_overrides[5]  # data.cache_dir is read with .get, not declared
ours = subprocess.run(
    ["bash", str(script), *test_overrides], capture_output=True, text=True, env=env, check=True
)
conf_dir = Path(verl.__file__).parent / "trainer" / "config"
with initialize_config_dir(config_dir=str(conf_dir), version_base=None):
    example_cfg = compose(config_name="ppo_trainer", overrides=plain.stdout.split("\n")[:-1])
    cfg = compose(config_name="ppo_trainer", overrides=ours.stdout.split("\n")[:-1])
example = {
    "n_overrides": len(plain.stdout.split("\n")[:-1]),
    "agent_loop_config_path": example_cfg.actor_rollout_ref.rollout.agent.agent_loop_config_path,
    "default_agent_loop": example_cfg.actor_rollout_ref.rollout.agent.default_agent_loop,
    "adv_estimator": example_cfg.algorithm.adv_estimator,
    "custom_reward_path": example_cfg.reward.custom_reward_function.path,
}

# -- (a) verl's registry and hydra.utils.instantiate, the way AgentLoopWorker does it
import hydra  # noqa: E402
from verl.experimental.agent_loop.agent_loop import (  # noqa: E402
    AgentLoopWorker,
    DictConfigWrap,
    ToolListWrap,
    _agent_loop_registry,
)

registered = dict(_agent_loop_registry.get("groundrl_household", {}))
example_entry = yaml.safe_load(Path(example["agent_loop_config_path"]).read_text())[0]


import ast  # noqa: E402
import inspect  # noqa: E402

from verl.workers.rollout.llm_server import LLMServerClient  # noqa: E402

# The real server's generate: LLMServerClient.generate takes named multimodal arguments
# and passes any other keyword on to the replica's generate (vLLM's, whose module needs
# vllm to import, so its parameters are read from its source).
CLIENT_SIG = inspect.signature(LLMServerClient.generate)
_vllm_src = Path(verl.__file__).parent / "workers" / "rollout" / "vllm_rollout" / "vllm_async_server.py"
REPLICA_PARAMS = {
    a.arg
    for node in ast.walk(ast.parse(_vllm_src.read_text()))
    if isinstance(node, ast.AsyncFunctionDef) and node.name == "generate"
    for a in node.args.args + node.args.kwonlyargs
} - {"self"}


def check_real_signature(request_id, kwargs):
    """Raise TypeError as the real client + vLLM replica would on this call."""
    bound = CLIENT_SIG.bind(None, request_id, **kwargs)
    extra = bound.arguments.get("kwargs", {})
    unknown = sorted(set(extra) - REPLICA_PARAMS)
    if unknown:
        raise TypeError(f"vLLM server generate() got unexpected keyword argument(s) {unknown}")


try:  # the check itself is live: a renamed keyword fails it
    check_real_signature("r", {"prompt_ids": [1], "sampling_params": {}, "images": None})
    renamed_keyword_rejected = False
except TypeError:
    renamed_keyword_rejected = True


class ScriptedServer:
    """verl's LLMServerClient.generate, answered by a script per task: turn n of a
    trajectory (one request_id) gets the n-th scripted token ids (and ``logprob`` per
    token when given). Every call is checked against the real signatures."""

    def __init__(self, scripts, prompt_of, logprob=None):
        self.scripts, self.prompt_of, self.logprob = scripts, prompt_of, logprob
        self.turns, self.calls = {}, []
        self.checked = 0

    async def generate(self, request_id, **kwargs):
        check_real_signature(request_id, kwargs)
        self.checked += 1
        prompt_ids, sampling_params = kwargs["prompt_ids"], kwargs["sampling_params"]
        key = next(k for k, p in self.prompt_of.items() if list(prompt_ids[: len(p)]) == p)
        n = self.turns.get(request_id, 0)
        self.turns[request_id] = n + 1
        self.calls.append(
            {
                "task": key,
                "turn": n + 1,
                "context": list(prompt_ids),
                "max_tokens": sampling_params.get("max_tokens"),
                "temperature": sampling_params.get("temperature"),
            }
        )
        ids_ = self.scripts[key][n]
        lp = None if self.logprob is None else [self.logprob] * len(ids_)
        return TokenOutput(token_ids=ids_, log_probs=lp, num_preempted=0)


def chat_ids(messages):
    out = hf.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    return list(out["input_ids"] if hasattr(out, "keys") else out)


prompt_of = {r["extra_info"]["task_id"]: chat_ids(r["prompt"]) for r in rows}
nonsense = ids(" nonsense") + [EOS]
junk = ids(" nonsense") * (4 * R)  # far more than any budget, no EOS: the server ignores max_tokens
scripts = {
    task_a.id: [nonsense, ids(plan_a) + [EOS]],
    task_b.id: [ids(half_b) + [EOS], junk],
    task_c.id: [nonsense, nonsense, nonsense],
}
server = ScriptedServer(scripts, prompt_of)
worker = AgentLoopWorker(cfg, llm_client=server)
registry_entry = dict(_agent_loop_registry["groundrl_household"])

trainer_config = DictConfigWrap(config=cfg)
built = hydra.utils.instantiate(
    config=example_entry,
    trainer_config=trainer_config,
    server_manager=server,
    tokenizer=worker.tokenizer,
    processor=worker.processor,
    dataset_cls=worker.dataset_cls,
    data_config=DictConfigWrap(cfg.data),
    tools=ToolListWrap([]),
)

# -- the batch as verl's trainer builds it: RLHFDataset -> collate_fn -> DataProto
from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn  # noqa: E402

dataset = RLHFDataset(str(tmp / "household.parquet"), worker.tokenizer, cfg.data)
batch = DataProto.from_single_dict(collate_fn([dataset[i] for i in range(len(dataset))]))
batch.meta_info = {"global_steps": 1, "validate": False}
task_json_roundtrip = [
    gloop.task_of_row(e).to_json() == t.to_json()
    for e, t in zip(batch.non_tensor_batch["extra_info"], [task_a, task_b, task_c], strict=True)
]

out = asyncio.run(worker.generate_sequences(batch))
tb, nt = out.batch, out.non_tensor_batch


def row(i):
    width = int(tb["attention_mask"][i, P:].sum())
    return {
        "response": tb["responses"][i, :width].tolist(),
        "response_width": int(tb["responses"].shape[1]),
        "mask": tb["response_mask"][i].tolist(),
        "rm_scores_nonzero": {
            str(j): float(v) for j, v in enumerate(tb["rm_scores"][i].tolist()) if v != 0.0
        },
        "rm_scores_sum": float(tb["rm_scores"][i].sum()),
        "num_turns": int(nt["__num_turns__"][i]),
        "env": {k: float(nt[k][i]) for k in gloop.EXTRA_INFO_KEYS},
        "turn_scores": list(nt["turn_scores"][i]),
        "env_end": nt["env_end"][i],
        "prompt": tb["prompts"][i][tb["attention_mask"][i, :P].bool()].tolist(),
    }


# -- a bad option: raised when verl builds the loop, naming the key
from omegaconf import OmegaConf  # noqa: E402

bad_error = None

bad_cfg = OmegaConf.create(OmegaConf.to_container(cfg, resolve=False))
bad_cfg.actor_rollout_ref.rollout.agent.agent_loop_config_path = str(bad_yaml)
bad_worker = AgentLoopWorker(bad_cfg, llm_client=ScriptedServer(scripts, prompt_of))
try:
    asyncio.run(bad_worker.generate_sequences(batch.select_idxs([0])))
except Exception as e:  # hydra wraps the loop's ValueError in its InstantiationException
    bad_error = {"type": type(e).__name__, "cause": type(e.__cause__).__name__, "message": str(e)}

# -- the default feedback role (a user turn of the chat template), with logprobs: row A
chat_cfg = OmegaConf.create(OmegaConf.to_container(cfg, resolve=False))
chat_cfg.actor_rollout_ref.rollout.agent.agent_loop_config_path = str(chat_yaml)
chat_server = ScriptedServer(scripts, prompt_of, logprob=-0.5)
chat_out = asyncio.run(
    AgentLoopWorker(chat_cfg, llm_client=chat_server).generate_sequences(batch.select_idxs([0]))
)
ctb = chat_out.batch
cw = int(ctb["attention_mask"][0, P:].sum())
chat_ctx = next(c["context"] for c in chat_server.calls if c["turn"] == 2)
want_ctx = hf.apply_chat_template(
    [
        *rows[0]["prompt"],
        {"role": "assistant", "content": " nonsense"},
        {"role": "user", "content": FB_INVALID.strip()},
    ],
    add_generation_prompt=True,
    tokenize=False,
)
chat = {
    "context_decoded": hf.decode(chat_ctx),
    "template": want_ctx,
    "response": ctb["responses"][0, :cw].tolist(),
    "mask": ctb["response_mask"][0, :cw].tolist(),
    "logprobs": [round(float(x), 4) for x in ctb["rollout_log_probs"][0, :cw].tolist()],
    "rm_scores_sum": float(ctb["rm_scores"][0].sum()),
    "checked": chat_server.checked,
}

print(
    json.dumps(
        {
            "example": example,
            "registered_by_decorator": registered,
            "registry_after_worker": registry_entry,
            "built": {
                "cls": f"{type(built).__module__}.{type(built).__qualname__}",
                "options": built.options.__dict__,
            },
            "task_json_roundtrip": task_json_roundtrip,
            "agent_names": list(batch.non_tensor_batch["agent_name"]),
            "reward_extra_keys": out.meta_info.get("reward_extra_keys"),
            "rows": {"a": row(0), "b": row(1), "c": row(2)},
            "expected_prompts": [prompt_of[t.id] for t in (task_a, task_b, task_c)],
            "calls": [{k: v for k, v in c.items() if k != "context"} for c in server.calls],
            "contexts": {f"{c['task']}#{c['turn']}": c["context"] for c in server.calls},
            "task_ids": [task_a.id, task_b.id, task_c.id],
            "pieces": {
                "nonsense": nonsense,
                "fb_invalid": ids(FB_INVALID),
                "fb_put": ids(FB_PUT),
                "plan_a": ids(plan_a) + [EOS],
                "half_b": ids(half_b) + [EOS],
                "junk_token": ids(" nonsense"),
            },
            "gold_len_a": len(task_a.gold_plan),
            "bad_error": bad_error,
            "R": R,
            "chat": chat,
            "signature_checked_calls": server.checked,
            "renamed_keyword_rejected": renamed_keyword_rejected,
        }
    )
)
