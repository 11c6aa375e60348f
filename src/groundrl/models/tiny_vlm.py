"""A tiny random Qwen2.5-VL built offline (no hub), exercising the real transformers /
TRL code paths on a CPU.

Recipe (see ``shared/notes/cpu-tiny-vlm.md``): a byte-level BPE tokenizer trained with
``tokenizers`` on generated text (plus an optional caller corpus), wrapped in
``PreTrainedTokenizerFast`` with the Qwen special tokens and a chat template that emits
``<|vision_start|><|image_pad|><|vision_end|>`` for image parts; a PIL image processor
at 56×56 pixels (patch 14, merge 2 → 4 image tokens); an image-only subclass of
``Qwen2_5_VLProcessor`` (the stock one requires a video processor, which requires
torchvision — not installable on CPU machines here); ``Qwen2_5_VLConfig`` with hidden 64,
2 layers, 4 heads (2 KV heads), vision depth 2 hidden 32.

Loading a saved tiny model needs :func:`ensure_processor_registered` first, or
``AutoProcessor.from_pretrained`` silently returns a bare tokenizer and TRL treats the
model as text-only.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import random
import shutil
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'image' or 'image' in part %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

_WORDS = [
    "the",
    "a",
    "an",
    "apple",
    "mug",
    "cup",
    "fridge",
    "sink",
    "counter",
    "table",
    "knife",
    "bread",
    "drawer",
    "cabinet",
    "microwave",
    "lamp",
    "open",
    "close",
    "pick",
    "place",
    "put",
    "find",
    "slice",
    "clean",
    "heat",
    "cool",
    "toggle",
    "turn",
    "on",
    "off",
    "in",
    "into",
    "on",
    "left",
    "right",
    "near",
    "behind",
    "front",
    "room",
    "kitchen",
    "bedroom",
    "bathroom",
    "living",
    "score",
    "critique",
    "answer",
    "rubric",
    "eval",
    "response",
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "8",
    "9",
    "10",
    "yes",
    "no",
    "frame",
    "second",
    "question",
    "reasoning",
    "plan",
    "action",
]


def _corpus(seed: int, extra: Iterable[str] | None) -> list[str]:
    rng = random.Random(seed)
    lines = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 16))) for _ in range(2000)]
    lines += ["<critique> ok </critique><score>7</score>", '{"action_id": 3, "action_name": "find a Apple"}']
    return lines + list(extra or [])


def build_tokenizer(
    seed: int = 0,
    extra_corpus: Iterable[str] | None = None,
    vocab_size: int = 512,
    *,
    corpus: Iterable[str] | None = None,
    split_words: bool = True,
    max_token_length: int | None = None,
) -> Any:
    """A byte-level BPE tokenizer with the chat template and special tokens of the tiny
    model, trained on a seeded random word corpus plus ``extra_corpus`` — or on ``corpus``
    alone when given. ``split_words=False`` lets merges span words (a fixed instruction then
    costs a few dozen tokens); ``max_token_length`` caps a merged token's length."""
    # lazy: transformers loads only when the tiny model is built or loaded
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=split_words)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        max_token_length=max_token_length,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(corpus) if corpus is not None else _corpus(seed, extra_corpus), trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        bos_token=None,
        additional_special_tokens=SPECIAL_TOKENS[1:],
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.padding_side = "left"
    return fast


def _processor_class() -> type:
    # lazy: transformers loads only when the tiny model is built or loaded
    from transformers import Qwen2_5_VLProcessor

    class TinyQwen2_5_VLImageProcessor(Qwen2_5_VLProcessor):
        """Qwen2.5-VL processor without the video half (no torchvision needed)."""

        def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
            super().__init__(
                image_processor=image_processor,
                tokenizer=tokenizer,
                video_processor=None,
                chat_template=chat_template,
                **kwargs,
            )

    TinyQwen2_5_VLImageProcessor.__name__ = "TinyQwen2_5_VLImageProcessor"
    return TinyQwen2_5_VLImageProcessor


_PROCESSOR_CLS: type | None = None


def processor_class() -> type:
    global _PROCESSOR_CLS
    if _PROCESSOR_CLS is None:
        _PROCESSOR_CLS = _processor_class()
    return _PROCESSOR_CLS


