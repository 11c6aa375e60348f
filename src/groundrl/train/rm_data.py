"""EQA-RM inputs: keyframes, pixel bounds and the one prompt builder.

An EQA-RM *instance* (one line of the training JSONL)::

    {"id": "ep3-q1", "question": "…", "answer": "…", "reasoning": "…", "gt_score": 7,
     "frames": ["ep3/000.png", …] | "ep3/"}        # a frame list or a frame folder

* **Keyframes** (EQA-RM §3, "N keyframes sampled uniformly from the episode"; N = 5):
  :func:`keyframe_indices` picks ``round(i · (L − 1) / (N − 1))`` for ``i = 0 … N − 1``
  — the first and the last frame always, evenly spaced between (our reading of
  "uniformly"; the paper gives no formula). An episode with ``L ≤ N`` frames keeps them
  all. A folder is read in name order (``*.png``, ``*.jpg``, ``*.jpeg``, ``*.webp``).
* **Pixel bounds** (Qwen-VL style ``min_pixels``/``max_pixels``): :func:`fit_pixels`
  rescales a frame, keeping its aspect ratio, so that ``H · W`` lies in the bounds and
  both sides are multiples of 28 (patch 14 × merge 2), as Qwen2.5-VL's ``smart_resize``
  does. Applied before any perturbation, so the 16×16 masking grid is the model's grid.
* **Prompt** (:func:`eqa_rm_messages`): the same text and image order as the inference
  evaluator (:func:`groundrl.judges.prompts.eqa_rm_request`: system instruction, then the
  frames, then question / reasoning / answer), turned into TRL's conversational form
  (image placeholders + a separate image list). RFT sampling, SFT, C-GRPO and inference
  all build their input here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundrl.io import read_jsonl
from groundrl.judges.base import Request
from groundrl.judges.prompts import eqa_rm_request
from groundrl.settings import parse_settings

FRAME_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")


@dataclass(frozen=True)
class RMInputConfig:
    """``keyframes`` (N, paper: 5), ``min_pixels`` / ``max_pixels`` (per frame; ``None``
    leaves frames as they are: the processor applies its own bounds)."""

    keyframes: int = 5
    min_pixels: int | None = None
    max_pixels: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.keyframes, bool) or not isinstance(self.keyframes, int) or self.keyframes < 1:
            raise ValueError(f"keyframes must be an integer ≥ 1 (EQA-RM: 5), got {self.keyframes!r}")
        for name in ("min_pixels", "max_pixels"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 28 * 28):
                raise ValueError(f"{name} must be an integer ≥ 784 (28×28) or null, got {v!r}")
        if self.min_pixels and self.max_pixels and self.min_pixels > self.max_pixels:
            raise ValueError("min_pixels must not exceed max_pixels")

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any] | None) -> RMInputConfig:
        return parse_settings(cls, raw, "inputs")


def keyframe_indices(n_frames: int, n: int = 5) -> list[int]:
    """Indices of ``n`` keyframes spread uniformly over ``n_frames`` (first and last
    included).

    >>> keyframe_indices(11, 5)
    [0, 2, 5, 8, 10]
    >>> keyframe_indices(3, 5)
    [0, 1, 2]
    """
    if n_frames <= n:
        return list(range(n_frames))
    if n == 1:
        return [(n_frames - 1) // 2]
    return [int(math.floor(i * (n_frames - 1) / (n - 1) + 0.5)) for i in range(n)]


def frame_paths(spec: Any, base: Path | None = None) -> list[Path]:
    """The frame files of an episode: a list of paths, or a folder (name order)."""

    def resolve(p: Any) -> Path:
        q = Path(str(p))
        return q if q.is_absolute() or base is None else base / q

    if isinstance(spec, (list, tuple)):
        return [resolve(p) for p in spec]
    if isinstance(spec, str):
        folder = resolve(spec)
        if not folder.is_dir():
            raise ValueError(f"frames: {folder} is not a folder (give a list of frame paths or a folder)")
        return sorted(p for p in folder.iterdir() if p.suffix.lower() in FRAME_SUFFIXES)
    raise ValueError(f"frames must be a list of paths or a folder, got {type(spec).__name__}")


def fit_pixels(
    image: Any, min_pixels: int | None = None, max_pixels: int | None = None, factor: int = 28
) -> Any:
    """``image`` (PIL) resized Qwen-VL style: sides multiples of ``factor``, area within
    ``[min_pixels, max_pixels]``, aspect ratio kept (rounding aside). Unchanged when no
    bound is given.

    >>> from PIL import Image
    >>> fit_pixels(Image.new("RGB", (200, 100)), max_pixels=56 * 56).size
    (84, 28)
    """
    if min_pixels is None and max_pixels is None:
        return image
    w, h = image.size
    hb = max(factor, round(h / factor) * factor)
    wb = max(factor, round(w / factor) * factor)
    if max_pixels is not None and hb * wb > max_pixels:
        beta = math.sqrt((h * w) / max_pixels)
        hb = max(factor, math.floor(h / beta / factor) * factor)
        wb = max(factor, math.floor(w / beta / factor) * factor)
    elif min_pixels is not None and hb * wb < min_pixels:
        beta = math.sqrt(min_pixels / (h * w))
        hb = math.ceil(h * beta / factor) * factor
        wb = math.ceil(w * beta / factor) * factor
    if (wb, hb) == (w, h):
        return image
    return image.resize((wb, hb))


def load_keyframes(spec: Any, base: Path | None, cfg: RMInputConfig) -> list[Any]:
    """The N keyframes of an episode as RGB PIL images within the pixel bounds."""
    # lazy: Pillow loads only when images are read
    from PIL import Image

    paths = frame_paths(spec, base)
    chosen = [paths[i] for i in keyframe_indices(len(paths), cfg.keyframes)]
    return [fit_pixels(Image.open(p).convert("RGB"), cfg.min_pixels, cfg.max_pixels) for p in chosen]


def trl_messages(request: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[Any]]:
    """A judge request (OpenAI-style messages, images inline) in TRL's conversational
    form: ``(messages with {"type": "image"} placeholders, the images in order)``."""
    out, images = [], []
    for m in request:
        c = m["content"]
        if isinstance(c, str):
            c = [{"type": "text", "text": c}]
        else:
            parts = []
            for p in c:
                if p.get("type") == "image":
                    images.append(p.get("image"))
                    parts.append({"type": "image"})
                else:
                    parts.append(dict(p))
            c = parts
        out.append({"role": m["role"], "content": c})
    return out, images


def eqa_rm_messages(
    question: str, reasoning: str, answer: str, n_images: int, reference: str | None = None
) -> list[dict[str, Any]]:
    """The evaluator prompt (:func:`groundrl.judges.prompts.eqa_rm_request`) in TRL's
    conversational form: ``n_images`` image placeholders before the text; the images
    travel in the row's ``images`` column."""
    msgs = eqa_rm_request(question, reasoning, answer, [None] * n_images if n_images else None, reference)
    return trl_messages(msgs)[0]


