"""`groundrl export verl` writes verl's RLHF layout, and verl's own reading of it (pandas,
labels and extra_info as verl hands them to compute_score) scores exactly like the
samples scored directly — for a dataset that mixes recipes and label types."""

import json

import pandas as pd
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.integrations.verl import compute_score
from groundrl.recipes import get_recipe

PLAN = json.dumps(
    {
        "reasoning_and_reflection": "r",
        "visual_state_description": "v",
        "language_plan": "l",
        "executable_plan": [{"action_id": 0, "action_name": "find a Apple"}],
    }
)
ROWS = [
    {"prompt": "Plan it.", "gold": ["find a Apple", "pick up the Apple"], "recipe": "reinforced_planning"},
    {
        "prompt": [{"role": "user", "content": "Rate it."}],
        "gt_score": 7,
        "recipe": "eqa_rm",
        "images": ["f/0.png"],
    },
    {"prompt": "Which?", "preferred": 2, "query": "q", "recipe": "proxy_grm"},
]
COMPLETIONS = [
    PLAN,
    "<critique>c</critique><score>5</score>",
    "<rubric>r</rubric><eval>e</eval><answer>2</answer>",
]


def _png(path, color=(200, 30, 30), size=(28, 28)):
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path)
    return path


def test_export_round_trip_scores_like_direct(tmp_path):
    _png(tmp_path / "f" / "0.png")
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    out = tmp_path / "sub" / "train.parquet"
    r = CliRunner().invoke(app, ["export", "verl", str(data), "-o", str(out)])
    assert r.exit_code == 0, r.output
    df = pd.read_parquet(out)
    assert list(df["data_source"]) == [
        "groundrl/reinforced_planning",
        "groundrl/eqa_rm",
        "groundrl/proxy_grm",
    ]
    assert df.loc[0, "prompt"][0]["content"] == "Plan it." and len(df.loc[0, "images"]) == 0
    # the image embedded (verl's RLHFDataset reads {"bytes": …}), its placeholder in the prompt
    (img,) = df.loc[1, "images"]
    assert img["bytes"] == (tmp_path / "f" / "0.png").read_bytes()
    assert df.loc[1, "prompt"][0]["content"] == "<image>Rate it."
    for i, (row, completion) in enumerate(zip(ROWS, COMPLETIONS, strict=True)):
        rec = get_recipe(row["recipe"])
        direct = rec.rubric().score(
            completion, **{k: v for k, v in row.items() if k not in ("prompt", "recipe")}
        )
        got = compute_score(
            df.loc[i, "data_source"],
            completion,
            df.loc[i, "reward_model"]["ground_truth"],
            df.loc[i, "extra_info"],
        )
        assert got["score"] == direct.total, (row["recipe"], got)


def test_export_refuses_lines_without_a_recipe(tmp_path):
    data = tmp_path / "in.jsonl"
    data.write_text('{"prompt": "x", "gold": ["a"]}\nnot json\n')
    r = CliRunner().invoke(app, ["export", "verl", str(data), "-o", str(tmp_path / "o.parquet")])
    assert r.exit_code == 1 and "names no recipe" in r.output and "not JSON" in r.output
    assert not (tmp_path / "o.parquet").exists()


def test_export_images_frames_and_placeholders(tmp_path):
    """An episode's frames and a video's frames are embedded in order, after the row's
    own images; list-content prompts keep their image positions as placeholders."""
    from groundrl.integrations.verl import write_dataset

    a, b, c = (_png(tmp_path / f"{n}.png", (i * 60, 0, 0)) for i, n in enumerate("abc"))
    rows = [
        {"prompt": "Which room?", "images": [str(a), str(b)], "gt_score": 3, "recipe": "eqa_rm"},
        {"prompt": "Go.", "video": ["a.png", "c.png"], "gt_score": 1, "recipe": "eqa_rm"},
        {
            "prompt": [{"role": "user", "content": [{"type": "text", "text": "see "}, {"type": "image"}]}],
            "images": "b.png",
            "gt_score": 2,
            "recipe": "eqa_rm",
        },
    ]
    out = tmp_path / "t.parquet"
    assert write_dataset(rows, str(out), image_root=tmp_path) == 3
    df = pd.read_parquet(out)
    got = [[x["bytes"] for x in df.loc[i, "images"]] for i in range(3)]
    assert got == [[a.read_bytes(), b.read_bytes()], [a.read_bytes(), c.read_bytes()], [b.read_bytes()]]
    assert [df.loc[i, "prompt"][0]["content"] for i in range(3)] == [
        "<image><image>Which room?",
        "<image><image>Go.",
        "see <image>",
    ]


def test_export_refuses_unreadable_images_and_wrong_placeholders(tmp_path):
    _png(tmp_path / "a.png")
    (tmp_path / "bad.png").write_text("not an image")
    cases = {
        '{"prompt": "x", "images": ["missing.png"], "gt_score": 1, "recipe": "eqa_rm"}': "no image file",
        '{"prompt": "x", "images": ["bad.png"], "gt_score": 1, "recipe": "eqa_rm"}': "not an image",
        '{"prompt": "<image><image>x", "images": ["a.png"], "gt_score": 1, "recipe": "eqa_rm"}': (
            "2 <image> placeholder(s) for 1 image(s)"
        ),
        '{"prompt": "x", "images": ["http://h/a.png"], "gt_score": 1, "recipe": "eqa_rm"}': "is a URL",
    }
    for line, why in cases.items():
        data = tmp_path / "in.jsonl"
        data.write_text(line + "\n")
        out = tmp_path / "o.parquet"
        r = CliRunner().invoke(app, ["export", "verl", str(data), "-o", str(out)])
        assert r.exit_code == 1 and why in r.output, (line, r.output)
        assert not out.exists()
