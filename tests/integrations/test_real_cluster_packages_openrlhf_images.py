"""Image rows written by `groundrl export openrlhf` reach OpenRLHF 0.11.2's rollout inputs:
its blending_datasets and PromptDataset read them (the keys examples/openrlhf/common.sh
passes), its process_prompt_with_images loads every image and the tiny Qwen2.5-VL
processor expands each `<image>` tag into that image's `<|image_pad|>` tokens, and the
label OpenRLHF hands the reward is the sample's fields (driver:
cluster/openrlhf_image_rows.py). Skips, saying why, without the cluster environment."""

from __future__ import annotations

import json

from cluster_support import ROOT, drive, needs_cluster_env
from PIL import Image
from typer.testing import CliRunner

from groundrl.cli.main import app

pytestmark = needs_cluster_env


def test_exported_image_rows_reach_openrlhfs_processor_call(tmp_path):
    for name, size in [("a", (56, 56)), ("b", (56, 56))]:
        Image.new("RGB", size, (30, 120, 200)).save(tmp_path / f"{name}.png")
    rows = [
        {"prompt": "Is the mug left of the sink?", "images": "a.png", "gt_score": 7},
        {"prompt": [{"role": "user", "content": "Which room?"}], "images": ["a.png", "b.png"], "gt_score": 4},
        {"prompt": "No picture here.", "gt_score": 1},
    ]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "prompts.jsonl"
    res = CliRunner().invoke(
        app, ["export", "openrlhf", str(tmp_path / "in.jsonl"), "-o", str(out), "--recipe", "eqa_rm"]
    )
    assert res.exit_code == 0, res.output
    got = drive("openrlhf_image_rows.py", str(ROOT), str(out))["rows"]
    assert [r["images"] for r in got] == [1, 2, 0]
    # Qwen2.5-VL: 14-px patches merged 2 x 2; a 56 x 56 image (the tiny processor's pixel
    # budget, 3,136 px, keeps it as it is) -> 4 x 4 patches -> 4 tokens
    assert [r["grid"] for r in got] == [[[1, 4, 4]], [[1, 4, 4], [1, 4, 4]], []]
    assert [r["image_pads"] for r in got] == [4, 4 + 4, 0]
    assert [json.loads(r["label"])["gt_score"] for r in got] == [7, 4, 1]
