"""SmolLM2-135M-Instruct (a real pretrained text-only LM with a real tokenizer and chat
template, pad = eos) through every path groundrl trains or runs a model on (issue 36).
CPU, one thread; steps kept tiny (≤ 32 new tokens, G = 2, batch 2)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import yaml
from typer.testing import CliRunner

from groundrl.cli.main import app

pytestmark = pytest.mark.slow

PROMPT = "Name one colour of the sky on a clear day. Answer with one word."


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_loads_as_a_causal_lm_with_its_tokenizer(smollm2):
    from groundrl.models.loading import is_text_only, load_model

    model, tok = load_model("smollm2-135m-instruct")
    assert type(model).__name__ == "LlamaForCausalLM"
    assert not hasattr(tok, "image_processor")
    assert is_text_only("smollm2-135m-instruct") and not is_text_only("tiny")
    assert tok.pad_token_id == tok.eos_token_id  # <|im_end|>: the case cut_at_eos is for
    assert 130e6 < sum(p.numel() for p in model.parameters()) < 140e6


def test_chat_template_takes_the_flattened_content_and_round_trips(smollm2):
    from transformers import AutoTokenizer

    from groundrl.models.loading import flatten_text_content

    tok = AutoTokenizer.from_pretrained(smollm2)
    parts = [{"role": "user", "content": [{"type": "text", "text": PROMPT}]}]
    with pytest.raises(TypeError):  # the template concatenates content as a string
        tok.apply_chat_template(parts, tokenize=False)
    text = tok.apply_chat_template(flatten_text_content(parts), tokenize=False, add_generation_prompt=True)
    assert f"<|im_start|>user\n{PROMPT}<|im_end|>\n<|im_start|>assistant\n" in text
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert tok.decode(ids) == text


RATE = "Question: what colour is the sky on a clear day? Answer: blue. Rate the answer from 0 to 10."


def _sft_then_grpo(tmp_path: Path) -> Path:
    """EQA-RM's recipe reward: score accuracy max(0, 1 - (|s - s*| / 10)^2) is graded, so
    after a few SFT steps on the ``<score>N</score>`` form two sampled scores rarely tie
    and the GRPO step has a gradient [EQA-RM §3]."""
    sft = tmp_path / "sft.jsonl"
    targets = ["<score>2</score>", "<score>9</score>"]
    sft.write_text("".join(json.dumps({"prompt": RATE, "target": t}) + "\n" for t in targets))
    rl = tmp_path / "rl.jsonl"
    rl.write_text("".join(json.dumps({"prompt": RATE, "gt_score": 5}) + "\n" for _ in range(2)))
    cfg = {
        "recipe": "eqa_rm",
        "model": "smollm2-135m-instruct",  # the fixture name, resolved by the one resolver
        "output_dir": str(tmp_path / "out"),
        "seed": 0,
        "freeze": {"vision_tower": True},  # a VLM preset's block: skipped on a text model
        "stages": [
            {
                "name": "sft",
                "kind": "sft",
                "data": str(sft),
                "sft": {"max_steps": 3, "per_device_train_batch_size": 2, "learning_rate": 1e-4},
            },
            {
                "name": "grpo",
                "kind": "grpo",
                "data": str(rl),
                "grpo": {
                    "max_steps": 1,
                    "num_generations": 2,
                    "per_device_train_batch_size": 2,
                    "max_completion_length": 16,
                    "learning_rate": 1e-5,
                    "temperature": 1.0,
                    "beta": 0.0,
                    "save_strategy": "no",
                },
            },
        ],
    }
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump(cfg))
    return f


def test_one_sft_step_then_one_grpo_step_through_groundrl_train(smollm2, tmp_path, caplog):
    f = _sft_then_grpo(tmp_path)
    printed = CliRunner().invoke(app, ["train", "--config", str(f), "--print-config"])
    assert printed.exit_code == 0, printed.output
    assert "gradient_checkpointing: false" in printed.output  # CPU default for a real model
    assert "learning_rate: 0.001" not in printed.output  # no tiny-model smoke settings
    r = CliRunner().invoke(app, ["train", "--config", str(f)])
    assert r.exit_code == 0, r.output
    assert "text-only model" in caplog.text  # the freeze block was skipped, said so
    rows = [json.loads(x) for x in (tmp_path / "out" / "log.jsonl").read_text().splitlines()]
    steps = {row.get("stage"): row for row in rows if "loss" in row and "grad_norm" in row}
    assert set(steps) >= {"sft", "grpo"}, rows
    for stage in ("sft", "grpo"):
        assert math.isfinite(steps[stage]["loss"]), steps[stage]
        assert steps[stage]["grad_norm"] > 0, steps[stage]
    from groundrl.models.loading import load_model

    trained, tok = load_model(str(tmp_path / "out" / "final"))  # saved in HF format, reloads
    assert type(trained).__name__ == "LlamaForCausalLM" and tok.eos_token == "<|im_end|>"


def test_save_and_reload_generate_the_same_greedy_tokens(smollm2, tmp_path):
    from groundrl.demos.planner import greedy as greedy_ids
    from groundrl.models.loading import load_model
    from groundrl.train.multiturn import EnvRollout, cut_at_eos

    model, tok = load_model(str(smollm2))
    msgs = [{"role": "user", "content": PROMPT}]
    ids = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt", return_dict=True)

    def greedy(m):
        with torch.inference_mode():
            out = m.generate(**ids, max_new_tokens=32, do_sample=False, pad_token_id=tok.pad_token_id)
        return cut_at_eos(out[:, ids["input_ids"].shape[1] :].tolist(), tok.eos_token_id)[0]

    before = greedy(model)
    model.save_pretrained(tmp_path / "m")
    tok.save_pretrained(tmp_path / "m")
    again, tok2 = load_model(str(tmp_path / "m"))
    assert greedy(again) == before and before
    # pad == eos here: the stop token ends the continuation instead of being dropped as a
    # pad, in the demo's greedy decoding and in the rollout's sampling (top_k 1: greedy)
    context = ids["input_ids"][0].tolist()
    assert greedy_ids(model, tok, [context], 32) == [before]
    near_greedy = SimpleNamespace(args=SimpleNamespace(temperature=1.0, top_p=1.0, top_k=1))
    assert EnvRollout.sample(model, tok, [context], 32, near_greedy) == [before]
    assert before[-1] == tok.eos_token_id and len(before) < 32


def test_transformers_judge_backend_on_the_fixture_name(smollm2):
    from groundrl.judges.base import SamplingParams
    from groundrl.judges.transformers_backend import TransformersBackend

    backend = TransformersBackend("smollm2-135m-instruct", batch_size=2)
    req = [{"role": "user", "content": [{"type": "text", "text": PROMPT}]}]
    gens = backend.generate([req, req], SamplingParams(temperature=0.0, max_tokens=8))
    assert all(g.error is None and g.texts and g.texts[0].strip() for g in gens), gens
    assert gens[0].texts == gens[1].texts


def test_sim_eval_with_the_model_policy_on_two_tasks(smollm2, tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    r = CliRunner().invoke(app, ["sim", "tasks", "--n", "2", "--seed", "0", "-o", str(tasks)])
    assert r.exit_code == 0, r.output
    out = tmp_path / "eval"
    args = ["sim", "eval", str(tasks), "--policy", "model", "--judge-backend", "transformers"]
    args += ["--judge-model", "smollm2-135m-instruct", "--no-image", "--max-tokens", "16", "-o", str(out)]
    r = CliRunner().invoke(app, args + ["--max-steps", "1", "--max-invalid", "1", "--batch-size", "2"])
    assert r.exit_code == 0, r.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["n_tasks"] == 2
    results = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert len(results) == 2 and all(not row.get("error") for row in results), results
