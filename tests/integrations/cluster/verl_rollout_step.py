"""Run in a cluster environment (verl 0.8 or 0.9): rows written by `groundrl export verl`
(argv[2], a Parquet file) go one step past the first batch, through verl's own
SingleTurnAgentLoop.run, the rollout step that re-reads ``raw_prompt`` and re-applies
the chat template and processor before calling the LLM server.

* data config composed from examples/verl/eqa_rm.sh's overrides (argv[3:] are more
  overrides), the dataset built as main_ppo builds it, verl's collate_fn batch;
* the agent loop is verl's registered ``single_turn_agent`` with a tiny Qwen2.5-VL
  processor; verl 0.9 gets ``hf_model_type="qwen2_5_vl"`` as its AgentLoopWorker passes
  the model config's type (its continuous-token VL builder);
* the LLM server is a stand-in (no vLLM): it records what verl sends and returns fixed
  token ids;
* the image extraction is verl's dataset hook with qwen_vl_utils.process_vision_info
  replaced (it needs torchvision, which has no CPU wheel for this torch): the PIL image
  of each image part, converted to RGB, in order. qwen_vl_utils also rounds the size to
  the patch grid, which the processor does again.
A row that fails prints its error; the test decides."""

import json
import sys
import tempfile
from pathlib import Path

import verl
import verl.experimental.agent_loop.single_turn_agent_loop  # noqa: F401  (registers it)
from verl.experimental.agent_loop.agent_loop import DictConfigWrap, _agent_loop_registry
from verl.utils.dataset.rl_dataset import collate_fn, get_dataset_class
from verl.workers.rollout.replica import TokenOutput
from verl_eqa_rm_config import eqa_rm_config  # a sibling module: this folder is on sys.path

from groundrl.models.tiny_vlm import build_processor

ROOT, PARQUET, EXTRA = Path(sys.argv[1]), sys.argv[2], sys.argv[3:]
tmp = Path(tempfile.mkdtemp())
processor = build_processor(seed=0)
tokenizer = processor.tokenizer

cfg = eqa_rm_config(ROOT, PARQUET, *EXTRA, cache_dir=tmp / "cache")
base_cls = get_dataset_class(cfg.data)


class Dataset(base_cls):  # type: ignore[misc,valid-type]
    @classmethod
    def _process_multi_modal_info(cls, messages, image_patch_size, config):
        images = [
            p["image"].convert("RGB")
            for m in messages
            if isinstance(m.get("content"), list)
            for p in m["content"]
            if isinstance(p, dict) and p.get("type") == "image"
        ]
        return images or None, None, None

    @classmethod
    async def process_multi_modal_info(cls, messages, image_patch_size, config):
        return cls._process_multi_modal_info(messages, image_patch_size, config)


dataset = Dataset(data_files=cfg.data.train_files, tokenizer=tokenizer, processor=processor, config=cfg.data)
batch = collate_fn([dataset[i] for i in range(len(dataset))])
RESPONSE = tokenizer.encode("<critique>fine</critique><score>7</score>") + [tokenizer.eos_token_id]


class StandInServer:
    """verl's LLM server client: records each call, answers fixed token ids."""

    def __init__(self):
        self.calls = []

    async def generate(self, request_id, *, prompt_ids, sampling_params, image_data=None, **kwargs):
        self.calls.append({"prompt_ids": list(prompt_ids), "images": len(image_data or [])})
        return TokenOutput(token_ids=list(RESPONSE), log_probs=[-0.5] * len(RESPONSE), num_preempted=0)


server = StandInServer()
loop_cls = _agent_loop_registry["single_turn_agent"]["_target_"]
module, _, name = loop_cls.rpartition(".")
loop_cls = getattr(__import__(module, fromlist=[name]), name)
kwargs = dict(
    trainer_config=DictConfigWrap(cfg),
    server_manager=server,
    tokenizer=tokenizer,
    processor=processor,
    dataset_cls=Dataset,
    data_config=DictConfigWrap(cfg.data),
)
if "hf_model_type" in loop_cls.__mro__[1].__init__.__code__.co_varnames:  # verl 0.9
    kwargs["hf_model_type"] = "qwen2_5_vl"
agent = loop_cls(**kwargs)

image_pad = tokenizer.convert_tokens_to_ids("<|image_pad|>")
rows = []
for i in range(len(dataset)):
    row = {k: v[i] for k, v in batch.items() if k != "dummy_tensor"}
    n_calls = len(server.calls)
    try:
        out = agent.loop.run_until_complete(agent.run({"temperature": 1.0, "max_tokens": 64}, **row))
    except Exception as e:  # noqa: BLE001 - the test reports the crash verl would hit
        rows.append({"error": f"{type(e).__name__}: {e}"[:500]})
        continue
    call = server.calls[n_calls]
    mm = out.multi_modal_data or {}
    rows.append(
        {
            "error": None,
            "prompt_tokens": len(out.prompt_ids),
            "image_pad_tokens": list(out.prompt_ids).count(image_pad),
            "server_prompt_equal": call["prompt_ids"] == list(out.prompt_ids),
            "server_images": call["images"],
            "images": len(mm.get("images") or []),
            "response_equal": list(out.response_ids) == RESPONSE,
        }
    )
print(
    json.dumps(
        {
            "verl": verl.__version__,
            "loop": f"{loop_cls.__module__}.{loop_cls.__name__}",
            "prompt_length": int(cfg.actor_rollout_ref.rollout.prompt_length),
            "rows": rows,
        }
    )
)
