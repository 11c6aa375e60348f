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


def test_export_round_trip_scores_like_direct(tmp_path):
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
    assert df.loc[0, "prompt"][0]["content"] == "Plan it." and list(df.loc[1, "images"]) == ["f/0.png"]
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
