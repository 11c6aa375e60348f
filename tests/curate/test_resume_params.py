"""Issue 29 item 5: a resumable curate step records its parameters beside the output and
refuses to resume when they change (naming the flag and --restart)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.run_params import ParamsChanged, guard, params_path

runner = CliRunner()
RECORD = {
    "id": "a",
    "gt_score": 7,
    "evaluations": [{"critique": "x", "score": 6}, {"critique": "y", "score": 3}],
}


def said(r):
    """The command's output with rich's error box and line wrapping taken out."""
    return " ".join(r.output.replace("│", " ").split())


def curate(*args):
    return runner.invoke(app, ["curate", *map(str, args)])


def test_rejective_rerun_with_another_tau_is_refused_then_restarted(tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "out" / "rj.jsonl"
    src.write_text(json.dumps(RECORD) + "\n")
    r = curate("rejective", src, "-o", out, "--tau", 2, "-q")
    assert r.exit_code == 0, r.output
    # |7 - 6| = 1 < 2 is correct, |7 - 3| = 4 is not: evaluation 0 kept
    assert json.loads(out.read_text())["kept"] == [0]
    assert json.loads(params_path(out).read_text()) == {"command": "rejective", "--tau": 2.0}
    r = curate("rejective", src, "-o", out, "--tau", 0.5, "-q")
    assert r.exit_code == 2
    assert "--tau was 2.0, now 0.5" in said(r) and "--restart" in said(r)
    assert json.loads(out.read_text())["kept"] == [0]  # the old result untouched
    r = curate("rejective", src, "-o", out, "--tau", 2, "-q")  # same parameters: resumes
    assert r.exit_code == 0 and "0 written (1 already done)" in said(r)
    r = curate("rejective", src, "-o", out, "--tau", 0.5, "-q", "--restart")
    assert r.exit_code == 0, r.output
    # with tau 0.5 neither |7-6| = 1 nor |7-3| = 4 is correct
    assert json.loads(out.read_text()) == {"id": "a", "kept": [], "reason": "none_correct", "line": 1}
    assert json.loads(params_path(out).read_text())["--tau"] == 0.5


def test_another_command_over_the_same_output_is_refused(tmp_path):
    src, out = tmp_path / "in.jsonl", tmp_path / "o.jsonl"
    src.write_text(json.dumps({"id": "p", "passes": [True, False]}) + "\n")
    assert curate("reject-pass-rate", src, "-o", out, "-q").exit_code == 0
    r = curate("reject-pass-rate", src, "-o", out, "-q", "--max-rate", 0.4)
    assert r.exit_code == 2 and "--max-rate was (unset), now 0.4" in said(r)
    r = curate("decompose", src, "-o", out, "-q")
    assert r.exit_code == 2 and 'command was "reject-pass-rate", now "decompose"' in said(r)


def test_guard_on_an_output_from_before_params_were_kept(tmp_path):
    out = tmp_path / "old.jsonl"
    out.write_text('{"id": "a"}\n')
    note = guard(out, "rejective", {"--tau": 2.0})
    assert note and "no readable record" in note and params_path(out).is_file()
    assert guard(out, "rejective", {"--tau": 2.0}) is None
    with pytest.raises(ParamsChanged, match="--tau was 2.0, now 3.0"):
        guard(out, "rejective", {"--tau": 3.0})
    # an empty output has nothing to protect: the new parameters are simply recorded
    out.write_text("")
    assert guard(out, "rejective", {"--tau": 3.0}) is None
    assert json.loads(params_path(out).read_text())["--tau"] == 3.0


def test_dash_reads_stdin_and_stdout_is_refused(tmp_path):
    out = tmp_path / "o.jsonl"
    r = runner.invoke(
        app, ["curate", "rejective", "-", "-o", str(out), "-q"], input=json.dumps(RECORD) + "\n"
    )
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["kept"] == [0]
    r = curate("rejective", tmp_path / "missing.jsonl", "-o", out)
    assert r.exit_code == 2 and "does not exist" in said(r)
    r = curate("rejective", out, "-o", "-")
    assert r.exit_code == 2 and "not - (stdout)" in said(r)
