"""``groundrl export verl`` on groundrl's own EQA-RM episode records (issue 35 item 2): they
used to be written with an empty prompt and no images, exit 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("pyarrow")

ROOT = Path(__file__).resolve().parents[1]
EPISODES = ROOT / "configs" / "data" / "eqa_rm_episodes.jsonl"


def _export(src: Path, out: Path, *extra: str):
    from groundrl.cli.main import app

    return CliRunner().invoke(app, ["export", "verl", str(src), "-o", str(out), *extra])


def test_episode_records_become_the_evaluator_prompt_over_five_keyframes(tmp_path):
    import pyarrow.parquet as pq

    res = _export(EPISODES, tmp_path / "eqa.parquet", "--recipe", "eqa_rm")
    assert res.exit_code == 0, res.output
    rows = pq.read_table(tmp_path / "eqa.parquet").to_pylist()
    src = [json.loads(x) for x in EPISODES.read_text().splitlines()]
    assert len(rows) == len(src)
    for row, rec in zip(rows, src, strict=True):
        user = row["prompt"][-1]["content"]
        assert rec["question"] in user and rec["answer"] in user and rec["reasoning"] in user
        assert user.count("<image>") == 5 == len(row["images"])  # one placeholder per keyframe
        assert all(im["bytes"] for im in row["images"])  # the frames themselves, embedded
        assert row["reward_model"]["ground_truth"] == rec["gt_score"]


def test_a_record_with_no_prompt_is_refused_not_written_empty(tmp_path):
    src = tmp_path / "bad.jsonl"
    src.write_text(json.dumps({"question": "Where?", "gt_score": 3}) + "\n")
    res = _export(src, tmp_path / "out.parquet", "--recipe", "eqa_rm")
    assert res.exit_code == 1
    assert "line 1: no `prompt`" in res.output and "reasoning, answer, frames" in res.output
    assert not (tmp_path / "out.parquet").exists()
