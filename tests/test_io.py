"""groundrl.io: one JSONL reader / writer with one error format."""

import json

import pytest

from groundrl.io import JsonlError, iter_jsonl, iter_lines, json_line, parse_line, read_jsonl, write_jsonl


def _file(tmp_path, data: bytes):
    p = tmp_path / "d.jsonl"
    p.write_bytes(data)
    return p


def test_blank_lines_are_skipped_and_numbers_are_the_file_lines(tmp_path):
    p = _file(tmp_path, b'{"a": 1}\n\n   \n{"a": 2}\r\n')
    assert read_jsonl(p) == [{"a": 1}, {"a": 2}]
    assert [ln.number for ln in iter_lines(p)] == [1, 4]


def test_error_names_file_line_problem_and_fix(tmp_path):
    p = _file(tmp_path, b'{"a": 1}\n\n{"a": \n')
    with pytest.raises(JsonlError) as e:
        read_jsonl(p)
    assert (e.value.line, e.value.path) == (3, str(p))
    assert str(e.value).startswith(f"{p}:3: not JSON (Expecting value")
    assert str(e.value).endswith("; write one JSON object per line")
    assert isinstance(e.value, ValueError)  # callers that caught ValueError still do


def test_a_non_object_line_is_an_error_unless_asked_for(tmp_path):
    p = _file(tmp_path, b'{"a": 1}\n[1, 2]\n"s"\n')
    with pytest.raises(JsonlError, match=r"d.jsonl:2: a JSON list, expected an object; use ids"):
        read_jsonl(p, fix="use ids")
    assert read_jsonl(p, objects=False) == [{"a": 1}, [1, 2], "s"]


def test_tolerant_lines_carry_their_problem_text_and_message(tmp_path):
    p = _file(tmp_path, b'{"id": "x"}\nnot json\n7\n{"b": "\xff"}\n')
    got = list(iter_lines(p))
    assert [ln.value for ln in got] == [{"id": "x"}, None, None, None]
    assert got[1].message.startswith("line 2: not JSON (")
    assert got[2].message == "line 3: a JSON int, expected an object"
    assert got[3].problem == "not UTF-8 text (byte 0xff at column 8)"
    assert got[1].text == "not json" and got[3].text == '{"b": "\ufffd"}'


def test_lines_end_at_newline_only(tmp_path):
    rec = {"t": "a\u2028b\x0bc\x1cd\x85e"}  # str.splitlines would cut this record in five
    p = tmp_path / "d.jsonl"
    assert write_jsonl(p, [rec, rec]) == 2
    assert "\u2028" in p.read_text(encoding="utf-8")  # written readable, not escaped
    assert read_jsonl(p) == [rec, rec]


def test_limit_stops_reading_before_a_later_bad_line(tmp_path):
    p = _file(tmp_path, b'{"a": 1}\n{"a": 2}\nbad\n')
    assert read_jsonl(p, limit=2) == [{"a": 1}, {"a": 2}]
    assert read_jsonl(p, limit=0) == []
    with pytest.raises(JsonlError, match=":3: not JSON"):
        read_jsonl(p, limit=3)


def test_iter_lines_numbers_an_iterable_from_start():
    got = list(iter_lines(['{"a": 1}', "", "[]"], start=10))
    assert [(ln.number, ln.value, ln.problem) for ln in got] == [
        (10, {"a": 1}, ""),
        (12, None, "a JSON list, expected an object"),
    ]


def test_iter_jsonl_reads_as_it_goes(tmp_path):
    p = _file(tmp_path, b'{"a": 1}\nbad\n')
    it = iter_jsonl(p)
    assert next(it) == {"a": 1}  # the bad line 2 is not read yet
    with pytest.raises(JsonlError):
        next(it)


def test_hostile_lines_give_a_problem_never_an_exception():
    for text in ["[" * 200_000, "", "{", "\x00", '{"a": NaN}', "1e999999", "\ud800"]:
        value, problem = parse_line(text)
        assert (value is None) == bool(problem)


def test_write_escapes_only_what_utf8_cannot_hold(tmp_path):
    p = tmp_path / "sub" / "d.jsonl"
    write_jsonl(p, [{"s": "é"}, {"s": "\ud800"}])  # a lone surrogate is legal JSON, not UTF-8
    assert p.read_text(encoding="utf-8").splitlines() == ['{"s": "é"}', '{"s": "\\ud800"}']
    assert write_jsonl(p, [{"s": "é"}], append=True, ensure_ascii=True) == 1
    assert p.read_text(encoding="utf-8").splitlines()[-1] == '{"s": "\\u00e9"}'
    assert json_line({"b": 1, "a": 2}, sort_keys=True) == json.dumps({"a": 2, "b": 1}) + "\n"
