import pytest

from groundrl.parse import (
    count_open_tags,
    find_all_tags,
    find_tag,
    parse_json_object,
    parse_literal_list,
    tags_in_order,
)
from groundrl.parse.numbers import parse_exact_number, parse_number


def test_find_tag_first_last_case_insensitive_and_attributes():
    text = "<Score>3</score> then <score a='1'> 7 </SCORE>"
    assert find_tag(text, "score") == "3"
    assert find_tag(text, "score", which="last") == "7"
    assert find_tag(text, "score", strip=False, which="last") == " 7 "
    assert find_all_tags(text, "score") == ["3", "7"]
    assert count_open_tags(text, "score") == 2


def test_find_tag_unclosed_and_non_string():
    assert find_tag("<a>never closed", "a") is None
    assert find_tag(None, "a") is None
    assert find_tag("<ab>x</ab>", "a") is None  # tag names must match exactly
    assert find_tag("<a><a>x</a></a>", "a") == "<a>x"  # pairs do not nest


def test_tags_in_order():
    assert tags_in_order("<c>x</c> <s>1</s>", ["c", "s"])
    assert not tags_in_order("<s>1</s><c>x</c>", ["c", "s"])


def test_json_object_strict_and_lenient():
    assert parse_json_object(' {"a": 1} ').value == {"a": 1}
    fenced = 'Plan:\n```json\n{"a": 2}\n```\ndone'
    assert parse_json_object(fenced).value is None
    assert parse_json_object(fenced, lenient=True).value == {"a": 2}
    assert parse_json_object('I think {"a": 3} works', lenient=True).value == {"a": 3}
    assert "not an object" in parse_json_object("[1, 2]").error
    two = "```json\n{}\n```\n```json\n{}\n```"
    assert "2 fenced blocks" in parse_json_object(two, lenient=True).error
    assert parse_json_object(12).error.startswith("completion is int")


def test_literal_list_never_evaluates_code():
    assert parse_literal_list("[['Pick', 'Apple'],\n ['Place', 'Apple', 'Table']]").value == [
        ["Pick", "Apple"],
        ["Place", "Apple", "Table"],
    ]
    assert not parse_literal_list("__import__('os').system('echo hacked')").ok
    assert "not a list" in parse_literal_list("{'a': 1}").error
    assert not parse_literal_list("[" * 50_000).ok


@pytest.mark.parametrize(
    "text, first, last",
    [
        ("7", 7.0, 7.0),
        ("score -3 then 4.5", -3.0, 4.5),
        (".5", 0.5, 0.5),
        ("7/10", 7.0, 10.0),
        ("1,234.5 kg", 1234.5, 1234.5),
        ("1e2", 100.0, 100.0),
    ],
)
def test_parse_number(text, first, last):
    assert parse_number(text).value == first
    assert parse_number(text, which="last").value == last


def test_parse_number_rejects():
    assert parse_number("no digits here").value is None
    assert parse_number(True).value is None
    assert parse_number("v2").value is None  # part of a word
    assert parse_exact_number(" 8 ").value == 8.0
    assert parse_exact_number("8 points").value is None


def test_adversarial_megabyte_is_handled():
    # the time budget for this input lives in bench/adversarial.py (no wall-clock asserts here)
    text = "<" * 100_000 + "<score>" * 50_000 + "{" * 200_000 + "[" * 200_000 + "-e" * 200_000
    # no "</score>" anywhere, no balanced {…} or […], no digit: every extractor says "none"
    assert find_tag(text, "score") is None and find_tag(text, "score", which="last") is None
    assert parse_json_object(text, lenient=True).value is None
    assert not parse_literal_list(text).ok
    assert parse_number(text).value is None


def test_literal_parsing_prints_no_warnings(recwarn):
    """Issue 16: model output with invalid escapes ("\\d") parses without SyntaxWarning or
    DeprecationWarning lines on stderr."""
    import warnings

    from groundrl.parse.structured import parse_literal

    warnings.simplefilter("always")
    assert parse_literal("['a\\d', 'b\\s', 1]").value == ["a\\d", "b\\s", 1]
    assert not [w for w in recwarn if issubclass(w.category, (SyntaxWarning, DeprecationWarning))]
