"""Run in .venv-cluster: groundrl's household agent inside OpenRLHF 0.11's real
multi-turn machinery, with a scripted engine in place of vLLM.

* the agent file is loaded by OpenRLHF's own ``_load_agent_executor`` (vllm_engine.py;
  vLLM itself is not installed, so its three imported names are stubbed);
* samples go through the real ``RolloutRayActor.generate_responses`` (the method the
  trainer calls on a rollout actor; ``self`` is a stand-in whose ``generate`` is the
  scripted engine) and back through the real
  ``SamplesGenerator._process_response_into_experience`` (where the action mask is
  built);
* the prompt row is written by ``write_prompt_dataset`` and read by OpenRLHF's
  ``preprocess_data`` with a ChatML template;
* the tokenizer is a byte-level BPE trained here (no hub).

``python openrlhf_household.py episodes`` plays the scripted episodes;
``python openrlhf_household.py errors`` collects the configuration errors;
``python openrlhf_household.py flags FLAG...`` parses flags with the parser of the
installed ``openrlhf/cli/train_ppo_ray.py``. Prints one JSON object."""

import ast
import asyncio
import json
import os
import sys
import tempfile
import types
from importlib.metadata import version
from pathlib import Path
from types import SimpleNamespace

# -- vLLM is not installed: the names vllm_engine.py / samples_generator.py import ----
_vllm = types.ModuleType("vllm")
_vllm.__version__ = "0.11.0"


class SamplingParams:
    def __init__(self, **kw):
        self.__dict__.update(kw)


_vllm.SamplingParams = SamplingParams
_vllm.inputs = types.ModuleType("vllm.inputs")
_vllm.inputs.TokensPrompt = dict
_vllm.utils = types.ModuleType("vllm.utils")
_vllm.utils.random_uuid = lambda: "0"
sys.modules.update({"vllm": _vllm, "vllm.inputs": _vllm.inputs, "vllm.utils": _vllm.utils})

import openrlhf  # noqa: E402
from openrlhf.datasets.prompts_dataset import preprocess_data  # noqa: E402
from openrlhf.trainer.ppo_utils.samples_generator import SamplesGenerator  # noqa: E402
from openrlhf.trainer.ray.vllm_engine import RolloutRayActor, _load_agent_executor  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402

import groundrl.integrations.openrlhf_household as oh  # noqa: E402

AGENT_FILE = oh.__file__
# A hand-built task: two cloths on a shelf, put both in the bathtub basin
# (pick_two_obj_and_place: 2 goal conditions, one per cloth in the basin); shared with
# tests/integrations/test_openrlhf_household.py through cluster/two_cloths.json.
_FIXTURE = json.loads((Path(__file__).resolve().parent / "two_cloths.json").read_text())
TASK = _FIXTURE["task"]
ONE_CLOTH = _FIXTURE["one_cloth"]
GOLD = ONE_CLOTH + _FIXTURE["second_cloth"]
PARTIAL = ONE_CLOTH + _FIXTURE["partial_tail"]  # one cloth placed, then an object the scene lacks
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
ENV_KEYS = [k for k in os.environ if k.startswith("GROUNDRL_ENV_")]
RAW = {"GROUNDRL_ENV_FEEDBACK_ROLE": "raw"}  # the hand-worked scenarios count raw feedback text


