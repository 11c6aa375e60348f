import json
import math
import re

import pytest
from typer.testing import CliRunner

from groundrl.benchmarks.loaders import llm_match_to_10, openeqa_items
from groundrl.benchmarks.pairwise_rm import map_back
from groundrl.cli.main import app

runner = CliRunner()


def text_of(msgs):
    c = msgs[-1]["content"]
    return c if isinstance(c, str) else " ".join(p.get("text", "") for p in c if p.get("type") == "text")


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def judge_args(srv):
    return ["--judge-backend", "openai", "--judge-model", "j", "--judge-url", srv.base_url]


def test_map_back():
    assert (
        map_back(1, False) == 1
        and map_back(1, True) == 2
        and map_back(2, True) == 1
        and map_back(None, True) is None
    )


def test_pairwise_accuracy_macro_accplus_and_unparseable(chat_server, tmp_path):
    def responder(msgs, body):
        t = text_of(msgs)
        if "HARD" in t:
            return "I cannot decide."
        r1 = t.split("[Response 1]")[1].split("[Response 2]")[0]
        return (
            "<rubric>r</rubric><eval>e</eval><answer>1</answer>"
            if "GOOD" in r1
            else "<rubric>r</rubric><eval>e</eval><answer>2</answer>"
        )

    chat_server.responder = responder
    rows = [
        {
            "id": "a",
            "query": "q1",
            "response_1": "GOOD",
            "response_2": "bad",
            "preferred": 1,
            "category": "x",
            "group": "g1",
        },
        {
            "id": "b",
            "query": "q2",
            "response_1": "bad",
            "response_2": "GOOD",
            "preferred": 2,
            "category": "x",
            "group": "g1",
        },
        {
            "id": "c",
            "query": "HARD q3",
            "response_1": "GOOD",
            "response_2": "bad",
            "preferred": 1,
            "category": "y",
            "group": "g2",
        },
        {
            "id": "d",
            "query": "q4",
            "response_1": "GOOD",
            "response_2": "bad",
            "preferred": 1,
            "category": "y",
            "group": "g2",
        },
        {"id": "e", "query": "q5"},
        {
            "id": "f",
            "query": "q6",
            "response_1": "GOOD",
            "response_2": "bad",
            "preferred": 1,
            "image": "missing.png",
        },
    ]
    out = tmp_path / "out"
    r = runner.invoke(
        app,
        [
            "bench",
            "pairwise-rm",
            str(write(tmp_path / "d.jsonl", rows)),
            *judge_args(chat_server),
            "-o",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    m = json.loads((out / "metrics.json").read_text())
    # 3 of 4 right (c unparseable = wrong); macro: x 2/2, y 1/2 → 0.75; Acc+: g1 all right, g2 not → 0.5
    assert (m["n"], m["accuracy"], m["macro_accuracy"], m["acc_plus"], m["unparseable"]) == (
        4,
        0.75,
        0.75,
        0.5,
        1,
    )
    assert m["n_bad_items"] == 2 and "missing field 'response_1'" in m["bad_items"][0]["error"]
    assert "unreadable image 'missing.png'" in m["bad_items"][1]["error"]
    res = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert all(isinstance(x["swapped"], bool) for x in res)
    for x in res:
        if x["verdict_presented"] is not None:
            assert x["verdict"] == (3 - x["verdict_presented"] if x["swapped"] else x["verdict_presented"])
    assert (out / "report.md").exists() and (out / "accuracy_by_category.png").exists()

    # rubric transfer: a second judge reading those rubrics as the proxy agent
    chat_server.responder = lambda msgs, body: (
        "<answer>1</answer>"
        if "GOOD" in text_of(msgs).split("[Response 1]")[1].split("[Response 2]")[0]
        else "<answer>2</answer>"
    )
    out2 = tmp_path / "transfer"
    r = runner.invoke(
        app,
        [
            "bench",
            "pairwise-rm",
            str(tmp_path / "d.jsonl"),
            *judge_args(chat_server),
            "-o",
            str(out2),
            "--rubrics-from",
            str(out / "results.jsonl"),
        ],
    )
    assert r.exit_code == 0, r.output
    m2 = json.loads((out2 / "metrics.json").read_text())
    assert m2["mode"] == "rubric_transfer" and m2["accuracy"] == 1.0


def test_score_rm_metrics_and_tts(chat_server, tmp_path):
    def responder(msgs, body):
        t = text_of(msgs)
        s = int(re.search(r"say=(\d+)", t).group(1))
        return f"<critique>c</critique><score>{s + body['sample_index'] % 2}</score>"

    chat_server.responder = responder
    rows = [
        {
            "id": 1,
            "question": "q",
            "reasoning": "r",
            "answer": "say=5",
            "gt_score": 7,
            "category": "c1",
            "source": "hm3d",
        },
        {
            "id": 2,
            "question": "q",
            "reasoning": "r",
            "answer": "say=2",
            "gt_score": 7,
            "category": "c1",
            "source": "scannet",
        },
        {
            "id": 3,
            "question": "q",
            "reasoning": "r",
            "answer": "say=9",
            "gt_score": 9,
            "category": "c2",
            "source": "hm3d",
        },
    ]
    out = tmp_path / "o"
    r = runner.invoke(
        app,
        [
            "bench",
            "score-rm",
            str(write(tmp_path / "d.jsonl", rows)),
            *judge_args(chat_server),
            "-o",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    m = json.loads((out / "metrics.json").read_text())
    # K=1 (sample 0): preds 5, 2, 9 → |Δ| 2 (right), 5 (wrong), 0 → 2/3; RMSE sqrt((4+25+0)/3)
    assert (
        m["n"] == 3
        and m["accuracy"] == pytest.approx(2 / 3)
        and m["rmse"] == pytest.approx(math.sqrt(29 / 3))
    )
    assert m["by_source"]["hm3d"]["accuracy"] == 1.0 and m["by_category"]["c1"]["accuracy"] == 0.5
    lo, hi = m["accuracy_ci95"]
    assert 0 <= lo <= m["accuracy"] <= hi <= 1
    out4 = tmp_path / "o4"
    r = runner.invoke(
        app,
        [
            "bench",
            "score-rm",
            str(tmp_path / "d.jsonl"),
            *judge_args(chat_server),
            "-o",
            str(out4),
            "--k",
            "4",
        ],
    )
    assert r.exit_code == 0, r.output
    m4 = json.loads((out4 / "metrics.json").read_text())
    assert [c["k"] for c in m4["tts"]] == [1, 2, 4] and (out4 / "tts.png").exists()


def test_openeqa_loader(external_data, tmp_path):
    d = external_data / "open-eqa"
    items = openeqa_items(
        d / "open-eqa-v0.json",
        d / "dry_run/gpt4o-dry_run-predictions.json",
        d / "dry_run/gpt4o-dry_run-predictions-metrics.json",
    )
    assert len(items) == 5 and items[0]["gt_score"] == 10.0 and items[0]["source"] == "hm3d-v0"
    assert llm_match_to_10(1) == 0 and llm_match_to_10(4) == 7.5
    r = runner.invoke(
        app,
        [
            "bench",
            "openeqa-format",
            str(d / "open-eqa-v0.json"),
            str(d / "dry_run/blind-gpt4-dry_run-predictions.json"),
            str(d / "dry_run/blind-gpt4-dry_run-predictions-metrics.json"),
            "-o",
            str(tmp_path / "i.jsonl"),
        ],
    )
    assert r.exit_code == 0 and len((tmp_path / "i.jsonl").read_text().splitlines()) == 5


def test_planning_on_embodiedbrain_set(external_data, tmp_path):
    from groundrl.benchmarks.loaders import embodiedbrain_planning_items

    src = external_data / "embodiedbrain" / "simulation_benchmark_set.json"
    items = embodiedbrain_planning_items(src)
    preds = write(tmp_path / "p.jsonl", [{"id": it["id"], "prediction": it["gold"]} for it in items])
    r = runner.invoke(
        app, ["bench", "planning", str(src), "--predictions", str(preds), "-o", str(tmp_path / "o")]
    )
    assert r.exit_code == 0, r.output
    m = json.loads((tmp_path / "o" / "metrics.json").read_text())
    assert m["n"] == 69 and m["quantity_f1"]["value"] == 1.0 and m["order_f1"]["value"] == 1.0


def test_planning_hand_set(tmp_path):
    rows = [
        {
            "id": 1,
            "gold": "<actions>[['Pick','Apple'],['Place','Apple','Table']]</actions>",
            "prediction": "<actions>[['Place','Apple','Table'],['Pick','Apple']]</actions>",
        },
        {"id": 2, "gold": "<actions>[['Pick','Cup']]</actions>", "prediction": ""},
    ]
    r = runner.invoke(
        app, ["bench", "planning", str(write(tmp_path / "d.jsonl", rows)), "-o", str(tmp_path / "o")]
    )
    assert r.exit_code == 0, r.output
    m = json.loads((tmp_path / "o" / "metrics.json").read_text())
    # item 1: quantity F1 1, order LCS 1 of 2 → 0.5; item 2: 0 → means 0.5 and 0.25
    assert m["quantity_f1"]["value"] == 0.5 and m["order_f1"]["value"] == 0.25


def test_pairwise_proxy_verified_inference(tmp_path, chat_server):
    """Proxy-GRM's proxy-verified inference from `bench pairwise-rm --proxy-verify`: the
    policy's verdict stays the answer; the proxy (shown only the rubric) votes too."""
    import json

    from typer.testing import CliRunner

    from groundrl.cli.main import app

    def responder(msgs, body):
        text = " ".join(
            p.get("text", "")
            for m in msgs
            for p in (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}])
        )
        if "[Rubric]" in text:  # the proxy agent's prompt carries the policy's rubric
            return "<answer>2</answer>"  # the proxy always picks the second shown response
        return "<rubric>count</rubric><eval>first is right</eval><answer>1</answer>"

    chat_server.responder = responder
    items = [
        {
            "id": f"p{i}",
            "query": "How many cups?",
            "response_1": "Two.",
            "response_2": "Five.",
            "preferred": 1,
        }
        for i in range(4)
    ]
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(it) + "\n" for it in items))
    out = tmp_path / "o"
    r = CliRunner().invoke(
        app,
        ["bench", "pairwise-rm", str(data), "-o", str(out), "--proxy-verify", "--judge-backend", "openai",
         "--judge-model", "m", "--judge-url", chat_server.base_url, "--judge-retries", "0"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    m = json.loads((out / "metrics.json").read_text())
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    # the policy always answers the first shown, the proxy the second: they never agree;
    # mapped back through each pair's seeded swap, exactly one of the two is right per pair
    assert m["proxy_verify"]["n"] == 4 and m["proxy_verify"]["n_agree"] == 0
    assert all(r_["proxy_agree"] is False for r_ in rows)
    assert all((r_["verdict"] == 1) != (r_["proxy_verdict"] == 1) for r_ in rows)
    assert m["accuracy"] + m["proxy_verify"]["proxy_accuracy"] == 1.0
