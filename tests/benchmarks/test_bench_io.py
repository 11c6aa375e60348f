"""The benchmark readers go through groundrl.io: one wording for a bad line, and lines
end at \\n only (a raw U+2028 inside a record does not cut it)."""

import json

from groundrl.benchmarks.datasets import detect_format, read_rows
from groundrl.benchmarks.runner import read_items


def _write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_read_items_reports_bad_lines_in_the_io_wording(tmp_path):
    rec = {"id": "a", "question": "one\u2028two"}  # ensure_ascii=False keeps the raw U+2028
    path = _write(
        tmp_path / "d.jsonl", [json.dumps(rec, ensure_ascii=False), "", "{broken", "[1, 2]", '{"id": "b"}']
    )
    good, bad = read_items(path, ["question"])
    assert good == [rec]  # read whole, not cut at U+2028
    assert [b["line"] for b in bad] == [3, 4, 5]  # blank line 2 skipped, numbering kept
    assert bad[0]["error"].startswith("not JSON (")
    assert bad[1]["error"] == "a JSON list, expected an object"
    assert bad[2] == {"line": 5, "id": "b", "error": "missing field 'question'"}


def test_read_rows_and_detect_format_use_the_same_reader(tmp_path):
    path = _write(tmp_path / "d.jsonl", ["not json", '"a string"', '{"chosen": "x", "rejected": "y"}'])
    rows, bad = read_rows(path)
    assert rows == [{"chosen": "x", "rejected": "y"}]
    assert [(b["row"], b["error"]) for b in bad] == [
        (1, bad[0]["error"]),
        (2, "a JSON str, expected an object"),
    ]
    assert bad[0]["error"].startswith("not JSON (")
    # the first line that is JSON decides the layout: a string has no keys -> plain jsonl
    assert detect_format(path) == "jsonl"
    assert detect_format(_write(tmp_path / "e.jsonl", ["{oops", '{"chosen": 1, "rejected": 2}'])) == (
        "mm-rlhf-rewardbench"
    )