def build_tokenizer(corpus):
    special = ["<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        corpus * 10,
        trainers.BpeTrainer(
            vocab_size=500, special_tokens=special, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    t = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    t.chat_template = CHATML
    return t


def prompt_row(tok):
    """The dataset row as write_prompt_dataset writes it, read back by OpenRLHF."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "household.jsonl"
        n = oh.write_prompt_dataset([TASK], path)
        row = json.loads(path.read_text().splitlines()[0])
    prompt, label = preprocess_data(
        row, input_key="input", label_key="label", apply_chat_template=tok.apply_chat_template
    )
    return n, row, prompt, label


class ScriptedEngine:
    """vLLM's place: turn k of an episode (k-1 feedback texts in the context) answers
    script[k-1]; respects max_tokens as vLLM does; `.text` is the decode of the ids
    (EOS included, as with skip_special_tokens=False)."""

    def __init__(self, tok, script):
        self.tok, self.script, self.calls = tok, script, []

    async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
        context = self.tok.decode(prompt_token_ids, skip_special_tokens=False)
        turn = context.count("\nFeedback:")
        self.calls.append({"context": context, "max_tokens": sampling_params.max_tokens})
        ids = self.tok(self.script[turn], add_special_tokens=False)["input_ids"] + [self.tok.eos_token_id]
        finish = "stop"
        if len(ids) > sampling_params.max_tokens:
            ids, finish = ids[: sampling_params.max_tokens], "length"
        lps = None  # vLLM's shape: per token, {token id: Logprob}; -0.5 each when asked
        if getattr(sampling_params, "logprobs", None) is not None:
            lps = [{t: SimpleNamespace(logprob=-0.5)} for t in ids]
        out = SimpleNamespace(
            token_ids=ids,
            text=self.tok.decode(ids, skip_special_tokens=False),
            finish_reason=finish,
            logprobs=lps,
        )
        await asyncio.sleep(0)  # let the samples interleave
        return SimpleNamespace(outputs=[out])


def play(tok, prompt, label, script, env, max_length=4096, n=1, logprobs=None):
    for k in [k for k in os.environ if k.startswith("GROUNDRL_ENV_")]:
        del os.environ[k]
    os.environ.update(env)
    executor = _load_agent_executor(AGENT_FILE)
    engine = ScriptedEngine(tok, script)
    actor = SimpleNamespace(executor=executor, generate=engine.generate)
    params = SamplingParams(
        max_tokens=None, logprobs=logprobs, temperature=1.0, top_p=1.0, skip_special_tokens=False
    )
    generate_responses = RolloutRayActor.__ray_metadata__.modified_class.generate_responses
    outs = asyncio.run(
        generate_responses(
            actor, prompt, label, params, max_length=max_length, hf_tokenizer=tok, num_samples=n
        )
    )
    results = []
    for out in outs:
        exp = SamplesGenerator._process_response_into_experience(None, out, max_len=max_length)
        obs = out["observation_tokens"]
        ranges = [list(r) for r in out["action_ranges"]]
        gaps = [
            tok.decode(obs[a[1] : b[0]], skip_special_tokens=False)
            for a, b in zip(ranges, ranges[1:], strict=False)
        ]
        mask = exp.action_mask[0].tolist()  # mask[i] is token i+1's
        results.append(
            {
                "type": type(executor).__module__ + "." + type(executor).__name__,
                "reward": out["reward"],
                "scores": out["scores"],
                "extra_logs": out["extra_logs"],
                "ranges": ranges,
                "n_tokens": len(obs),
                "prompt_tokens": len(tok(prompt, add_special_tokens=False)["input_ids"]),
                "feedback_texts": gaps,
                "feedback_mask": [
                    mask[i - 1] for a, b in zip(ranges, ranges[1:], strict=False) for i in range(a[1], b[0])
                ],
                "action_mask_sum": sum(mask),
                "action_lengths": [b - a for a, b in ranges],
                "tail": tok.decode(obs[ranges[-1][0] :], skip_special_tokens=False),
                "exp_reward": exp.rewards.tolist(),
                "rollout_log_probs": out["rollout_log_probs"],
                "exp_info": {k: v.tolist() for k, v in exp.info.items()},
            }
        )
    return {"samples": results, "engine_calls": engine.calls}


def engine_signature():
    """The scripted engine's parameters beside the real rollout actor's generate."""
    from real_signatures import method_params, stub_params

    src = Path(openrlhf.__file__).parent / "trainer" / "ray" / "vllm_engine.py"
    return {
        "real": method_params(src, "RolloutRayActor", "generate"),
        "stub": stub_params(ScriptedEngine.generate),
    }


def episodes():
    tok = build_tokenizer(
        [GOLD, PARTIAL, "nonsense", json.dumps(TASK), oh.prompt_records([TASK])[0]["input"]]
    )
    n, row, prompt, label = prompt_row(tok)
    ids = {
        name: tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        for name, text in (("nonsense", "nonsense"), ("gold", GOLD), ("partial", PARTIAL))
    }
    p_len = len(tok(prompt, add_special_tokens=False)["input_ids"])
    return {
        "openrlhf_version": version("openrlhf"),
        "engine_signature": engine_signature(),
        "rows": n,
        "row_keys": sorted(row),
        "prompt": prompt,
        "label_is_text": isinstance(label, str),
        "token_lengths": {k: len(v) for k, v in ids.items()},
        "replan": play(
            tok,
            prompt,
            label,
            ["nonsense", GOLD],
            {**RAW, "GROUNDRL_ENV_MAX_TURNS": "3", "GROUNDRL_ENV_TURN_PENALTY": "0.25"},
            n=2,
        ),
        "max_turns": play(
            tok,
            prompt,
            label,
            [PARTIAL, "nonsense", GOLD],
            {**RAW, "GROUNDRL_ENV_MAX_TURNS": "2", "GROUNDRL_ENV_TURN_PENALTY": "0.25"},
        ),
        "max_turns_sparse": play(
            tok,
            prompt,
            label,
            [PARTIAL, "nonsense", GOLD],
            {
                **RAW,
                "GROUNDRL_ENV_MAX_TURNS": "2",
                "GROUNDRL_ENV_TURN_PENALTY": "0.25",
                "GROUNDRL_ENV_REWARD": "sparse",
            },
        ),
        # room for the prompt and the first turn (+1 token), not for its feedback
        "context_full": play(
            tok,
            prompt,
            label,
            [PARTIAL, GOLD],
            {**RAW, "GROUNDRL_ENV_MAX_TURNS": "3"},
            max_length=p_len + len(ids["partial"]) + 1,
        ),
        # the default role: feedback as a user turn of the chat template; logprobs asked
        "chat": play(
            tok,
            prompt,
            label,
            ["nonsense", GOLD],
            {"GROUNDRL_ENV_MAX_TURNS": "3", "GROUNDRL_ENV_TURN_PENALTY": "0.25"},
            logprobs=1,
        ),
        "chat_template": tok.apply_chat_template(
            [
                {"role": "user", "content": row["input"]},
                {"role": "assistant", "content": "nonsense"},
                {
                    "role": "user",
                    "content": "Feedback: Last action is invalid. No action could be read in any vocabulary.\nPlan:",
                },
            ],
            tokenize=False,
            add_generation_prompt=True,
        ),
    }


def errors():
    out = {}
    for name, env in {
        "max_turns_0": {"GROUNDRL_ENV_MAX_TURNS": "0"},
        "unknown_name": {"GROUNDRL_ENV_MAX_TURN": "3"},
        "reward_kind": {"GROUNDRL_ENV_REWARD": "dense"},
        "negative_penalty": {"GROUNDRL_ENV_TURN_PENALTY": "-1"},
        "template": {"GROUNDRL_ENV_FEEDBACK_TEMPLATE": "Feedback:", **RAW},
        "template_without_raw": {"GROUNDRL_ENV_FEEDBACK_TEMPLATE": "<u>{feedback}</u>"},
        "role": {"GROUNDRL_ENV_FEEDBACK_ROLE": "assistant"},
    }.items():
        for k in [k for k in os.environ if k.startswith("GROUNDRL_ENV_")]:
            del os.environ[k]
        os.environ.update(env)
        try:
            _load_agent_executor(AGENT_FILE)
            out[name] = None
        except Exception as e:  # noqa: BLE001 - reported to the test
            out[name] = f"{type(e).__name__}: {e}"
    for k in [k for k in os.environ if k.startswith("GROUNDRL_ENV_")]:
        del os.environ[k]
    # a dataset without --data.label_key: OpenRLHF's label is ""
    tok = build_tokenizer(["nonsense"])
    try:
        play(tok, "Instruction: x\nPlan:", "", ["nonsense"], {})
        out["no_label"] = None
    except Exception as e:  # noqa: BLE001
        out["no_label"] = f"{type(e).__name__}: {e}"
    return out


def _plain(v):
    """A value flags() reports: a scalar, or a list of scalars (the URL list)."""
    scalar = (str, int, float, bool)
    return (
        v is None or isinstance(v, scalar) or (isinstance(v, list) and all(isinstance(x, scalar) for x in v))
    )


def flags(argv):
    """Parse argv as `python -m openrlhf.cli.train_ppo_ray ARGV` does: the statements of
    the installed train_ppo_ray.py's `if __name__ == "__main__":` block (the parser and
    the argument checks after it), all but the final `train(args)`."""
    src_path = Path(openrlhf.__file__).parent / "cli" / "train_ppo_ray.py"
    tree = ast.parse(src_path.read_text())
    main = next(n for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test))
    body = [s for s in main.body if ast.unparse(s) != "train(args)"]
    assert len(body) == len(main.body) - 1, "train_ppo_ray.py's main block no longer ends in train(args)"
    ns = {"__name__": "train_ppo_ray_checks", "argparse": __import__("argparse")}
    ns["datetime"] = __import__("datetime").datetime
    sys.argv = [str(src_path), *argv]
    exec(compile(ast.Module(body=body, type_ignores=[]), str(src_path), "exec"), ns)
    flags.parser = ns["parser"]  # the parser itself, for callers that check loose flags

    def flat(node, prefix=""):
        out = {}
        for k, v in vars(node).items():
            if isinstance(v, SimpleNamespace):
                out.update(flat(v, f"{prefix}{k}."))
            elif _plain(v):
                out[prefix + k] = v
        return out

    return {"parsed": flat(ns["args"])}


if __name__ == "__main__":
    mode = sys.argv[1]
    result = {"episodes": episodes, "errors": errors}.get(mode)
    print(json.dumps(result() if result else flags(sys.argv[2:])))
