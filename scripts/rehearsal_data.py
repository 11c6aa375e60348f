"""Models, data and configs of scripts/gpu_rehearsal.sh's steps, each written into WORK:

    verl-text WORK          a tiny random Qwen2 chat model (ChatML template) in WORK/tiny-qwen2,
                            the household multi-turn rows (WORK/household.parquet) and
                            64 text eqa_rm rows (WORK/eqa_rm.parquet)
    verl-image WORK ROOT    the tiny random Qwen2.5-VL (``model: tiny``) in WORK/tiny-qwen2.5-vl
                            and WORK/eqa_rm_images.jsonl: EQA-RM rows with an episode's keyframes
                            (ROOT/configs/data/eqa_frames), for ``groundrl export verl``
    openrlhf WORK ROOT      WORK/openrlhf_rr.jsonl: the Reinforced Planning SFT prompts with their
                            gold plans (what step 1's SFT model learned to answer)
    gpu-stage WORK ROOT MODEL [no-vllm]
                            WORK/gpu_stage.yaml: configs/gpu/reinforced_planning.yaml as shipped
                            but for what one GPU and two steps need (SHRINK_* below); no-vllm
                            (vLLM not installed) turns its use_vllm off

Run under the interpreter of the trainer that reads the files (verl's or OpenRLHF's for theirs).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

# configs/gpu/reinforced_planning.yaml's keys this rehearsal changes, and why: one GPU, two
# steps, the repository's example data [ours]; lengths that hold the example targets (326-616
# SmolLM2 tokens: a plan cut mid-JSON scores 0). Everything else runs as shipped (reporters,
# vLLM colocate when vLLM is installed, gradient checkpointing, the online filter's criterion).
SHRINK_SFT = {"max_steps": 2, "max_length": 1024}
SHRINK_GRPO = {
    "max_steps": 2,
    "num_generations": 4,
    "per_device_train_batch_size": 4,
    "gradient_accumulation_steps": 1,
    "steps_per_generation": 2,
    "max_completion_length": 768,
    "save_strategy": "no",
}
# two groups per buffer, two optimiser steps per buffer; `repeat` keeps stepping when the
# filter keeps no group (a two-step run proves the code path, not the filter's yield)
SHRINK_FILTER = {"buffer_groups": 2, "steps_per_buffer": 2, "max_rounds": 2, "when_exhausted": "repeat"}


def verl_text(work: Path) -> None:
    # lazy: the verl environment's tokenizers / transformers / groundrl, not this script's
    import groundrl.integrations.verl as gverl
    import groundrl.integrations.verl_agent_loop as gloop
    from groundrl.sim.generate import generate_tasks

    tasks = generate_tasks(64, seed=0)
    rows = gloop.household_rows(tasks)
    gloop.write_rows(rows, str(work / "household.parquet"))
    eqa = [
        {
            "prompt": f"Rate answer {i} from 0 to 10 as <critique>…</critique><score>N</score>.",
            "gt_score": i % 10,
        }
        for i in range(64)
    ]
    gverl.write_dataset(eqa, str(work / "eqa_rm.parquet"), recipe="eqa_rm")
    corpus = [r["prompt"][-1]["content"] for r in rows] + [e["prompt"] for e in eqa]
    corpus += ["\n".join(t.gold_plan or []) for t in tasks]
    tiny_qwen2(work / "tiny-qwen2", corpus)
    print("tiny model and data in", work)


def tiny_qwen2(out: Path, corpus: list[str]) -> None:
    """A 2-layer random Qwen2 with a byte-level BPE trained on ``corpus`` and a ChatML template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    special = ["<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    trainer = trainers.BpeTrainer(
        vocab_size=1000, special_tokens=special, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(corpus * 4, trainer)
    hf = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token="<unk>"
    )
    hf.chat_template = (
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    hf.save_pretrained(out)
    cfg = Qwen2Config(
        vocab_size=len(hf), hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, eos_token_id=hf.eos_token_id, pad_token_id=hf.pad_token_id, tie_word_embeddings=True,
    )  # fmt: skip
    Qwen2ForCausalLM(cfg).save_pretrained(out)


def _frames(base: Path, ref: str | list[str]) -> list[Path]:
    """An episode's frames: a folder of PNGs, or a list of frame paths (both relative to ``base``)."""
    if isinstance(ref, list):
        return [base / f for f in ref]
    return sorted((base / ref).glob("*.png"))


def verl_image(work: Path, root: Path) -> None:
    """EQA-RM rows whose images are an episode's keyframes, and the tiny Qwen2.5-VL."""
    from groundrl.models.tiny_vlm import build_tiny_vlm

    episodes = [
        json.loads(x) for x in (root / "configs/data/eqa_rm_episodes.jsonl").read_text().splitlines() if x
    ]
    rows = []
    for i, ep in enumerate(episodes * 4):
        frames = _frames(root / "configs/data", ep["frames"])[:2]
        prompt = (
            f"Question: {ep['question']} Answer: {ep['answer']} Reasoning: {ep['reasoning']} "
            "Critique the answer and score it 0-10 as <critique>…</critique><score>N</score>."
        )
        rows.append(
            {"prompt": prompt, "images": [str(f) for f in frames], "gt_score": int(ep["gt_score"]), "id": i}
        )
    (work / "eqa_rm_images.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    build_tiny_vlm(work / "tiny-qwen2.5-vl")
    print(f"{len(rows)} image rows and the tiny Qwen2.5-VL in", work)


def openrlhf_prompts(work: Path, root: Path) -> None:
    sft = root / "configs/data/reinforced_planning_sft.jsonl"
    rows = [json.loads(x) for x in sft.read_text(encoding="utf-8").splitlines() if x.strip()]
    out = [{"prompt": r["prompt"], "gold": r["gold"]} for r in rows]
    (work / "openrlhf_rr.jsonl").write_text("".join(json.dumps(r) + "\n" for r in out), encoding="utf-8")
    print(f"{len(out)} prompts in", work / "openrlhf_rr.jsonl")


def gpu_stage(work: Path, root: Path, model: str, vllm: bool = True) -> dict[str, Any]:
    """configs/gpu/reinforced_planning.yaml with the real-model fixture, the repository's
    example data (its action map; the SFT prompts for both stages: what the SFT stage
    saw) and SHRINK_* applied; ``vllm=False`` (no vLLM installed) turns the preset's
    ``use_vllm`` off. Returns the config it wrote to WORK/gpu_stage.yaml."""
    import yaml

    preset = root / "configs/gpu/reinforced_planning.yaml"
    cfg = yaml.safe_load(preset.read_text(encoding="utf-8"))
    cfg["model"], cfg["output_dir"] = model, str(work / "gpu_stage")
    cfg["recipe_options"] = {"action_map": str(root / "configs/data/reinforced_planning_sft.action_map.json")}
    cfg.pop("freeze", None)  # the fixture is a text model: no vision tower or projector to freeze
    cfg.pop("image", None)
    for stage in cfg["stages"]:
        stage["data"] = str(root / "configs/data/reinforced_planning_sft.jsonl")
        if stage["kind"] == "sft":
            stage["sft"].update(SHRINK_SFT)
        else:
            stage["grpo"].update(SHRINK_GRPO)
            stage["grpo"]["use_vllm"] = stage["grpo"].get("use_vllm", False) and vllm
            stage["online_filter"].update(SHRINK_FILTER)
    (work / "gpu_stage.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
    return cfg


def main(argv: list[str]) -> int:
    usage = "usage: rehearsal_data.py verl-text WORK | verl-image WORK ROOT | openrlhf WORK ROOT | gpu-stage WORK ROOT MODEL [no-vllm]"
    if len(argv) < 2:
        print(usage, file=sys.stderr)
        return 2
    cmd, work, rest = argv[0], Path(argv[1]), argv[2:]
    work.mkdir(parents=True, exist_ok=True)
    if cmd == "verl-text" and not rest:
        verl_text(work)
    elif cmd == "verl-image" and len(rest) == 1:
        verl_image(work, Path(rest[0]))
    elif cmd == "openrlhf" and len(rest) == 1:
        openrlhf_prompts(work, Path(rest[0]))
    elif cmd == "gpu-stage" and len(rest) in (2, 3) and rest[2:] in ([], ["no-vllm"]):
        gpu_stage(work, Path(rest[0]), rest[1], vllm=not rest[2:])
        print("wrote", work / "gpu_stage.yaml")
    else:
        print(usage, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
