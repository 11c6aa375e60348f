"""EmbodiedBrain two-stage rejection sampling as dropping curate steps, with counts."""

import doctest
import json

import pytest
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.curate import rejection
from groundrl.curate.rejection import label_check, pass_rate_filter

RECORDS = [
    {"id": "a", "gold": "B", "answers": ["B", "A", "B", "C"]},  # 2/4: kept
    {"id": "b", "gold": "B", "answers": ["B", "B", "B", "B"]},  # 4/4: kept (only all-wrong is dropped)
    {"id": "c", "gold": "two", "answers": ["three", "one", "four", "3"]},  # 0/4: too hard
    {"id": "d", "passes": [1, 0, 0, 0]},  # 1/4 precomputed: kept
    {"id": "e", "gold": "B", "answers": ["B", "B", "B", "A"]},  # 3/4: kept at max 1.0, dropped at 0.75
]


def test_pass_rate_hand_worked():
    out = [pass_rate_filter(r) for r in RECORDS]
    assert [(o["pass_rate"], o["reason"]) for o in out] == [
        (0.5, "kept"),
        (1.0, "kept"),  # [EmbodiedBrain §4.1.1]: stage 1 rejects only all-wrong prompts
        (0.0, "too_hard"),
        (0.25, "kept"),
        (0.75, "kept"),
    ]
    assert pass_rate_filter(RECORDS[4], max_rate=0.75)["reason"] == "too_easy"  # the optional knob
    assert pass_rate_filter(RECORDS[1], max_rate=1.0)["reason"] == "too_easy"
    assert pass_rate_filter(RECORDS[3], min_rate=0.25)["reason"] == "too_hard"
    assert pass_rate_filter({"id": "x", "gold": "B"})["reason"] == "no_samples"
    with pytest.raises(ValueError, match="min_rate must be < max_rate"):
        pass_rate_filter(RECORDS[0], 0.5, 0.5)


def test_label_check_drops_contradicted_labels():
    assert label_check({"id": 1, "gold": "two", "strong_answer": "Two."})["kept"] is True
    assert label_check({"id": 2, "gold": "two", "strong_answer": "three"})["reason"] == "label_contradicted"
    assert label_check({"id": 3, "gold": "two"})["reason"] == "no_strong_answer"
    assert label_check({"id": 4, "answer": "B"}, lambda r: "B")["reason"] == "kept"
    assert doctest.testmod(rejection).failed == 0


def test_cli_two_stages_drop_with_counts(tmp_path, chat_server):
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({**r, "question": f"q {r['id']}"}) + "\n" for r in RECORDS))
    s1, k1 = tmp_path / "s1.jsonl", tmp_path / "k1.jsonl"
    r = CliRunner().invoke(
        app, ["curate", "reject-pass-rate", str(src), "-o", str(s1), "--kept", str(k1), "-q"]
    )
    assert r.exit_code == 0, r.output
    assert "kept: 4, too_hard: 1" in r.output and "4 kept records" in r.output
    assert [json.loads(x)["id"] for x in k1.read_text().splitlines()] == ["a", "b", "d", "e"]
    # stage 2: the stronger model answers "B" to every question; d has no gold -> contradicted
    # (the consistency check says "no" to B vs None)
    # [EmbodiedBrain §9.2.1] the consistency check sees the question and answers JSON
    chat_server.responder = lambda msgs, body: (
        '{"consistent": false, "reason": "B vs None"}' if "Answer A:" in str(msgs) else "<answer>B</answer>"
    )
    s2, k2 = tmp_path / "s2.jsonl", tmp_path / "k2.jsonl"
    args = ["curate", "reject-label", str(k1), "-o", str(s2), "--kept", str(k2), "-q"]
    judge = ["--judge-backend", "openai", "--judge-model", "m", "--judge-url", chat_server.base_url]
    r = CliRunner().invoke(app, args + judge)
    assert r.exit_code == 0, r.output
    assert "kept: 3, label_contradicted: 1" in r.output
    assert [json.loads(x)["id"] for x in k2.read_text().splitlines()] == ["a", "b", "e"]


def _semantic(chat_server):
    """A judge that knows digits and number words mean the same."""
    same = {("2", "two"), ("3", "three")}

    def responder(msgs, body):
        text = msgs[-1]["content"][-1]["text"]
        assert text.startswith("Question: ")  # [EmbodiedBrain §9.2.1] the question goes with them
        pred = text.split("Answer A: ", 1)[1].split("\n", 1)[0]
        ref = text.split("Answer B: ", 1)[1].split("\n", 1)[0]
        verdict = "true" if (pred, ref) in same else "false"
        return f'{{"consistent": {verdict}, "reason": "by the numbers"}}'  # §9.2.1's JSON

    chat_server.responder = responder


def test_llm_judge_of_correctness_and_consistency(tmp_path, chat_server):
    _semantic(chat_server)
    # stage 1: "2" is right for "two" under the LLM judge (exact match says all wrong)
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "n", "gold": "two", "answers": ["2", "3", "five"]}) + "\n")
    s1 = tmp_path / "s1.jsonl"
    judge = ["--judge-backend", "openai", "--judge-model", "m", "--judge-url", chat_server.base_url]
    r = CliRunner().invoke(app, ["curate", "reject-pass-rate", str(src), "-o", str(s1), "-q", *judge])
    assert r.exit_code == 0, r.output
    row = json.loads(s1.read_text())
    assert (row["n_pass"], row["reason"]) == (1, "kept")
    assert pass_rate_filter({"id": "n", "gold": "two", "answers": ["2", "3", "five"]})["reason"] == "too_hard"
    assert len(chat_server.requests) == 3  # one semantic check per non-exact answer
    # stage 2: "3" vs gold "three" is consistent (kept); "3" vs "two" is a discrepancy (dropped)
    src2 = tmp_path / "l.jsonl"
    src2.write_text(
        json.dumps({"id": "x", "gold": "three", "strong_answer": "3"})
        + "\n"
        + json.dumps({"id": "y", "gold": "two", "strong_answer": "3"})
        + "\n"
    )
    s2 = tmp_path / "s2.jsonl"
    r = CliRunner().invoke(app, ["curate", "reject-label", str(src2), "-o", str(s2), "-q", *judge])
    assert r.exit_code == 0, r.output
    assert [json.loads(x)["reason"] for x in s2.read_text().splitlines()] == ["kept", "label_contradicted"]
