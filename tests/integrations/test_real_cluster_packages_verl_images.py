"""Image rows written by `groundrl export verl` reach verl's first batch and its first
rollout step: the real RLHFDataset (verl's data config from examples/verl/eqa_rm.sh)
reads them with a tiny Qwen2.5-VL processor and verl's chat-template / processor calls
give pixel values and image grids (driver: cluster/verl_image_rows.py); verl's own
SingleTurnAgentLoop then re-reads each raw_prompt, re-applies the chat template and
processor and calls a stand-in LLM server (driver: cluster/verl_rollout_step.py). Run
under verl 0.8 (.venv-cluster) and verl 0.9.1 (GROUNDRL_CLUSTER_PYTHON_VERL09, see
scripts/run_tests.sh). Skips, saying why, without the cluster environment."""

from __future__ import annotations

import json

from cluster_support import ROOT, drive, needs_cluster_env
from typer.testing import CliRunner

from groundrl.cli.main import app

pytestmark = needs_cluster_env


def _png(path, size, color):
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path)


def _export(tmp_path):
    """Four rows through `groundrl export verl`: one image, an EQA episode's three frames
    (chat prompt), two video frames, text only."""
    for i, size in enumerate([(28, 28), (40, 60), (56, 56), (60, 40), (30, 30), (56, 28)]):
        _png(tmp_path / "img" / f"{i}.png", size, (40 * i, 100, 200 - 30 * i))
    rows = [  # one image; an EQA episode's three frames (chat prompt); two video frames; text only
        {"prompt": "Is the mug left of the sink?", "images": "img/0.png", "gt_score": 7},
        {
            "prompt": [{"role": "user", "content": "Which room is the lamp in?"}],
            "images": ["img/1.png", "img/2.png", "img/3.png"],
            "gt_score": 4,
        },
        {"prompt": "What happens next?", "video": ["img/4.png", "img/5.png"], "gt_score": 2},
        {"prompt": "No picture here.", "gt_score": 1},
    ]
    data = tmp_path / "eqa.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "train.parquet"
    r = CliRunner().invoke(app, ["export", "verl", str(data), "-o", str(out), "--recipe", "eqa_rm"])
    assert r.exit_code == 0, r.output
    return out


def test_exported_image_rows_reach_verls_first_batch(tmp_path):
    out = _export(tmp_path)
    got = drive("verl_image_rows.py", str(ROOT), str(out))
    assert (
        got["dataset_class"] == "verl.utils.dataset.rl_dataset.RLHFDataset" and got["image_key"] == "images"
    )
    assert got["len"] == 4 and got["data_source"] == ["groundrl/eqa_rm"] * 4
    assert {"raw_prompt", "dummy_tensor", "reward_model", "extra_info"} <= set(got["batch_keys"])
    one, episode, video, text = got["rows"]
    # verl decoded each embedded image at its own size, in the prompt's order
    assert one["image_sizes"] == [[28, 28]] and episode["image_sizes"] == [[40, 60], [56, 56], [60, 40]]
    assert video["image_sizes"] == [[30, 30], [56, 28]]
    assert one["content_types"] == [["image", "text"]]
    assert episode["content_types"] == [["image", "image", "image", "text"]]
    # the tiny processor (patch 14, merge 2, min = max pixels 56·56) rounds each image to
    # a multiple of 28 px and scales it up to 56·56 px keeping its shape (Qwen's
    # smart_resize): 28x28, 30x30, 56x56 -> 56x56, a 4x4 patch grid; 40 wide x 60 high ->
    # 56x84, grid (h 6, w 4); 60x40 -> grid (4, 6); 56x28 -> 84x56, grid (4, 6). Each
    # patch holds 3·2·14·14 = 1176 values; 2x2 patches merge into one <|image_pad|>.
    for row, grids in (
        (one, [[1, 4, 4]]),
        (episode, [[1, 6, 4], [1, 4, 4], [1, 4, 6]]),
        (video, [[1, 4, 4], [1, 4, 6]]),
    ):
        patches = sum(t * h * w for t, h, w in grids)
        assert row["image_grid_thw"] == grids
        assert row["pixel_values"] == [patches, 1176] and row["pixel_dtype_float"]
        assert row["image_pad_tokens"] == patches // 4
    assert text["content_types"] == [] and text["pixel_values"] is None and text["image_pad_tokens"] == 0


def test_exported_image_rows_pass_verls_first_rollout_step(tmp_path):
    """The issue's crash (`0 <|image_pad|> tokens and 1 images` under transformers 5.23)
    is the rollout re-reading a prompt with no image parts while the row has images.
    Rows whose prompt lacks the ``<image>`` placeholders (what export wrote before
    a7ed892) fail here: checked by hand, verl's _build_messages rejects them."""
    out = _export(tmp_path)
    got = drive("verl_rollout_step.py", str(ROOT), str(out), "data.max_prompt_length=256")
    assert got["loop"].endswith("single_turn_agent_loop.SingleTurnAgentLoop")
    assert got["prompt_length"] == 256
    assert [r["error"] for r in got["rows"]] == [None] * 4, got["rows"]
    # the <|image_pad|> counts of the first-batch test's grids: (16,), (24, 16, 24),
    # (16, 24) patches, four patches merge into one token
    assert [r["image_pad_tokens"] for r in got["rows"]] == [4, 16, 10, 0]
    assert [r["images"] for r in got["rows"]] == [1, 3, 2, 0]
    for r in got["rows"]:  # the server got the prompt verl kept, with the row's images
        assert r["server_prompt_equal"] and r["server_images"] == r["images"] and r["response_equal"]
        assert r["prompt_tokens"] <= 256
