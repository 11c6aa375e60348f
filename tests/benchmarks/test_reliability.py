"""Judge reliability (issue 19, item 6): a judge that always answers "1" has position
bias 1.0 and swap agreement 0; self-consistency across K; score calibration bins."""

import json
import math
import re

import pytest
from typer.testing import CliRunner

from groundrl.cli.main import app

runner = CliRunner()
PAIRS = [
    {"id": f"p{k}", "query": f"q{k}", "response_1": "good", "response_2": "bad", "preferred": 1}
    for k in range(3)
]


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def judge_args(srv):
    return ["--judge-backend", "openai", "--judge-model", "j", "--judge-url", srv.base_url]


def test_always_slot_one(chat_server, tmp_path):
    chat_server.responder = lambda msgs, body: "<rubric>r</rubric><answer>1</answer>"
    out = tmp_path / "o"
    r = runner.invoke(
        app,
        [
            "bench",
            "judge-reliability",
            str(write(tmp_path / "p.jsonl", PAIRS)),
            *judge_args(chat_server),
            "-o",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    m = json.loads((out / "metrics.json").read_text())
    assert m["first_slot_rate"] == 1.0 and m["n_verdicts"] == 6
    assert m["swap_agreement"] == 0.0 and m["n_pairs_both_parsed"] == 3
    assert m["accuracy_original_order"] == 1.0 and m["accuracy_swapped_order"] == 0.0
    assert m["accuracy_both_orders"] == 0.0
    lo, hi = m["swap_agreement_ci95"]
    assert lo == 0.0 and hi == pytest.approx(0.5615, abs=1e-4)  # Wilson 0/3
    assert m["judge"] == {"calls": 6, "failures": 0} and (out / "reliability.png").exists()


def test_self_consistency_over_k(chat_server, tmp_path):
    # samples 0 and 1 answer "1", sample 2 answers "2": 2 of 3 agree with the mode everywhere
    chat_server.responder = lambda msgs, body: (
        "<answer>1</answer>" if body["sample_index"] < 2 else "<answer>2</answer>"
    )
    out = tmp_path / "o"
    r = runner.invoke(
        app,
        ["bench", "judge-reliability", str(write(tmp_path / "p.jsonl", PAIRS)), *judge_args(chat_server), "--k", "3",
         "-o", str(out)],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    m = json.loads((out / "metrics.json").read_text())
    assert m["self_consistency"] == pytest.approx(2 / 3) and m["unanimous_rate"] == 0.0
    assert m["n_presentations"] == 6 and m["first_slot_rate"] == 1.0
    assert all(b["temperature"] == 0.8 for b in chat_server.requests)


def test_score_calibration(chat_server, tmp_path):
    def responder(msgs, body):
        s = int(re.search(r"say=(\d+)", json.dumps(msgs)).group(1))
        return f"<critique>c</critique><score>{s - body['sample_index']}</score>"

    chat_server.responder = responder
    rows = [
        {"id": i, "question": "q", "reasoning": "r", "answer": f"say={s}", "gt_score": g}
        for i, (s, g) in enumerate([(1, 2), (8, 8), (10, 9), (6, 2)])
    ]
    out = tmp_path / "o"
    r = runner.invoke(
        app,
        ["bench", "judge-reliability", str(write(tmp_path / "s.jsonl", rows)), *judge_args(chat_server), "--k", "2",
         "-o", str(out)],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    m = json.loads((out / "metrics.json").read_text())
    bins = {c["bin"]: c for c in m["calibration"]}
    # first samples 1, 8, 10, 6 → bins 0-2, 7-8, 9-10, 5-6
    assert (bins["0-2"]["n"], bins["0-2"]["mean_gold"], bins["0-2"]["within_2"]) == (1, 2.0, 1.0)
    assert (bins["5-6"]["n"], bins["5-6"]["mean_gold"], bins["5-6"]["within_2"]) == (1, 2.0, 0.0)
    assert bins["9-10"]["mean_pred"] == 10.0 and bins["3-4"]["n"] == 0
    # K=2 samples differ by 1 everywhere: SD sqrt(1/2) each, none identical
    assert m["score_sd"] == pytest.approx(math.sqrt(0.5)) and m["identical_rate"] == 0.0
    assert (out / "calibration.png").exists()
