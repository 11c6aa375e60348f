"""`groundrl export openrlhf` (issue 35 item 2): groundrl samples — image rows, chat prompts
with image parts, text rows and EQA-RM episode records — become OpenRLHF 0.11's prompt
dataset: `prompt` with one `<image>` tag per image, `images` OpenRLHF's `load_images` reads,
and the label field (`gt_score`) from which groundrl's OpenRLHF reward reads the sample back (the reward of a
completion equals the recipe's offline score). OpenRLHF's own PromptDataset and processor
call on these rows: tests/integrations/test_real_cluster_packages_openrlhf_images.py."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

from PIL import Image
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.integrations.openrlhf import make_reward_func

ROOT = Path(__file__).resolve().parents[1]
EPISODES = ROOT / "configs" / "data" / "eqa_rm_episodes.jsonl"


def _png(size=(8, 8), color=(200, 10, 10)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


def _export(src: Path, out: Path, *extra: str):
    return CliRunner().invoke(app, ["export", "openrlhf", str(src), "-o", str(out), *extra])


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_image_chat_and_text_rows(tmp_path):
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.png").write_bytes(_png())
    data_url = "data:image/png;base64," + base64.b64encode(_png(color=(0, 0, 250))).decode()
    src = tmp_path / "in.jsonl"
    src.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"prompt": "Is the mug left of the sink?", "images": "img/a.png", "gt_score": 7},
                {
                    "prompt": [
                        {"role": "system", "content": "Grade it."},
                        {"role": "user", "content": [{"type": "text", "text": "Look: "}, {"type": "image"}]},
                    ],
                    "images": [data_url],
                    "gt_score": 2,
                    "split": "train",
                },
                {"prompt": "No picture here.", "gt_score": 1},
            ]
        )
        + "\n"
    )
    res = _export(src, tmp_path / "out" / "p.jsonl", "--recipe", "eqa_rm")
    assert res.exit_code == 0, res.output
    a, b, c = _rows(tmp_path / "out" / "p.jsonl")
    assert a["prompt"] == [{"role": "user", "content": "<image>Is the mug left of the sink?"}]
    assert a["images"] == [str((tmp_path / "img" / "a.png").resolve())]  # absolute: read on the node
    assert b["prompt"][1] == {"role": "user", "content": "Look: <image>"}  # the part's own place
    assert b["images"][0].startswith("data:image/png;base64,")
    assert Image.open(io.BytesIO(base64.b64decode(b["images"][0].split(",", 1)[1]))).getpixel((0, 0)) == (
        0,
        0,
        250,
    )
    assert "images" not in c and c["prompt"] == [{"role": "user", "content": "No picture here."}]
    assert json.loads(b["gt_score"]) == {"gt_score": 2, "split": "train", "recipe": "eqa_rm", "index": 1}


def test_the_label_gives_the_reward_its_offline_score(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"prompt": "Rate it.", "gt_score": 7}) + "\n")
    assert _export(src, tmp_path / "p.jsonl", "--recipe", "eqa_rm").exit_code == 0
    (row,) = _rows(tmp_path / "p.jsonl")
    fn = make_reward_func("eqa_rm", tensors=False)
    # EQA-RM Eq. 3: accuracy max(0, 1 - (|s - gt| / 10)^2); |7 - 7| = 0 -> 1.0, |4 - 7| = 3 -> 0.91
    out = fn(
        ["<critique>ok</critique><score>7</score>", "<critique>ok</critique><score>4</score>"],
        ["", ""],
        [row["gt_score"]] * 2,
    )
    assert out["extra_logs"]["accuracy"] == [1.0, 0.91]


def test_episode_records_become_the_evaluator_prompt_over_five_keyframes(tmp_path):
    res = _export(EPISODES, tmp_path / "eqa.jsonl", "--recipe", "eqa_rm")
    assert res.exit_code == 0, res.output
    rows = _rows(tmp_path / "eqa.jsonl")
    src = [json.loads(x) for x in EPISODES.read_text().splitlines()]
    assert len(rows) == len(src)
    for row, rec in zip(rows, src, strict=True):
        user = row["prompt"][-1]["content"]
        assert rec["question"] in user and rec["answer"] in user
        assert user.count("<image>") == 5 == len(row["images"])
        assert all(Path(p).is_absolute() and Path(p).is_file() for p in row["images"])
        assert json.loads(row["gt_score"])["gt_score"] == rec["gt_score"]


def test_a_bad_row_writes_nothing_and_names_the_row(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(
        json.dumps({"prompt": "ok", "gt_score": 1})
        + "\n"
        + json.dumps({"prompt": "<image><image>two tags", "images": "missing.png", "gt_score": 1})
        + "\n"
    )
    (tmp_path / "p.jsonl").write_text("before\n")
    res = _export(src, tmp_path / "p.jsonl", "--recipe", "eqa_rm")
    assert res.exit_code == 1 and "row 1 image 0" in res.output and "nothing written" in res.output
    assert (tmp_path / "p.jsonl").read_text() == "before\n"
