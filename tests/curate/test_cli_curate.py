"""`groundrl curate` as a user meets it (issue 17, items 4 and 9): reruns retry errored
records, bad input lines are error records with line numbers, rejective without
evaluations says so, output folders are created, one option grammar."""

import json

import pytest
from PIL import Image
from typer.testing import CliRunner

from groundrl.cli.main import app

runner = CliRunner()

GOOD = {
    "id": "a",
    "gt_score": 7,
    "evaluations": [{"critique": "c", "score": 6}, {"critique": "c", "score": 1}],
}


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def read(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def curate(*args):
    return runner.invoke(app, ["curate", *map(str, args)])


def test_bad_lines_are_error_records_with_line_numbers_not_tracebacks(tmp_path):
    inp = write_lines(tmp_path / "in.jsonl", [json.dumps(GOOD), "not json", "", "[1, 2]", '{"id": "b"'])
    out = tmp_path / "out.jsonl"
    r = curate("rejective", inp, "-o", out, "--quiet")
    assert r.exit_code == 1, r.output
    assert "Traceback" not in r.output and r.exception is None or isinstance(r.exception, SystemExit)
    assert "3 of 4 records errored" in r.output
    rows = read(out)
    assert rows[0] == {"id": "a", "kept": [0], "reason": "kept", "line": 1}  # |7-6| = 1 < 2, |7-1| = 6
    # the blank line 3 is skipped; the others keep their 1-based input line numbers
    assert [(x["id"], x["line"]) for x in rows[1:]] == [("line2", 2), ("line4", 4), ("line5", 5)]
    assert rows[1]["error"].startswith("line 2: not JSON (")  # groundrl.io's line message
    assert rows[2]["error"] == "line 4: a JSON list, expected an object"


def test_rejective_without_evaluations_is_an_error_record_not_none_correct(tmp_path):
    inp = write_lines(tmp_path / "in.jsonl", [json.dumps({"id": "x", "gt_score": 7})])
    out = tmp_path / "out.jsonl"
    r = curate("rejective", inp, "-o", out, "-q")
    assert r.exit_code == 1
    assert read(out) == [
        {
            "id": "x",
            "kept": [],
            "reason": "error",
            "error": "no `evaluations` list: expected [{critique, score}, …]",
            "line": 1,
        }
    ]
    assert "none_correct" not in r.output


def test_rerun_retries_records_that_errored_and_no_retry_keeps_them(tmp_path):
    inp = tmp_path / "in.jsonl"
    out = tmp_path / "out.jsonl"
    write_lines(inp, [json.dumps(GOOD), json.dumps({"id": "b", "gt_score": 7})])
    assert curate("rejective", inp, "-o", out, "-q").exit_code == 1
    assert [x.get("reason") for x in read(out)] == ["kept", "error"]

    # the user fixes record b; --no-retry-errors leaves the old error alone
    fixed_b = {"id": "b", "gt_score": 7, "evaluations": [{"critique": "c", "score": 7}]}
    write_lines(inp, [json.dumps(GOOD), json.dumps(fixed_b)])
    r = curate("rejective", inp, "-o", out, "-q", "--no-retry-errors")
    assert r.exit_code == 0, r.output
    assert "0 written (2 already done)" in r.output and "1 error records from earlier runs" in r.output
    assert [x.get("reason") for x in read(out)] == ["kept", "error"]

    # the default reruns it: its error line is replaced, no id is duplicated
    r = curate("rejective", inp, "-o", out, "-q")
    assert r.exit_code == 0, r.output
    assert "1 written (1 already done, 1 errored before and retried): too_easy: 1" in r.output
    assert read(out) == [
        {"id": "a", "kept": [0], "reason": "kept", "line": 1},
        {"id": "b", "kept": [], "reason": "too_easy", "line": 2},  # |7-7| < 2 for all (one) evaluations
    ]


def test_unreadable_image_is_retried_on_rerun(tmp_path, monkeypatch):
    """The issue's case: a record with an unreadable image errored, the image is fixed,
    and the rerun must redo it (it said "0 written (2 already done)" before)."""
    from groundrl.judges.config import JudgeConfig

    class Always:  # a judge that always answers "a" (right) — no server needed
        stats = type("S", (), {"requests": 0, "failures": 0})()

        def generate(self, reqs, params=None):
            from groundrl.judges.base import Generation

            self.stats.requests += len(reqs)
            return [Generation(texts=["a"]) for _ in reqs]

        def close(self):
            pass

    monkeypatch.setattr(JudgeConfig, "make_backend", lambda self: Always())
    inp = write_lines(
        tmp_path / "in.jsonl",
        [
            json.dumps({"id": i, "image": str(tmp_path / f"{i}.png"), "question": "q", "answer": "a"})
            for i in "mn"
        ],
    )
    Image.new("RGB", (8, 8), "red").save(tmp_path / "m.png")  # n.png is missing
    out = tmp_path / "out.jsonl"
    args = [
        "mask-difficulty",
        inp,
        "-o",
        out,
        "--k",
        "1",
        "-q",
        "--judge-backend",
        "openai",
        "--judge-model",
        "x",
        "--judge-url",
        "http://127.0.0.1:9/v1",
    ]
    r = curate(*args)
    assert r.exit_code == 1
    rows = {x["id"]: x for x in read(out)}
    assert rows["m"]["lambda_star"] is None and len(rows["m"]["curve"]) == 10  # always right: never fails
    assert "image not readable" in rows["n"]["error"] and rows["n"]["line"] == 2
    Image.new("RGB", (8, 8), "blue").save(tmp_path / "n.png")
    r = curate(*args)
    assert r.exit_code == 0, r.output
    assert "1 written (1 already done, 1 errored before and retried)" in r.output
    assert [x["id"] for x in read(out)] == ["m", "n"] and "error" not in read(out)[1]


def test_all_judge_calls_failing_exits_non_zero(tmp_path, monkeypatch):
    Image.new("RGB", (8, 8), "red").save(tmp_path / "m.png")
    inp = write_lines(
        tmp_path / "in.jsonl",
        [json.dumps({"id": "m", "image": str(tmp_path / "m.png"), "question": "q", "answer": "a"})],
    )
    out = tmp_path / "out.jsonl"
    # port 9 (discard) is closed on 127.0.0.1: every call fails to connect
    r = curate(
        "mask-difficulty", inp, "-o", out, "--k", "1", "-q",
        "--judge-backend", "openai", "--judge-model", "x", "--judge-url", "http://127.0.0.1:9/v1",
        "--judge-retries", "0", "--judge-timeout", "5",
    )  # fmt: skip
    assert r.exit_code == 1
    assert "error: all 1 judge calls failed" in r.output
    assert "judge call failed" in read(out)[0]["error"]  # an error record, retried on a rerun


def test_output_folders_are_created_and_limit_caps_the_run(tmp_path):
    rows = [{"id": f"t{i}", "instruction": "do", "actions": ["a", "b"]} for i in range(5)]
    inp = write_lines(tmp_path / "in.jsonl", [json.dumps(r) for r in rows])
    out = tmp_path / "new" / "sub" / "steps.jsonl"
    r = curate("decompose", inp, "-o", out, "--limit", "2", "-q")
    assert r.exit_code == 0, r.output
    assert [x["id"] for x in read(out)] == ["t0/step0", "t0/step1", "t1/step0", "t1/step1"]
    r = curate("decompose", inp, "-o", out, "-q")  # the rest
    assert r.exit_code == 0 and len(read(out)) == 10 and f"wrote {out}" in r.output


@pytest.mark.parametrize(
    "command", ["verifier-filter", "rejective", "consensus", "mask-difficulty", "decompose"]
)
def test_one_option_grammar_with_help_on_every_option(command):
    import typer.main

    group = typer.main.get_command(app).commands["curate"]
    cmd = group.commands[command]
    params = {p.name: p for p in cmd.params}
    assert params["input"].param_type_name == "argument"  # the same name as `score INPUT`
    assert params["output"].opts == ["-o", "--output"]
    assert params["retry_errors"].secondary_opts == ["--no-retry-errors"]
    assert {"limit", "quiet"} <= set(params)
    for p in cmd.params:
        if p.param_type_name == "option":
            assert p.help, f"curate {command} {p.opts} has no help"
    if command in ("consensus", "mask-difficulty"):
        assert "seed" in params


def test_resume_keys_by_input_line_so_colliding_ids_are_all_kept(tmp_path):
    """Issue 16 R1: duplicate ids, two nulls, 1 and "1", an explicit "line4" beside the
    auto id of line 4, and a missing id: every record is written once, and a rerun after a
    cut adds exactly the missing ones; the summary says ids repeat."""
    recs = [
        {"id": "a", "gt_score": 7, "evaluations": [{"critique": "c", "score": 7}]},
        {"id": "a", "gt_score": 7, "evaluations": [{"critique": "c", "score": 1}]},
        {"id": None, "gt_score": 7, "evaluations": [{"critique": "c", "score": 7}]},
        {"gt_score": 7, "evaluations": [{"critique": "c", "score": 7}]},  # auto id line4
        {"id": "line4", "gt_score": 7, "evaluations": [{"critique": "c", "score": 7}]},
        {"id": None, "gt_score": 7, "evaluations": [{"critique": "c", "score": 7}]},
        {"id": 1, "gt_score": 7, "evaluations": [{"critique": "c", "score": 7}]},
        {"id": "1", "gt_score": 7, "evaluations": [{"critique": "c", "score": 7}]},
    ]
    inp = write_lines(tmp_path / "in.jsonl", [json.dumps(r) for r in recs])
    out = tmp_path / "out.jsonl"
    r = curate("rejective", inp, "-o", out, "-q")
    assert r.exit_code == 0, r.output
    assert [x["line"] for x in read(out)] == list(range(1, 9))
    assert "4 input records repeat an earlier id" in " ".join(r.output.split())
    full = out.read_text()
    lines = full.splitlines(keepends=True)
    out.write_text("".join(lines[:5]) + lines[5][:10])  # killed while writing line 6's record
    r = curate("rejective", inp, "-o", out, "-q")
    assert r.exit_code == 0, r.output
    assert out.read_text() == full
