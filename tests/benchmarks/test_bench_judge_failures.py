"""Issue 26 item 4: `bench score-rm` / `pairwise-rm` report accuracy over answered items
and the judge failure rate separately (a failed call is not a wrong answer), and exit 1
above --max-judge-failures (default 10 %). The judge is a real local server on 127.0.0.1
that answers 500 for half the items."""

import json

import pytest
from typer.testing import CliRunner

from groundrl.cli.main import app

runner = CliRunner()


@pytest.fixture
def one_try(monkeypatch):
    import dataclasses

    from groundrl.judges.config import JudgeConfig

    make = JudgeConfig.make_backend
    monkeypatch.setattr(JudgeConfig, "make_backend", lambda self: make(dataclasses.replace(self, retries=0)))


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _judge(chat_server):
    return ["--judge-backend", "openai", "--judge-model", "j", "--judge-url", chat_server.base_url]


def test_score_rm_separates_failures_from_wrong_answers(chat_server, tmp_path, one_try):
    def answer(msgs, body):
        if "FAIL" in str(msgs):
            raise RuntimeError("down")  # a 500 from the judge server
        return "<critique>c</critique><score>7</score>"

    chat_server.responder = answer
    rows = [
        {"id": i, "question": "FAIL q" if i % 2 else "q", "reasoning": "r", "answer": "a", "gt_score": 7}
        for i in range(4)
    ]
    data = _write(tmp_path / "d.jsonl", rows)
    r = runner.invoke(app, ["bench", "score-rm", str(data), *_judge(chat_server), "-o", str(tmp_path / "o")])
    m = json.loads((tmp_path / "o" / "metrics.json").read_text())
    # 2 answered, both right (7 vs 7); 2 failed: headline accuracy 0.5, answered 1.0, rate 0.5
    assert m["n_judge_failures"] == 2 and m["judge_failure_rate"] == 0.5
    assert m["accuracy_answered"] == 1.0 and m["accuracy"] == 0.5
    assert r.exit_code == 1 and "--max-judge-failures" in r.output
    assert "accuracy over the 2 answered items: 1.000" in (tmp_path / "o" / "report.md").read_text()
    # a looser threshold lets the same run pass
    r = runner.invoke(
        app,
        [
            "bench",
            "score-rm",
            str(data),
            *_judge(chat_server),
            "-o",
            str(tmp_path / "o2"),
            "--max-judge-failures",
            "0.6",
        ],
    )
    assert r.exit_code == 0, r.output


def test_pairwise_rm_separates_failures_from_wrong_answers(chat_server, tmp_path, one_try):
    def answer(msgs, body):
        if "FAIL" in str(msgs):
            raise RuntimeError("down")
        return "<rubric>r</rubric><eval>e</eval><answer>1</answer>"

    chat_server.responder = answer
    rows = [
        {"id": i, "query": "FAIL q" if i < 1 else "q", "response_1": "A", "response_2": "B", "preferred": 1}
        for i in range(4)
    ]
    data = _write(tmp_path / "d.jsonl", rows)
    r = runner.invoke(
        app, ["bench", "pairwise-rm", str(data), *_judge(chat_server), "-o", str(tmp_path / "o")]
    )
    m = json.loads((tmp_path / "o" / "metrics.json").read_text())
    assert m["n_judge_failures"] == 1 and m["judge_failure_rate"] == 0.25 and m["n_answered"] == 3
    assert r.exit_code == 1 and "1 of 4 judge calls failed" in r.output
