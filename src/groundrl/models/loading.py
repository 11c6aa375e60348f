"""The one loader of a local checkpoint, shared by training (:func:`groundrl.train.hardware.load_policy`)
and the transformers judge backend: the model class comes from the config — a config with a
``vision_config`` is a VLM (``AutoModelForImageTextToText`` + ``AutoProcessor``), anything
else a text-only causal LM (``AutoModelForCausalLM`` + ``AutoTokenizer``). A fixture name
(:data:`groundrl.models.fixtures.FIXTURES`) resolves to its converted folder first.
"""

from __future__ import annotations

from typing import Any

from groundrl.models.fixtures import resolve_model
from groundrl.models.tiny_vlm import ensure_processor_registered


def is_text_only(model: str) -> bool:
    """True when the checkpoint's config has no vision part (``tiny`` is the tiny VLM).
    Reads only the config. A config that cannot be read counts as a VLM (False): the model's
    own load reports the missing checkpoint, after the data's checks have run."""
    if model == "tiny":
        return False
    # lazy: transformers loads only when a model is named
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(resolve_model(model))
    except (OSError, ValueError):
        return False
    return getattr(config, "vision_config", None) is None


def load_model(model: str, **kwargs: Any) -> tuple[Any, Any]:
    """``(model, processor-or-tokenizer)`` for a local path or fixture name; ``kwargs``
    go to the model's ``from_pretrained`` (dtype, quantization, attention…)."""
    # lazy: transformers loads only when a model is loaded
    from transformers import (
        AutoConfig,
        AutoModelForCausalLM,
        AutoModelForImageTextToText,
        AutoProcessor,
        AutoTokenizer,
    )

    path = resolve_model(model)
    ensure_processor_registered()
    if getattr(AutoConfig.from_pretrained(path), "vision_config", None) is not None:
        vlm = AutoModelForImageTextToText.from_pretrained(path, **kwargs)
        return vlm, AutoProcessor.from_pretrained(path)
    return AutoModelForCausalLM.from_pretrained(path, **kwargs), AutoTokenizer.from_pretrained(path)


def flatten_text_content(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat messages with content-part lists of text only → plain string content, which
    every text-only chat template takes (many, SmolLM2's among them, concatenate
    ``message['content']`` as a string). Messages holding an image part are left as they
    are.

    >>> flatten_text_content([{"role": "user", "content": [{"type": "text", "text": "hi"}]}])
    [{'role': 'user', 'content': 'hi'}]
    """
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list) and all(_is_text_part(p) for p in content):
            m = {**m, "content": "".join(str(p.get("text", "")) for p in content)}
        out.append(m)
    return out


def _is_text_part(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") == "text"
