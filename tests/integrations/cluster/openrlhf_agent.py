"""Run in .venv-cluster: OpenRLHF 0.11's SingleTurnAgentExecutor (installed --no-deps)
loads groundrl's openrlhf.py by path (--reward.remote_url FILE.py) and scores rollouts
from a stub engine: the prompt's <|image_pad|> is expanded 16x as a VLM processor does,
and the response token ids end in EOS. Settings come from GROUNDRL_* env variables."""

import asyncio
import json
import os
from pathlib import Path
from types import SimpleNamespace

import openrlhf
from openrlhf.utils.agent import SingleTurnAgentExecutor
from real_signatures import method_params, stub_params
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

import groundrl.integrations.openrlhf as gor

SPECIAL = [
    "<unk>",
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
]
RP = json.dumps(
    {
        "reasoning_and_reflection": "r",
        "visual_state_description": "v",
        "language_plan": "l",
        "executable_plan": [{"action_id": 1, "action_name": "find a Apple"}],
    }
)
PROMPT = (
    "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>Find the apple.<|im_end|>\n"
    "<|im_start|>assistant\n"
)
tok = Tokenizer(models.BPE(unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
tok.train_from_iterator(
    [RP, PROMPT] * 20,
    trainers.BpeTrainer(
        vocab_size=400, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    ),
)
base = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")


class ExpandingTokenizer:
    """The tokenizer OpenRLHF calls, with the processor's image-pad expansion (16 per image)."""

    def __call__(self, text, **kw):
        return base(text=text.replace("<|image_pad|>", "<|image_pad|>" * 16), **kw)

    def decode(self, ids, **kw):
        return base.decode(ids, **kw)


class StubEngine:
    def __init__(self, completion):
        self.ids = base(completion)["input_ids"] + [base.eos_token_id]

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        out = SimpleNamespace(token_ids=self.ids, finish_reason="stop", logprobs=None)
        return SimpleNamespace(outputs=[out])


os.environ["GROUNDRL_RECIPE"] = "reinforced_planning"
os.environ["GROUNDRL_OPTIONS"] = json.dumps({"action_map": {"1": "find a Apple"}})
ex = SingleTurnAgentExecutor(remote_rm_url=gor.__file__)
params = SimpleNamespace(max_tokens=256, logprobs=None)
results = {}
for name, completion in (("good", RP), ("bad", "no plan")):
    out = asyncio.run(
        ex.execute(
            PROMPT, json.dumps(["find a Apple"]), params, 2048, ExpandingTokenizer(), StubEngine(completion)
        )
    )
    query = base.decode(out["observation_tokens"], skip_special_tokens=False)
    results[name] = {
        "reward": [float(x) for x in out["reward"]],
        "scores": [float(x) for x in out["scores"]],
        "extra_logs": {k: [float(x) for x in v] for k, v in out["extra_logs"].items()},
        "query_image_pads": query.count("<|image_pad|>"),
        "query_ends_with_eos": query.endswith("<|im_end|>"),
    }
# the stand-in for the rollout actor's generate (vllm_engine.py, which needs vLLM to import)
real = method_params(
    Path(openrlhf.__file__).parent / "trainer" / "ray" / "vllm_engine.py", "RolloutRayActor", "generate"
)
results["engine_signature"] = {"real": real, "stub": stub_params(StubEngine.generate)}
print(json.dumps(results))
