"""Supervised fine-tuning on TRL's ``SFTTrainer``: a plain SFT cold start from any JSONL of
(prompt, images, target), and EQA-RM's rejective fine-tuning (RFT) data built from the
kept auxiliary evaluations (:func:`groundrl.curate.rejective_filter`).

Records: ``{"prompt": str, "target": str, "images": [paths]?}`` → a conversational
prompt/completion dataset (loss on the completion only), images as image parts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from groundrl.curate.rejective import rejective_filter


def rft_records(
    instances: Iterable[dict[str, Any]], tau: float = 2.0
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """EQA-RM Eq. 1 → SFT rows: for every instance
    ``{id, prompt, images?, gt_score, evaluations: [{critique, score}]}``, one row per
    kept evaluation with target ``<critique>…</critique><score>s</score>``; plus counts
    per filter reason."""
    rows, counts = [], {"kept": 0, "too_easy": 0, "none_correct": 0}
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


def sft_dataset(rows: list[dict[str, Any]], base: Path | None = None) -> Any:
    from datasets import Dataset
    from PIL import Image

    out = []
    for k, r in enumerate(rows, start=1):
        if not isinstance(r.get("prompt"), str) or not isinstance(r.get("target"), str):
            raise ValueError(f"SFT record {k} needs string `prompt` and `target`")
        paths = r.get("images") or []
        images = [
            Image.open(p if base is None or Path(p).is_absolute() else base / p).convert("RGB") for p in paths
        ]
        content = [{"type": "image"} for _ in images] + [{"type": "text", "text": r["prompt"]}]
        row: dict[str, Any] = {
            "prompt": [{"role": "user", "content": content}],
            "completion": [{"role": "assistant", "content": [{"type": "text", "text": r["target"]}]}],
        }
        if images:
            row["images"] = images
        out.append(row)
    return Dataset.from_list(out)


def build_sft_trainer(
    model_path: str, rows: list[dict[str, Any]], output_dir: str, base: Path | None = None, **config: Any
) -> Any:
    """An ``SFTTrainer`` on a local VLM checkpoint (the tiny one in tests)."""
    import torch
    from trl import SFTConfig, SFTTrainer

    from groundrl.testing.tiny_vlm import load_tiny_vlm

    torch.set_num_threads(1)
    model, processor = load_tiny_vlm(model_path)
    defaults = {
        "use_cpu": True,
        "bf16": False,
        "max_steps": 2,
        "per_device_train_batch_size": 2,
        "report_to": [],
        "save_strategy": "no",
        "logging_steps": 1,
        "learning_rate": 1e-3,
        "max_length": None,
        "disable_tqdm": True,
    }
    args = SFTConfig(output_dir=output_dir, **{**defaults, **config})
    return SFTTrainer(
        model=model, args=args, train_dataset=sft_dataset(rows, base), processing_class=processor
    )


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