def _torchvision_available() -> bool:
    try:
        # lazy: probes for the optional torchvision
        import torchvision  # noqa: F401
    except Exception:
        return False
    return True


def ensure_processor_registered() -> None:
    """Map ``Qwen2_5_VLConfig`` to the image-only processor for ``AutoProcessor`` when
    torchvision is unavailable (otherwise the stock processor works).

    Call it before ``AutoProcessor.from_pretrained`` on a saved tiny model (TRL's trainers
    do that call): the saved ``processor_config.json`` names a class defined in this
    module, which transformers cannot find by name, and the stock Qwen2.5-VL processor
    needs a video processor that needs torchvision — so without the registration
    ``AutoProcessor`` quietly returns a bare tokenizer and the model is treated as
    text-only. Idempotent; :func:`load_tiny_vlm` and the transformers judge call it."""
    if _torchvision_available():
        return
    # lazy: transformers loads only when the tiny model is built or loaded
    from transformers import AutoProcessor, Qwen2_5_VLConfig

    AutoProcessor.register(Qwen2_5_VLConfig, processor_class(), exist_ok=True)


def build_processor(
    seed: int = 0,
    extra_corpus: Iterable[str] | None = None,
    vocab_size: int = 512,
    *,
    tokenizer: Any = None,
    side: int = 56,
) -> Any:
    """The image-only Qwen2.5-VL processor for ``side``×``side`` frames (56: 4 image tokens
    after the 2×2 merge), around ``tokenizer`` or a new :func:`build_tokenizer`."""
    # lazy: transformers loads only when the tiny model is built or loaded
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    image_processor = Qwen2VLImageProcessorPil(
        min_pixels=side * side, max_pixels=side * side, patch_size=14, merge_size=2
    )
    if tokenizer is None:
        tokenizer = build_tokenizer(seed, extra_corpus, vocab_size)
    return processor_class()(
        image_processor=image_processor, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE
    )


