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
from dataclasses import asdict, dataclass, field
from typing import Any

from groundrl.models.loading import load_model

log = logging.getLogger("groundrl.train")

# the language model's projections only (Qwen-VL vision blocks also have *_proj MLPs)
DEFAULT_TARGETS = r"^(?!.*visual).*\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)$"


@dataclass(frozen=True)
class PeftSettings:
    """The ``peft:`` block: ``peft.LoraConfig`` fields (a field left out keeps PEFT's
    default) and ``load_in_4bit`` (QLoRA)."""

    r: int | None = None
    lora_alpha: int | None = None
    lora_dropout: float | None = None
    target_modules: list[str] | str | None = None
    bias: str | None = None
    modules_to_save: list[str] | None = None
    load_in_4bit: bool = False
    use_rslora: bool | None = None

    def __post_init__(self) -> None:
        if self.r is not None and self.r < 1:
            raise ValueError(f"peft.r must be an int ≥ 1, got {self.r!r}")


@dataclass(frozen=True)
class FreezeSettings:
    vision_tower: bool = False
    projector: bool = False


@dataclass(frozen=True)
class ImageSettings:
    min_pixels: int | None = None
    max_pixels: int | None = None

    def __post_init__(self) -> None:
        for k in ("min_pixels", "max_pixels"):
            v = getattr(self, k)
            if v is not None and v < 1:
                raise ValueError(f"image.{k} must be a positive int (pixels), got {v!r}")
        if self.min_pixels and self.max_pixels and self.min_pixels > self.max_pixels:
            raise ValueError("image.min_pixels must be ≤ image.max_pixels")


@dataclass(frozen=True)
class Hardware:
    """A stage's ``peft``, ``freeze``, ``image`` and ``model_kwargs`` blocks, typed."""

    peft: PeftSettings | None = None
    freeze: FreezeSettings = field(default_factory=FreezeSettings)
    image: ImageSettings = field(default_factory=ImageSettings)
    model_kwargs: dict[str, Any] = field(default_factory=dict)


def peft_config(hw: Hardware) -> Any:
    """A ``peft.LoraConfig`` from the ``peft:`` block, ``None`` without one."""
    if hw.peft is None:
        return None
    # lazy: peft loads only for a LoRA block
    from peft import LoraConfig

    block = {k: v for k, v in asdict(hw.peft).items() if v is not None and k != "load_in_4bit"}
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


def load_policy(path: str, hw: Hardware, bf16: bool = False) -> tuple[Any, Any]:
    """``(model, processor)`` from a local checkpoint (or a fixture name) with the stage's
    hardware blocks; the model class comes from its config (a VLM with its processor, a
    text-only causal LM with its tokenizer: :func:`groundrl.models.loading.load_model`)."""
    # lazy: torch loads only when a model runs
    import torch

    kwargs: dict[str, Any] = dict(hw.model_kwargs)
    if bf16:
        kwargs.setdefault("dtype", torch.bfloat16)
    if hw.peft is not None and hw.peft.load_in_4bit:
        # lazy: transformers loads only when a model or trainer is built
        from transformers import BitsAndBytesConfig

        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype=torch.bfloat16
        )
    model, processor = load_model(path, **kwargs)
    if hw.freeze.vision_tower or hw.freeze.projector:
        freeze_modules(model, hw.freeze.vision_tower, hw.freeze.projector)
    img = hw.image
    if img != ImageSettings() and not hasattr(processor, "image_processor"):
        log.warning("image: skipped: %s is a text-only model (no image processor)", type(model).__name__)
    elif img != ImageSettings():
        set_pixel_bounds(processor, img.min_pixels, img.max_pixels)
    return model, processor
