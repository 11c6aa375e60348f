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
    {"id": "b", "gold": "B", "answers": ["B", "B", "B", "B"]},  # 4/4: too easy
    {"id": "c", "gold": "two", "answers": ["three", "one", "four", "3"]},  # 0/4: too hard
    {"id": "d", "passes": [1, 0, 0, 0]},  # 1/4 precomputed: kept
    {"id": "e", "gold": "B", "answers": ["B", "B", "B", "A"]},  # 3/4: kept at max 1.0, dropped at 0.75
]


def test_pass_rate_hand_worked():
    out = [pass_rate_filter(r) for r in RECORDS]
    assert [(o["pass_rate"], o["reason"]) for o in out] == [
        (0.5, "kept"),
        (1.0, "too_easy"),
        (0.0, "too_hard"),
        (0.25, "kept"),
        (0.75, "kept"),
    ]
    assert pass_rate_filter(RECORDS[4], max_rate=0.75)["reason"] == "too_easy"
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
    assert "kept: 3, too_easy: 1, too_hard: 1" in r.output and "3 kept records" in r.output
    assert [json.loads(x)["id"] for x in k1.read_text().splitlines()] == ["a", "d", "e"]
    # stage 2: the stronger model answers "B" to every question; d has no gold -> contradicted
    chat_server.responder = lambda msgs, body: "<answer>B</answer>"
    s2, k2 = tmp_path / "s2.jsonl", tmp_path / "k2.jsonl"
    args = ["curate", "reject-label", str(k1), "-o", str(s2), "--kept", str(k2), "-q"]
    judge = ["--judge-backend", "openai", "--judge-model", "m", "--judge-url", chat_server.base_url]
    r = CliRunner().invoke(app, args + judge)
    assert r.exit_code == 0, r.output
    assert "kept: 2, label_contradicted: 1" in r.output
    assert [json.loads(x)["id"] for x in k2.read_text().splitlines()] == ["a", "e"]
