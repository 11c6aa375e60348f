"""Real-hardware settings of a train config: ``peft:``, ``freeze:``, ``image:``,
``model_kwargs:`` (bf16, gradient checkpointing and TRL's vLLM modes are ``grpo:`` /
``sft:`` fields passed to TRL as they are; see docs/training.md).

* ``peft: {r: 16, lora_alpha: 32, lora_dropout: 0.05, target_modules: [q_proj, …],
  load_in_4bit: false}`` → a ``peft.LoraConfig`` for TRL (QLoRA: ``load_in_4bit: true``
  loads the base model through bitsandbytes 4-bit NF4, a GPU-only path);
* ``freeze: {vision_tower: true, projector: true}`` → the vision encoder's blocks and
  patch embedding (``visual.*`` except the merger) and the projector (``visual.merger``,
  Qwen2-VL/2.5-VL naming; ``multi_modal_projector`` elsewhere) stop taking gradients; on a
  text-only model (no ``vision_config``) the block is skipped with a warning;
* ``image: {min_pixels: 3136, max_pixels: 262144}`` → the image processor's bounds;
* ``model_kwargs: {attn_implementation: flash_attention_2, device_map: …}`` → given to
  ``from_pretrained``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from groundrl.models.loading import load_model

log = logging.getLogger("groundrl.train")

PEFT_KEYS = {
    "r",
    "lora_alpha",
    "lora_dropout",
    "target_modules",
    "bias",
    "modules_to_save",
    "load_in_4bit",
    "use_rslora",
}
FREEZE_KEYS = {"vision_tower", "projector"}
IMAGE_KEYS = {"min_pixels", "max_pixels"}
# the language model's projections only (Qwen-VL vision blocks also have *_proj MLPs)
DEFAULT_TARGETS = r"^(?!.*visual).*\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)$"


def _block(cfg: Mapping[str, Any], key: str, allowed: set[str]) -> dict[str, Any]:
    raw = cfg.get(key)
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ValueError(f"{key} must be a mapping; allowed keys: {', '.join(sorted(allowed))}")
    unknown = set(raw) - allowed
    if unknown:
        raise ValueError(f"{key}: unknown key(s) {sorted(unknown)}; allowed: {', '.join(sorted(allowed))}")
    return dict(raw)


def check_hardware_blocks(cfg: Mapping[str, Any]) -> None:
    """Key and type checks of ``peft``, ``freeze``, ``image``, ``model_kwargs``."""
    peft = _block(cfg, "peft", PEFT_KEYS)
    if "r" in peft and (isinstance(peft["r"], bool) or not isinstance(peft["r"], int) or peft["r"] < 1):
        raise ValueError(f"peft.r must be an int ≥ 1, got {peft['r']!r}")
    for k, v in _block(cfg, "freeze", FREEZE_KEYS).items():
        if not isinstance(v, bool):
            raise ValueError(f"freeze.{k} must be true or false, got {v!r}")
    img = _block(cfg, "image", IMAGE_KEYS)
    for k, v in img.items():
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"image.{k} must be a positive int (pixels), got {v!r}")
    if "min_pixels" in img and "max_pixels" in img and img["min_pixels"] > img["max_pixels"]:
        raise ValueError("image.min_pixels must be ≤ image.max_pixels")
    mk = cfg.get("model_kwargs")
    if mk is not None and not isinstance(mk, Mapping):
        raise ValueError("model_kwargs must be a mapping of from_pretrained arguments")


def peft_config(cfg: Mapping[str, Any]) -> Any:
    """A ``peft.LoraConfig`` from the ``peft:`` block, ``None`` without one."""
    if cfg.get("peft") is None:
        return None
    block = _block(cfg, "peft", PEFT_KEYS)
    # lazy: peft loads only for a LoRA block
    from peft import LoraConfig

    block.pop("load_in_4bit", None)
    block.setdefault("target_modules", DEFAULT_TARGETS)
    block.setdefault("task_type", "CAUSAL_LM")
    return LoraConfig(**block)


def _is_projector(name: str) -> bool:
    return ".merger." in f".{name}" or "multi_modal_projector" in name


def _is_vision(name: str) -> bool:
    return (".visual." in f".{name}" or "vision_tower" in name) and not _is_projector(name)


def freeze_modules(model: Any, vision_tower: bool = False, projector: bool = False) -> dict[str, int]:
    """Stop gradients of the vision tower and/or projector; returns the counts of
    parameters frozen per kind. A text-only model (no ``vision_config``) has neither, so
    the block is skipped with a warning (a recipe's VLM config reused on a text model);
    a VLM with no parameter of a named kind is an error."""
    counts = {"vision_tower": 0, "projector": 0}
    if getattr(getattr(model, "config", None), "vision_config", None) is None:
        named = [k for k, on in (("vision_tower", vision_tower), ("projector", projector)) if on]
        if named:
            log.warning(
                "freeze: %s skipped: %s is a text-only model (no vision tower or projector)",
                ", ".join(f"{k}: true" for k in named),
                type(model).__name__,
            )
        return counts
    for name, p in model.named_parameters():
        if vision_tower and _is_vision(name):
            p.requires_grad_(False)
            counts["vision_tower"] += 1
        elif projector and _is_projector(name):
            p.requires_grad_(False)
            counts["projector"] += 1
    for kind, on in (("vision_tower", vision_tower), ("projector", projector)):
        if on and not counts[kind]:
            raise ValueError(f"freeze.{kind}: no such parameters in {type(model).__name__}")
    return counts


def set_pixel_bounds(processor: Any, min_pixels: int | None = None, max_pixels: int | None = None) -> None:
    ip = getattr(processor, "image_processor", None)
    if ip is None:
        raise ValueError("image: min/max pixels need a processor with an image processor")
    for key, v in (("min_pixels", min_pixels), ("max_pixels", max_pixels)):
        if v is None:
            continue
        setattr(ip, key, v)
        size = getattr(ip, "size", None)
        if isinstance(size, dict):
            size["shortest_edge" if key == "min_pixels" else "longest_edge"] = v


def load_policy(path: str, cfg: Mapping[str, Any], bf16: bool = False) -> tuple[Any, Any]:
    """``(model, processor)`` from a local checkpoint (or a fixture name) with the config's
    hardware blocks; the model class comes from its config (a VLM with its processor, a
    text-only causal LM with its tokenizer: :func:`groundrl.models.loading.load_model`)."""
    # lazy: torch loads only when a model runs
    import torch

    kwargs: dict[str, Any] = dict(cfg.get("model_kwargs") or {})
    if bf16:
        kwargs.setdefault("dtype", torch.bfloat16)
    if (cfg.get("peft") or {}).get("load_in_4bit"):
        # lazy: transformers loads only when a model or trainer is built
        from transformers import BitsAndBytesConfig

        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16
        )
    model, processor = load_model(path, **kwargs)
    fr = _block(cfg, "freeze", FREEZE_KEYS)
    if fr.get("vision_tower") or fr.get("projector"):
        freeze_modules(model, bool(fr.get("vision_tower")), bool(fr.get("projector")))
    img = _block(cfg, "image", IMAGE_KEYS)
    if img and not hasattr(processor, "image_processor"):
        log.warning("image: skipped: %s is a text-only model (no image processor)", type(model).__name__)
    elif img:
        set_pixel_bounds(processor, img.get("min_pixels"), img.get("max_pixels"))
    return model, processor
