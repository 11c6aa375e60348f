"""Supervised fine-tuning on TRL's ``SFTTrainer``: a plain SFT cold start from any JSONL of
(prompt, images, target), and EQA-RM's rejective fine-tuning (RFT) data built from the
kept auxiliary evaluations (:func:`groundrl.curate.rejective_filter`).

Records: ``{"prompt": str, "target": str, "images": [paths]?}`` → a conversational
prompt/completion dataset (loss on the completion only), images as image parts. One file
may mix records with images and text-only records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from groundrl.curate.rejective import rejective_filter
from groundrl.models.loading import flatten_text_content, is_text_only
from groundrl.train.builders import sft_trainer
from groundrl.train.hardware import Hardware


class SFTRecord(TypedDict):
    """One SFT record (the module doc's form): the prompt text, the target text and the
    image paths (relative to the data file)."""

    prompt: str
    target: str
    images: list[str]


def rft_records(
    instances: Iterable[dict[str, Any]], tau: float = 2.0
) -> tuple[list[SFTRecord], dict[str, int]]:
    """EQA-RM Eq. 1 → SFT rows: for every instance
    ``{id, prompt, images?, gt_score, evaluations: [{critique, score}]}``, one row per
    kept evaluation with target ``<critique>…</critique><score>s</score>``; plus counts
    per filter reason."""
    rows: list[SFTRecord] = []
    counts = {"kept": 0, "too_easy": 0, "none_correct": 0}
    for inst in instances:
        res = rejective_filter(inst, tau)
        counts[res["reason"]] += 1
        for i in res["kept"]:
            ev = inst["evaluations"][i]
            crit = str(ev.get("critique", "")).strip()
            target = (
                crit if "<score>" in crit else f"<critique>{crit}</critique><score>{ev.get('score')}</score>"
            )
            rows.append(
                {"prompt": inst.get("prompt", ""), "target": target, "images": inst.get("images", [])}
            )
    return rows, counts


def sft_dataset(rows: Sequence[Mapping[str, Any]], base: Path | None = None, text_only: bool = False) -> Any:
    """Records → a conversational prompt/completion dataset. ``text_only`` (a text-only
    model's tokenizer; its chat template may take only string content) writes plain
    string content and refuses records with images."""
    # lazy: datasets loads only when a trainer is built
    from datasets import Dataset
    from PIL import Image

    out = []
    for k, r in enumerate(rows, start=1):
        if not isinstance(r.get("prompt"), str) or not isinstance(r.get("target"), str):
            raise ValueError(f"SFT record {k} needs string `prompt` and `target`")
        paths = r.get("images") or []
        if text_only and paths:
            raise ValueError(f"SFT record {k} has images; the model is text-only (no vision part)")
        images = [
            Image.open(p if base is None or Path(p).is_absolute() else base / p).convert("RGB") for p in paths
        ]
        content = [{"type": "image"} for _ in images] + [{"type": "text", "text": r["prompt"]}]
        row: dict[str, Any] = {
            "prompt": [{"role": "user", "content": content}],
            "completion": [{"role": "assistant", "content": [{"type": "text", "text": r["target"]}]}],
        }
        if text_only:
            row = {key: flatten_text_content(row[key]) for key in ("prompt", "completion")}
        row["images"] = images
        out.append(row)
    if not any(row["images"] for row in out):  # text only: a plain (not vision) dataset
        for row in out:
            del row["images"]
    # Mixed files: every row carries an `images` list, empty for a text-only record, so
    # TRL's vision collator takes both kinds in one batch (a missing key read as None
    # broke it; issue 17, item 5).
    return Dataset.from_list(out)


def build_sft_trainer(
    model_path: str,
    rows: Sequence[Mapping[str, Any]],
    output_dir: str,
    base: Path | None = None,
    hardware: Hardware | None = None,
    tiny: bool = False,
    **config: Any,
) -> Any:
    """An ``SFTTrainer`` on a local VLM checkpoint (the tiny one in tests). ``hardware``
    holds a train config's ``peft``/``freeze``/``image``/``model_kwargs`` blocks
    (:mod:`groundrl.train.hardware`); ``config`` the ``SFTConfig`` fields, merged with the
    defaults by :func:`groundrl.train.config.trainer_args` (CPU smoke settings only with
    ``tiny=True``). A text-only model (no vision part in its config) gets string content."""
    data = sft_dataset(rows, base, text_only=not tiny and is_text_only(model_path))
    return sft_trainer(model_path, data, output_dir, hardware or Hardware(), tiny=tiny, **config)
