"""EmbodiedBrain planning as released (issue 19, item 4): the released synonyms, and the
judge-backed action matcher against the local chat server (batched, deduplicated,
cached), reported beside the exact matcher."""

import json
import re

import pytest
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.rewards.planning import planning_scores

runner = CliRunner()

GOLD = "<actions>[['Navigate','Kitchen'],['Pick','Cup'],['Place','Cup','Table'],['Open','Fridge']]</actions>"
PRED = "<actions>[['Pick','Mug'],['Place','Mug','Table'],['Open','Fridge'],['Wave']]</actions>"


@pytest.mark.parametrize(
    ("pred", "gold"), [("Give a thumbs-up", "Like"), ("Make a heart with hands", "Heart sign")]
)
def test_released_synonyms(pred, gold):
    s = planning_scores(f"<actions>[['{pred}']]</actions>", f"<actions>[['{gold}']]</actions>")
    assert s["quantity"].f1 == 1.0 and s["order"].f1 == 1.0


def mug_is_cup(msgs, body):
    """A judge for whom a mug is a cup: matches gold actions equal to the predicted one
    with 'mug' read as 'cup'."""
    user = msgs[-1]["content"]
    pred = json.loads(re.search(r"Predicted action: (\[.*\])", user).group(1))
    pred = [w.replace("mug", "cup") for w in pred]
    gold = [json.loads(m) for m in re.findall(r"^\d+: (\[.*\])$", user, re.M)]
    return json.dumps({"matches": [j for j, g in enumerate(gold) if g == pred]})


def test_llm_matcher_beside_exact(chat_server, tmp_path):
    chat_server.responder = mug_is_cup
    data = tmp_path / "plans.jsonl"
    rows = [{"id": "a", "gold": GOLD, "prediction": PRED}, {"id": "b", "gold": GOLD, "prediction": PRED}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    cache = tmp_path / "judge.sqlite"
    args = ["--judge-backend", "openai", "--judge-model", "j", "--judge-url", chat_server.base_url]
    out = tmp_path / "o"
    r = runner.invoke(
        app, ["bench", "planning", str(data), *args, "--judge-cache", str(cache), "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    m = json.loads((out / "metrics.json").read_text())
    # exact: only (open, fridge) matches; |pred| = 4 (pick mug, place mug table, open fridge, wave),
    # |gold| = 3 (navigate dropped): P = 1/4, R = 1/3, F1 = 2/7
    assert m["quantity_f1"]["value"] == pytest.approx(2 / 7)
    assert m["quantity_precision"]["value"] == pytest.approx(1 / 4)
    # LLM: mug = cup, so 3 matches in order: P = 3/4, R = 1, F1 = 6/7 (quantity and order)
    assert m["llm"]["quantity_f1"]["value"] == pytest.approx(6 / 7)
    assert m["llm"]["order_f1"]["value"] == pytest.approx(6 / 7)
    assert m["llm"]["quantity_recall"]["value"] == 1.0
    # 4 distinct (predicted action, gold list) pairs asked once; item b's 4 reused
    assert m["judge"] == {"calls": 4, "failures": 0} and m["matcher_reused"] == 4
    assert len(chat_server.requests) == 4
    assert "LLM matcher" in (out / "report.md").read_text()
    # a rerun with the same cache sends nothing
    r = runner.invoke(
        app, ["bench", "planning", str(data), *args, "--judge-cache", str(cache), "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert len(chat_server.requests) == 4


def test_unreadable_matcher_answers_fall_back_to_exact(chat_server, tmp_path):
    chat_server.responder = lambda msgs, body: "they look similar"
    data = tmp_path / "plans.jsonl"
    data.write_text(json.dumps({"id": "a", "gold": GOLD, "prediction": PRED}) + "\n")
    args = ["--judge-backend", "openai", "--judge-model", "j", "--judge-url", chat_server.base_url]
    r = runner.invoke(app, ["bench", "planning", str(data), *args, "-o", str(tmp_path / "o")])
    assert r.exit_code == 1 and "none of the 4 matcher answers could be read" in r.output
    m = json.loads((tmp_path / "o" / "metrics.json").read_text())
    assert m["judge"] == {"calls": 4, "failures": 0} and m["matcher_unreadable"] == 4
    assert m["llm"]["quantity_f1"]["value"] == pytest.approx(2 / 7)  # = exact
