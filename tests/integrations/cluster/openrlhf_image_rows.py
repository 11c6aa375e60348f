"""Run in .venv-cluster: rows written by `groundrl export openrlhf` (argv[2], JSONL) load
through OpenRLHF 0.11's own blending_datasets and PromptDataset (input_key prompt,
label_key gt_score as eqa_rm.sh passes it, image_key images, apply_chat_template on, as examples/openrlhf/common.sh
sets them) with a tiny Qwen2.5-VL processor, and each prompt goes through OpenRLHF's
process_prompt_with_images (what its rollout calls before vLLM and the actor): printed per
row are the images loaded, the <|image_pad|> tokens, the rows of image_grid_thw and the
label OpenRLHF hands the reward."""

import json
import sys
from pathlib import Path
from types import SimpleNamespace

from openrlhf.datasets import PromptDataset
from openrlhf.datasets.utils import blending_datasets
from openrlhf.utils.vlm_utils import process_prompt_with_images

from groundrl.models.tiny_vlm import build_processor

ROOT, DATA = Path(sys.argv[1]), sys.argv[2]
processor = build_processor(seed=0)
data_args = SimpleNamespace(
    input_key="prompt", label_key="gt_score", image_key="images", apply_chat_template=True
)
strategy = SimpleNamespace(
    args=SimpleNamespace(data=data_args), is_rank_0=lambda: True, print=lambda *a, **k: None
)
raw = blending_datasets(DATA, "1.0", strategy, 42, max_count=100)
# OpenRLHF passes the processor's tokenizer for a VLM; its apply_chat_template is the processor's
dataset = PromptDataset(raw, processor, strategy)
pad = processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")
out = []
for i in range(len(dataset)):
    _, prompt, label, images = dataset[i]
    ids, mm, pil = process_prompt_with_images(processor, prompt, images)
    out.append(
        {
            "images": len(pil),
            "image_pads": sum(t == pad for t in ids),
            "grid": [] if mm is None else mm["image_grid_thw"].tolist(),
            "label": label,
        }
    )
print(json.dumps({"rows": out}))
