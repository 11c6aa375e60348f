"""Run in .venv-cluster: rows written by `groundrl export verl` (argv[2], a Parquet file)
load through verl 0.8's own RLHFDataset with a tiny Qwen2.5-VL processor, and the first
batch is built the way verl's agent loop builds its model inputs.

* the data config is verl's, composed from examples/verl/eqa_rm.sh's overrides (so
  data.image_key is the script's); the dataset class comes from verl's
  get_dataset_class and is built as main_ppo's create_rl_dataset builds it (importing
  main_ppo itself needs peft/torchdata, GPU-side packages this environment lacks);
* verl's collate_fn makes the batch (raw_prompt with the images verl decoded);
* per row, verl's apply_chat_template(processor, …) and build_multimodal_processor_inputs
  give input_ids, pixel_values and image_grid_thw (AgentLoopBase.apply_chat_template's
  calls). The images are taken from the raw_prompt's image parts: verl's own extraction
  (qwen_vl_utils.process_vision_info) needs torchvision, which has no CPU wheel for this
  torch, and for PIL images it only converts them to RGB and rounds the size to the
  patch grid, which the processor does again (56x56 here).
* filter_overlong_prompts is off for the same reason (its length count calls
  qwen_vl_utils); the processor count below is the same number."""

import json
import sys
import tempfile
from pathlib import Path

import torch

try:  # verl 0.8
    from verl.utils.chat_template import apply_chat_template
except ModuleNotFoundError:  # verl 0.9 moved it under utils.tokenizer
    from verl.utils.tokenizer.chat_template import apply_chat_template
from verl.utils.dataset.rl_dataset import collate_fn, get_dataset_class
from verl.utils.tokenizer import build_multimodal_processor_inputs
from verl_eqa_rm_config import eqa_rm_config  # a sibling module: this folder is on sys.path

from groundrl.models.tiny_vlm import build_processor

ROOT, PARQUET = Path(sys.argv[1]), sys.argv[2]
tmp = Path(tempfile.mkdtemp())
# built in memory: verl's hf_processor loader picks the model class by the processor's
# class name, and the torchvision-free tiny processor cannot carry the stock one's
processor = build_processor(seed=0)
tokenizer = processor.tokenizer

data_cfg = eqa_rm_config(ROOT, PARQUET, "data.max_prompt_length=256", cache_dir=tmp / "cache").data
dataset_cls = get_dataset_class(data_cfg)
dataset = dataset_cls(
    data_files=data_cfg.train_files, tokenizer=tokenizer, processor=processor, config=data_cfg, max_samples=-1
)
batch = collate_fn([dataset[i] for i in range(len(dataset))])

image_pad = tokenizer.convert_tokens_to_ids("<|image_pad|>")
rows = []
for messages in batch["raw_prompt"]:
    images = [
        p["image"]
        for m in messages
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image"
    ]
    text = apply_chat_template(processor, messages, add_generation_prompt=True, tokenize=False)
    inputs = build_multimodal_processor_inputs(processor, text=[text], images=images or None)
    ids = inputs["input_ids"][0].tolist()
    rows.append(
        {
            "content_types": [
                [p["type"] for p in m["content"]] for m in messages if isinstance(m["content"], list)
            ],
            "image_sizes": [list(im.size) for im in images],
            "pixel_values": list(inputs["pixel_values"].shape) if "pixel_values" in inputs else None,
            "image_grid_thw": inputs["image_grid_thw"].tolist() if "image_grid_thw" in inputs else None,
            "image_pad_tokens": ids.count(image_pad),
            "prompt_tokens": len(ids),
            "pixel_dtype_float": bool(torch.is_floating_point(inputs["pixel_values"])) if images else None,
        }
    )
print(
    json.dumps(
        {
            "dataset_class": f"{dataset_cls.__module__}.{dataset_cls.__name__}",
            "image_key": data_cfg.image_key,
            "len": len(dataset),
            "batch_keys": sorted(batch),
            "data_source": list(batch["data_source"]),
            "rows": rows,
        }
    )
)
