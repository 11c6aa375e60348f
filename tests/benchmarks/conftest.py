"""A tiny random sequence-classification reward model, built offline once per session."""

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_scalar_rm(tmp_path_factory) -> Path:
    pytest.importorskip("transformers")
    import torch
    from transformers import Qwen2Config, Qwen2ForSequenceClassification

    from groundrl.models.tiny_vlm import build_tokenizer

    path = tmp_path_factory.mktemp("tiny_rm")
    tok = build_tokenizer(seed=0)
    tok.chat_template = None  # plain "query\n\nresponse" text
    torch.manual_seed(0)
    cfg = Qwen2Config(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        num_labels=1,
        pad_token_id=tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id,
    )
    model = Qwen2ForSequenceClassification(cfg)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path
