"""Test-time scaling with vote and mean from one set of K samples (issue 19, item 5) and
the scalar reward-model baseline (item 7) on a tiny local sequence-classification model."""

import json
import math
import re

import pytest
from typer.testing import CliRunner

from groundrl.cli.main import app

runner = CliRunner()

ROWS = [
    {"id": "a", "question": "q", "reasoning": "r", "answer": "say=5", "gt_score": 8, "category": "c"},
    {"id": "b", "question": "q", "reasoning": "r", "answer": "say=2", "gt_score": 2, "category": "c"},
]


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def plus_three_on_odd_samples(msgs, body):
    s = int(re.search(r"say=(\d+)", json.dumps(msgs)).group(1))
    return f"<critique>c</critique><score>{s + 3 * (body['sample_index'] % 2)}</score>"


@pytest.fixture
def zero_head_rm(tiny_scalar_rm, tmp_path):
    """The tiny RM with its score head zeroed: every reward is exactly 0."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(tiny_scalar_rm)
    with torch.no_grad():
        model.score.weight.zero_()
    path = tmp_path / "zero_rm"
    model.save_pretrained(path)
    AutoTokenizer.from_pretrained(tiny_scalar_rm).save_pretrained(path)
    return path


def test_vote_and_mean_curves_and_scalar_baseline(chat_server, zero_head_rm, tmp_path):
    chat_server.responder = plus_three_on_odd_samples
    out = tmp_path / "o"
    args = ["--judge-backend", "openai", "--judge-model", "j", "--judge-url", chat_server.base_url]
    r = runner.invoke(
        app,
        ["bench", "score-rm", str(write(tmp_path / "d.jsonl", ROWS)), *args, "--k", "4", "--aggregate", "both",
         "--scalar-rm", str(zero_head_rm), "--scalar-rm-device", "cpu", "-o", str(out)],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    m = json.loads((out / "metrics.json").read_text())
    vote, mean = m["tts_by_aggregate"]["vote"], m["tts_by_aggregate"]["mean"]
    # samples a: 5, 8, 5, 8 (gold 8); b: 2, 5, 2, 5 (gold 2).
    # vote: K=1 → 5, 2; K≥2 → tie broken toward the mean, equidistant → the lower: 5, 2. Accuracy 1/2.
    assert [c["accuracy"] for c in vote] == [0.5, 0.5, 0.5]
    assert vote[1]["rmse"] == pytest.approx(math.sqrt(4.5))
    # mean: K=1 → 5, 2 (1/2); K≥2 → 6.5 (|Δ| 1.5), 3.5 (|Δ| 1.5): both right, RMSE 1.5
    assert [c["accuracy"] for c in mean] == [0.5, 1.0, 1.0]
    assert mean[2]["rmse"] == pytest.approx(1.5)
    assert m["tts"] == vote and m["aggregate"] == "vote" and m["accuracy"] == 0.5
    # scalar RM with a zero head: reward 0 → 10·sigmoid(0) = 5 for both: |Δ| = 3, 3 → accuracy 0, RMSE 3
    s = m["scalar_rm"]
    assert s["accuracy"] == 0.0 and s["rmse"] == pytest.approx(3.0) and s["spearman"] is None
    assert s["calls"] == 2 and s["failures"] == 0
    report = (out / "report.md").read_text()
    assert "scalar reward-model baseline" in report and "test-time scaling (mean" in report
    assert (out / "tts.png").exists()


def test_scalar_rm_pairwise(tiny_scalar_rm, zero_head_rm, tmp_path):
    from groundrl.benchmarks.pairwise_rm import swapped
    from groundrl.benchmarks.scalar_rm import ScalarRM

    rows = [
        {
            "id": f"p{k}",
            "query": "which is right?",
            "response_1": "x " * (k + 1),
            "response_2": "y",
            "preferred": 1,
        }
        for k in range(4)
    ]
    data = write(tmp_path / "p.jsonl", rows)
    out = tmp_path / "o"
    r = runner.invoke(
        app, ["bench", "pairwise-rm", str(data), "--scalar-rm", str(tiny_scalar_rm), "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    m = json.loads((out / "metrics.json").read_text())
    assert m["mode"] == "scalar_rm" and m["judge"] == {"calls": 8, "failures": 0}
    # verdicts follow the rewards the same model gives each response on its own
    rm = ScalarRM(str(tiny_scalar_rm), device="cpu")
    for row, res in zip(
        rows, [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()], strict=True
    ):
        r1, r2 = rm.rewards([(row["query"], row["response_1"]), (row["query"], row["response_2"])])
        assert res["swapped"] == swapped(row["id"], 0)
        assert res["verdict"] == (1 if r1 > r2 else 2)
    # a zero head ties every pair: no verdict anywhere → exit 1
    r = runner.invoke(
        app, ["bench", "pairwise-rm", str(data), "--scalar-rm", str(zero_head_rm), "-o", str(out)]
    )
    assert r.exit_code == 1 and "no verdict could be read" in r.output