def tiny_config(tokenizer: Any, hidden: int = 64, layers: int = 2) -> Any:
    # lazy: transformers loads only when the tiny model is built or loaded
    from transformers import Qwen2_5_VLConfig

    heads = 4
    head_dim = hidden // heads
    # mrope_section (temporal, height, width) must sum to head_dim / 2: [2, 3, 3] for 16.
    third = head_dim // 6
    section = [head_dim // 2 - 2 * third, third, third]
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    config = Qwen2_5_VLConfig(
        text_config=dict(
            vocab_size=len(tokenizer),
            hidden_size=hidden,
            intermediate_size=hidden * 2,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            num_key_value_heads=2,
            max_position_embeddings=2048,
            rope_parameters={"rope_type": "default", "mrope_section": section, "rope_theta": 10000.0},
            tie_word_embeddings=True,
            bos_token_id=None,
            eos_token_id=ids["<|im_end|>"],
            pad_token_id=ids["<|endoftext|>"],
        ),
        vision_config=dict(
            depth=2,
            hidden_size=32,
            intermediate_size=64,
            num_heads=2,
            out_hidden_size=hidden,
            patch_size=14,
            spatial_merge_size=2,
            temporal_patch_size=2,
            window_size=56,
            fullatt_block_indexes=[1],
        ),
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=True,
    )
    # the top level carries them too (config.json, as before); set here because the typed
    # __init__ names no such parameter (they went through its **kwargs to the same attributes)
    config.eos_token_id = ids["<|im_end|>"]
    config.pad_token_id = ids["<|endoftext|>"]
    return config


TINY_MARKER = "groundrl_tiny.json"


def new_tiny_model(tokenizer: Any, hidden: int = 64, layers: int = 2, seed: int = 0) -> Any:
    """A random Qwen2.5-VL of :func:`tiny_config`'s shape for ``tokenizer``, its weights
    drawn under ``seed``, generating with the tokenizer's pad and end tokens."""
    # lazy: torch and transformers load only when the model is built
    import torch
    from transformers import Qwen2_5_VLForConditionalGeneration

    torch.manual_seed(seed)
    model = Qwen2_5_VLForConditionalGeneration(tiny_config(tokenizer, hidden, layers))
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model


def save_tiny_model(model: Any, processor: Any, out: Path, mark: Mapping[str, object]) -> None:
    """Save a tiny model with its processor and the mark ``groundrl.train.config.is_tiny_model``
    reads (CPU smoke defaults apply to this model where a stage sets none); ``mark`` says how
    it was built."""
    model.save_pretrained(out)
    processor.save_pretrained(out)
    (out / TINY_MARKER).write_text(json.dumps(dict(mark)) + "\n")


def build_tiny_vlm(
    out_dir: str | Path,
    seed: int = 0,
    extra_corpus: Iterable[str] | None = None,
    vocab_size: int = 512,
    hidden: int = 64,
    layers: int = 2,
) -> Path:
    """Build, save and return the directory of a tiny random Qwen2.5-VL (deterministic
    under ``seed``); ``from_pretrained(out_dir)`` loads it offline.

    Safe when several processes ask for the same folder at once. In one multi-process
    launch (``torchrun`` / ``accelerate launch``, torch.distributed initialised) rank 0
    builds it while the others wait at a barrier (transformers' ``save_pretrained`` writes
    weights on rank 0 only); otherwise a file lock orders the builders. A folder already
    built with the same key (every argument, the corpus and this module's source) is
    reused, so no process ever reads a half-written folder; one with another key is
    rebuilt into a temporary sibling and renamed into place."""
    out = Path(out_dir)
    corpus = list(extra_corpus) if extra_corpus is not None else None
    key = _build_key(seed, corpus, vocab_size, hidden, layers)
    rank = _distributed_rank()
    if rank is None:
        _build_locked(out, key, seed, corpus, vocab_size, hidden, layers)
        return out
    # lazy: torch loads only when the model is built
    import torch.distributed as dist

    try:
        if rank == 0:
            _build_locked(out, key, seed, corpus, vocab_size, hidden, layers)
    finally:
        dist.barrier()
    if _built_with(out) != key:
        raise RuntimeError(
            f"{out}: the tiny model rank 0 built is not visible here; every rank needs output_dir on "
            "a file system they share"
        )
    return out


def _distributed_rank() -> int | None:
    """This process's rank in an initialised torch.distributed group of 2+, else None."""
    try:
        # lazy: torch loads only when the model is built
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            return int(dist.get_rank())
    except (ImportError, RuntimeError):
        pass
    return None


def _build_locked(
    out: Path, key: str, seed: int, corpus: list[str] | None, vocab_size: int, hidden: int, layers: int
) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with _folder_lock(out):
        if _built_with(out) == key:
            return
        tmp = out.with_name(f".{out.name}.building-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        processor = build_processor(seed, corpus, vocab_size)
        model = new_tiny_model(processor.tokenizer, hidden, layers, seed)
        mark = {"seed": seed, "hidden": hidden, "layers": layers, "build_key": key}
        save_tiny_model(model, processor, tmp, mark)
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)


def _build_key(seed: int, corpus: list[str] | None, vocab_size: int, hidden: int, layers: int) -> str:
    h = hashlib.sha256(Path(__file__).read_bytes())
    h.update(json.dumps([seed, corpus, vocab_size, hidden, layers]).encode())
    return h.hexdigest()


def _built_with(out: Path) -> str | None:
    """The build key of a complete tiny-model folder (the mark is written last), else None."""
    try:
        return json.loads((out / TINY_MARKER).read_text()).get("build_key")
    except (OSError, ValueError, AttributeError):
        return None


@contextmanager
def _folder_lock(out: Path) -> Iterator[None]:
    # an advisory lock beside the folder: every process of one machine takes it in turn
    with open(out.with_name(f".{out.name}.lock"), "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def load_tiny_vlm(path: str | Path) -> tuple[Any, Any]:
    """``(model, processor)`` from a directory written by :func:`build_tiny_vlm`."""
    # lazy: transformers loads only when the tiny model is built or loaded
    from transformers import AutoModelForImageTextToText, AutoProcessor

    ensure_processor_registered()
    processor = AutoProcessor.from_pretrained(path)
    model = AutoModelForImageTextToText.from_pretrained(path)
    return model, processor
