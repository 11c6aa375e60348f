"""`--field OURS=THEIRS` on score and curate (issue 39 item 5), and score's progress total
(item 6: it counted one line too many)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from groundrl.cli.main import app

runner = CliRunner()
GOOD = "<critique>c</critique><score>7</score>"  # eqa_rm: accuracy 1 - (0/10)^2 = 1, format 1


def _run(*args):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "4096"})


def _rows(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@pytest.fixture
def vllm_dump(tmp_path):
    path = tmp_path / "dump.jsonl"
    rows = [
        {"id": "a", "output": GOOD, "gt_score": 7},
        {"id": "b", "output": "<critique>c</critique><score>2</score>", "gt_score": 7},
        {"id": "c", "completion": GOOD, "gt_score": 7},  # no `output`: its own completion is not read
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("workers", ["1", "2"])
def test_score_reads_completion_from_output(vllm_dump, workers):
    r = _run("score", "eqa_rm", vllm_dump, "--field", "completion=output", "--workers", workers, "-q")
    assert r.exit_code == 1, r.output  # line 3 lacks the mapped field
    a, b, c = _rows(r.stdout)
    assert a["reward"] == 2.0 and b["reward"] == pytest.approx(1 + 1 - 0.25)  # |2-7|=5: 1-(5/10)^2
    assert "error" in c and "missing field" in c["error"]
    if workers == "1":
        assert "missing field 'output' (read as 'completion' by --field completion=output)" in c["error"]


def test_score_without_the_mapping_names_the_missing_completion(vllm_dump):
    r = _run("score", "eqa_rm", vllm_dump, "-q")
    a, b, c = _rows(r.stdout)
    assert a["error"].startswith("line 1: missing field 'completion'") and "error" in b
    assert c["reward"] == 2.0  # unmapped, line 3's own completion is read


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("completion", "'completion': write OURS=THEIRS, e.g. completion=output"),
        ("=output", "write OURS=THEIRS"),
    ],
)
def test_a_malformed_mapping_is_a_usage_error(vllm_dump, value, message):
    r = _run("score", "eqa_rm", vllm_dump, "--field", value)
    assert r.exit_code == 2 and message in r.output


def test_a_field_read_from_two_names_is_refused(vllm_dump):
    r = _run("score", "eqa_rm", vllm_dump, "--field", "completion=output", "--field", "completion=text")
    assert r.exit_code == 2 and "'completion' is read from both 'output' and 'text': keep one" in r.output


def test_curate_renames_id_and_fields_and_resumes_only_with_the_same_mapping(tmp_path):
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps({"uid": "q1", "evals": [{"critique": "c", "score": 7}], "gold": 7}) + "\n")
    out = tmp_path / "out.jsonl"
    maps = ["--field", "id=uid", "--field", "evaluations=evals", "--field", "gt_score=gold"]
    r = _run("curate", "rejective", data, "-o", out, *maps, "-q")
    assert r.exit_code == 0, r.output
    (row,) = _rows(out.read_text())
    assert row["id"] == "q1" and row["reason"] == "too_easy"  # the one evaluation is right: all correct
    r = _run("curate", "rejective", data, "-o", out, *maps[:4], "-q")
    assert r.exit_code == 2 and "--field was" in r.output
    # the output-is-the-input check still sees the file given, not the renamed copy
    r = _run("curate", "rejective", data, *maps, "-o", data)
    assert r.exit_code == 2 and "is the input" in r.output


@pytest.mark.parametrize(
    ("text", "limit", "want"),
    [
        ("a\nb\nc\n", None, 3),
        ("a\nb\nc", None, 3),
        ("a\n\n  \nb\n", None, 2),
        ("a\nb\nc\n", 2, 2),
        ("", None, 0),
    ],
)
def test_progress_total_counts_the_samples(tmp_path, text, limit, want):
    from groundrl.cli.score import _lines

    path = tmp_path / "in.jsonl"
    path.write_text(text)
    with _lines(path, limit) as (_, total):
        assert total == want
