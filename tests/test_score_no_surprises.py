"""Issue 29 items 4-5 on ``groundrl score``: ``-`` is standard input / output, an empty
input exits non-zero with a message, floats are rounded (full precision on a flag) in
one process and with --workers alike, and every part value carries a reason."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.examples import example_file
from groundrl.floats import tidy
from groundrl.types import NO_DEDUCTION, Score, Verdict

runner = CliRunner()


def run(*args, stdin=None):
    return runner.invoke(app, list(map(str, args)), input=stdin)


def said(r):
    """The command's output with rich's error box and line wrapping taken out."""
    return " ".join(r.output.replace("│", " ").split())


def rows(text):
    return {r["id"]: r for r in map(json.loads, text.splitlines()) if r.get("id")}


def test_dash_reads_stdin_and_writes_stdout():
    src = example_file("eqa_rm")
    r = run("score", "eqa_rm", "-", "-o", "-", "-q", stdin=src.read_text())
    assert r.exit_code == 0, r.output
    out = rows(r.stdout)
    assert set(out) == set(rows(src.read_text()))
    # eq-off-by-3: accuracy 1 - (3/10)^2 = 0.91, format 1: the sum 1.91 written as 1.91
    assert out["eq-off-by-3"]["reward"] == 1.91 and '"reward": 1.91,' in r.stdout
    r = run("score", "eqa_rm", "-", "--workers", 2, stdin=src.read_text())
    assert r.exit_code == 2 and "save standard input to a file" in said(r)


def test_floats_rounded_unless_raw_and_the_same_with_workers(tmp_path):
    src = example_file("eqa_rm")
    one, many, raw = tmp_path / "one.jsonl", tmp_path / "many.jsonl", tmp_path / "raw.jsonl"
    assert run("score", "eqa_rm", src, "-o", one, "-q").exit_code == 0
    assert run("score", "eqa_rm", src, "-o", many, "-q", "--workers", 2).exit_code == 0
    assert run("score", "eqa_rm", src, "-o", raw, "-q", "--raw-floats").exit_code == 0
    assert one.read_text() == many.read_text()
    assert "1.9100000000000001" in raw.read_text() and "1.9100000000000001" not in one.read_text()
    assert tidy({"a": [0.1 + 0.2, 2, float("inf")], "b": "0.30000000000000004"}) == {
        "a": [0.3, 2, float("inf")],
        "b": "0.30000000000000004",
    }
    assert tidy(0.1 + 0.2, None) == 0.30000000000000004


def test_empty_input_exits_non_zero_with_a_message(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    for extra in ((), ("--workers", 2)):
        r = run("score", "eqa_rm", empty, "-q", *extra)
        assert r.exit_code == 1 and "holds no sample" in said(r)
    r = run("score", "eqa_rm", "-", "-q", stdin="")
    assert r.exit_code == 1 and "standard input holds no sample" in said(r)
    r = run("score", "eqa_rm", tmp_path, "-q")
    assert r.exit_code == 2 and "is a folder" in said(r)


def test_every_part_value_has_a_reason():
    v = Verdict(
        1.5,
        {
            "format": Score("format", 1.0),
            "spatial": Score("spatial", None),
            "acc": Score("acc", 0.5, "prefix 1/2"),
        },
    )
    assert v.reasons() == {"format": NO_DEDUCTION, "spatial": "not applicable", "acc": "prefix 1/2"}
    for recipe in ("eqa_rm", "proxy_grm", "reinforced_planning", "embodied_brain", "argos"):
        r = run("score", recipe, example_file(recipe), "-q")
        for row in rows(r.stdout).values():
            if "parts" in row:
                assert set(row["reasons"]) == set(row["parts"]), (recipe, row)
                assert all(row["reasons"].values()), (recipe, row)