def eqa_rm_request_for(rec: Mapping[str, Any], images: Sequence[Any]) -> Request:
    """The same prompt as an OpenAI-style request with the images inline (for a judge
    backend: RFT sampling from a server or a local checkpoint, inference)."""
    return eqa_rm_request(
        str(rec.get("question", "")),
        str(rec.get("reasoning", "")),
        str(rec.get("answer", "")),
        list(images) or None,
    )


INSTANCE_FIELDS = ("question", "answer", "reasoning", "gt_score", "frames")


def read_instances(path: str | Path) -> list[dict[str, Any]]:
    rows = read_jsonl(path)
    if not rows:
        raise ValueError(f"{path}: no EQA-RM instances")
    for k, r in enumerate(rows, start=1):
        missing = [f for f in INSTANCE_FIELDS if f not in r]
        if missing:
            raise ValueError(
                f"{path}:{k}: an EQA-RM instance needs {', '.join(INSTANCE_FIELDS)} (missing {missing[0]})"
            )
        r.setdefault("id", f"{Path(path).stem}-{k}")
    return rows


def instance_row(rec: Mapping[str, Any], base: Path | None, cfg: RMInputConfig) -> dict[str, Any]:
    """One training row: chat ``prompt``, ``images`` (the keyframes) and the fields the
    rewards and the perturbations read."""
    images = load_keyframes(rec["frames"], base, cfg)
    return {
        "prompt": eqa_rm_messages(
            str(rec["question"]), str(rec["reasoning"]), str(rec["answer"]), len(images)
        ),
        "images": images,
        "id": str(rec["id"]),
        "question": str(rec["question"]),
        "reasoning": str(rec["reasoning"]),
        "answer": str(rec["answer"]),
        "gt_score": float(rec["gt_score"]),
        "perturbation": "none",
    }
